"""In-memory ``TopicStoreProtocol``: topics, typed edges and searches as ``graph.topics.TopicStore``.

Besides the protocol's reads and searches it has the writes tests seed topics with (``create``,
``link``, ``archive``) and the reads they assert with (``get_one``, ``list_live``, ``edges``,
``find_by_alias``), each as the real store does them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graph.clock import ensure_utc
from graph.errors import NotFound, ValidationFailed
from graph.mapping import topic_props
from graph.models import EdgeType, Topic, TopicEdge, edge_type
from graph.topics import (
    LinkRequest,
    Neighbour,
    ScoredTopic,
    TextRank,
    TopicBrief,
    check_vector,
    ranked_hits,
)
from tests.fakes.graph import (
    LIGHT_DROP,
    SUMMARY_DROP,
    Edge,
    FakeGraph,
    TopicNode,
    content_words,
    query_words,
    seen_in,
    similarity,
    standard_terms,
    term_score,
    window,
)


def new_node(topic: Topic, vector: Sequence[float] | None, now: datetime) -> TopicNode:
    """A created topic as ``create_topics.cypher`` writes it: version 1, stamped ``now``."""
    props: dict[str, Any] = topic_props(topic)
    props.update(version=1, created_at=now, updated_at=now)
    return TopicNode(props, check_vector(vector) if vector is not None else None)


def merge_edge(
    graph: FakeGraph, key: tuple[str, str, EdgeType], delta: float, now: datetime
) -> Edge:
    """Create an edge with weight ``delta`` or add ``delta`` to it (``MERGE`` semantics)."""
    edge = graph.edges.get(key)
    if edge is None:
        edge = graph.edges[key] = Edge(delta, now, now)
    else:
        edge.weight += delta
        edge.last_updated_at = now
    return edge


class FakeTopicStore:
    """Topics of every namespace in one ``FakeGraph``."""

    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph if graph is not None else FakeGraph()

    # -- writes --------------------------------------------------------------------------------
    def create(
        self,
        topics: Sequence[Topic],
        vectors: Sequence[Sequence[float] | None] | None,
        now: datetime,
    ) -> list[str]:
        """Create topics, all or nothing; refuse ids that already exist."""
        vecs = list(vectors) if vectors is not None else [None] * len(topics)
        if len(vecs) != len(topics):
            raise ValidationFailed("one vector (or None) is needed per topic")
        nodes = [new_node(t, v, ensure_utc(now)) for t, v in zip(topics, vecs, strict=True)]
        with self.graph.transaction():
            for node in nodes:
                tid = node.props["topic_id"]
                if tid in self.graph.topics:
                    raise ValidationFailed(f"a topic with one of these ids already exists: {tid}")
                self.graph.topics[tid] = node
        return [n.props["topic_id"] for n in nodes]

    def link(self, namespace: str, links: Sequence[LinkRequest], now: datetime) -> list[TopicEdge]:
        """Create or strengthen typed edges; links with a missing end are skipped."""
        by_type: dict[EdgeType, list[LinkRequest]] = {}
        for link in links:
            if link.from_id == link.to_id:
                raise ValidationFailed("a topic cannot be linked to itself")
            by_type.setdefault(edge_type(link.type), []).append(link)
        when = ensure_utc(now)
        out: list[TopicEdge] = []
        with self.graph.transaction():
            for etype, rows in by_type.items():
                for link in rows:
                    if len(self.graph.topic_nodes(namespace, [link.from_id, link.to_id])) < 2:
                        continue
                    key = (link.from_id, link.to_id, etype)
                    edge = merge_edge(self.graph, key, link.delta, when)
                    out.append(
                        TopicEdge(
                            from_topic_id=link.from_id,
                            to_topic_id=link.to_id,
                            type=etype,
                            weight=edge.weight,
                            last_updated_at=when,
                        )
                    )
        return out

    def mark_used(self, namespace: str, topic_ids: Sequence[str], now: datetime) -> int:
        """Use-based lifecycle: ``last_used_at`` and ``usage_count`` (an id listed twice
        counts twice, as the real query's UNWIND does)."""
        if not topic_ids:
            return 0
        when, marked = ensure_utc(now), 0
        with self.graph.transaction():
            for node in self.graph.topic_nodes(namespace, topic_ids):
                node.props["last_used_at"] = when
                node.props["usage_count"] = int(node.props.get("usage_count") or 0) + 1
                marked += 1
        return marked

    def archive(self, namespace: str, topic_id: str, now: datetime) -> int:
        """Soft-archive (the first archive time is kept); returns the new version."""
        with self.graph.transaction():
            found = self.graph.topic_nodes(namespace, [topic_id])
            if not found:
                raise NotFound(f"topic {topic_id} not found in namespace {namespace}")
            props = found[0].props
            props["archived_at"] = props.get("archived_at") or ensure_utc(now)
            props["version"] += 1
            props["updated_at"] = ensure_utc(now)
            return int(props["version"])

    # -- reads ---------------------------------------------------------------------------------
    def state_topics(
        self, namespace: str, tokens: Sequence[str], limit: int = 50
    ) -> list[tuple[str, list[str]]]:
        """(topic_id, state tokens) of the live topics holding any of ``tokens``."""
        with self.graph.lock:
            return self.graph.state_topics(namespace, tokens, limit)

    def get(self, namespace: str, topic_ids: Sequence[str]) -> list[Topic]:
        """Topics by id, in the order asked (each once); unknown ids are left out."""
        nodes = self.graph.topic_nodes(namespace, list(dict.fromkeys(topic_ids)))
        return [self.graph.full_topic(n) for n in nodes]

    def get_one(self, namespace: str, topic_id: str) -> Topic:
        found = self.get(namespace, [topic_id])
        if not found:
            raise NotFound(f"topic {topic_id} not found in namespace {namespace}")
        return found[0]

    def summaries(
        self, namespace: str, topic_ids: Sequence[str], full_ids: Sequence[str] = ()
    ) -> list[tuple[Topic, list[str]]]:
        """Topics without facts or events, as a light read (those in ``full_ids`` whole, without
        related ids), with the one-liner's source ids."""
        whole = set(full_ids)
        return [
            (
                n.topic(() if n.props["topic_id"] in whole else SUMMARY_DROP),
                list(n.props.get("one_liner_source_ids") or []),
            )
            for n in self.graph.topic_nodes(namespace, topic_ids)
        ]

    def cited_summaries(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str] = (),
        brief_ids: Sequence[str] = (),
    ) -> tuple[list[tuple[Topic | TopicBrief, list[str]]], dict[str, str]]:
        """``summaries`` and the ids to cite the one-liners' sources and the messages the
        topics of ``full_ids`` are mentioned in by (external id, else message id); the topics
        of ``brief_ids`` not in ``full_ids`` as a ``TopicBrief``."""
        briefs = set(brief_ids) - set(full_ids)
        found: list[tuple[Topic | TopicBrief, list[str]]] = [
            (_brief(t) if t.topic_id in briefs else t, sources)
            for t, sources in self.summaries(namespace, topic_ids, full_ids)
        ]
        wanted = {m for _, sources in found for m in sources}
        whole = {t.topic_id for t, _ in found} & set(full_ids)
        wanted |= {mid for tid, mid in self.graph.mentions if tid in whole}
        messages = (self.graph.messages.get(mid) for mid in wanted)
        cited = {
            m.message_id: m.external_id or m.message_id
            for m in messages
            if m is not None and m.namespace == namespace
        }
        return found, cited

    def list_live(self, namespace: str, limit: int = 10_000) -> list[Topic]:
        """Live topics, most useful first (then most recently seen)."""
        nodes = sorted(
            self.graph.live_topics(namespace),
            key=lambda n: (-n.props["utility_score"], -n.props["last_seen_at"].timestamp()),
        )
        return [n.topic() for n in nodes[:limit]]

    def edges(self, namespace: str, topic_id: str) -> list[TopicEdge]:
        """Typed edges touching one topic, both directions, within the namespace."""
        if not self.graph.topic_nodes(namespace, [topic_id]):
            return []
        return [
            TopicEdge(
                from_topic_id=a,
                to_topic_id=b,
                type=t,
                weight=e.weight,
                last_updated_at=e.last_updated_at,
            )
            for (a, b, t), e in self.graph.edges.items()
            if topic_id in (a, b) and self.graph.topic_nodes(namespace, [b if a == topic_id else a])
        ]

    def find_by_alias(
        self, namespace: str, alias: str, include_archived: bool = False
    ) -> list[Topic]:
        """Topics whose name or an alias equals ``alias`` (case-insensitive), newest first."""
        wanted = alias.strip().lower()
        nodes = [
            n
            for n in self.graph.topics.values()
            if n.props["namespace"] == namespace
            and (include_archived or n.props.get("archived_at") is None)
            and (wanted == n.props["name_lc"] or wanted in n.props["aliases_lc"])
        ]
        nodes.sort(key=lambda n: -n.props["last_seen_at"].timestamp())
        return [n.topic() for n in nodes]

    def known_names(self, namespace: str, names: Sequence[str]) -> set[str]:
        """The phrases (lower-cased) that are a live topic's name or alias."""
        wanted = sorted({n.strip().lower() for n in names if n.strip()})[:50]
        known: set[str] = set()
        for node in self.graph.live_topics(namespace):
            known.update(w for w in wanted if w == node.props["name_lc"])
            known.update(w for w in wanted if w in node.props["aliases_lc"])
        return known

    def search_text(
        self,
        namespace: str,
        text: str,
        k: int = 10,
        since: datetime | None = None,
        until: datetime | None = None,
        fuzzy: bool = True,
        light: bool = False,
    ) -> list[ScoredTopic]:
        """Live topics whose name, aliases, one-liner or gist hold the query's words, best first."""
        words = query_words(text)
        if not words:
            return []
        s, u = window(since, until)
        query = standard_terms(" ".join(words))
        content = standard_terms(" ".join(content_words(text)))
        scored = []
        for node in self.graph.live_topics(namespace):
            p = node.props
            doc = standard_terms(f"{p['name']} {p['alias_text']} {p['one_liner']} {p['gist']}")
            score = term_score(query, doc, fuzzy)
            if score > 0 and seen_in(p, s, u):
                scored.append((score, term_score(content, doc, fuzzy), node))
        scored.sort(key=lambda row: -row[0])
        drop = LIGHT_DROP if light else ()
        return [ScoredTopic(n.topic(drop), sc, "fulltext", core) for sc, core, n in scored[:k]]

    def search_vector(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int = 10,
        since: datetime | None = None,
        until: datetime | None = None,
        overfetch: int = 5,
        light: bool = False,
    ) -> list[ScoredTopic]:
        """Nearest live topics with a vector, exact; score (1 + cosine) / 2."""
        vec = check_vector(vector)
        s, u = window(since, until)
        scored = [
            (similarity(n.embedding, vec), n)
            for n in self.graph.live_topics(namespace)
            if n.embedding is not None and seen_in(n.props, s, u)
        ]
        scored.sort(key=lambda pair: -pair[0])
        source = "vector-window" if s is not None else "vector"
        drop = LIGHT_DROP if light else ()
        return [ScoredTopic(n.topic(drop), score, source) for score, n in scored[:k]]

    def search_vector_reading(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int = 10,
        since: datetime | None = None,
        until: datetime | None = None,
        overfetch: int = 5,
        light: bool = False,
        topic_ids: Sequence[str] = (),
    ) -> tuple[list[ScoredTopic], list[Topic]]:
        """``search_vector`` and the topics of ``topic_ids`` not among its hits, by id."""
        hits = self.search_vector(namespace, vector, k, since, until, overfetch, light)
        found = {h.topic.topic_id for h in hits}
        return hits, self._by_id(namespace, [t for t in topic_ids if t not in found], light)

    def ranked_topics(
        self,
        namespace: str,
        ranks: Sequence[TextRank],
        light: bool = False,
        read: Sequence[Topic] = (),
        partial: bool = False,
    ) -> list[ScoredTopic]:
        """The ranking's hits in its order, the topics not ``read`` read by id (with
        ``partial``, a rank's own partial topic instead, its hit marked partial)."""
        return ranked_hits(ranks, read, partial, lambda ids: self._by_id(namespace, ids, light))

    def _by_id(self, namespace: str, topic_ids: Sequence[str], light: bool) -> list[Topic]:
        """Topics by id in the order asked (``light``: without what a search result omits)."""
        drop = LIGHT_DROP if light else ()
        return [n.topic(drop) for n in self.graph.topic_nodes(namespace, list(topic_ids))]

    def neighbours(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        types: Sequence[EdgeType | str] = tuple(EdgeType),
        limit_per_seed: int = 10,
        light: bool = False,
    ) -> list[Neighbour]:
        """1-hop live neighbours over ``types``, strongest edge first, per seed."""
        wanted = {edge_type(t) for t in types}
        drop = LIGHT_DROP if light else ()
        out: list[Neighbour] = []
        for seed in self.graph.topic_nodes(namespace, list(dict.fromkeys(topic_ids))):
            sid = seed.props["topic_id"]
            found = []
            for (a, b, etype), edge in self.graph.edges.items():
                if etype not in wanted or sid not in (a, b):
                    continue
                other = self.graph.topics.get(b if a == sid else a)
                if other is not None and other.live(namespace):
                    found.append(Neighbour(sid, other.topic(drop), etype, edge.weight, a == sid))
            # equal weights by name, id, edge type and direction, as topic_neighbours.cypher
            found.sort(
                key=lambda n: (-n.weight, n.topic.name, n.topic.topic_id, n.type.value, n.outgoing)
            )
            out.extend(found[:limit_per_seed])
        return out


def _brief(topic: Topic) -> TopicBrief:
    """What ``get_topic_summaries`` reads of a topic in its ``$brief_ids``."""
    t = topic.time
    return TopicBrief(topic.topic_id, topic.name, topic.one_liner, t.first_seen_at, t.last_seen_at)
