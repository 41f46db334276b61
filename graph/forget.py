"""ForgetStore: the graph side of forgetting — find what cites a message, and delete for real.

Everything one forget changes (topics and events deleted, messages deleted, the topics and
events that cited them rewritten, wake packets cleaned, skill runs and subjects unlinked) is
committed in ONE transaction, so a failure leaves the memory as it was. Topic rewrites are
compare-and-set on ``version``: a concurrent writer makes the commit fail with
``VersionConflict`` and the caller recomputes. Deleting a whole namespace is batched
(auto-commit) because it can be larger than one transaction should be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store
from graph.errors import VersionConflict
from graph.mapping import (
    event_from_props,
    message_from_props,
    topic_from_props,
    update_props,
    wake_packet_from_props,
    wake_packet_props,
)
from graph.models import Message, Topic, TopicEvent, WakePacket
from graph.topics import check_vector


@dataclass
class TopicRewrite:
    """A topic rewritten without some of its items; ``vector`` None keeps the stored one."""

    topic: Topic
    vector: Sequence[float] | None
    expected_version: int


@dataclass
class ForgetCommit:
    namespace: str
    now: datetime
    delete_topic_ids: list[str] = field(default_factory=list)
    delete_message_ids: list[str] = field(default_factory=list)
    rewrite_topics: list[TopicRewrite] = field(default_factory=list)
    delete_event_ids: list[str] = field(default_factory=list)
    rewrite_events: list[TopicEvent] = field(default_factory=list)
    rewrite_packets: list[WakePacket] = field(default_factory=list)
    subject_labels: list[str] = field(default_factory=list)  # lower-cased topic names

    def empty(self) -> bool:
        return not (self.delete_topic_ids or self.delete_message_ids or self.rewrite_topics)


@dataclass(frozen=True)
class ForgetCounts:
    topics: int
    events: int
    messages: int


class ForgetStore(Store):
    # -- reads ---------------------------------------------------------------------------------
    def mention_ids(self, namespace: str, topic_ids: Sequence[str]) -> dict[str, list[str]]:
        """topic id -> ids of the messages it is MENTIONED_IN."""
        records = self._run(
            query("list_topic_mention_ids"),
            {"namespace": namespace, "topic_ids": list(topic_ids)},
            read=True,
        )
        return {r["topic_id"]: list(r["message_ids"]) for r in records}

    def topics_citing(self, namespace: str, message_ids: Sequence[str]) -> list[Topic]:
        """Whole topics whose provenance names any of ``message_ids``."""
        records = self._read_ids(
            query("find_topics_citing_messages"), namespace, "message_ids", message_ids
        )
        return [topic_from_props(r["t"]) for r in records]

    def events_citing(self, namespace: str, message_ids: Sequence[str]) -> list[TopicEvent]:
        records = self._read_ids(
            query("find_events_citing_messages"), namespace, "message_ids", message_ids
        )
        return [event_from_props(r["e"]) for r in records]

    def topics_containing(self, namespace: str, needle: str, limit: int) -> list[Topic]:
        """Topics whose text (name, aliases, one-liner, facts, open loops) contains ``needle``,
        case-insensitively (a scan: complete, not ranked)."""
        records = self._run(
            query("find_topics_containing"),
            {"namespace": namespace, "needle": needle.lower(), "limit": limit},
            read=True,
        )
        return [topic_from_props(r["t"]) for r in records]

    def messages_containing(self, namespace: str, needle: str, limit: int) -> list[Message]:
        records = self._run(
            query("find_messages_containing"),
            {"namespace": namespace, "needle": needle.lower(), "limit": limit},
            read=True,
        )
        return [message_from_props(r["m"]) for r in records]

    def messages_by_external_id(self, namespace: str, external_ids: Sequence[str]) -> list[Message]:
        records = self._run(
            query("get_messages_by_external_id"),
            {"namespace": namespace, "external_ids": list(external_ids)},
            read=True,
        )
        return [message_from_props(r["m"]) for r in records]

    def wake_packets(self, namespace: str) -> list[WakePacket]:
        """Every wake packet of the namespace, newest first."""
        records = self._run(
            query("latest_wake_packets"), {"namespace": namespace, "limit": 1_000_000}, read=True
        )
        return [wake_packet_from_props(r["w"]) for r in records]

    def count_nodes(self, namespace: str) -> dict[str, int]:
        """label -> how many nodes of the namespace (API keys left out)."""
        records = self._run(query("count_namespace_nodes"), {"namespace": namespace}, read=True)
        return {r["label"]: int(r["n"]) for r in records}

    # -- writes --------------------------------------------------------------------------------
    def commit(self, plan: ForgetCommit) -> ForgetCounts:
        """Apply one forget in one transaction (all or nothing)."""
        with self._driver.session(database=self._db) as session:
            return session.execute_write(_commit_tx, plan)

    def delete_namespace(self, namespace: str) -> None:
        """Delete every node of ``namespace`` except its API keys (batched, auto-commit)."""
        with self._driver.session(database=self._db) as session:
            session.run(query("delete_namespace_data"), namespace=namespace).consume()


def _commit_tx(tx: ManagedTransaction, plan: ForgetCommit) -> ForgetCounts:
    ns, now = plan.namespace, ensure_utc(plan.now)
    # first: fails fast on a version race
    rewrite_topics(tx, ns, plan.rewrite_topics, now, "while forgetting")
    topics = events = messages = 0
    if plan.delete_topic_ids:
        row = tx.run(query("delete_topics"), namespace=ns, topic_ids=plan.delete_topic_ids).single()
        topics, events = (int(row["topics"]), int(row["events"])) if row else (0, 0)
        tx.run(
            query("forget_skill_run_topics"), namespace=ns, topic_ids=plan.delete_topic_ids
        ).consume()
    if plan.delete_event_ids:
        row = tx.run(query("delete_events"), namespace=ns, event_ids=plan.delete_event_ids).single()
        events += int(row["deleted"]) if row else 0
    if plan.rewrite_events:
        rows = [
            {
                "event_id": e.event_id,
                "source_message_ids": e.source_message_ids,
                "delta_summary": e.delta_summary,
            }
            for e in plan.rewrite_events
        ]
        tx.run(query("update_event_provenance"), namespace=ns, rows=rows).consume()
    if plan.delete_message_ids:
        row = tx.run(
            query("delete_messages"), namespace=ns, message_ids=plan.delete_message_ids
        ).single()
        messages = int(row["deleted"]) if row else 0
    _rewrite_packets(tx, ns, plan.rewrite_packets)
    if plan.subject_labels:
        tx.run(query("delete_subjects_named"), namespace=ns, labels=plan.subject_labels).consume()
    return ForgetCounts(topics=topics, events=events, messages=messages)


def rewrite_topics(
    tx: ManagedTransaction, ns: str, rewrites: list[TopicRewrite], now: datetime, during: str
) -> None:
    """Write whole topics over their stored versions (each only at ``expected_version``);
    ``VersionConflict`` (naming ``during``, what was running) when any changed meanwhile."""
    if not rewrites:
        return
    rows = [
        {
            "topic_id": w.topic.topic_id,
            "expected_version": w.expected_version,
            "props": update_props(w.topic),
            "embedding": check_vector(w.vector) if w.vector is not None else None,
        }
        for w in rewrites
    ]
    written = {
        r["topic_id"] for r in tx.run(query("update_topics"), namespace=ns, rows=rows, now=now)
    }
    missed = [w.topic.topic_id for w in rewrites if w.topic.topic_id not in written]
    if missed:
        raise VersionConflict(f"topics changed {during}: {missed[:5]}")


def _rewrite_packets(tx: ManagedTransaction, ns: str, packets: list[WakePacket]) -> None:
    if not packets:
        return
    rows: list[dict[str, Any]] = []
    for packet in packets:
        props = wake_packet_props(packet)
        for key in ("packet_id", "namespace", "schema_version", "slept_at"):
            props.pop(key)
        rows.append({"packet_id": packet.packet_id, "props": props})
    tx.run(query("update_wake_packets"), namespace=ns, rows=rows).consume()
