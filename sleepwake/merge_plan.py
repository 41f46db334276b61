"""Sleep steps 4 and 5: match each candidate to a topic, then fold it in. Pure (no store).

``choose_targets`` decides merge-or-create for every candidate in order, on the light fields
the sleep read of the pool (``graph.sleep.MatchFields``) and on the topics this sleep creates
itself; ``fold`` folds the candidates into the chosen topics, read whole. The weights are
``MergeConfig`` (sleepwake/config.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from graph.models import Message, Topic, TopicEvent
from graph.sleep import MatchFields, PoolHit
from sleepwake.candidates import Candidate
from sleepwake.config import DEFAULT, MergeConfig, SleepConfig
from sleepwake.matching import PoolTopic, alias_score, best_match, score
from sleepwake.names_apart import distinct_label, name_identity, number_variants
from sleepwake.normalise import merge_candidate, new_topic, stable_id
from sleepwake.side_topics import fold_side_topics

Target = tuple[str, bool]  # (topic id, is new)
Part = tuple[Candidate, str, list[float]]  # a candidate folded in, its summary, its vector


@dataclass
class Work:
    """The topics a sleep is building: current state, original version, vector, candidates."""

    topics: dict[str, Topic] = field(default_factory=dict)
    versions: dict[str, int | None] = field(default_factory=dict)
    vectors: dict[str, list[float]] = field(default_factory=dict)
    facts_before: dict[str, int] = field(default_factory=dict)  # an existing topic's, as read
    by_key: dict[str, str] = field(default_factory=dict)  # candidate key -> topic id
    updates: dict[str, list[Part]] = field(default_factory=dict)
    events: list[tuple[TopicEvent, list[float]]] = field(default_factory=list)
    top: list[tuple[str, float, datetime]] = field(default_factory=list)  # most useful topics


def match_rows(
    candidates: list[Candidate],
    vectors: list[list[float]],
    also: Mapping[int, set[str]] | None = None,
) -> list[dict[str, object]]:
    """What the pool read looks up per candidate: its vector and every name it goes by, its
    label too ("John's community" for the phrase "community": a live topic of that name is
    then in its pool, so a new topic is named apart from it), and ``also``'s further names by
    candidate index (its owner's area, ``aspects.area_lookups``)."""
    more = also or {}
    return [
        {
            "idx": i,
            "vector": v,
            "names": sorted(
                {c.key, c.name.lower(), *number_variants(c.key), *c.alias_keys}
                | {s.lower() for s in c.surfaces}
                | more.get(i, set())
            ),
        }
        for i, (c, v) in enumerate(zip(candidates, vectors, strict=True))
    ]


def choose_targets(
    namespace: str,
    slice_id: str,
    candidates: list[Candidate],
    sims: np.ndarray,
    hits: list[PoolHit],
    weights: MergeConfig,
    people: frozenset[str] | set[str] = frozenset(),
) -> tuple[list[Target], dict[str, PoolTopic]]:
    """Per candidate, in order: the topic it joins (an existing one, or one this sleep
    creates), and the pool as matching sees it after. A new topic never takes a live topic's
    name (two "photo" topics read as one). A topic named by one of ``people`` (the slice's
    speakers) takes only that person's candidate (``sleepwake.people``)."""
    by_idx: dict[int, list[PoolHit]] = {}
    for hit in hits:
        by_idx.setdefault(hit.idx, []).append(hit)
    pool: dict[str, PoolTopic] = {}  # every topic considered, as matching sees it now
    created: dict[str, int] = {}  # topics this sleep creates -> the candidate that made it
    targets: list[Target] = []
    keys_of: dict[str, set[str]] = {}
    for i, cand in enumerate(candidates):
        options = {h.fields.topic_id: h.cosine for h in by_idx.get(i, [])}
        for h in by_idx.get(i, []):
            pool.setdefault(h.fields.topic_id, _pool_from_fields(h.fields))
        options.update({tid: float(sims[i, j]) for tid, j in created.items()})
        best = best_match(
            [
                score(cand, pool[tid], cos, weights)
                for tid, cos in options.items()
                if (cand.person or cand.theme or not set(pool[tid].names[:1]) & people)
                and (
                    not (cand.co_entities & keys_of.get(tid, set()))  # named together
                    or alias_score(cand.key, pool[tid].names, weights) > 0
                )
            ],
            weights,
        )
        if best is None:
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
    return targets, pool


def fold_remarks(
    candidates: list[Candidate],
    vectors: list[list[float]],
    targets: list[Target],
    sims: np.ndarray,
    pool: dict[str, PoolTopic],
    cfg: SleepConfig,
    chat: bool = True,
    kept: frozenset[str] = frozenset(),
) -> tuple[list[Candidate], list[list[float]], list[Target]]:
    """A side remark's candidate joins a topic of the sleep instead of making its own
    (``sleepwake.side_topics``); reordered to fold them last. In a chat with an assistant
    (``chat``) a remark is ``side_remark_facts`` facts at most, in talk between people an
    aside ``aside_topic_facts`` (never one in ``kept``: ``side_topics.structured``); a
    person's or a theme's candidate is never one."""
    room = {tid: cfg.merge.max_facts - pool[tid].facts for tid, _ in targets}
    extraction = cfg.extraction
    remark = extraction.side_remark_facts if chat else extraction.aside_topic_facts
    floor = -1.0 if chat else cfg.merge.floor_cosine  # an aside joins only what it is near
    candidates, targets, order = fold_side_topics(
        candidates, targets, sims, room, remark, floor, frozenset() if chat else kept
    )
    return (
        [candidates[k] for k in order],
        [vectors[k] for k in order],
        [targets[k] for k in order],
    )


def fold(
    existing: list[Topic],
    namespace: str,
    chosen: tuple[list[Candidate], list[list[float]], list[Target]],
    slice_id: str,
    now: datetime,
    model_name: str,
    cfg: SleepConfig = DEFAULT,
) -> Work:
    """Fold each candidate into its target (``existing``: the chosen existing topics, whole),
    with one event per changed topic."""
    work = Work()
    for topic in existing:
        work.topics[topic.topic_id] = topic
        work.versions[topic.topic_id] = topic.version
        work.facts_before[topic.topic_id] = sum(f.invalid_at is None for f in topic.facts)
    for cand, vector, (tid, _new) in zip(*chosen, strict=True):
        if tid not in work.topics:
            topic = new_topic(cand, namespace, tid, model_name, cfg)
            work.versions[tid] = None
            work.vectors[tid] = vector
            summary = f"'{cand.name}' first seen: {topic.one_liner[:200]}"
        else:
            topic, summary = merge_candidate(work.topics[tid], cand, cfg)
        work.topics[tid] = topic
        work.by_key[cand.key] = tid
        work.updates.setdefault(tid, []).append((cand, summary, vector))
    work.events = [
        (_event(work.topics[tid], parts, slice_id, now), parts[0][2])
        for tid, parts in work.updates.items()
    ]
    return work


def pool_of(topic: Topic) -> PoolTopic:
    """How matching sees a whole topic."""
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


def _event(topic: Topic, parts: list[Part], slice_id: str, now: datetime) -> TopicEvent:
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


def slice_id_of(namespace: str, messages: list[Message]) -> str:
    """A slice's deterministic id: a re-run after a crash writes exactly what one run would."""
    digest = hashlib.sha256(namespace.encode())
    for m in messages:
        digest.update(m.message_id.encode())
    return digest.hexdigest()[:24]
