"""SleepStore: the graph side of a sleep — the lease, the match pool, and one atomic commit.

Everything a sleep writes (topics created and updated, events, edges, subjects, the wake packet,
decay, and marking the slice compacted) is committed in ONE transaction: a crash at any point
before the commit leaves the graph as it was, and the buffer is trimmed exactly when the topic
writes commit. Ids are deterministic, so a re-run writes the same nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction

from graph.clock import ensure_utc
from graph.cypher import query, query_for_edge
from graph.db import Store
from graph.errors import AlreadyRunning, VersionConflict
from graph.mapping import topic_from_props, topic_props, wake_packet_from_props, wake_packet_props
from graph.models import EdgeType, Subject, Topic, TopicEvent, WakePacket, edge_type
from graph.topics import LinkRequest, check_vector


@dataclass
class TopicWrite:
    topic: Topic
    vector: Sequence[float] | None
    expected_version: int | None  # None: create


@dataclass
class DecayParams:
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


@dataclass(frozen=True)
class PoolHit:
    idx: int
    topic: Topic
    cosine: float


class SleepStore(Store):
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

    def match_pool(self, namespace: str, rows: list[dict[str, Any]], k: int = 5) -> list[PoolHit]:
        """Per candidate row: the nearest topics by exact cosine, plus name/alias matches."""
        if not rows:
            return []
        for row in rows:
            row["vector"] = check_vector(row["vector"])
        records = self._run(
            query("match_topic_candidates"),
            {"namespace": namespace, "rows": rows, "k": k},
            read=True,
        )
        return [PoolHit(r["idx"], topic_from_props(r["t"]), float(r["cosine"])) for r in records]

    def top_topics(self, namespace: str, limit: int = 20) -> list[Topic]:
        records = self._run(
            query("top_topics_by_utility"), {"namespace": namespace, "limit": limit}, read=True
        )
        return [topic_from_props(r["t"]) for r in records]

    def wake_packets(self, namespace: str, limit: int = 2) -> list[WakePacket]:
        """The newest wake packets first."""
        records = self._run(
            query("latest_wake_packets"), {"namespace": namespace, "limit": limit}, read=True
        )
        return [wake_packet_from_props(r["w"]) for r in records]

    def commit(self, plan: SleepCommit) -> None:
        """Write the whole sleep in one transaction (all or nothing)."""
        with self._driver.session(database=self._db) as session:
            session.execute_write(_commit_tx, plan)


def _commit_tx(tx: ManagedTransaction, plan: SleepCommit) -> None:
    ns, now = plan.namespace, ensure_utc(plan.now)
    creates = [w for w in plan.topics if w.expected_version is None]
    if creates:
        rows = [{"props": topic_props(w.topic), "embedding": _vec(w.vector)} for w in creates]
        tx.run(query("create_topics"), rows=rows, now=now).consume()
    for w in plan.topics:
        if w.expected_version is not None:
            _update(tx, w, now)
    if plan.events:
        rows = [{"props": e.model_dump(), "embedding": _vec(v)} for e, v in plan.events]
        tx.run(query("create_events"), namespace=ns, rows=rows).consume()
    _links(tx, ns, plan.links, now)
    if plan.subjects:
        subject_rows: list[dict[str, Any]] = [
            {"props": s.model_dump(exclude={"topic_ids"}), "topic_ids": s.topic_ids}
            for s in plan.subjects
        ]
        tx.run(query("create_subjects"), namespace=ns, now=now, rows=subject_rows).consume()
    if plan.wake_packet is not None:
        tx.run(
            query("create_wake_packet"),
            namespace=ns,
            props=wake_packet_props(plan.wake_packet),
            topic_ids=plan.wake_packet.top_topic_ids,
        ).consume()
    if plan.decay is not None:
        tx.run(query("decay_topics"), namespace=ns, now=now, **plan.decay.__dict__).consume()
    if plan.compacted_message_ids:
        tx.run(
            query("mark_messages_compacted"),
            namespace=ns,
            message_ids=plan.compacted_message_ids,
            now=now,
        ).consume()


def _update(tx: ManagedTransaction, w: TopicWrite, now: datetime) -> None:
    props = topic_props(w.topic)
    props.pop("topic_id")
    props.pop("namespace")
    record = tx.run(
        query("update_topic"),
        namespace=w.topic.namespace,
        topic_id=w.topic.topic_id,
        expected_version=w.expected_version,
        props=props,
        embedding=_vec(w.vector),
        now=now,
    ).single()
    if record is None:
        raise VersionConflict(
            f"topic {w.topic.topic_id} changed during the sleep (expected v{w.expected_version})"
        )


def _links(tx: ManagedTransaction, ns: str, links: list[LinkRequest], now: datetime) -> None:
    by_type: dict[EdgeType, list[dict[str, Any]]] = {}
    for link in links:
        by_type.setdefault(edge_type(link.type), []).append(
            {"from_id": link.from_id, "to_id": link.to_id, "delta": link.delta}
        )
    for etype, rows in by_type.items():
        tx.run(query_for_edge("link_topics", etype), namespace=ns, rows=rows, now=now).consume()


def _vec(vector: Sequence[float] | None) -> list[float] | None:
    return check_vector(vector) if vector is not None else None
