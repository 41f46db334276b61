"""The sleep pipeline (spec §4.2, all nine steps), crash-safe and one-at-a-time per namespace.

1 slice (keep the last T turns)  2 subjects  3 extraction  4 matching (§8.1)  5 normalisation
6 edges  7 utility and decay  8 wake packet  9 trim (mark compacted; never delete).

Steps 1-8 compute a ``SleepCommit`` without writing; it is committed in one transaction, which
also trims the buffer, so a crash anywhere leaves either the old memory or the new one. A lease
in Neo4j keeps two sleeps off one namespace; ids are deterministic, so a re-run after a crash
writes exactly what one clean run would.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from pydantic import BaseModel, PrivateAttr

from graph.clock import Clock, SystemClock, ensure_utc
from graph.errors import LeaseLost, VersionConflict
from graph.models import (
    EdgeType,
    EmbeddingMeta,
    InProgress,
    Message,
    Subject,
    TailTurn,
    Topic,
    TopicEvent,
    WakePacket,
)
from graph.protocols import MessageStoreProtocol, SleepStoreProtocol
from graph.sleep import DecayParams, MatchFields, PoolHit, SleepCommit, TopicWrite
from graph.topics import LinkRequest
from retrieval.embedding import Embedder, text_hash
from sleepwake import tiers
from sleepwake.candidates import (
    Candidate,
    SliceCandidates,
    build_candidates,
    distinct_label,
    name_identity,
    number_variants,
)
from sleepwake.episodes import form_topics
from sleepwake.extract import Extraction, find_in_progress
from sleepwake.extract import InProgress as ExtractedProgress
from sleepwake.llm_extract import ResponsesExtractor
from sleepwake.matching import MergeConfig, PoolTopic, alias_score, best_match, score
from sleepwake.normalise import merge_candidate, new_topic, stable_id
from sleepwake.policy import SleepPolicy, SleepReason, select_slice
from sleepwake.side_topics import fold_side_topics, with_assistant
from sleepwake.subjects import SubjectHint, compute_subjects
from text.gist import FACT_CHARS, VECTOR_FACTS, unspoken

log = logging.getLogger(__name__)

STEPS = (
    "slice", "extract", "embed", "subjects", "match", "normalise", "edges", "utility", "wake_packet",
    "commit", "after_commit",
)  # fmt: skip
CO_ACTIVATION = 0.5
MAX_CO_ACTIVATION = 3.0
TOP_TOPICS = 10
# In a sleep of a chat with an assistant (``side_topics.with_assistant``), a candidate's or a
# changed topic's semantic text longer than this (~150 word pieces: the candidates' average) is
# not embedded whole: the candidate's vector is composed from its head and its facts' turn
# vectors (``candidate_vectors``), the topic's blended from its stored one (``blend``).
# Candidates' and topics' texts were half the word pieces such a sleep embedded, and the vectors
# of their parts were at hand. On the twelve LongMemEval questions of docs/evaluation.md recall
# and topics were the same at 1,000 and at 600 characters (word pieces -22% and -34%).
# Elsewhere (between people: LoCoMo) texts are embedded whole: composing there cost topic-only
# recall (conv-26 0.574 -> 0.561, conv-30 0.674 -> 0.662), and texts of short turns are cheap.
BLEND_CHARS = 600


class SleepSummary(BaseModel):
    namespace: str
    reason: str
    slept_at: datetime
    messages_compacted: int
    topics_created: int
    topics_updated: int
    events: int
    edges: int
    subjects: list[str]
    wake_packet_id: str | None
    in_progress: InProgress
    duration_ms: float
    step_ms: dict[str, float] = {}
    extraction: dict[str, Any] = {"mode": "deterministic"}
    skipped: bool = False  # a policy sleep that found nothing to compact (nothing written)
    _left: list[Message] | None = PrivateAttr(default=None)

    def buffer_left(self) -> list[Message] | None:
        """The buffer this sleep left (up to its ``through``), oldest first: what a caller
        tracking the buffer would otherwise read again (None: not known, read it)."""
        return self._left


@dataclass
class _Work:
    """The topics a sleep is building: current state, original version, vector, candidates."""

    topics: dict[str, Topic] = field(default_factory=dict)
    versions: dict[str, int | None] = field(default_factory=dict)
    vectors: dict[str, list[float]] = field(default_factory=dict)
    facts_before: dict[str, int] = field(default_factory=dict)  # an existing topic's, as read
    by_key: dict[str, str] = field(default_factory=dict)  # candidate key -> topic id
    updates: dict[str, list[tuple[Candidate, str, list[float]]]] = field(default_factory=dict)
    events: list[tuple[TopicEvent, list[float]]] = field(default_factory=list)
    top: list[tuple[str, float, datetime]] = field(default_factory=list)  # most useful topics


class Sleeper:
    def __init__(
        self,
        messages: MessageStoreProtocol,
        store: SleepStoreProtocol,
        embedder: Embedder,
        policy: SleepPolicy | None = None,
        tz: str = "UTC",
        weights: MergeConfig | None = None,
        lease_clock: Clock | None = None,
        faults: Callable[[str], None] | None = None,
        extractor: ResponsesExtractor | None = None,
    ) -> None:
        self.messages = messages
        self.store = store
        self.embedder = embedder
        self.policy = policy or SleepPolicy()
        self.tz = tz
        self.weights = weights or MergeConfig()
        self.lease_clock = lease_clock or SystemClock()
        self.faults = faults
        self.extractor = extractor
        self._local = threading.local()

    def sleep(
        self,
        namespace: str,
        now: datetime,
        reason: SleepReason = "explicit",
        *,
        holder: str | None = None,
        through: datetime | None = None,
    ) -> SleepSummary:
        """Compact the buffer of ``namespace`` into topics and write a wake packet. The lease
        is taken here (``AlreadyRunning`` if another sleep holds it) unless the caller holds
        it already as ``holder`` (a sleep worker's claim); a heartbeat renews it while the
        sleep runs, and the commit is refused (``LeaseLost``) if it was taken over.
        ``through``: only messages at or before it (a policy sleep inside a batch stored whole
        leaves the batch's later messages to the sleeps after them)."""
        now = ensure_utc(now)
        own = holder is None
        holder = holder or str(uuid.uuid4())
        if own:
            wall = self.lease_clock.now()
            self.store.acquire_lease(namespace, holder, wall, wall + self.policy.lease_ttl)
        beat = Heartbeat(self.store, namespace, holder, self.lease_clock, self.policy.lease_ttl)
        self._local.beat = beat
        summary: SleepSummary | None = None
        try:
            with beat:
                for attempt in range(3):
                    try:
                        summary = self._sleep_once(namespace, now, reason, holder, through, own)
                        return summary
                    except VersionConflict:
                        log.info("sleep of %s raced a writer; recomputing (%d)", namespace, attempt)
                summary = self._sleep_once(namespace, now, reason, holder, through, own)
                return summary
        finally:
            self._local.beat = None
            # a sleep that committed gave its own lease back in the commit's transaction
            if own and (summary is None or summary.skipped):
                self.store.release_lease(namespace, holder)

    @property
    def _steps(self) -> dict[str, float]:
        """Step durations of the sleep running in this thread (a Sleeper serves many)."""
        steps: dict[str, float] = self._local.__dict__.setdefault("steps", {})
        return steps

    @_steps.setter
    def _steps(self, value: dict[str, float]) -> None:
        self._local.steps = value

    @property
    def _mark(self) -> float:
        return float(self._local.__dict__.get("mark", 0.0))

    @_mark.setter
    def _mark(self, value: float) -> None:
        self._local.mark = value

    def _sleep_once(
        self,
        namespace: str,
        now: datetime,
        reason: str,
        holder: str | None = None,
        through: datetime | None = None,
        release: bool = False,
    ) -> SleepSummary:
        started = self._mark = time.perf_counter()
        self._steps = {}
        buffer = self.messages.buffer(namespace)
        if through is not None:
            buffer = [m for m in buffer if m.at <= through]
        piece = select_slice(buffer, self.policy)
        self._fault("slice")
        if not piece and reason != "explicit":  # a policy sleep that would compact nothing
            nothing = _nothing_to_compact(namespace, reason, now, started)
            nothing._left = buffer
            return nothing
        extractions, extraction_report = self._extract(piece)
        cands = build_candidates(piece, self.tz, extractions)
        # the LLM extractor names its topics itself (sleepwake/llm_extract); when any of its
        # chunks fell back, the slice takes the deterministic path whole
        if extraction_report["mode"] != "llm":
            cands = form_topics(piece, cands, cands.extractions, self.embedder.embed, self.tz)
        self._fault("extract")
        chat = with_assistant(piece)
        vectors = candidate_vectors(self.embedder, cands, compose=chat)
        self._fault("embed")
        by_key = {c.key: v for c, v in zip(cands.candidates, vectors, strict=True)}
        subjects = compute_subjects(cands.candidates, cands.per_message, by_key)
        self._fault("subjects")
        slice_id = _slice_id(namespace, piece)
        work = self._match_and_merge(namespace, cands.candidates, vectors, slice_id, now, chat)
        self._fault("normalise")
        links = self._edges(cands, subjects, work)
        self._fault("edges")
        self._fault("utility")
        packet = self._wake_packet(namespace, now, buffer, piece, cands, subjects, work)
        self._fault("wake_packet")
        plan = SleepCommit(
            namespace=namespace,
            now=now,
            topics=self._topic_writes(namespace, work, blended=chat),
            events=[(e, v) for e, v in work.events],
            links=links,
            subjects=self._subjects(namespace, now, subjects, work),
            wake_packet=packet,
            compacted_message_ids=[m.message_id for m in piece],
            lease_holder=holder,
            release_lease=release and holder is not None,
            decay=DecayParams(
                tiers.DECAY_MIN_HOURS,
                tiers.DECAY_PER_DAY,
                tiers.HOT_DAYS,
                tiers.WARM_DAYS,
                tiers.HOT_UTILITY,
                tiers.WARM_UTILITY,
            ),
        )
        self._fault("commit")
        self.store.commit(plan)
        if plan.release_lease:  # given back: a renewal now would find it gone
            beat = getattr(self._local, "beat", None)
            if beat is not None:
                beat.stop()
        self._fault("after_commit")
        self._steps.update({f"commit.{k}": v for k, v in plan.timings.items()})
        created = sum(1 for v in work.versions.values() if v is None)
        summary = SleepSummary(
            namespace=namespace,
            reason=reason,
            slept_at=now,
            messages_compacted=len(piece),
            topics_created=created,
            topics_updated=len(work.topics) - created,
            events=len(work.events),
            edges=len(links),
            subjects=[s.label for s in subjects],
            wake_packet_id=packet.packet_id if packet else None,
            in_progress=packet.in_progress if packet else InProgress(),
            duration_ms=(time.perf_counter() - started) * 1000,
            step_ms=dict(self._steps),
            extraction=extraction_report,
        )
        summary._left = buffer[len(piece) :]
        return summary

    def _extract(self, piece: list[Message]) -> tuple[dict[str, Extraction], dict[str, Any]]:
        """Step 3 by the LLM extractor when one is configured ({} = deterministic)."""
        if self.extractor is None or not piece:
            return {}, {"mode": "deterministic"}
        found, stats = self.extractor.extract_many(piece)
        mode = "llm" if not stats.fallbacks else "llm+fallback"
        report = {
            "mode": mode, "chunks": stats.chunks, "fallbacks": stats.fallbacks,
            "retries": stats.retries, "input_tokens": stats.input_tokens,
            "output_tokens": stats.output_tokens,
        }  # fmt: skip
        return found, report

    # -- step 4 and 5: matching and normalisation -----------------------------------------------
    def _match_and_merge(
        self,
        namespace: str,
        candidates: list[Candidate],
        vectors: list[list[float]],
        slice_id: str,
        now: datetime,
        chat: bool = False,
    ) -> _Work:
        """Decide merge-or-create for every candidate in order (light fields only), then
        fetch the chosen existing topics whole and fold the candidates in. In a chat with an
        assistant (``chat``) a side remark's candidate joins a topic of the sleep instead of
        making its own (``sleepwake.side_topics``)."""
        rows = [
            {
                "idx": i,
                "vector": v,
                "names": sorted(
                    {c.key, *number_variants(c.key), *c.alias_keys}
                    | {s.lower() for s in c.surfaces}
                ),
            }
            for i, (c, v) in enumerate(zip(candidates, vectors, strict=True))
        ]
        hits: dict[int, list[PoolHit]] = {}
        reads = self.store.sleep_reads(namespace, rows)  # the pool and the top topics, one read
        for hit in reads.hits:
            hits.setdefault(hit.idx, []).append(hit)
        self._fault("match")
        pool: dict[str, PoolTopic] = {}  # every topic considered, as matching sees it now
        created: dict[str, int] = {}  # topics this sleep creates -> the candidate that made it
        sims = _similarities(vectors)  # candidate x candidate cosines, one matrix product
        targets: list[tuple[str, bool]] = []  # per candidate: (topic id, is new)
        keys_of: dict[str, set[str]] = {}
        for i, cand in enumerate(candidates):
            options = {h.fields.topic_id: h.cosine for h in hits.get(i, [])}
            for h in hits.get(i, []):
                pool.setdefault(h.fields.topic_id, _pool_from_fields(h.fields))
            options.update({tid: float(sims[i, j]) for tid, j in created.items()})
            best = best_match(
                [
                    score(cand, pool[tid], cos, self.weights)
                    for tid, cos in options.items()
                    if not (cand.co_entities & keys_of.get(tid, set()))  # named together
                    or alias_score(cand.key, pool[tid].names, self.weights) > 0
                ],
                self.weights,
            )
            if best is None:
                # a new topic never takes a live topic's name (two "photo" topics read as one)
                taken = {name_identity(p.names[0]) for p in pool.values() if p.names}
                cand.label = distinct_label(cand, taken) or cand.label
                tid = stable_id(namespace, slice_id, cand.key)
                created[tid] = i
                pool[tid] = _pool_from_candidate(tid, cand)
                targets.append((tid, True))
            else:
                tid = best.topic_id
                pool[tid] = _absorb(pool[tid], cand)
                targets.append((tid, tid in created))
            keys_of.setdefault(tid, set()).add(cand.key)
        if chat:
            room = {tid: self.weights.max_facts - pool[tid].facts for tid, _ in targets}
            candidates, targets, order = fold_side_topics(candidates, targets, sims, room)
            candidates, vectors, targets = (
                [candidates[k] for k in order],
                [vectors[k] for k in order],
                [targets[k] for k in order],
            )
        work = self._fold(namespace, candidates, vectors, targets, slice_id, now)
        work.top = reads.top
        return work

    def _fold(
        self,
        namespace: str,
        candidates: list[Candidate],
        vectors: list[list[float]],
        targets: list[tuple[str, bool]],
        slice_id: str,
        now: datetime,
    ) -> _Work:
        work = _Work()
        existing = sorted({tid for tid, new in targets if not new})
        for topic in self.store.get_topics(namespace, existing):
            work.topics[topic.topic_id] = topic
            work.versions[topic.topic_id] = topic.version
            work.facts_before[topic.topic_id] = sum(f.invalid_at is None for f in topic.facts)
        for cand, vector, (tid, _new) in zip(candidates, vectors, targets, strict=True):
            if tid not in work.topics:
                topic = new_topic(cand, namespace, tid, self.embedder.model_name)
                work.versions[tid] = None
                work.vectors[tid] = vector
                summary = f"'{cand.name}' first seen: {topic.one_liner[:200]}"
            else:
                topic, summary = merge_candidate(work.topics[tid], cand)
            work.topics[tid] = topic
            work.by_key[cand.key] = tid
            work.updates.setdefault(tid, []).append((cand, summary, vector))
        work.events = [
            (_event(work.topics[tid], parts, slice_id, now), parts[0][2])
            for tid, parts in work.updates.items()
        ]
        return work

    def _topic_writes(self, namespace: str, work: _Work, blended: bool = False) -> list[TopicWrite]:
        """New topics carry their vector; an existing one a new vector only if its semantic
        text changed: in a ``blended`` sleep (a chat with an assistant) and for a text longer
        than ``BLEND_CHARS``, its stored vector blended with the vectors of
        the candidates folded into it (``blend``); else, or without a stored vector of this
        model, its text embedded (those texts together, in one call)."""
        changed: dict[str, str] = {}
        for tid, topic in work.topics.items():
            if work.versions[tid] is None:
                continue
            semantic = topic.semantic_text()
            if topic.embedding is not None and topic.embedding.hash == text_hash(semantic):
                continue
            changed[tid] = semantic
        same_model = [
            tid
            for tid, semantic in changed.items()
            if (meta := work.topics[tid].embedding) is not None
            and meta.model == self.embedder.model_name
            and len(semantic) > BLEND_CHARS
            and blended
        ]
        stored = self.store.topic_vectors(namespace, same_model) if same_model else {}
        fresh = {
            tid: blend(stored[tid], work.facts_before.get(tid, 0), work.updates.get(tid, []))
            for tid in changed
            if tid in stored
        }
        stale = [tid for tid in changed if tid not in fresh]
        vectors = self.embedder.embed([changed[tid] for tid in stale]) if stale else []
        fresh.update(zip(stale, vectors, strict=True))
        for tid, semantic in changed.items():
            work.topics[tid].embedding = EmbeddingMeta(
                model=self.embedder.model_name, hash=text_hash(semantic)
            )
        return [
            TopicWrite(
                topic,
                work.vectors[tid] if work.versions[tid] is None else fresh.get(tid),
                work.versions[tid],
            )
            for tid, topic in work.topics.items()
        ]

    # -- step 6: edges --------------------------------------------------------------------------
    def _edges(
        self, cands: SliceCandidates, subjects: list[SubjectHint], work: _Work
    ) -> list[LinkRequest]:
        weights: dict[tuple[str, str, EdgeType], float] = {}

        def add(a: str, b: str, etype: EdgeType, delta: float, cap: float | None = None) -> None:
            if a == b:
                return
            key = (a, b, etype)
            weights[key] = min(cap or float("inf"), weights.get(key, 0.0) + delta)

        for keys in cands.per_message.values():
            ids = list(dict.fromkeys(work.by_key[k] for k in keys[:6] if k in work.by_key))
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    x, y = sorted((a, b))
                    add(x, y, EdgeType.RELATES_TO, CO_ACTIVATION, MAX_CO_ACTIVATION)
        for dependent, dependency in cands.dependencies:
            src, dst = _find(dependent, work.by_key), _find(dependency, work.by_key)
            if src and dst:
                add(src, dst, EdgeType.DEPENDS_ON, 1.0)
        for subject in subjects:
            ids = list(dict.fromkeys(work.by_key[k] for k in _by_first_seen(subject, cands)))
            for a, b in itertools.pairwise(ids):
                add(a, b, EdgeType.NEXT, 1.0, 1.0)
                add(b, a, EdgeType.PREV, 1.0, 1.0)
        return [LinkRequest(a, b, t, w) for (a, b, t), w in weights.items()]

    # -- step 8: wake packet --------------------------------------------------------------------
    def _wake_packet(
        self,
        namespace: str,
        now: datetime,
        buffer: list[Message],
        piece: list[Message],
        cands: SliceCandidates,
        subjects: list[SubjectHint],
        work: _Work,
    ) -> WakePacket | None:
        if not buffer:
            return None
        tail = buffer[len(piece) :]
        salience = {
            work.by_key[k]: s.salience for s in subjects for k in s.keys if k in work.by_key
        }
        pool = {tid: (u, seen) for tid, u, seen in work.top}
        touched = set(work.by_key.values())
        pool.update(
            {
                tid: (t.stats.utility_score, t.time.last_seen_at)
                for tid, t in work.topics.items()
                if tid in touched
            }
        )
        ranked = sorted(
            pool,
            key=lambda tid: (
                -(
                    max(pool[tid][0], 0.1)
                    * tiers.recency(pool[tid][1], now)
                    * (0.5 + salience.get(tid, 0.0))
                )
            ),
        )
        return WakePacket(
            packet_id=stable_id(namespace, "wake", _slice_id(namespace, buffer), now.isoformat()),
            namespace=namespace,
            slept_at=now,
            conversation_tail=[
                TailTurn(role=m.role, content=m.content, at=m.at, message_id=m.message_id)
                for m in tail
            ],
            active_subject_hints=[s.label for s in subjects[:5]],
            top_topic_ids=ranked[:TOP_TOPICS],
            recent_skill_refs=_skill_refs(buffer),
            in_progress=_in_progress(cands, tail, work, self.weights),
        )

    def _subjects(
        self, namespace: str, now: datetime, subjects: list[SubjectHint], work: _Work
    ) -> list[Subject]:
        return [
            Subject(
                subject_id=stable_id(namespace, "subject", now.isoformat(), s.label),
                namespace=namespace,
                label=s.label,
                salience=s.salience,
                created_at=now,
                expires_at=now + self.policy.subject_ttl,
                topic_ids=[work.by_key[k] for k in s.keys if k in work.by_key],
            )
            for s in subjects
        ]

    def _fault(self, step: str) -> None:
        """Mark the end of a step: record its duration, then run the fault hook (tests)."""
        now = time.perf_counter()
        self._steps[step] = (now - self._mark) * 1000
        self._mark = now
        if self.faults is not None:
            self.faults(step)
        beat = getattr(self._local, "beat", None)
        # stop early: the commit would be refused anyway. Once committed, the sleep's work is
        # in the graph and counts, even if the lease expired and was taken over since.
        if step != "after_commit" and beat is not None and beat.lost:
            raise LeaseLost(f"sleep of {beat.namespace}: the lease was lost ({step})")


def _nothing_to_compact(namespace: str, reason: str, now: datetime, started: float) -> SleepSummary:
    """The summary of a policy sleep that found only the tail: nothing written, no packet."""
    return SleepSummary(
        namespace=namespace, reason=reason, slept_at=now, messages_compacted=0,
        topics_created=0, topics_updated=0, events=0, edges=0, subjects=[],
        wake_packet_id=None, in_progress=InProgress(),
        duration_ms=(time.perf_counter() - started) * 1000, skipped=True,
    )  # fmt: skip


class Heartbeat:
    """Renews a sleep's lease every third of its time to live, in a daemon thread, while the
    sleep runs; ``lost`` turns true when a renewal finds the lease gone (taken over)."""

    def __init__(
        self, store: SleepStoreProtocol, namespace: str, holder: str, clock: Clock, ttl: timedelta
    ) -> None:
        self.store, self.namespace, self.holder = store, namespace, holder
        self.clock, self.ttl = clock, ttl
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{namespace}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
        self._thread.join(timeout=5)

    def stop(self) -> None:
        """No more renewals (the sleep is over, or gave its lease back in its commit)."""
        self._stop.set()

    def _beat(self) -> None:
        interval = max(self.ttl.total_seconds() / 3, 0.05)
        while not self._stop.wait(interval):
            try:
                renewed = self.store.renew_lease(
                    self.namespace, self.holder, self.clock.now() + self.ttl
                )
            except Exception:  # Neo4j away for a moment: try again at the next beat
                log.warning("lease heartbeat of %s failed", self.namespace, exc_info=True)
                continue
            if not renewed and not self._stop.is_set():
                log.warning("sleep of %s lost its lease", self.namespace)
                self.lost = True
                return


def candidate_vectors(
    embedder: Embedder, cands: SliceCandidates, compose: bool = True
) -> list[list[float]]:
    """One unit vector per candidate, in order, in one embedding call. A candidate's
    semantic text is embedded (each distinct text once), unless it is longer than
    ``BLEND_CHARS``, ``compose`` is on (a chat with an assistant: ``Sleeper``) and
    segmentation embedded the turns of all its facts: then only its head ("name: lead fact")
    is embedded, and its vector is the mean of the head's and its facts' turns' vectors, each
    weighted by its characters (mean pooling weighs every word piece alike). Candidates' texts
    were a third of the word pieces a sleep of chat-assistant turns embedded
    (docs/evaluation.md)."""
    plans: list[tuple[str, list[tuple[Sequence[float], int]]] | None] = []
    wanted: list[str] = []
    for cand in cands.candidates:
        text = cand.semantic_text()
        plan = _composition(cand, text, cands.turn_vectors) if compose else None
        plans.append(plan)
        wanted.append(text if plan is None else plan[0])
    unique = list(dict.fromkeys(wanted))
    by_text = dict(zip(unique, embedder.embed(unique), strict=True))
    out: list[list[float]] = []
    for text, plan in zip(wanted, plans, strict=True):
        if plan is None:
            out.append(by_text[text])
        else:
            out.append(_weighted_unit([(by_text[text], len(text)), *plan[1]]))
    return out


def _composition(
    cand: Candidate, text: str, turn_vectors: dict[str, Sequence[float]]
) -> tuple[str, list[tuple[Sequence[float], int]]] | None:
    """(head, [(turn vector, weight) per fact]) when ``cand``'s vector can be composed (see
    ``candidate_vectors``), else None: its text is short, or a fact's turn has no vector."""
    if len(text) <= BLEND_CHARS or not turn_vectors:
        return None
    head, facts = cand.semantic_parts()
    parts: list[tuple[Sequence[float], int]] = []
    for fact in facts:
        vector = next((turn_vectors[m] for m in fact.source_message_ids if m in turn_vectors), None)
        if vector is None:
            return None
        parts.append((vector, len(unspoken(fact.text[:FACT_CHARS]))))
    return (head, parts) if parts else None


def _weighted_unit(parts: Sequence[tuple[Sequence[float], float]]) -> list[float]:
    """The unit-length weighted sum of ``parts`` (vector, weight); the first vector when they
    cancel out."""
    total = np.zeros(len(parts[0][0]), dtype=np.float64)
    for vector, weight in parts:
        total += np.asarray(vector, dtype=np.float64) * weight
    norm = float(np.linalg.norm(total))
    if norm == 0.0:
        return [float(x) for x in parts[0][0]]
    return [float(x) for x in total / norm]


def blend(
    stored: list[float], facts_before: int, parts: list[tuple[Candidate, str, list[float]]]
) -> list[float]:
    """A changed topic's new vector without embedding its text again: the unit-length mean of
    its stored vector and the vectors of the candidates folded into it this sleep, each
    weighted by the facts it stands for (at most the ``VECTOR_FACTS`` + 1 a semantic text
    holds, at least one). Mean pooling makes a text's vector close to the length-weighted mean
    of its parts' vectors, and a candidate's vector already embeds its name, lead and facts, so
    the topic's semantic text need not be read again: it was 16% of the word pieces a sleep of
    chat-assistant turns embedded, the longest texts of all (docs/evaluation.md)."""
    cap = VECTOR_FACTS + 1
    weighted: list[tuple[Sequence[float], float]] = [(stored, min(max(facts_before, 1), cap))]
    weighted += [(vector, min(max(len(cand.facts), 1), cap)) for cand, _s, vector in parts]
    return _weighted_unit(weighted)


def _similarities(vectors: list[list[float]]) -> np.ndarray:
    """Cosine of every pair of (unit-length) candidate vectors."""
    if not vectors:
        return np.zeros((0, 0))
    matrix = np.asarray(vectors, dtype=np.float64)
    return matrix @ matrix.T


def _pool(topic: Topic) -> PoolTopic:
    names = tuple(dict.fromkeys([topic.name.lower(), *(a.lower() for a in topic.aliases)]))
    text = " ".join([topic.name, topic.one_liner, *(f.text for f in topic.facts[-50:])]).lower()
    first, last = topic.time.first_seen_at, topic.time.last_seen_at
    return PoolTopic(topic.topic_id, names, text, first, last, len(topic.facts))


def _pool_from_fields(f: MatchFields) -> PoolTopic:
    names = tuple(dict.fromkeys([f.name.lower(), *(a.lower() for a in f.aliases)]))
    text = " ".join([f.name, f.one_liner, *f.facts]).lower()
    return PoolTopic(f.topic_id, names, text, f.first_seen_at, f.last_seen_at, len(f.facts))


def _pool_from_candidate(topic_id: str, cand: Candidate) -> PoolTopic:
    assert cand.first_at is not None and cand.last_at is not None
    empty = PoolTopic(topic_id, (cand.name.lower(),), "", cand.first_at, cand.last_at)
    return _absorb(empty, cand)


def _absorb(topic: PoolTopic, cand: Candidate) -> PoolTopic:
    """How matching sees a topic after ``cand`` was folded into it."""
    names = tuple(dict.fromkeys([*topic.names, *(s.lower() for s in cand.user_surfaces)]))
    text = " ".join([topic.text, *(f.text.lower() for f in cand.facts)])[-20_000:]
    first = min(topic.first_seen_at, cand.first_at or topic.first_seen_at)
    last = max(topic.last_seen_at, cand.last_at or topic.last_seen_at)
    return PoolTopic(topic.topic_id, names, text, first, last, topic.facts + len(cand.facts))


def _event(
    topic: Topic, parts: list[tuple[Candidate, str, list[float]]], slice_id: str, now: datetime
) -> TopicEvent:
    """One TopicEvent per topic per sleep: what changed, when, from which messages."""
    cands = [c for c, _, _ in parts]
    message_ids = list(dict.fromkeys(m for c in cands for m in c.message_ids))
    firsts = [c.first_seq for c in cands if c.first_seq is not None]
    lasts = [c.last_seq for c in cands if c.last_seq is not None]
    return TopicEvent(
        event_id=stable_id(topic.namespace, slice_id, topic.topic_id, "event"),
        namespace=topic.namespace,
        topic_id=topic.topic_id,
        at=max((c.last_at for c in cands if c.last_at is not None), default=now),
        delta_summary=" | ".join(summary for _, summary, _ in parts)[:2000],
        source_message_ids=message_ids[:500],
        first_seq=min(firsts) if firsts else None,
        last_seq=max(lasts) if lasts else None,
    )


def _slice_id(namespace: str, messages: list[Message]) -> str:
    digest = hashlib.sha256(namespace.encode())
    for m in messages:
        digest.update(m.message_id.encode())
    return digest.hexdigest()[:24]


def _find(phrase: str, by_key: dict[str, str]) -> str | None:
    """The topic of the candidate key that best matches a dependency phrase."""
    if phrase in by_key:
        return by_key[phrase]
    inside = [k for k in by_key if k and (k in phrase or phrase in k)]
    return by_key[max(inside, key=len)] if inside else None


def _by_first_seen(subject: SubjectHint, cands: SliceCandidates) -> list[str]:
    order = {c.key: (c.first_seq or 0) for c in cands.candidates}
    return sorted((k for k in subject.keys if k in order), key=lambda k: order[k])


def _skill_refs(messages: list[Message]) -> list[str]:
    refs: list[str] = []
    for m in reversed(messages):
        for call in m.tool_calls:
            name = str(call.get("name", ""))
            args = call.get("arguments") or call.get("args") or {}
            skill = args.get("skill_id") if isinstance(args, dict) else None
            if name in {"skills_run", "skills.run"} and skill:
                ref = f"skill:{skill}"
                if ref not in refs:
                    refs.append(ref)
    return refs[:5]


def _in_progress(
    cands: SliceCandidates, tail: list[Message], work: _Work, weights: MergeConfig
) -> InProgress:
    """The latest mid-task statement in the slice or the tail, as a resume hint."""
    latest = cands.in_progress
    for m in tail:
        if m.role == "user":
            found = find_in_progress(m.content)
            if found is not None:
                latest = (found, m)
    if latest is None:
        return InProgress()
    found, _message = latest
    hint = found.goal + (f"; next step: {found.next_step}" if found.next_step else "")
    return InProgress(
        status="running", resume_hint=hint[:1000], topic_id=_goal_topic(found, work, weights)
    )


def _goal_topic(found: ExtractedProgress, work: _Work, weights: MergeConfig) -> str | None:
    """The topic the unfinished task is about: the best name/alias overlap with its goal."""
    goal = found.goal.lower()
    best: tuple[float, str] | None = None
    for tid, topic in work.topics.items():
        overlap = alias_score(goal, _pool(topic).names, weights)
        if overlap > 0 and (best is None or overlap > best[0]):
            best = (overlap, tid)
    return best[1] if best else None
