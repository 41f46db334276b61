"""Topic search: hybrid candidates (vector + full text), fused by score (the cosine rescaled over
the vector candidates and the BM25 of the question's content words over the best; or by
reciprocal rank fusion, ``SearchConfig.fusion``), optionally restricted to a time window and
expanded one hop over the typed edges (docs/retrieval.md, "How topic search ranks"). It reads
the message without the names of the conversation's speakers (``unnamed``): a topic's vector and
full-text entry leave the speakers out, so a name in the question only blurs its match.

Scoring follows spec §8.2: relevance x (1 + utility_boost) x recency_boost x time_window_boost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from graph.errors import EmbeddingUnavailable
from graph.models import EdgeType, Topic
from graph.protocols import EventStoreProtocol, TopicStoreProtocol
from graph.topics import ScoredTopic, TextRank
from retrieval.config import SearchConfig
from retrieval.embedding import Embedder
from retrieval.fact_rank import PassagesWithin, read_signals
from retrieval.scoring import final_score, rrf, score_fusion
from text.english import drop_names, name_candidates
from text.timephrases import TimeWindow

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="topic-search")


@dataclass
class TopicHit:
    topic: Topic
    score: float
    components: dict[str, float] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    reason: str = ""


@dataclass
class SearchResult:
    hits: list[TopicHit]
    degraded: bool = False  # the embedder was unavailable: lexical results only
    cosine: dict[str, float] = field(default_factory=dict)  # topic id -> best vector cosine
    text_scores: dict[str, float] = field(default_factory=dict)  # topic id -> full-text BM25


@dataclass
class CandidatePool:
    """The vector and full-text candidates of one query, before fusion: what ``TopicSearch.rank``
    scores, and what the low-confidence trigger judges (best cosine, its margin, best BM25)."""

    namespace: str
    now: datetime
    window: TimeWindow | None
    topics: dict[str, Topic] = field(default_factory=dict)
    # the time the text itself names ("What did Audrey eat on October 24, 2023?"): a preference,
    # not a filter (``TopicSearch.said_in_window``)
    named: TimeWindow | None = None
    rankings: list[list[str]] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    cosine: dict[str, float] = field(default_factory=dict)
    text_scores: dict[str, float] = field(default_factory=dict)
    # BM25 of the query's content words alone (what score fusion reads; see ``relevance``)
    content_scores: dict[str, float] = field(default_factory=dict)
    degraded: bool = False
    event_topic_ids: set[str] = field(default_factory=set)
    # the topics in ``topics`` that are partial (``graph.topics.partial_topic``: a full-text
    # candidate scored from its ranking's fields, not read; a pool asked for ``partial``)
    partial: set[str] = field(default_factory=set)
    # the query as searched and its vector (None: degraded), for the facts' signal
    text: str = ""
    vector: Sequence[float] | None = None
    # the participants the query names, lower case (their facts weigh more)
    speakers: frozenset[str] = frozenset()


def unnamed(text: str, speakers: Iterable[str]) -> str:
    """``text`` as topic search reads it: without the names of the conversation's speakers
    (``drop_names``; ``text`` itself when nothing else would be left). A topic's vector and its
    full-text gist leave the speaker prefixes out (docs/topics.md: with them every topic of two
    friends reads alike), so "When did Joanna make a chocolate tart?" is embedded and matched
    as "When did make a chocolate tart?": the name moved the question's vector toward no topic
    in particular and matched every one-liner that quotes that person."""
    return tidied(text, drop_names(text, speakers))


def tidied(text: str, dropped: str) -> str:
    """``unnamed`` of ``text`` given ``dropped``, ``drop_names``' reading of it (read once)."""
    return text if dropped == text else " ".join(dropped.split())


class TopicSearch:
    def __init__(
        self,
        topics: TopicStoreProtocol,
        events: EventStoreProtocol,
        embedder: Embedder | None,
        config: SearchConfig | None = None,
        speakers: Callable[[str, Sequence[str]], set[str]] | None = None,
        passages: PassagesWithin | None = None,
    ) -> None:
        self.topics = topics
        self.events = events
        self.embedder = embedder
        self.cfg = config or SearchConfig()
        # (namespace, phrases) -> those that name a speaker of the namespace
        # (``MessageStore.speakers_named``); None: names are not looked up (``run`` reads the
        # text as given)
        self.speakers = speakers
        # the candidates' cited passages, for their facts' signal (None: words alone)
        self.passages = passages

    def search(
        self,
        namespace: str,
        text: str,
        now: datetime,
        k: int = 8,
        window: TimeWindow | None = None,
        expand: bool = False,
    ) -> list[TopicHit]:
        """Ranked topics for ``text`` (see ``run``)."""
        return self.run(namespace, text, now, k, window, expand).hits

    def run(
        self,
        namespace: str,
        text: str,
        now: datetime,
        k: int = 8,
        window: TimeWindow | None = None,
        expand: bool = False,
        named: TimeWindow | None = None,
    ) -> SearchResult:
        """Ranked topics for ``text``; with a window, topics seen in it (or with events in it)
        rank above more similar but older ones; ``expand`` adds 1-hop neighbours; ``named``,
        the time ``text`` names itself, only favours topics with something said then
        (``said_in_window``). ``text`` is read without the names of the namespace's speakers
        (``query``). All state is per call, so one instance serves concurrent requests."""
        text, speakers = self.named_query(namespace, text)
        vector = self.embed_query(text)
        pool = self.pool(namespace, text, now, k, window, vector)
        pool.named = named
        pool.speakers = speakers
        return self.rank(pool, k, expand)

    def named_query(self, namespace: str, text: str) -> tuple[str, frozenset[str]]:
        """``query`` of ``text`` and the speakers it names (lower case)."""
        if self.speakers is None:
            return text, frozenset()
        names = name_candidates(text)
        found = self.speakers(namespace, names) if names else set()
        return (unnamed(text, found) if names else text), frozenset(n.lower() for n in found)

    def query(self, namespace: str, text: str) -> str:
        """``text`` without the names of the namespace's speakers (``unnamed``), looked up with
        ``speakers`` (one indexed read, only when ``text`` has a word that may be a name). The
        context path has them already (``graph.context.ContextStart``) and calls ``unnamed``."""
        return self.named_query(namespace, text)[0]

    def embed_query(self, text: str) -> list[float] | None:
        """The query's vector, or None without an embedder or when the model is unavailable
        (the caller passes it on to ``pool`` and to skill routing: one embedding per request)."""
        if self.embedder is None:
            return None
        try:
            return self.embedder.embed([text])[0]
        except EmbeddingUnavailable:
            return None

    def pool(
        self,
        namespace: str,
        text: str,
        now: datetime,
        k: int,
        window: TimeWindow | None,
        vector: Sequence[float] | None,
        text_hits: Callable[[], list[ScoredTopic] | list[TextRank]] | None = None,
        event_ids: Callable[[], set[str]] | None = None,
        text_ready: Callable[[], bool] | None = None,
        partial: bool = False,
    ) -> CandidatePool:
        """Vector and full-text candidates for a search of up to ``k`` topics (``vector``: the
        query's embedding, None when there is none: degraded to the lexical path; ``text_hits``:
        the full-text candidates when the caller reads them itself, as
        ``topics.search_text(namespace, text, fetch_size(k), window, fuzzy=False,
        light=True)`` gives them, or their ranking alone (``TopicStore.text_ranking``), whose
        topics the vector query then reads in its own round trip, or, when ``text_ready`` says
        the ranking is still to come once the vector is there, read by id after a vector query
        that did not wait for it; ``event_ids``: the window's event topics, likewise).
        ``partial``: a ranked full-text candidate the vector query did not return is not read
        at all: it is scored from its ranking's fields (``partial_topic``), and named in
        ``CandidatePool.partial`` for the caller to read (a context reads its best topics
        anyway: one round trip fewer; docs/performance.md, eleventh pass)."""
        pool = CandidatePool(namespace, now, window, text=text, vector=vector)
        fetch = self.fetch_size(k)
        # the window's event topics need no candidate: read beside the searches
        events = None
        if window:
            events = _POOL.submit(event_ids or (lambda: self._event_topics(namespace, window)))
        found = self._candidates(
            namespace, text, fetch, window, vector, pool, text_hits, text_ready, partial
        )
        partials = pool.partial  # the full-text hits _candidates left partial
        pool.partial = set()
        for label, hits in found:
            pool.rankings.append([h.topic_id for h in hits])
            for t in hits:
                whole = label != "fulltext" or t.topic_id not in partials
                if t.topic_id not in pool.topics or (whole and t.topic_id in pool.partial):
                    pool.topics[t.topic_id] = t  # a topic read whole wins over a partial one
                    if whole:
                        pool.partial.discard(t.topic_id)
                    else:
                        pool.partial.add(t.topic_id)
                pool.sources.setdefault(t.topic_id, []).append(label)
        pool.event_topic_ids = events.result() if events else set()
        return pool

    def fetch_size(self, k: int) -> int:
        """How many candidates each ranking of a search for ``k`` topics fetches."""
        return max(k * self.cfg.fetch_factor, self.cfg.min_fetch)

    def rank(
        self, pool: CandidatePool, k: int, expand: bool = False, facts: bool = True
    ) -> SearchResult:
        """The pool fused (``relevance``) and scored (§8.2), best ``k``; ``expand``
        adds 1-hop neighbours of the best ``k`` first; ``facts``: with the best candidates'
        best fact for the query (``fact_signals``; a context turns it off: its evidence
        already reaches the facts, docs/retrieval.md)."""
        relevance = self.relevance(pool)
        signals = self.fact_signals(pool, relevance) if facts else {}
        said = self.said_in_window(pool, list(relevance))
        scored = [
            self._hit(pool, pool.topics[tid], rel, pool.sources[tid], tid in said, signals.get(tid))
            for tid, rel in relevance.items()
        ]
        scored.sort(key=lambda h: -h.score)
        if expand and scored:
            scored = self._expand(pool, scored[:k]) + scored[k:]
            scored.sort(key=lambda h: -h.score)
        return SearchResult(scored[:k], pool.degraded, pool.cosine, pool.text_scores)

    def relevance(self, pool: CandidatePool) -> dict[str, float]:
        """Topic id -> relevance of every candidate of ``pool`` (``SearchConfig.fusion``): score
        fusion in [0, 1] of the cosines and the content-word BM25, or reciprocal rank fusion x
        ``rrf_k`` (rank 1 of one list ~0.91)."""
        if self.cfg.fusion == "rrf":
            fused = rrf(pool.rankings, self.cfg.rrf_k)
            return {tid: rel * self.cfg.rrf_k for tid, rel in fused.items()}
        # only the candidates' own scores: the cosine of a topic the full text found (kept by
        # pool.cosine when a vector list also held it) and vice versa
        # in rank order, so that equal scores keep the lists' order (the sort is stable)
        listed = dict.fromkeys(tid for ranking in pool.rankings for tid in ranking)
        cosine = {t: c for t, c in pool.cosine.items() if t in listed}
        # content words only: a match on "how", "the", "have" says nothing about a topic; when
        # no candidate holds a content word, the function words are all the text list has (as
        # graph.fulltext.content_words keeps every word of a question of function words only)
        text = {t: s for t, s in pool.content_scores.items() if t in listed}
        if not any(s > 0 for s in text.values()):
            text = {t: s for t, s in pool.text_scores.items() if t in listed}
        fused = score_fusion(cosine, text, self.cfg.vector_weight)
        return {tid: fused.get(tid, 0.0) for tid in listed}

    def fact_signals(self, pool: CandidatePool, relevance: dict[str, float]) -> dict[str, float]:
        """Topic id -> the best candidates' best fact for the query
        (``retrieval.fact_rank.read_signals``); empty when off."""
        return read_signals(
            self.topics, self.passages, self.cfg, pool.namespace,
            (pool.text, pool.vector, pool.speakers), relevance,
        )  # fmt: skip

    def said_in_window(self, pool: CandidatePool, topic_ids: list[str]) -> set[str]:
        """Those of ``topic_ids`` holding a live fact said (``Fact.at``) inside the time the
        text names (``pool.named``), when it is bounded on both sides (a date, a month: "What
        did Audrey eat on October 24, 2023?"); one read of the candidates' facts, only then. An
        open window ("before 4 October") or none: empty. A topic without facts
        counts when its first..last seen span overlaps the window. Not the first..last seen span of a
        requested window (``window_boost``): that covers nearly every date of a conversation
        that returns to a topic for months, and a question's date does not filter the
        candidates (a fact restated later, or its topic renamed, is still the answer)."""
        window = pool.named
        if window is None or window.start is None or window.end is None or not topic_ids:
            return set()
        if self.cfg.said_in_window_boost == 1.0:
            return set()
        start, end = window.start, window.end
        said = set()
        for t in self.topics.get(pool.namespace, topic_ids):
            times = [f.at for f in t.facts if f.invalid_at is None and f.at is not None]
            # a topic without facts (made through the API): its seen span stands for them
            if any(start <= at < end for at in times) if t.facts else _overlaps(t, window):
                said.add(t.topic_id)
        return said

    def _candidates(
        self,
        namespace: str,
        text: str,
        fetch: int,
        window: TimeWindow | None,
        vector: Sequence[float] | None,
        pool: CandidatePool,
        text_hits: Callable[[], list[ScoredTopic] | list[TextRank]] | None = None,
        text_ready: Callable[[], bool] | None = None,
        partial: bool = False,
    ) -> list[tuple[str, list[Topic]]]:
        """Vector and full-text candidates, the database calls run side by side (the full-text
        ones read by the caller when it gives ``text_hits``; given as a ranking, their topics
        are read by the vector query, after the ranking, in the same round trip)."""
        since = window.start if window else None
        until = window.end if window else None
        calls: dict[str, Callable[[], list[ScoredTopic]]] = {}
        if text_hits is None:
            calls["fulltext"] = lambda: self.topics.search_text(
                namespace, text, fetch, since, until, fuzzy=False, light=True
            )
        vec = list(vector) if vector is not None else None
        if vec is not None and window is not None:  # also the nearest overall, to rank against
            calls["vector-any-time"] = lambda: self.topics.search_vector(
                namespace, vec, fetch, overfetch=self.cfg.vector_overfetch, light=True
            )
        futures = {label: _POOL.submit(call) for label, call in calls.items()}
        # the caller's full-text read still in flight once the vector is there: the vector
        # query does not wait for it (docs/performance.md, tenth pass)
        wait = vec is None or text_hits is None or text_ready is None or text_ready()
        ranked, vector_hits = self._read_with_vector(
            namespace, fetch, window, vec, text_hits, wait, partial
        )
        results: dict[str, list[ScoredTopic]] = {
            "fulltext": futures["fulltext"].result() if ranked is None else ranked
        }
        if vector_hits is not None:
            results["vector"] = vector_hits
        if "vector-any-time" in futures:
            results["vector-any-time"] = futures["vector-any-time"].result()
        out: list[tuple[str, list[Topic]]] = []
        for label, hits in results.items():
            best = pool.cosine if label.startswith("vector") else pool.text_scores
            for h in hits:
                if h.partial:
                    pool.partial.add(h.topic.topic_id)
                # the vector index scores (1 + cos) / 2; the trigger reads plain cosine
                score = 2 * h.score - 1 if label.startswith("vector") else h.score
                best[h.topic.topic_id] = max(score, best.get(h.topic.topic_id, -1.0))
                if not label.startswith("vector"):
                    core = h.score if h.content_score is None else h.content_score
                    pool.content_scores[h.topic.topic_id] = core
            out.append((label, [h.topic for h in hits]))
        if vector is None and self.embedder is not None:
            pool.degraded = True
            out.append(("vector-unavailable", []))
        return out

    def _read_with_vector(
        self,
        namespace: str,
        fetch: int,
        window: TimeWindow | None,
        vector: list[float] | None,
        text_hits: Callable[[], list[ScoredTopic] | list[TextRank]] | None,
        wait: bool = True,
        partial: bool = False,
    ) -> tuple[list[ScoredTopic] | None, list[ScoredTopic] | None]:
        """The full-text hits of the caller's ``text_hits`` (None: it gave none) and the vector
        hits (None: no vector). Given as a ranking, its topics are read by the vector query (one
        round trip for both) when the ranking is waited for first (``wait``), or by id without
        a vector. Without ``wait`` (the caller's read still in flight) the vector query runs at
        once and the ranking's topics it did not return are read by id after it: the same
        topics read the same way, one round trip more, but the vector query no longer waits for
        the text search and its ranking (~5 ms of a light request's wall time here;
        docs/performance.md, tenth pass). With ``partial``, a rank carrying its partial topic
        is read neither way (``TopicStore.ranked_topics``)."""
        given = text_hits() if wait and text_hits is not None else None
        ranks = [h for h in given or () if isinstance(h, TextRank)]
        hits: list[ScoredTopic] | None = None
        read: list[Topic] = []
        if vector is not None:
            unread = [r.topic_id for r in ranks if not (partial and r.partial is not None)]
            hits, read = self.topics.search_vector_reading(
                namespace, vector, fetch, window.start if window else None,
                window.end if window else None, overfetch=self.cfg.vector_overfetch,
                light=True, topic_ids=unread,
            )  # fmt: skip
        if not wait and text_hits is not None:
            given = text_hits()
            ranks = [h for h in given if isinstance(h, TextRank)]
        if given is None:
            return None, hits
        if len(ranks) < len(given):  # read already: topics, not ranks
            return [h for h in given if isinstance(h, ScoredTopic)], hits
        known = [h.topic for h in hits or ()] + read
        ranked = self.topics.ranked_topics(
            namespace, ranks, light=True, read=known, partial=partial
        )
        return ranked, hits

    def _event_topics(self, namespace: str, window: TimeWindow | None) -> set[str]:
        if window is None or (window.start is None and window.end is None):
            return set()
        return self.events.topic_ids_in_window(namespace, window.start, window.end)

    def _hit(
        self,
        pool: CandidatePool,
        topic: Topic,
        relevance: float,
        sources: list[str],
        said_in_window: bool = False,
        fact: float | None = None,
    ) -> TopicHit:
        window = pool.window
        in_window = window is not None and _overlaps(topic, window)
        parts = final_score(relevance, topic, pool.now, in_window, self.cfg, fact or 0.0)
        parts["vector_cosine"] = pool.cosine.get(topic.topic_id, 0.0)
        if topic.topic_id in pool.text_scores:
            parts["text_score"] = pool.text_scores[topic.topic_id]
        if topic.topic_id in pool.event_topic_ids:
            parts["event_in_window_boost"] = self.cfg.event_in_window_boost
            parts["score"] *= self.cfg.event_in_window_boost
        if said_in_window:
            parts["said_in_window_boost"] = self.cfg.said_in_window_boost
            parts["score"] *= self.cfg.said_in_window_boost
        reason = f"matched by {', '.join(sorted(set(sources)))}"
        if in_window and window is not None:
            reason += f"; seen within '{window.phrase}'"
        return TopicHit(topic, parts["score"], parts, sources, reason)

    def _expand(self, pool: CandidatePool, seeds: list[TopicHit]) -> list[TopicHit]:
        known = {h.topic.topic_id: h for h in seeds}
        limit = self.cfg.neighbour_limit
        found = self.topics.neighbours(
            pool.namespace, list(known), tuple(EdgeType), limit, light=True
        )
        for n in found:
            if n.topic.topic_id in known:
                continue
            seed = known.get(n.seed_id)
            base = (seed.components["relevance"] if seed else 0.0) * self.cfg.neighbour_factor
            label = [f"graph:{n.type.value}"]
            hit = self._hit(pool, n.topic, base, label)
            hit.reason = f"{n.type.value} neighbour of '{seed.topic.name if seed else n.seed_id}'"
            known[n.topic.topic_id] = hit
        return list(known.values())


def _overlaps(topic: Topic, window: TimeWindow) -> bool:
    if window.start is not None and topic.time.last_seen_at < window.start:
        return False
    return not (window.end is not None and topic.time.first_seen_at >= window.end)
