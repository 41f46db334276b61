"""SleepStore: the graph side of a sleep — the lease, the match pool, and one atomic commit.

Everything a sleep writes (topics created and updated, events, edges, subjects, the wake packet,
decay, and marking the slice compacted) is committed in ONE transaction: a crash at any point
before the commit leaves the graph as it was, and the buffer is trimmed exactly when the topic
writes commit. Ids are deterministic, so a re-run writes the same nodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction, Record

from graph.clock import ensure_utc
from graph.cypher import query
from graph.errors import AlreadyRunning, LeaseLost, VersionConflict
from graph.fulltext import name_query
from graph.mapping import (
    redact_event,
    redact_subject,
    redact_topic,
    redact_wake_packet,
    topic_from_props,
    topic_props,
    update_props,
    wake_packet_from_props,
    wake_packet_props,
)
from graph.models import Subject, Topic, TopicEvent, WakeCheck, WakePacket, WakeState, edge_type
from graph.redaction import Redactor
from graph.topics import LinkRequest, StateTopicReads, check_vector

EXACT_MATCH_MAX = 5000  # namespaces up to this many topics are matched by exact cosine
THEME_NAMES_MAX = 500  # the themes a sleep reads for its speakers (a long life has a few dozen)


@dataclass
class TopicWrite:
    topic: Topic
    vector: Sequence[float] | None
    expected_version: int | None  # None: create


@dataclass
class DecayParams:
    min_hours: float
    per_day: float
    hot_days: float
    warm_days: float
    hot_utility: float
    warm_utility: float


@dataclass
class SleepCommit:
    namespace: str
    now: datetime
    topics: list[TopicWrite] = field(default_factory=list)
    events: list[tuple[TopicEvent, Sequence[float] | None]] = field(default_factory=list)
    links: list[LinkRequest] = field(default_factory=list)
    subjects: list[Subject] = field(default_factory=list)
    wake_packet: WakePacket | None = None
    compacted_message_ids: list[str] = field(default_factory=list)
    decay: DecayParams | None = None
    lease_holder: str | None = None  # the commit is refused unless this still holds the lease
    release_lease: bool = False  # ... and gives it back in the same transaction
    timings: dict[str, float] = field(default_factory=dict)  # ms per write, filled by commit


@dataclass(frozen=True)
class MatchFields:
    """What sleep matching needs of a topic (light: no facts_json, no vector)."""

    topic_id: str
    name: str
    aliases: tuple[str, ...]
    one_liner: str
    facts: tuple[str, ...]  # the latest fact texts
    first_seen_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class PoolHit:
    idx: int
    fields: MatchFields
    cosine: float


@dataclass(frozen=True)
class SleepReads:
    """What a sleep reads of the graph once its candidates are embedded (one transaction)."""

    hits: list[PoolHit]
    top: list[tuple[str, float, datetime]]  # (topic_id, utility_score, last_seen_at)


Run = Callable[[str, dict[str, Any]], list[Record]]


def _runner(tx: ManagedTransaction) -> Run:
    """Run one query inside ``tx`` and return its records."""
    return lambda text, params: list(tx.run(text, params))


def _pool_hits(
    run: Run, namespace: str, rows: list[dict[str, Any]], k: int, overfetch: int
) -> list[PoolHit]:
    """``SleepStore.match_pool`` inside a transaction: the count, the index or exact scan, the
    fields of every topic found (each once)."""
    for row in rows:
        row["vector"] = check_vector(row["vector"])
        row["lucene"] = name_query(namespace, row["names"])
    count = int(run(query("count_topics"), {"namespace": namespace})[0]["n"])
    if count <= EXACT_MATCH_MAX:  # small enough to score exactly: deterministic, cheap
        records: list[Any] = []
        short = rows
    else:
        params = {"namespace": namespace, "rows": rows, "k": k, "fetch": max(20, k * overfetch)}
        records = run(query("match_topic_candidates"), params)
        found: dict[int, int] = {}
        for r in records:
            if r["via"] == "vector":
                found[r["idx"]] = found.get(r["idx"], 0) + 1
        short = [row for row in rows if found.get(row["idx"], 0) < min(k, count)]
    if short:
        redo = {row["idx"] for row in short}
        records = [r for r in records if r["idx"] not in redo]
        records += run(
            query("scan_topic_candidates"), {"namespace": namespace, "rows": short, "k": k}
        )
    ids = list(dict.fromkeys(r["topic_id"] for r in records))
    fields = _fields(
        run(query("get_topic_match_fields"), {"namespace": namespace, "topic_ids": ids})
    )
    return [
        PoolHit(r["idx"], fields[r["topic_id"]], float(r["cosine"]))
        for r in records
        if r["topic_id"] in fields
    ]


def _fields(records: list[Record]) -> dict[str, MatchFields]:
    return {
        r["topic_id"]: MatchFields(
            topic_id=r["topic_id"],
            name=r["name"],
            aliases=tuple(r["aliases"] or ()),
            one_liner=r["one_liner"] or "",
            facts=tuple(r["facts"] or ()),
            first_seen_at=r["first_seen_at"].to_native(),
            last_seen_at=r["last_seen_at"].to_native(),
        )
        for r in records
    }


def _scores(records: list[Record]) -> list[tuple[str, float, datetime]]:
    return [
        (r["topic_id"], float(r["utility_score"] or 0.0), r["last_seen_at"].to_native())
        for r in records
    ]


class SleepStore(StateTopicReads):
    def acquire_lease(
        self, namespace: str, holder: str, now: datetime, expires_at: datetime
    ) -> None:
        """Take the namespace's sleep lease or raise ``AlreadyRunning``."""
        rows = self._run(
            query("acquire_sleep_lease"),
            {
                "namespace": namespace,
                "holder": holder,
                "now": ensure_utc(now),
                "expires_at": ensure_utc(expires_at),
            },
        )
        if not rows:
            raise AlreadyRunning(f"already sleeping: namespace {namespace} is being compacted")

    def release_lease(self, namespace: str, holder: str) -> None:
        self._run(query("release_sleep_lease"), {"namespace": namespace, "holder": holder})

    def renew_lease(self, namespace: str, holder: str, expires_at: datetime) -> bool:
        """Heartbeat: extend ``holder``'s lease to ``expires_at``; False if it was lost."""
        params = {"namespace": namespace, "holder": holder, "expires_at": ensure_utc(expires_at)}
        return bool(self._run(query("renew_sleep_lease"), params))

    def match_pool(
        self, namespace: str, rows: list[dict[str, Any]], k: int = 5, overfetch: int = 4
    ) -> list[PoolHit]:
        """Per candidate row: its nearest topics plus the topics it names exactly. Up to
        ``EXACT_MATCH_MAX`` topics the namespace is scored exactly (the approximate index,
        filtered after the fact, could miss a topic that must merge); above it, the vector
        index over-fetched, with an exact scan for rows it left short. One read transaction."""
        if not rows:
            return []
        return self._read_tx(lambda tx: _pool_hits(_runner(tx), namespace, rows, k, overfetch))

    def sleep_reads(
        self, namespace: str, rows: list[dict[str, Any]], k: int = 5, top: int = 20
    ) -> SleepReads:
        """What a sleep reads once its candidates are embedded, in ONE read transaction: the
        match pool of ``rows`` (``match_pool``) and the ``top`` most useful live topics
        (``top_topic_scores``, for the wake packet)."""

        def work(tx: ManagedTransaction) -> SleepReads:
            run = _runner(tx)
            hits = _pool_hits(run, namespace, rows, k, 4) if rows else []
            scores = run(query("top_topic_scores"), {"namespace": namespace, "limit": top})
            return SleepReads(hits, _scores(scores))

        return self._read_tx(work)

    def get_topics(self, namespace: str, topic_ids: list[str]) -> list[Topic]:
        """Whole topics by id (the ones a sleep will rewrite)."""
        records = self._read_ids(query("get_topics"), namespace, "topic_ids", topic_ids)
        return [topic_from_props(r["t"], r["related"]) for r in records]

    def theme_names(
        self, namespace: str, prefixes: Sequence[str], limit: int = THEME_NAMES_MAX
    ) -> list[str]:
        """The lower-cased names and aliases of the live topics starting with one of
        ``prefixes`` ("melanie's ") or naming a member of such a theme ("toby (melanie's dog)"),
        sorted, at most ``limit``: the themes the speakers of a slice already have and their
        members' names (``sleepwake.theme_words``)."""
        wanted = sorted({p.lower() for p in prefixes if p})
        if not wanted:
            return []
        params = {"namespace": namespace, "prefixes": wanted, "limit": limit}
        return [r["name"] for r in self._run(query("theme_names"), params, read=True)]

    def topic_vectors(self, namespace: str, topic_ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of some topics, by id (a topic without one is left out)."""
        if not topic_ids:
            return {}
        params = {"namespace": namespace, "topic_ids": topic_ids}
        records = self._run(query("get_topic_vectors"), params, read=True)
        return {r["topic_id"]: [float(x) for x in r["vector"]] for r in records}

    def top_topic_scores(
        self, namespace: str, limit: int = 20
    ) -> list[tuple[str, float, datetime]]:
        """(topic_id, utility_score, last_seen_at) of the most useful live topics."""
        params = {"namespace": namespace, "limit": limit}
        return _scores(self._run(query("top_topic_scores"), params, read=True))

    def wake_packets(self, namespace: str, limit: int = 2) -> list[WakePacket]:
        """The newest wake packets first."""
        records = self._run(
            query("latest_wake_packets"), {"namespace": namespace, "limit": limit}, read=True
        )
        return [wake_packet_from_props(r["w"]) for r in records]

    def claim_wake(self, namespace: str, now: datetime, check: WakeCheck) -> WakeState | None:
        """Record a wake at ``now`` when one is due, atomically: of concurrent callers (API
        workers serving one namespace) exactly one gets the state back, the others None."""
        rows = self._run(
            query("claim_wake"),
            {"namespace": namespace, "now": ensure_utc(now), **check.model_dump()},
        )
        if not rows:
            return None
        r = rows[0]
        return WakeState(
            woke_at=r["woke_at"].to_native(),
            packet_id=check.packet_id,
            reason=r["reason"],
            previous_woke_at=r["previous_woke_at"].to_native() if r["previous_woke_at"] else None,
            previous_packet_id=r["previous_packet_id"],
            previous_reason=r["previous_reason"],
        )

    def release_wake(self, namespace: str, state: WakeState) -> None:
        """Undo the claim ``state`` (its turn failed), unless a later wake replaced it."""
        params = state.model_dump(
            include={"woke_at", "reason", "previous_woke_at", "previous_packet_id",
                     "previous_reason"}
        )  # fmt: skip
        self._run(query("release_wake"), {"namespace": namespace, **params})

    def wake_state(self, namespace: str) -> WakeState | None:
        """When the namespace last woke (for "since you woke"); None before the first wake."""
        rows = self._run(query("get_wake_state"), {"namespace": namespace}, read=True)
        if not rows:
            return None
        r = rows[0]
        return WakeState(woke_at=r["woke_at"].to_native(), packet_id=r["packet_id"],
                         reason=r["reason"])  # fmt: skip

    def commit(self, plan: SleepCommit) -> None:
        """Write the whole sleep in one transaction (all or nothing). Every text of the plan is
        redacted first (in place: the caller's summary then names topics as stored)."""
        started = time.perf_counter()
        _redact_plan(plan, self.redactor)
        plan.timings["redact"] = (time.perf_counter() - started) * 1000
        with self._driver.session(database=self._db) as session:
            session.execute_write(_commit_tx, plan)
        total = (time.perf_counter() - started) * 1000
        plan.timings["tx_commit"] = max(0.0, total - sum(plan.timings.values()))


def _redact_plan(plan: SleepCommit, r: Redactor) -> None:
    for write in plan.topics:
        write.topic = redact_topic(write.topic, r)
    plan.events = [(redact_event(e, r), v) for e, v in plan.events]
    plan.subjects = [redact_subject(s, r) for s in plan.subjects]
    if plan.wake_packet is not None:
        plan.wake_packet = redact_wake_packet(plan.wake_packet, r)


def _commit_tx(tx: ManagedTransaction, plan: SleepCommit) -> None:
    ns, now = plan.namespace, ensure_utc(plan.now)
    mark = time.perf_counter()
    if plan.lease_holder is not None:
        held = tx.run(
            query("hold_sleep_lease"),
            namespace=ns,
            holder=plan.lease_holder,
            release=plan.release_lease,
        )
        if held.single() is None:
            raise LeaseLost(f"sleep of {ns}: the lease was taken over; nothing was written")

    def lap(name: str) -> None:
        nonlocal mark
        plan.timings[name] = plan.timings.get(name, 0.0) + (time.perf_counter() - mark) * 1000
        mark = time.perf_counter()

    creates = [w for w in plan.topics if w.expected_version is None]
    if creates:
        rows = [{"props": topic_props(w.topic), "embedding": _vec(w.vector)} for w in creates]
        tx.run(query("create_topics"), rows=rows, now=now).consume()
        lap("create_topics")
    updates = [w for w in plan.topics if w.expected_version is not None]
    if updates:
        _update_many(tx, ns, updates, now)
        lap("update_topics")
    if plan.events:  # the events and their topics' MENTIONED_IN links, one statement
        rows = _event_rows(plan, creates)
        tx.run(query("create_sleep_events"), namespace=ns, rows=rows).consume()
        lap("events")
    _links(tx, ns, plan.links, now)
    lap("links")
    if plan.subjects:
        subject_rows: list[dict[str, Any]] = [
            {"props": s.model_dump(exclude={"topic_ids"}), "topic_ids": s.topic_ids}
            for s in plan.subjects
        ]
        tx.run(query("create_subjects"), namespace=ns, now=now, rows=subject_rows).consume()
        lap("subjects")
    if plan.wake_packet is not None:
        tx.run(
            query("create_wake_packet"),
            namespace=ns,
            props=wake_packet_props(plan.wake_packet),
            topic_ids=plan.wake_packet.top_topic_ids,
        ).consume()
        lap("wake_packet")
    if plan.decay is not None:
        tx.run(query("decay_topics"), namespace=ns, now=now, **plan.decay.__dict__).consume()
        lap("decay")
    if plan.compacted_message_ids:
        tx.run(
            query("mark_messages_compacted"),
            namespace=ns,
            message_ids=plan.compacted_message_ids,
            now=now,
        ).consume()
        lap("trim")


def _event_rows(plan: SleepCommit, creates: list[TopicWrite]) -> list[dict[str, Any]]:
    """An event of a topic created in this commit carries the topic's own vector: it is not
    sent twice, the statement copies it from the topic (``topic_vector``)."""
    created = {w.topic.topic_id: w.vector for w in creates if w.vector is not None}
    rows = []
    for event, vector in plan.events:
        own = created.get(event.topic_id)
        same = vector is not None and own is not None and list(own) == list(vector)
        rows.append(
            {
                "props": event.model_dump(),
                "embedding": None if same else _vec(vector),
                "topic_vector": same,
            }
        )
    return rows


def _update_many(tx: ManagedTransaction, ns: str, writes: list[TopicWrite], now: datetime) -> None:
    rows = []
    for w in writes:
        props = update_props(w.topic)
        rows.append(
            {
                "topic_id": w.topic.topic_id,
                "expected_version": w.expected_version,
                "props": props,
                "embedding": _vec(w.vector),
            }
        )
    written = {
        r["topic_id"] for r in tx.run(query("update_topics"), namespace=ns, rows=rows, now=now)
    }
    missed = [w.topic.topic_id for w in writes if w.topic.topic_id not in written]
    if missed:
        raise VersionConflict(f"topics changed during the sleep: {missed[:5]}")


def _links(tx: ManagedTransaction, ns: str, links: list[LinkRequest], now: datetime) -> None:
    """Every edge update of the sleep in one statement (the type rides in each row)."""
    if not links:
        return
    rows = [
        {
            "from_id": link.from_id,
            "to_id": link.to_id,
            "type": edge_type(link.type).value,
            "delta": link.delta,
        }
        for link in links
    ]
    tx.run(query("merge_sleep_links"), namespace=ns, rows=rows, now=now).consume()


def _vec(vector: Sequence[float] | None) -> list[float] | None:
    return check_vector(vector) if vector is not None else None
