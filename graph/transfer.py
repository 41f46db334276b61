"""TransferStore: the graph side of export (paged reads) and import (bounded batches).

Reads are paged by a stable key (message ``seq``, topic and event ids) so an export streams in
constant memory. An import is written after everything was validated and embedded, as a
sequence of bounded transactions (``ImportCommit.batches``): messages, new topics, merged topics,
events, mentions, edges, wake packets, skill runs, each kind in slices of at most ``size``
records, so no commit holds the database (one 7,000-topic transaction held every tenant's
queries for seconds). Every write is create-only (``MERGE`` on the id with ``ON CREATE``),
keeps the larger edge weight, or is compare-and-set on a topic's version, so an import stopped
between two batches is completed by importing the same file again, each record written once.
Writes go only into the namespace passed in; ids owned by another namespace are detected
beforehand (``id_owners``) and never reused.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store
from graph.forget import TopicRewrite, rewrite_topics
from graph.mapping import (
    edge_from_row,
    event_from_props,
    message_from_props,
    message_props,
    topic_from_props,
    topic_props,
    wake_packet_from_props,
    wake_packet_props,
)
from graph.models import Message, Topic, TopicEdge, TopicEvent, WakePacket, edge_type
from graph.skills import SkillRun, run_from_props
from graph.topics import check_vector

OWNER_BATCH = 5000


@dataclass(frozen=True)
class ExportedTopic:
    topic: Topic
    mentioned_in: list[str]
    vector: list[float] | None


@dataclass
class ImportCommit:
    namespace: str
    now: datetime
    messages: list[Message] = field(default_factory=list)
    next_seq: int = 0
    new_topics: list[tuple[Topic, Sequence[float] | None]] = field(default_factory=list)
    merged_topics: list[TopicRewrite] = field(default_factory=list)
    events: list[tuple[TopicEvent, Sequence[float] | None]] = field(default_factory=list)
    mentions: dict[str, list[str]] = field(default_factory=dict)  # topic id -> message ids
    edges: list[TopicEdge] = field(default_factory=list)
    wake_packets: list[WakePacket] = field(default_factory=list)
    skill_runs: list[SkillRun] = field(default_factory=list)

    def size(self) -> int:
        """How many records (a topic's mentions count as one) this commit writes."""
        parts = (self.messages, self.new_topics, self.merged_topics, self.events, self.mentions,
                 self.edges, self.wake_packets, self.skill_runs)  # fmt: skip
        return sum(len(p) for p in parts)

    def batches(self, size: int) -> Iterator[ImportCommit]:
        """This commit as slices of at most ``size`` records, in the order their references
        need (messages and topics before what points at them). A message slice moves the
        namespace's next seq only to the first seq of the next slice, so a re-run after a stop
        between slices continues the same numbering."""
        for start in range(0, len(self.messages), size):
            rest = self.messages[start + size : start + size + 1]
            following = rest[0].seq if rest and rest[0].seq is not None else self.next_seq
            yield self._part(messages=self.messages[start : start + size], next_seq=following)
        mentions = list(self.mentions.items())
        for name, items in (("new_topics", self.new_topics), ("merged_topics",
                            self.merged_topics), ("events", self.events),
                            ("mentions", mentions), ("edges", self.edges),
                            ("wake_packets", self.wake_packets), ("skill_runs", self.skill_runs)):  # fmt: skip
            for start in range(0, len(items), size):
                part: Any = items[start : start + size]
                yield self._part(**{name: dict(part) if name == "mentions" else part})

    def _part(self, **parts: Any) -> ImportCommit:
        return ImportCommit(namespace=self.namespace, now=self.now, **parts)


class TransferStore(Store):
    # -- export ----------------------------------------------------------------------------------
    def messages_page(self, namespace: str, after_seq: int, limit: int) -> list[Message]:
        records = self._run(
            query("export_messages"),
            {"namespace": namespace, "after_seq": after_seq, "limit": limit},
            read=True,
        )
        return [message_from_props(r["m"]) for r in records]

    def topics_page(
        self, namespace: str, after_id: str, limit: int, vectors: bool
    ) -> list[ExportedTopic]:
        records = self._run(
            query("export_topics"),
            {"namespace": namespace, "after_id": after_id, "limit": limit, "vectors": vectors},
            read=True,
        )
        out = []
        for r in records:
            props = dict(r["t"])
            vector = props.pop("embedding", None)
            out.append(
                ExportedTopic(
                    topic_from_props(props),
                    list(r["mentioned_in"]),
                    [float(v) for v in vector] if vector is not None else None,
                )
            )
        return out

    def events_page(
        self, namespace: str, after_id: str, limit: int, vectors: bool
    ) -> list[tuple[TopicEvent, list[float] | None]]:
        records = self._run(
            query("export_events"),
            {"namespace": namespace, "after_id": after_id, "limit": limit, "vectors": vectors},
            read=True,
        )
        return [
            (
                event_from_props(r["e"]),
                [float(v) for v in r["vector"]] if r["vector"] is not None else None,
            )
            for r in records
        ]

    def edges_page(
        self, namespace: str, after_id: str, limit: int
    ) -> tuple[list[TopicEdge], str | None]:
        """The edges leaving the next ``limit`` topics after ``after_id``, and the last topic
        id of that page (None when there are no more topics)."""
        records = self._run(
            query("export_edges"),
            {"namespace": namespace, "after_id": after_id, "limit": limit},
            read=True,
        )
        edges = [edge_from_row(r["from_id"], e) for r in records for e in r["edges"]]
        return edges, (records[-1]["from_id"] if records else None)

    def wake_packets(self, namespace: str) -> list[WakePacket]:
        """Every wake packet of the namespace, oldest first."""
        records = self._run(
            query("latest_wake_packets"), {"namespace": namespace, "limit": 1_000_000}, read=True
        )
        return [wake_packet_from_props(r["w"]) for r in reversed(records)]

    def skill_runs_page(self, namespace: str, skip: int, limit: int) -> list[SkillRun]:
        records = self._run(
            query("export_skill_runs"),
            {"namespace": namespace, "skip": skip, "limit": limit},
            read=True,
        )
        return [run_from_props({**r["r"], "namespace": namespace}) for r in records]

    # -- import ----------------------------------------------------------------------------------
    def id_owners(self, ids: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """(kind, id) -> the namespace that owns it, for the ids that exist."""
        out: dict[tuple[str, str], str] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), OWNER_BATCH):
            rows = [{"kind": k, "id": i} for k, i in unique[start : start + OWNER_BATCH]]
            for r in self._run(query("find_id_owners"), {"rows": rows}, read=True):
                out[(r["kind"], r["id"])] = r["namespace"]
        return out

    def edges_among(self, namespace: str, topic_ids: Sequence[str]) -> list[TopicEdge]:
        """The typed edges whose both ends are in ``topic_ids``."""
        records = self._read_ids(query("topic_edges_among"), namespace, "topic_ids", topic_ids)
        return [edge_from_row(r["from_id"], r) for r in records]

    def messages_by_external_id(self, namespace: str, external_ids: Sequence[str]) -> list[Message]:
        records = self._read_ids(
            query("get_messages_by_external_id"), namespace, "external_ids", external_ids
        )
        return [message_from_props(r["m"]) for r in records]

    def commit(self, plan: ImportCommit) -> None:
        """Write ``plan`` in one transaction (all or nothing): one of ``ImportCommit.batches``."""
        with self._driver.session(database=self._db) as session:
            session.execute_write(_import_tx, plan)


def _import_tx(tx: ManagedTransaction, plan: ImportCommit) -> None:
    ns, now = plan.namespace, ensure_utc(plan.now)
    if plan.messages:
        rows = [message_props(m) for m in plan.messages]
        tx.run(query("import_messages"), namespace=ns, rows=rows, next_seq=plan.next_seq).consume()
    if plan.new_topics:
        rows = [
            {"props": topic_props(t), "embedding": _vec(v), "version": max(1, t.version)}
            for t, v in plan.new_topics
        ]
        tx.run(query("import_topics"), namespace=ns, rows=rows, now=now).consume()
    rewrite_topics(tx, ns, plan.merged_topics, now, "during the import")
    if plan.events:
        rows = [
            {"props": e.model_dump(), "embedding": _vec(v), "topic_vector": v is None}
            for e, v in plan.events
        ]
        tx.run(query("create_events"), namespace=ns, rows=rows).consume()
    if plan.mentions:
        rows = [{"topic_id": t, "message_ids": ms} for t, ms in plan.mentions.items()]
        tx.run(query("link_topic_messages"), namespace=ns, rows=rows).consume()
    if plan.edges:
        tx.run(query("import_edges"), namespace=ns, rows=_edge_rows(plan.edges), now=now).consume()
    if plan.wake_packets:
        rows = [
            {"props": wake_packet_props(p), "topic_ids": p.top_topic_ids} for p in plan.wake_packets
        ]
        tx.run(query("import_wake_packets"), namespace=ns, rows=rows).consume()
    if plan.skill_runs:
        tx.run(query("import_skill_runs"), namespace=ns, rows=_run_rows(plan.skill_runs)).consume()


def _edge_rows(edges: list[TopicEdge]) -> list[dict[str, Any]]:
    return [
        {
            "from_id": e.from_topic_id,
            "to_id": e.to_topic_id,
            "type": edge_type(e.type).value,
            "weight": float(e.weight),
            "last_updated_at": e.last_updated_at,
        }
        for e in edges
    ]


def _run_rows(runs: list[SkillRun]) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        props = run.model_dump(exclude={"topic_ids", "namespace"})
        rows.append({"props": props, "topic_ids": list(run.topic_ids)})
    return rows


def _vec(vector: Sequence[float] | None) -> list[float] | None:
    return check_vector(vector) if vector is not None else None
