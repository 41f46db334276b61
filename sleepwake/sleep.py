"""The sleep pipeline (spec §4.2), crash-safe and one-at-a-time per namespace.

``Sleeper`` keeps the lease, its heartbeat and the retry loop; each sleep is a ``SleepRun``,
whose ``run`` reads top to bottom, one method per step:

1 slice (keep the last T turns)  2 extraction and topic formation  3 embedding  4 subjects
5 matching (§8.1)  6 normalisation  7 edges  8 wake packet  9 commit (mark compacted; never
delete; utility decays in the commit's transaction).

Steps 1-8 compute a ``SleepCommit`` without writing; it is committed in one transaction, which
also trims the buffer, so a crash anywhere leaves either the old memory or the new one. A lease
in Neo4j keeps two sleeps off one namespace; ids are deterministic, so a re-run after a crash
writes exactly what one clean run would. Every tuning number: ``SleepConfig``
(sleepwake/config.py).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import Any

from pydantic import BaseModel, PrivateAttr

from graph.clock import Clock, SystemClock, ensure_utc
from graph.errors import LeaseLost, VersionConflict
from graph.models import EmbeddingMeta, InProgress, Message, Subject, WakePacket
from graph.protocols import MessageStoreProtocol, SleepStoreProtocol
from graph.sleep import DecayParams, SleepCommit, SleepReads, TopicWrite
from graph.topics import LinkRequest
from graph.tracing import traced
from retrieval.embedding import Embedder, cache_scope, text_hash
from sleepwake.absorb import absorb_episodes, absorb_seeds, bounded
from sleepwake.aspects import SAID, area_lookups, areas_of, file_aspects, seed_aspects
from sleepwake.candidates import SliceCandidates, build_candidates
from sleepwake.config import SleepConfig, SleepPolicy, TiersConfig
from sleepwake.episodes import form_topics
from sleepwake.extract import Extraction
from sleepwake.lease import Heartbeat
from sleepwake.life_states import close_changed_states
from sleepwake.llm_extract import ResponsesExtractor
from sleepwake.merge_plan import Work, choose_targets, fold, fold_remarks, match_rows, slice_id_of
from sleepwake.packet import edges, subject_rows, wake_packet
from sleepwake.people import speakers_of, with_people
from sleepwake.policy import SleepReason, select_slice
from sleepwake.side_topics import structured, with_assistant
from sleepwake.subjects import SubjectHint, compute_subjects
from sleepwake.theme_words import SAME, ThemeWords, known_words, theme_words
from sleepwake.themes import (
    covered_themes_dropped,
    keep_recurring,
    part_of,
    seed_themes,
    subject_words,
    with_themes,
)
from sleepwake.topic_vectors import blend, candidate_vectors, similarities

log = logging.getLogger(__name__)

STEPS = (
    "slice", "extract", "embed", "subjects", "match", "normalise", "edges", "wake_packet",
    "commit", "after_commit",
)  # fmt: skip


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


class Sleeper:
    """Runs sleeps: takes the lease (unless the caller holds it), keeps it alive with a
    heartbeat, and recomputes a sleep that raced a writer; the work is a ``SleepRun``."""

    def __init__(
        self,
        messages: MessageStoreProtocol,
        store: SleepStoreProtocol,
        embedder: Embedder,
        policy: SleepPolicy | None = None,
        tz: str = "UTC",
        *,
        config: SleepConfig | None = None,
        lease_clock: Clock | None = None,
        faults: Callable[[str], None] | None = None,
        extractor: ResponsesExtractor | None = None,
    ) -> None:
        """``config``: every tuning number; ``policy`` alone: the defaults with this policy."""
        if config is not None and policy is not None:
            raise ValueError("give the policy inside the config, not beside it")
        self.messages = messages
        self.store = store
        self.embedder = embedder
        self.config = config or SleepConfig(policy=policy or SleepPolicy())
        self.tz = tz
        self.lease_clock = lease_clock or SystemClock()
        self.faults = faults
        self.extractor = extractor
        self._local = threading.local()  # the heartbeat of the sleep running in this thread

    @property
    def policy(self) -> SleepPolicy:
        return self.config.policy

    @policy.setter
    def policy(self, value: SleepPolicy) -> None:
        self.config = self.config.model_copy(update={"policy": value})

    @traced("sleep", namespace="namespace")
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
        ttl = self.config.policy.lease_ttl
        if own:
            wall = self.lease_clock.now()
            self.store.acquire_lease(namespace, holder, wall, wall + ttl)
        beat = Heartbeat(self.store, namespace, holder, self.lease_clock, ttl)
        self._local.beat = beat
        summary: SleepSummary | None = None
        try:
            with beat:
                for attempt in range(3):
                    try:
                        summary = self._run(namespace, now, reason, holder, through, own)
                        return summary
                    except VersionConflict:
                        log.info("sleep of %s raced a writer; recomputing (%d)", namespace, attempt)
                summary = self._run(namespace, now, reason, holder, through, own)
                return summary
        finally:
            self._local.beat = None
            # a sleep that committed gave its own lease back in the commit's transaction
            if own and (summary is None or summary.skipped):
                self.store.release_lease(namespace, holder)

    def _run(
        self,
        namespace: str,
        now: datetime,
        reason: str,
        holder: str,
        through: datetime | None,
        release: bool,
    ) -> SleepSummary:
        beat: Heartbeat | None = getattr(self._local, "beat", None)
        run = SleepRun(self, namespace, now, reason, beat)
        return run.run(holder, through, release)


class SleepRun:
    """One sleep of one namespace: the slice, the candidates, their vectors, the plan and the
    step timings, one method per step; ``run`` calls them in order. Nothing is written before
    ``commit``."""

    buffer: list[Message]
    piece: list[Message]
    cands: SliceCandidates
    report: dict[str, Any]
    chat: bool
    vectors: list[list[float]]
    subjects: list[SubjectHint]
    slice_id: str
    reads: SleepReads
    work: Work
    links: list[LinkRequest]
    packet: WakePacket | None
    plan: SleepCommit

    def __init__(
        self, sleeper: Sleeper, namespace: str, now: datetime, reason: str, beat: Heartbeat | None
    ) -> None:
        self.sleeper, self.config = sleeper, sleeper.config
        self.namespace, self.now, self.reason, self.beat = namespace, now, reason, beat
        self.started = self.mark = time.perf_counter()
        self.steps: dict[str, float] = {}
        self.seeded: dict[str, list[str]] = {}  # a new theme topic -> the topics it came from
        self.words = SAME  # which of each speaker's words are one theme (extract)
        self.owned: list[str] = []  # the speakers' theme names and aliases (lower-cased)

    def run(self, holder: str, through: datetime | None, release: bool) -> SleepSummary:
        """The sleep, step by step; a policy sleep that would compact nothing writes nothing.
        Its texts are embedded for its namespace alone (``cache_scope``)."""
        with cache_scope(self.namespace):
            return self._steps(holder, through, release)

    def _steps(self, holder: str, through: datetime | None, release: bool) -> SleepSummary:
        self.take_slice(through)
        if not self.piece and self.reason != "explicit":
            return self.nothing_to_compact()
        self.extract()
        self.embed()
        self.find_subjects()
        self.match()
        self.normalise()
        self.link()
        self.pack()
        self.commit(holder, release)
        return self.summary()

    @traced("sleep.slice")
    def take_slice(self, through: datetime | None) -> None:
        """Step 1: the buffer (up to ``through``) minus the tail."""
        buffer = self.sleeper.messages.buffer(self.namespace)
        self.buffer = [m for m in buffer if m.at <= through] if through is not None else buffer
        self.piece = select_slice(self.buffer, self.config.policy)
        self._done("slice")

    @traced("sleep.extract")
    def extract(self) -> None:
        """Step 2: candidates, by the LLM extractor when one is configured, else by the rules
        and topic formation (``sleepwake.episodes``)."""
        extractions, self.report = self._extractions()
        tz, extraction = self.sleeper.tz, self.config.extraction
        cands = build_candidates(self.piece, tz, extractions, extraction)
        # the LLM extractor names its topics itself (sleepwake/llm_extract); when any of its
        # chunks fell back, the slice takes the deterministic path whole
        if self.report["mode"] != "llm":
            embed, formation = self.sleeper.embedder.embed, self.config.formation
            cands = form_topics(self.piece, cands, cands.extractions, embed, tz, formation)
        if self.config.formation.person_facts:
            cands = with_people(self.piece, cands, self.config.formation)
        self.words = self._theme_words(cands)
        cands = with_themes(self.piece, cands, self.config.formation, self.words)
        embed = self.sleeper.embedder.embed  # areas of a life (docs/topics.md, "Aspects")
        self.cands = file_aspects(self.piece, cands, self.config, embed, tz)
        self._done("extract")

    def _place(self, words: Iterable[str]) -> dict[str, str]:
        """Words -> the areas of a life they belong to (``sleepwake.aspects``)."""
        return areas_of(words, self.config.aspects, self.sleeper.embedder.embed)

    def _theme_words(self, cands: SliceCandidates) -> ThemeWords:
        """Which words of each speaker are one theme (``sleepwake.theme_words``; ``owned``)."""
        formation = self.config.formation
        if not formation.theme_facts or not formation.theme_word_cosine:
            return SAME
        said, lines = subject_words(self.piece, cands)
        if not any(said.values()):
            return SAME
        self.owned = self.sleeper.store.theme_names(self.namespace, [f"{o}'s " for o in said])
        known, named = known_words(self.owned, sorted(said))
        embed, floor = self.sleeper.embedder.embed, formation.theme_word_cosine
        return theme_words(said, known, embed, floor, named, lines)

    def _extractions(self) -> tuple[dict[str, Extraction], dict[str, Any]]:
        extractor = self.sleeper.extractor
        if extractor is None or not self.piece:
            return {}, {"mode": "deterministic"}
        found, stats = extractor.extract_many(self.piece)
        return found, stats.report()

    @traced("sleep.embed")
    def embed(self) -> None:
        """Step 3: one vector per candidate (composed in a chat with an assistant)."""
        self.chat = with_assistant(self.piece, self.config.formation.chat_answer_chars)
        blend_chars = self.config.utility.blend_chars
        embedder = self.sleeper.embedder
        self.vectors = candidate_vectors(embedder, self.cands, self.chat, blend_chars)
        self._done("embed")

    @traced("sleep.subjects")
    def find_subjects(self) -> None:
        """Step 4: communities of co-mentioned and similar candidates."""
        cands = self.cands
        by_key = {c.key: v for c, v in zip(cands.candidates, self.vectors, strict=True)}
        self.subjects = compute_subjects(
            cands.candidates, cands.per_message, by_key, self.config.subjects
        )
        self._done("subjects")

    @traced("sleep.match")
    def match(self) -> None:
        """Step 5, the read: the pool of topics like the candidates, and the top topics."""
        self.slice_id = slice_id_of(self.namespace, self.piece)
        also = area_lookups(self.cands.candidates, self.owned, self._place, self.config.aspects)
        rows = match_rows(self.cands.candidates, self.vectors, also)
        self.reads = self.sleeper.store.sleep_reads(self.namespace, rows)
        self._done("match")

    @traced("sleep.normalise")
    def normalise(self) -> None:
        """Step 6: merge-or-create for every candidate, then each folded into its topic."""
        found = keep_recurring(self.cands.candidates, self.vectors, self.reads.hits)
        read = partial(self.sleeper.store.get_topics, self.namespace)
        found = seed_aspects(*found, read, self.seeded, self.config, self._place)
        candidates, vectors, hits = seed_themes(*found, read, self.seeded, self.config, self.words)
        self.cands.candidates, self.vectors, merge = candidates, vectors, self.config.merge
        sims = similarities(vectors)  # candidate x candidate cosines, one matrix product
        themes = {c.key for c in candidates if c.theme and c.theme != SAID}
        people = speakers_of(self.piece) | themes  # their topics take only their own
        targets, pool = choose_targets(
            self.namespace, self.slice_id, candidates, sims, hits, merge, people
        )
        chosen = covered_themes_dropped(candidates, vectors, targets, self.seeded)
        self.cands.candidates = chosen[0]
        kept = structured(chosen[0], self.cands.dependencies)
        chosen = fold_remarks(*chosen, sims, pool, self.config, self.chat, kept)
        chosen, took = absorb_episodes(*chosen, self.config)  # consolidation (docs/topics.md)
        existing = sorted({tid for tid, new in chosen[2] if not new})
        topics = self.sleeper.store.get_topics(self.namespace, existing)
        model = self.sleeper.embedder.model_name
        self.work = fold(
            topics, self.namespace, chosen, self.slice_id, self.now, model, self.config
        )
        took |= absorb_seeds(self.work, self.seeded, read, self.config, self.slice_id, self.now)
        bounded(self.work, took, self.config)
        self.work.top = self.reads.top
        close_changed_states(
            self.work, self.sleeper.store, self.namespace, self.piece, self.config.formation
        )
        self._done("normalise")

    @traced("sleep.edges")
    def link(self) -> None:
        """Step 7: edges between the sleep's topics."""
        self.links = edges(self.cands, self.subjects, self.work, self.config)
        self.links += part_of(self.cands.candidates, self.work.by_key, self.seeded)
        self._done("edges")

    @traced("sleep.wake_packet")
    def pack(self) -> None:
        """Step 8: the wake packet."""
        self.packet = wake_packet(
            self.namespace, self.now, self.buffer, self.piece, self.cands, self.subjects,
            self.work, self.config,
        )  # fmt: skip
        self._done("wake_packet")

    @traced("sleep.commit")
    def commit(self, holder: str, release: bool) -> None:
        """Step 9: everything in one transaction, which also trims the buffer, decays
        utility, and (``release``) gives the lease back."""
        self.plan = SleepCommit(
            namespace=self.namespace,
            now=self.now,
            topics=self._topic_writes(),
            events=[(e, v) for e, v in self.work.events],
            links=self.links,
            subjects=self._subject_rows(),
            wake_packet=self.packet,
            compacted_message_ids=[m.message_id for m in self.piece],
            lease_holder=holder,
            release_lease=release,
            decay=_decay(self.config.tiers),
        )
        self._done("commit")
        self.sleeper.store.commit(self.plan)
        if self.plan.release_lease and self.beat is not None:
            self.beat.stop()  # given back: a renewal now would find it gone
        self._done("after_commit")
        self.steps.update({f"commit.{k}": v for k, v in self.plan.timings.items()})

    def _subject_rows(self) -> list[Subject]:
        return subject_rows(self.namespace, self.now, self.subjects, self.work, self.config)

    def _topic_writes(self) -> list[TopicWrite]:
        """New topics carry their vector; an existing one a new vector only if its semantic
        text changed: in a chat with an assistant and for a text longer than ``blend_chars``,
        its stored vector blended with the vectors of the candidates folded into it
        (``blend``); else, or without a stored vector of this model, its text embedded
        (those texts together, in one call)."""
        work, embedder = self.work, self.sleeper.embedder
        changed: dict[str, str] = {}
        for tid, topic in work.topics.items():
            if work.versions[tid] is None:
                continue
            semantic = topic.semantic_text()
            if topic.embedding is None or topic.embedding.hash != text_hash(semantic):
                changed[tid] = semantic
        fresh = self._blended(changed)
        stale = [tid for tid in changed if tid not in fresh]
        vectors = embedder.embed([changed[tid] for tid in stale]) if stale else []
        fresh.update(zip(stale, vectors, strict=True))
        for tid, semantic in changed.items():
            meta = EmbeddingMeta(model=embedder.model_name, hash=text_hash(semantic))
            work.topics[tid].embedding = meta
        return [
            TopicWrite(
                topic,
                work.vectors[tid] if work.versions[tid] is None else fresh.get(tid),
                work.versions[tid],
            )
            for tid, topic in work.topics.items()
        ]

    def _blended(self, changed: dict[str, str]) -> dict[str, list[float]]:
        """The changed topics whose new vector is blended, not embedded (``_topic_writes``)."""
        work, model = self.work, self.sleeper.embedder.model_name
        same_model = [
            tid
            for tid, semantic in changed.items()
            if (meta := work.topics[tid].embedding) is not None
            and meta.model == model
            and len(semantic) > self.config.utility.blend_chars
            and self.chat
        ]
        store = self.sleeper.store
        stored = store.topic_vectors(self.namespace, same_model) if same_model else {}
        return {
            tid: blend(stored[tid], work.facts_before.get(tid, 0), work.updates.get(tid, []))
            for tid in changed
            if tid in stored
        }

    def summary(self) -> SleepSummary:
        work, packet = self.work, self.packet
        created = sum(1 for v in work.versions.values() if v is None)
        summary = SleepSummary(
            namespace=self.namespace,
            reason=self.reason,
            slept_at=self.now,
            messages_compacted=len(self.piece),
            topics_created=created,
            topics_updated=len(work.topics) - created,
            events=len(work.events),
            edges=len(self.links),
            subjects=[s.label for s in self.subjects],
            wake_packet_id=packet.packet_id if packet else None,
            in_progress=packet.in_progress if packet else InProgress(),
            duration_ms=(time.perf_counter() - self.started) * 1000,
            step_ms=dict(self.steps),
            extraction=self.report,
        )
        summary._left = self.buffer[len(self.piece) :]
        return summary

    def nothing_to_compact(self) -> SleepSummary:
        """The summary of a policy sleep that found only the tail: nothing written, no packet."""
        nothing = SleepSummary(
            namespace=self.namespace, reason=self.reason, slept_at=self.now,
            messages_compacted=0, topics_created=0, topics_updated=0, events=0, edges=0,
            subjects=[], wake_packet_id=None, in_progress=InProgress(),
            duration_ms=(time.perf_counter() - self.started) * 1000, skipped=True,
        )  # fmt: skip
        nothing._left = self.buffer
        return nothing

    def _done(self, step: str) -> None:
        """Mark the end of a step: record its duration, then run the fault hook (tests)."""
        now = time.perf_counter()
        self.steps[step] = (now - self.mark) * 1000
        self.mark = now
        if self.sleeper.faults is not None:
            self.sleeper.faults(step)
        # stop early: the commit would be refused anyway. Once committed, the sleep's work is
        # in the graph and counts, even if the lease expired and was taken over since.
        if step != "after_commit" and self.beat is not None and self.beat.lost:
            raise LeaseLost(f"sleep of {self.beat.namespace}: the lease was lost ({step})")


def _decay(cfg: TiersConfig) -> DecayParams:
    """The commit's decay of utility (``sleepwake.tiers``), applied in its transaction."""
    return DecayParams(
        cfg.decay_min_hours,
        cfg.decay_per_day,
        cfg.hot_days,
        cfg.warm_days,
        cfg.hot_utility,
        cfg.warm_utility,
    )
