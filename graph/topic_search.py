"""Topic search in Neo4j: full text ranked by the namespace's own BM25, vectors scored exactly
over the namespace's own topics (a small namespace) or found by the vector index confined to the
namespace inside the index (``SEARCH ... WHERE t.namespace = $namespace``, a large one) and
rescored exactly, and the by-id reads that finish a ranking.
``graph.topics.TopicStore`` has these methods (``TopicSearchStore`` is its base); every one is
scoped to one namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graph.clock import BEFORE_ALL, ensure_utc
from graph.cypher import query
from graph.db import iso
from graph.errors import ValidationFailed
from graph.fulltext import (
    content_words,
    in_namespace,
    in_span,
    pool_query,
    query_words,
    whole_groups,
)
from graph.lexical import rank, rank_many
from graph.mapping import iso_time, topic_from_props
from graph.models import EMBEDDING_DIMENSIONS, Topic
from graph.overfetch import EXACT_VECTOR_MAX, MAX_FETCH, Page, PagedQuery, Plan, seeded
from graph.overfetch import overfetch as run_overfetch
from graph.topic_memory import TopicCopies

# Vector search: rows of the namespace asked of the index at least, and the over-fetch factor
# when a time window filters the hits (a window of a week keeps ~10% of 120 days of topics). The
# index is approximate within the namespace, so the k kept are the best of more rows by exact
# cosine: for a 2,000-topic namespace beside 50k others (random vectors, the hard case), k=10,
# recall 0.926 asking 50 rows, 0.978 for 100, 0.996 for 200, 1.000 for 400, at about the same
# latency (benchmarks/bench_filtered_vector.py --small 2000 --fetches 100,200,400,
# docs/neo4j.md).
MIN_INDEX_FETCH = 200
WINDOW_OVERFETCH = 10
# When the filters keep too few: a namespace with at most SCAN_MAX topics in the window is
# scored exactly (~14 us per vector: 2,000 in ~30 ms); a larger one asks the index again for
# FETCH_MORE times the rows first (an exact scan of 5,000 vectors took 0.5-2 s on a busy
# 2-core machine, a second index call of 8,000 rows a fraction of that).
SCAN_MAX = 2000
FETCH_MORE = 10
WINDOW_TEXT_FETCH = 4  # full-text rows asked for per candidate wanted when a window filters them
# full-text candidates ranked with namespace-local statistics (graph/lexical.py): every match
# when there are fewer, else whole groups of one constant score up to this many (``pool_of``)
RERANK_POOL = 200
TEXT_FIELDS = ("name", "alias_text", "one_liner", "gist")


@dataclass(frozen=True)
class ScoredTopic:
    topic: Topic
    score: float
    source: str  # "vector" | "vector-scan" | "fulltext" | "alias"
    # full text: BM25 of the query's content words alone (graph.fulltext.content_words), what
    # topic search fuses; ``score`` (every word) orders the candidates and feeds the trigger
    content_score: float | None = None
    # only what a search scores it by (``partial_topic``): the caller reads the rest itself
    partial: bool = False


@dataclass(frozen=True)
class TextRank:
    """One full-text candidate ranked but not yet read: its id, its BM25 over every query word
    and over the content words alone (``ScoredTopic.score`` and ``content_score``), and the
    topic as far as the ranking read it (``partial_topic``; None: not read)."""

    topic_id: str
    score: float
    content_score: float | None = None
    partial: Topic | None = None


def partial_topic(namespace: str, row: Mapping[str, Any]) -> Topic | None:
    """A full-text candidate as ``search_topics_fulltext`` returns it, as a topic holding only
    what a search scores and names it by: id, name, one-liner, utility and first and last seen
    (no aliases, facts, numbers, loops or usage). None when the row lacks those fields."""
    if "first_seen_at" not in row or row["first_seen_at"] is None:
        return None
    return topic_from_props({
        "topic_id": row["topic_id"], "namespace": namespace, "name": row["name"],
        "one_liner": row.get("one_liner") or "", "utility_score": row.get("utility_score"),
        "first_seen_at": row["first_seen_at"], "last_seen_at": row["last_seen_at"],
    })  # fmt: skip


def ranked_hits(
    ranks: Sequence[TextRank],
    read: Sequence[Topic],
    partial: bool,
    by_id: Callable[[list[str]], list[Topic]],
) -> list[ScoredTopic]:
    """``ranked_topics`` over any store: the hits of ``ranks`` in its order, the topics
    ``read`` as they are, a rank's own partial topic when ``partial`` allows it (its hit
    marked partial), the rest from ``by_id`` (one call; ids it does not return left out)."""
    topics = {t.topic_id: t for t in read}
    given = {r.topic_id: r.partial for r in ranks if partial and r.partial is not None}
    missing = [r.topic_id for r in ranks if r.topic_id not in topics and r.topic_id not in given]
    topics |= {t.topic_id: t for t in by_id(missing)}
    out = []
    for r in ranks:
        if r.topic_id in topics:
            out.append(ScoredTopic(topics[r.topic_id], r.score, "fulltext", r.content_score))
        elif (topic := given.get(r.topic_id)) is not None:
            out.append(ScoredTopic(topic, r.score, "fulltext", r.content_score, True))
    return out


def check_vector(vector: Sequence[float]) -> list[float]:
    """Refuse vectors the index cannot hold (wrong size, all zeros, not finite)."""
    values = [float(v) for v in vector]
    if len(values) != EMBEDDING_DIMENSIONS:
        raise ValidationFailed(
            f"embedding must have {EMBEDDING_DIMENSIONS} dimensions, got {len(values)}"
        )
    if not any(values) or any(v != v or v in (float("inf"), float("-inf")) for v in values):
        raise ValidationFailed("embedding must be finite and not all zeros")
    return values


class TopicSearchStore(TopicCopies):
    """Full-text and vector search of topics (the search half of ``TopicStore``); with
    ``cache_mb`` its vector searches are answered from the worker's copy (``TopicCopies``)."""

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
        """Full-text search (fuzzy for near-miss spellings) over name, aliases, one-liner and gist.

        Lucene finds the namespace's candidates (the query is confined to the namespace before
        ranking, ``graph/fulltext.py``): every match when they are few, else whole groups of
        one constant score of the topic and the text alone (``pool_query``, ``pool_of``), up
        to ``RERANK_POOL``; they are ranked by BM25 with the namespace's own statistics
        (``graph/lexical.py``), so another tenant's topics change neither what is found here
        nor its order or scores."""
        search = self.text_query(namespace, text, k, since, until, fuzzy)
        return [] if search is None else self.text_ranked(namespace, text, k, search, fuzzy, light)

    def text_query(
        self,
        namespace: str,
        text: str,
        k: int,
        since: datetime | None = None,
        until: datetime | None = None,
        fuzzy: bool = True,
    ) -> PagedQuery | None:
        """``search_text``'s candidate query (``search_topics_fulltext``), not yet run; None
        when the text holds no word to search for."""
        # every word, common ones included (unlike the conversation's search): BM25 over the
        # candidates weighs "the" and "was" by how many candidates hold them, and the
        # low-confidence trigger's text threshold was calibrated on those scores
        # (docs/performance.md, "What was tried and not kept")
        lucene = pool_query(text, fuzzy=fuzzy)
        if not lucene:
            return None
        window = _window(since, until)
        confined = in_namespace(namespace, lucene)
        dated = in_span(confined, window["since"], window["until"])
        params: dict[str, Any] = {"query": dated, "namespace": namespace, **window}
        size = max(k, RERANK_POOL)
        if since is None and until is None:
            return PagedQuery(params, Plan(first=size))
        if dated != confined:
            # Lucene ranks only the topics whose span shares a UTC day with the window: the
            # filter after drops those of its first and last day outside its hours, so twice
            # the pool is read and the pool is the window's best (docs/performance.md,
            # thirteenth pass)
            return PagedQuery(params, Plan(first=size * 2))
        # a window Lucene cannot name (open at one end) keeps a share of Lucene's rows: ask for
        # WINDOW_TEXT_FETCH x more at once and stop once k are kept (growing 200 -> 800 -> 3200
        # until 200 were kept read up to 4,200 nodes in three round trips; the rows further
        # down Lucene's order that it added rank below the k kept by the namespace's own BM25
        # all the same)
        return PagedQuery(params, Plan(first=size * WINDOW_TEXT_FETCH))

    def text_ranked(
        self,
        namespace: str,
        text: str,
        k: int,
        search: PagedQuery,
        fuzzy: bool = True,
        light: bool = False,
        first: Page[dict[str, Any]] | None = None,
    ) -> list[ScoredTopic]:
        """The candidates of ``search`` (``text_query``) ranked by BM25, best ``k``, read by
        id; ``first``: its first page, already read (``search_topics_fulltext``'s ``raw`` and
        ``hits`` for ``search.first_fetch``)."""
        ranks = self.text_ranking(namespace, text, k, search, fuzzy, first)
        return self.ranked_topics(namespace, ranks, light)

    def text_ranking(
        self,
        namespace: str,
        text: str,
        k: int,
        search: PagedQuery,
        fuzzy: bool = True,
        first: Page[dict[str, Any]] | None = None,
        then: Page[dict[str, Any]] | None = None,
    ) -> list[TextRank]:
        """``text_ranked``'s ranking without the read by id: the best ``k`` candidates' ids
        and BM25 scores, best first (``ranked_topics`` or ``search_vector_reading`` reads
        them); ``then``: the page after ``first`` (for ``search.next_fetch``), read
        beforehand too."""

        def page(fetch: int) -> Page[dict[str, Any]]:
            records = self._run(
                query("search_topics_fulltext"), {**search.params, "fetch": fetch}, read=True
            )
            return Page(int(records[0]["raw"]), records[0]["hits"])

        size = max(k, RERANK_POOL)
        later = None if then is None else (search.next_fetch, then)
        found = run_overfetch(
            text_need(search, k), search.plan, seeded(page, first, search.first_fetch, later)
        )
        pool = pool_of(found.hits, size, k)
        words = query_words(text)
        # the same candidates scored by the content words alone too: a long chat topic's gist
        # holds "how", "many", "the", "have" and scored as high as one holding "cuisines"
        content = content_words(text)
        if content == words:
            scores = core = rank(words, pool, TEXT_FIELDS, fuzzy=fuzzy)
        else:
            scores, core = rank_many([words, content], pool, TEXT_FIELDS, fuzzy=fuzzy)
        # a candidate that matched only the namespace clause (boost 0) shares no query word;
        # ties by the topic's own key (``tie_key``; Lucene's order among equals follows its
        # segments, which every tenant's writes move)
        matched = [i for i in range(len(pool)) if scores[i] > 0]
        order = sorted(matched, key=lambda i: (-scores[i], *tie_key(pool[i])))[:k]
        return [
            TextRank(pool[i]["topic_id"], scores[i], core[i], partial_topic(namespace, pool[i]))
            for i in order
        ]

    def ranked_topics(
        self,
        namespace: str,
        ranks: Sequence[TextRank],
        light: bool = False,
        read: Sequence[Topic] = (),
        partial: bool = False,
    ) -> list[ScoredTopic]:
        """The full-text hits of ``ranks`` (``text_ranking``), in its order: the topics already
        ``read`` (with the same ``light``) as they are, the others read by id; an id not in
        the namespace any more is left out. With ``partial``, a rank that carries its
        ``partial_topic`` is not read: its hit is that topic, marked ``partial`` (the caller
        reads the rest, and leaves the hit out if the topic is gone by then)."""
        return ranked_hits(ranks, read, partial, lambda ids: self._by_id(namespace, ids, light))

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
        """Nearest topics by embedding, in one round trip. A namespace of at most
        ``EXACT_VECTOR_MAX`` topics is scored exactly (its live topics in the window; the
        index is not asked). A larger one: the vector index asked for the namespace's own
        nearest (filtered to it inside the index, so another tenant's topics never come back
        or crowd its rows), over-fetched, kept to the live topics and the window (``WINDOW_OVERFETCH`` times
        more rows when a window is given: it keeps only a share of the namespace) and the best
        ``k`` of those picked by exact cosine. When the filters keep fewer than ``k`` while the
        index had more (the window is narrow): an exact scan of the namespace's
        topics in the window (range seek on (namespace, last_seen_at); it cannot miss) when
        they are at most ``SCAN_MAX``, else the index again with ``FETCH_MORE`` times the rows
        and the exact scan only if that is short too. An exact scan of every topic seen since
        ``since`` took ~2 s for "last week" at 100k topics (10k vectors); the index answers
        that in tens of ms."""
        hits, _ = self.search_vector_reading(namespace, vector, k, since, until, overfetch, light)
        return hits

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
        """``search_vector``'s hits and, in the same round trip, the topics of ``topic_ids``
        (the full-text ranking's, ``text_ranking``) that are not among the hits, read by id
        with the same ``light`` (as ``get_topics_by_id``; ids not in the namespace are left
        out): a light search's vector and full-text records in one read."""
        vec = check_vector(vector)
        window = _window(since, until)
        if self.topic_vectors is not None and k > 0:
            copied = self._copy_search(namespace, vec, k, window, light, topic_ids)
            if copied is not None:
                label, row = copied
                hits = [
                    ScoredTopic(topic_from_props(h["t"]), float(h["score"]), label)
                    for h in row["hits"]
                ]
                return hits, [topic_from_props(t) for t in row["topics"]]
        windowed = window["since"] is not None or window["until"] is not None
        factor = overfetch * (WINDOW_OVERFETCH if windowed else 1)
        fetch = min(max(k * factor, MIN_INDEX_FETCH), MAX_FETCH)
        params: dict[str, Any] = {
            "vector": vec, "k": k, "namespace": namespace, "light": light,
            "since": iso(window["since"]), "until": iso(window["until"]),
        }  # fmt: skip
        params |= {
            "fetch": fetch,
            "fetch_more": min(fetch * FETCH_MORE, MAX_FETCH),
            "scan_since": iso(window["since"] or BEFORE_ALL),
            "scan_max": SCAN_MAX,
            "exact_max": EXACT_VECTOR_MAX,
            "topic_ids": list(topic_ids),
        }
        records = self._run(query("search_topics_vector"), params, read=True)
        label = "vector-scan" if records[0]["scanned"] else "vector"
        hits = [
            ScoredTopic(topic_from_props(h["t"]), float(h["score"]), label)
            for h in records[0]["hits"]
        ]
        return hits, [topic_from_props(t) for t in records[0]["topics"]]

    def _by_id(self, namespace: str, topic_ids: Sequence[str], light: bool) -> list[Topic]:
        """Topics by id in the order asked, without embeddings (``light``: no facts either)."""
        records = self._read_ids(
            query("get_topics_by_id"), namespace, "topic_ids", topic_ids, light=light
        )
        return [topic_from_props(t) for t in records[0]["topics"]] if records else []


def tie_key(row: Mapping[str, Any]) -> tuple[str, datetime, str]:
    """How topic searches order equal scores: by the topic's name, then its first_seen_at, then
    its id (a key of the topic itself, so the order depends neither on the ids two writes of the
    same topics drew nor on the order Neo4j or Lucene read them in; ``search_topics_vector``
    orders its ties alike). ``row``: a full-text candidate (``search_topics_fulltext``)."""
    first = row.get("first_seen_at")
    at = iso_time(first) if first is not None else None
    return (row.get("name") or "", at if isinstance(at, datetime) else BEFORE_ALL, row["topic_id"])


def text_need(search: PagedQuery, k: int) -> int:
    """How many candidates a topic full-text search (``TopicStore.text_query``) for ``k``
    keeps before it stops growing: ``k``. A page that Lucene filled holds only the topics
    scoring above its last row (``search_topics_fulltext``), so it always keeps fewer than
    it read: growing until the whole pool was kept would read every page to the limit."""
    del search  # one rule for every window; kept for the callers that pass the search
    return k


def pool_of(hits: Sequence[Mapping[str, Any]], size: int, k: int) -> list[Mapping[str, Any]]:
    """The candidates the namespace's BM25 ranks, of ``hits`` (Lucene's rows in its order:
    constant scores, highest first, ``graph.fulltext.pool_query``): whole groups of one score,
    from the highest, while they fit in ``size`` or fewer than ``k`` are taken (so never a part
    of a group: which of a group's topics came first follows Lucene's document order); in
    order of score, then id, so the ranking (its fuzzy budget) sees them in an order of the
    namespace's own."""
    ordered = sorted(hits, key=lambda h: (-float(h.get("score") or 0.0), h["topic_id"]))
    return whole_groups(ordered, lambda h: float(h.get("score") or 0.0), size, k)


def _window(since: datetime | None, until: datetime | None) -> dict[str, datetime | None]:
    s = ensure_utc(since, "since") if since is not None else None
    u = ensure_utc(until, "until") if until is not None else None
    if s is not None and u is not None and s > u:
        raise ValidationFailed(
            f"time window is empty: since {s.isoformat()} > until {u.isoformat()}"
        )
    return {"since": s, "until": u}
