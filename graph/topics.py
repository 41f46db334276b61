"""TopicStore: the Topic aggregate in Neo4j (nodes, typed edges, indexes). Its searches (full
text, vectors) are in ``graph.topic_search``, the base class it extends.

Every method is scoped to one namespace; no method can return a topic of another namespace.
Vectors are passed in by the caller (the embedder lives above ``graph/``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j.exceptions import ConstraintError

from graph.clock import ensure_utc
from graph.cypher import query, query_for_edge
from graph.db import Store, iso
from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.fulltext import (
    name_query,
    state_query,
    wanted_names,
)
from graph.mapping import (
    as_datetime,
    edge_from_row,
    iso_time,
    redact_topic,
    topic_from_props,
    topic_props,
    update_props,
)
from graph.models import EdgeType, Topic, TopicEdge, edge_type, parse
from graph.topic_search import (
    MIN_INDEX_FETCH,
    SCAN_MAX,
    ScoredTopic,
    TextRank,
    TopicSearchStore,
    check_vector,
    partial_topic,
    ranked_hits,
    text_need,
)
from graph.validation import MAX_LINK_WEIGHT

__all__ = [
    "MIN_INDEX_FETCH",
    "SCAN_MAX",
    "LinkRequest",
    "Neighbour",
    "ScoredTopic",
    "TextRank",
    "TopicBrief",
    "TopicStore",
    "brief_from_props",
    "check_vector",
    "partial_topic",
    "ranked_hits",
    "summaries_of",
    "text_need",
]


@dataclass(frozen=True, slots=True)
class TopicBrief:
    """What a context shows of a topic it reached only through matching messages: its name,
    one-liner and first and last seen (``get_topic_summaries`` reads no more of the topics in
    its ``$brief_ids``: ~36 of a light request's ~44, docs/performance.md twelfth pass)."""

    topic_id: str
    name: str
    one_liner: str
    first_seen_at: datetime
    last_seen_at: datetime


def brief_from_props(props: Mapping[str, Any]) -> TopicBrief:
    """A ``TopicBrief`` from its read (times as ISO text or as the driver gives them)."""
    return TopicBrief(
        props["topic_id"], props["name"], props.get("one_liner") or "",
        iso_time(props["first_seen_at"]), iso_time(props["last_seen_at"]),
    )  # fmt: skip


def summaries_of(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[list[tuple[Topic | TopicBrief, list[str]]], dict[str, str]]:
    """The topics of ``get_topic_summaries``'s rows (briefs as ``TopicBrief``) with their
    one-liners' sources, and message id -> the id to cite it by, as ``cited_summaries``
    gives them (``read_context_topics``'s rows too, ``graph.context``)."""
    cited = {pair[0]: pair[1] for r in rows for pair in r["cited"]}
    found: list[tuple[Topic | TopicBrief, list[str]]] = [
        (
            brief_from_props(r["t"]) if r["brief"] else topic_from_props(r["t"]),
            list(r["one_liner_sources"]),
        )
        for r in rows
    ]
    return found, cited


@dataclass(frozen=True)
class Neighbour:
    seed_id: str
    topic: Topic
    type: EdgeType
    weight: float
    outgoing: bool


@dataclass(frozen=True)
class LinkRequest:
    from_id: str
    to_id: str
    type: EdgeType
    delta: float = 1.0


STATE_TOPICS_MAX = 50  # topics holding a state a sleep or a question reads (most recent first)
STATE_FETCH = 1000  # the most the state index hands over before they are ordered


class StateTopicReads(Store):
    """The one read of the topics holding a state, shared by the topic store (a question's
    read) and the sleep store (a sleep closing the facts a new one supersedes)."""

    def state_topics(
        self, namespace: str, tokens: Sequence[str], limit: int = STATE_TOPICS_MAX
    ) -> list[tuple[str, list[str]]]:
        """(topic_id, its state tokens) of the live topics of ``namespace`` holding any of the
        state ``tokens`` (``text.claims.state_token``), most recently seen first, at most
        ``limit`` (the ``topic_states`` index: a few topics, however many the namespace has)."""
        if not tokens:
            return []
        lucene = state_query(namespace, tokens)
        params = {"namespace": namespace, "lucene": lucene, "fetch": STATE_FETCH, "limit": limit}
        records = self._run(query("find_state_topics"), params, read=True)
        return [(r["topic_id"], list(r["state_keys"] or ())) for r in records]


class TopicStore(TopicSearchStore, StateTopicReads):
    """Create, read, update (versioned), link, search and archive topics."""

    # -- writes --------------------------------------------------------------------------------
    def create(
        self,
        topics: Sequence[Topic],
        vectors: Sequence[Sequence[float] | None] | None,
        now: datetime,
    ) -> list[str]:
        """Create topics in one transaction; refuse ids that already exist."""
        vecs = list(vectors) if vectors is not None else [None] * len(topics)
        if len(vecs) != len(topics):
            raise ValidationFailed("one vector (or None) is needed per topic")
        rows = [
            {
                "props": topic_props(redact_topic(t, self.redactor)),
                "embedding": check_vector(v) if v is not None else None,
            }
            for t, v in zip(topics, vecs, strict=True)
        ]
        try:
            records = self._run(query("create_topics"), {"rows": rows, "now": ensure_utc(now)})
        except ConstraintError as exc:
            raise ValidationFailed(f"a topic with one of these ids already exists: {exc}") from exc
        return [r["topic_id"] for r in records]

    def update(
        self, topic: Topic, vector: Sequence[float] | None, now: datetime, expected_version: int
    ) -> int:
        """Write ``topic`` if the stored version is ``expected_version``; return the new version."""
        props = update_props(redact_topic(topic, self.redactor))
        records = self._run(
            query("update_topic"),
            {
                "namespace": topic.namespace,
                "topic_id": topic.topic_id,
                "expected_version": expected_version,
                "props": props,
                "embedding": check_vector(vector) if vector is not None else None,
                "now": ensure_utc(now),
            },
        )
        if records:
            return int(records[0]["version"])
        current = self._version(topic.namespace, topic.topic_id)
        if current is None:
            raise NotFound(f"topic {topic.topic_id} not found in namespace {topic.namespace}")
        raise VersionConflict(
            f"topic {topic.topic_id} is at version {current}, expected {expected_version}"
        )

    def merge(
        self,
        namespace: str,
        topic_id: str,
        change: Callable[[Topic], tuple[Topic, Sequence[float] | None]],
        now: datetime,
        attempts: int = 5,
    ) -> Topic:
        """Read-modify-write with retries: ``change`` gets the latest topic each attempt."""
        for _ in range(attempts):
            current = self.get_one(namespace, topic_id, for_update=True)
            updated, vector = change(current)
            updated = parse(Topic, updated.model_dump())  # re-validate what ``change`` built
            updated = redact_topic(updated, self.redactor)  # the returned topic is as stored
            try:
                version = self.update(updated, vector, now, expected_version=current.version)
            except VersionConflict:
                continue
            return updated.model_copy(update={"version": version})
        raise VersionConflict(f"topic {topic_id} kept changing; gave up after {attempts} attempts")

    def link(self, namespace: str, links: Sequence[LinkRequest], now: datetime) -> list[TopicEdge]:
        """Create or strengthen typed edges (weight += delta), batched per edge type."""
        edges: list[TopicEdge] = []
        by_type: dict[EdgeType, list[dict[str, Any]]] = {}
        for link in links:
            if link.from_id == link.to_id:
                raise ValidationFailed("a topic cannot be linked to itself")
            if not 0 < link.delta <= MAX_LINK_WEIGHT:  # also refuses NaN
                raise ValidationFailed(
                    f"a link adds a weight in (0, {MAX_LINK_WEIGHT:g}], got {link.delta}"
                )
            rows = by_type.setdefault(edge_type(link.type), [])
            rows.append({"from_id": link.from_id, "to_id": link.to_id, "delta": link.delta})
        for etype, rows in by_type.items():
            records = self._run(
                query_for_edge("link_topics", etype),
                {"namespace": namespace, "rows": rows, "now": ensure_utc(now)},
            )
            edges.extend(
                TopicEdge(
                    from_topic_id=r["from_id"],
                    to_topic_id=r["to_id"],
                    type=etype,
                    weight=r["weight"],
                    last_updated_at=as_datetime(r["last_updated_at"]) or now,
                )
                for r in records
            )
        return edges

    def mark_used(self, namespace: str, topic_ids: Sequence[str], now: datetime) -> int:
        """Use-based lifecycle: the topics were packed into a context the model saw."""
        if not topic_ids:
            return 0
        records = self._run(
            query("mark_topics_used"),
            {"namespace": namespace, "topic_ids": list(topic_ids), "now": iso(ensure_utc(now))},
        )
        return int(records[0]["marked"]) if records else 0

    def archive(self, namespace: str, topic_id: str, now: datetime) -> int:
        """Soft-archive a topic (it leaves search results; nothing is deleted)."""
        records = self._run(
            query("archive_topic"),
            {"namespace": namespace, "topic_id": topic_id, "now": ensure_utc(now)},
        )
        if not records:
            raise NotFound(f"topic {topic_id} not found in namespace {namespace}")
        return int(records[0]["version"])

    # -- reads ---------------------------------------------------------------------------------
    def get(self, namespace: str, topic_ids: Sequence[str]) -> list[Topic]:
        """Topics by id, in the order asked; ids missing from the namespace are left out."""
        records = self._run(
            query("get_topics"), {"namespace": namespace, "topic_ids": list(topic_ids)}, read=True
        )
        return [topic_from_props(r["t"], r["related"]) for r in records]

    def summaries(
        self, namespace: str, topic_ids: Sequence[str], full_ids: Sequence[str] = ()
    ) -> list[tuple[Topic, list[str]]]:
        """Topics without facts or events, as a light read (those in ``full_ids`` whole, without
        their related ids), with the one-liner's source ids."""
        found = self._summaries(namespace, topic_ids, full_ids, cite=False)[0]
        return [(t, sources) for t, sources in found if isinstance(t, Topic)]

    def cited_summaries(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str] = (),
        brief_ids: Sequence[str] = (),
    ) -> tuple[list[tuple[Topic | TopicBrief, list[str]]], dict[str, str]]:
        """``summaries``, and in the same read the ids to cite messages by (message id ->
        external id, else the message id, as ``MessageStore.source_ids``) for the one-liners'
        sources and every message a topic of ``full_ids`` is mentioned in; the topics of
        ``brief_ids`` (not in ``full_ids``) come as a ``TopicBrief``."""
        return self._summaries(namespace, topic_ids, full_ids, cite=True, brief_ids=brief_ids)

    def _summaries(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str],
        cite: bool,
        brief_ids: Sequence[str] = (),
    ) -> tuple[list[tuple[Topic | TopicBrief, list[str]]], dict[str, str]]:
        if not topic_ids:
            return [], {}
        params = {"namespace": namespace, "topic_ids": list(topic_ids), "cite": cite}
        params["full_ids"] = list(full_ids)
        params["brief_ids"] = list(brief_ids)
        rows = self._run(query("get_topic_summaries"), params, read=True)[0]["topics"]
        return summaries_of(rows)

    def get_one(self, namespace: str, topic_id: str, *, for_update: bool = False) -> Topic:
        """One topic (``NotFound`` if missing). ``for_update``: read under the node's write lock
        (a write transaction), so every property read belongs to the same version: the read of
        a read-modify-write, whose compare-and-set trusts that version (lock_topic.cypher)."""
        if not for_update:
            found = self.get(namespace, [topic_id])
        else:
            records = self._run(query("lock_topic"), {"namespace": namespace, "topic_id": topic_id})
            found = [topic_from_props(r["t"], r["related"]) for r in records]
        if not found:
            raise NotFound(f"topic {topic_id} not found in namespace {namespace}")
        return found[0]

    def list_live(self, namespace: str, limit: int = 10_000) -> list[Topic]:
        """Live topics, most useful first."""
        records = self._run(
            query("list_topics"), {"namespace": namespace, "limit": limit}, read=True
        )
        return [topic_from_props(r["t"]) for r in records]

    def edges(self, namespace: str, topic_id: str) -> list[TopicEdge]:
        records = self._run(
            query("topic_edges"), {"namespace": namespace, "topic_id": topic_id}, read=True
        )
        return [edge_from_row(r["from_id"], r) for r in records]

    def find_by_alias(
        self, namespace: str, alias: str, include_archived: bool = False
    ) -> list[Topic]:
        """Topics whose name or one of whose aliases equals ``alias`` (case-insensitive)."""
        records = self._run(
            query("find_topics_by_alias"),
            {
                "namespace": namespace,
                "alias": alias.strip().lower(),
                "include_archived": include_archived,
            },
            read=True,
        )
        return [topic_from_props(r["t"]) for r in records]

    def known_names(self, namespace: str, names: Sequence[str]) -> set[str]:
        """The phrases (lower-cased) that are a live topic's name or alias."""
        wanted = wanted_names(names)
        if not wanted:
            return set()
        lucene = name_query(namespace, wanted)
        records = self._run(
            query("find_known_names"),
            {"namespace": namespace, "lucene": lucene, "names": wanted},
            read=True,
        )
        return {r["name"] for r in records}

    def neighbours(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        types: Sequence[EdgeType | str] = tuple(EdgeType),
        limit_per_seed: int = 10,
        light: bool = False,
    ) -> list[Neighbour]:
        """1-hop neighbours of ``topic_ids`` over the given edge types, strongest first."""
        names = [edge_type(t).value for t in types]
        records = self._run(
            query("topic_neighbours"),
            {
                "namespace": namespace,
                "topic_ids": list(topic_ids),
                "types": names,
                "limit": limit_per_seed,
                "light": light,
            },
            read=True,
        )
        return [
            Neighbour(
                seed_id=r["seed_id"],
                topic=topic_from_props(r["t"]),
                type=EdgeType(r["type"]),
                weight=float(r["weight"] or 0.0),
                outgoing=bool(r["outgoing"]),
            )
            for r in records[0]["neighbours"]
        ]

    def _version(self, namespace: str, topic_id: str) -> int | None:
        records = self._run(query("topic_version"), {"namespace": namespace, "topic_id": topic_id})
        return int(records[0]["version"]) if records else None
