"""Topic search (retrieval/search.py) on the in-memory fakes: reciprocal rank fusion of the vector
and full-text lists, the §8.2 score, time windows, events in the window, 1-hop expansion and the
lexical fallback when the model is down. Vectors are chosen by hand (``Lookup``), so which topic
is "nearest" is fixed by the test, not by a model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from graph.models import EMBEDDING_DIMENSIONS, EdgeType, Topic, TopicEvent, parse
from graph.topics import LinkRequest, TextRank, partial_topic
from retrieval.config import SearchConfig
from retrieval.scoring import final_score, rrf, score_fusion
from retrieval.search import TopicSearch, unnamed
from tests.fakes import DownEmbedder, FakeStores
from tests.fakes.pipelines import T0
from text.timephrases import TimeWindow

NS = "unit"
NOW = T0 + timedelta(days=30)
LAST_WEEK = TimeWindow(NOW - timedelta(days=7), NOW, "last week", "relative")


def axis(*weights: float) -> list[float]:
    """A unit vector with ``weights`` on the first axes."""
    values = [*weights, *[0.0] * (EMBEDDING_DIMENSIONS - len(weights))]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


class Lookup:
    """An embedder that maps each query text to a vector the test chose."""

    model_name = "test/lookup"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.table.get(t, axis(0, 0, 0, 0, 0, 1)) for t in texts]


def make(key: str, name: str, one_liner: str, seen_days_ago: float, **extra: Any) -> Topic:
    at = NOW - timedelta(days=seen_days_ago)
    data = {"topic_id": key, "namespace": NS, "name": name, "one_liner": one_liner,
            "time": {"first_seen_at": at, "last_seen_at": at}, **extra}  # fmt: skip
    return parse(Topic, data)


# key -> (name, one-liner, days since last seen, vector)
CORPUS = {
    "lake": ("Lake House", "The cabin by the lake", 2, axis(1, 0, 0)),
    "trip": ("Lake Trip", "A weekend trip to the lake", 20, axis(0.6, 0.8, 0)),
    "bill": ("Billing Migration", "Moving billing to Postgres", 3, axis(0, 0, 1)),
    "rome": ("Roman Aqueducts", "A book about aqueducts", 40, axis(0, 1, 0)),
}


def stores(corpus: dict[str, tuple[str, str, float, list[float]]] = CORPUS) -> FakeStores:
    fake = FakeStores()
    topics = [make(k, name, line, days) for k, (name, line, days, _) in corpus.items()]
    fake.topics.create(topics, [v for *_, v in corpus.values()], T0)
    return fake


def search(fake: FakeStores, table: dict[str, list[float]]) -> TopicSearch:
    return TopicSearch(fake.topics, fake.events, Lookup(table))


def ids(hits: Sequence[Any]) -> list[str]:
    return [h.topic.topic_id for h in hits]


# -- pure parts --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rankings", "expected"),
    [
        ([], {}),
        ([["a", "b", "c"]], {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63}),
        ([["a", "b"], ["b", "a"]], {"a": 1 / 61 + 1 / 62, "b": 1 / 62 + 1 / 61}),
        ([["a", "b", "c"], ["c"]], {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63 + 1 / 61}),
        ([["a"], [], ["a"]], {"a": 2 / 61}),
    ],
    ids=["nothing", "one-list", "swapped", "in-both-beats-top-of-one", "empty-list"],
)
def test_rrf_adds_one_over_k_plus_rank_per_list(
    rankings: list[list[str]], expected: dict[str, float]
) -> None:
    fused = rrf(rankings, 60.0)
    assert fused == pytest.approx(expected)


@pytest.mark.parametrize(
    ("cosine", "text", "expected"),
    [
        ({}, {}, {}),
        # cosines rescaled over the candidates (0.2 -> 0, 0.6 -> 1), BM25 over the best
        ({"a": 0.6, "b": 0.4, "c": 0.2}, {}, {"a": 0.4, "b": 0.2, "c": 0.0}),
        ({}, {"a": 4.0, "b": 1.0}, {"a": 0.6, "b": 0.15}),
        # a topic absent from a list gets nothing for it
        ({"a": 0.6, "b": 0.2}, {"b": 2.0, "c": 1.0}, {"a": 0.4, "b": 0.6, "c": 0.3}),
        # one vector candidate is the nearest
        ({"a": 0.3}, {"a": 1.0}, {"a": 1.0}),
    ],
    ids=["nothing", "vector-only", "text-only", "absent-is-zero", "one-candidate"],
)
def test_score_fusion_weighs_rescaled_cosine_and_bm25(
    cosine: dict[str, float], text: dict[str, float], expected: dict[str, float]
) -> None:
    assert score_fusion(cosine, text, 0.4) == pytest.approx(expected)


def test_score_fusion_keeps_a_clear_lead_that_rank_fusion_loses() -> None:
    """The question's words are all in topic "a" (BM25 10) and barely in "b" (1), which is a
    little nearer by vector: RRF sees ranks only (1st and 2nd in each list) and puts "b" first;
    score fusion keeps how far ahead "a" is."""
    cosine = {"b": 0.5, "c": 0.45, "a": 0.3, "d": 0.1}
    text = {"a": 10.0, "b": 1.0}
    fused = score_fusion(cosine, text, SearchConfig().vector_weight)
    assert max(fused, key=lambda t: fused[t]) == "a"
    lists = [sorted(cosine, key=lambda t: -cosine[t]), sorted(text, key=lambda t: -text[t])]
    ranks = rrf(lists, 10.0)
    assert max(ranks, key=lambda t: ranks[t]) == "b"


def test_rank_fusion_is_still_available() -> None:
    """``fusion="rrf"`` scores relevance as reciprocal rank fusion x k, as before."""
    engine = TopicSearch(
        stores().topics, stores().events, Lookup({"lake": axis(1, 0, 0)}),
        SearchConfig(fusion="rrf"),
    )  # fmt: skip
    top = engine.run(NS, "lake", NOW, k=4).hits[0]
    assert top.topic.topic_id == "lake"
    assert top.components["relevance"] == pytest.approx(2 * 10 / 11)  # first in both lists


@pytest.mark.parametrize(
    ("utility", "age_days", "in_window", "factor"),
    [
        (0.0, 0, False, 1.0),  # nothing but relevance
        (20.0, 0, False, 1.5),  # utility at the scale: boost 0.5
        (-5.0, 0, False, 1.0),  # negative utility counts as none
        (0.0, 30, False, 0.5 + 0.5 * math.exp(-1)),  # one tau old
        (0.0, 3000, False, 0.5),  # very old: half, never less
        (0.0, 0, True, 3.0),  # seen in the asked window
        (20.0, 30, True, 1.5 * (0.5 + 0.5 * math.exp(-1)) * 3.0),
    ],
)
def test_final_score_multiplies_the_section_8_2_boosts(
    utility: float, age_days: int, in_window: bool, factor: float
) -> None:
    topic = make("t", "T", "", age_days, stats={"utility_score": utility})
    # the formula with a floor of 0.5 (the default, 1.0, leaves recency out: retrieval.config)
    parts = final_score(2.0, topic, NOW, in_window, SearchConfig(recency_floor=0.5))
    assert parts["score"] == pytest.approx(2.0 * factor)
    assert parts["relevance"] == 2.0


# -- fusion ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "vector", "expected_order", "top_sources"),
    [
        # both lists put the lake house first
        ("lake", axis(1, 0, 0), ["lake", "trip"], ["fulltext", "vector"]),
        # the text names the trip only; the vector is nearest the lake house: the trip is in
        # both lists and beats the top of one list alone
        ("weekend", axis(1, 0, 0), ["trip", "lake"], ["fulltext", "vector"]),
        # no word matches: the nearest by vector (the rest are ordered by rank x recency)
        ("zzz", axis(0, 0.1, 1), ["bill"], ["vector"]),
    ],
    ids=["agree", "in-both-wins", "vector-only"],
)
def test_fusion_ranks_topics_found_by_both_lists_first(
    query: str, vector: list[float], expected_order: list[str], top_sources: list[str]
) -> None:
    result = search(stores(), {query: vector}).run(NS, query, NOW, k=4)
    assert ids(result.hits)[: len(expected_order)] == expected_order
    top = result.hits[0]
    assert sorted(top.sources) == top_sources
    assert top.reason == f"matched by {', '.join(top_sources)}"
    assert not result.degraded


def test_the_best_vector_cosine_is_reported_per_topic() -> None:
    result = search(stores(), {"lake": axis(1, 0, 0)}).run(NS, "lake", NOW, k=4)
    cosine = {h.topic.topic_id: h.components["vector_cosine"] for h in result.hits}
    assert cosine["lake"] == pytest.approx(1.0)
    assert cosine["trip"] == pytest.approx(0.6)
    assert cosine["bill"] == pytest.approx(0.0, abs=1e-9)


def test_k_caps_the_hits_and_other_namespaces_and_archived_topics_never_come_back() -> None:
    fake = stores()
    other = make("elsewhere", "Lake Elsewhere", "another lake", 1).model_copy(
        update={"namespace": "other"}
    )
    fake.topics.create([other], [axis(1, 0, 0)], T0)
    fake.topics.archive(NS, "trip", NOW)
    hits = search(fake, {"lake": axis(1, 0, 0)}).search(NS, "lake", NOW, k=2)
    assert ids(hits) == ["lake", "bill"]  # bill and rome tie on the vector: bill is newer
    everything = ids(search(fake, {"lake": axis(1, 0, 0)}).search(NS, "lake", NOW, k=10))
    assert "trip" not in everything and "elsewhere" not in everything


def test_utility_lifts_a_slightly_less_relevant_topic() -> None:
    corpus = {
        "plain": ("Garden Beds", "soil for the garden beds", 5, axis(1, 1, 0)),
        "useful": ("Garden Tools", "tools for the garden", 5, axis(1, 1, 0)),
    }
    fake = stores(corpus)
    ordered = ids(search(fake, {"garden": axis(1, 1, 0)}).search(NS, "garden", NOW))
    assert ordered == ["plain", "useful"]  # same words, same age: plain ranks first in both
    fake.graph.topics["useful"].props["utility_score"] = 10.0
    assert ids(search(fake, {"garden": axis(1, 1, 0)}).search(NS, "garden", NOW)) == [
        "useful",
        "plain",
    ]


# -- time windows ----------------------------------------------------------------------------------
def test_a_topic_seen_in_the_window_outranks_a_more_similar_older_one() -> None:
    fake = stores()
    engine = search(fake, {"trip": axis(0.6, 0.8, 0)})  # nearest: the (old) lake trip
    plain = engine.run(NS, "trip", NOW, k=4)
    assert ids(plain.hits)[0] == "trip"
    windowed = engine.run(NS, "trip", NOW, k=4, window=LAST_WEEK)
    assert ids(windowed.hits)[0] == "lake"
    top = windowed.hits[0]
    assert top.components["time_window_boost"] == 3.0
    assert "seen within 'last week'" in top.reason
    trip = next(h for h in windowed.hits if h.topic.topic_id == "trip")
    assert trip.components["time_window_boost"] == 1.0
    assert trip.sources == ["vector-any-time"]  # outside the window: only the any-time list


@pytest.mark.parametrize(
    ("window", "fulltext_ids"),
    [
        (None, {"lake", "trip"}),
        (LAST_WEEK, {"lake"}),
        (TimeWindow(NOW - timedelta(days=30), NOW - timedelta(days=10), "earlier", "r"), {"trip"}),
        (TimeWindow(None, NOW - timedelta(days=30), "long ago", "r"), set()),
    ],
    ids=["no-window", "last-week", "earlier", "nothing-that-old"],
)
def test_the_window_filters_the_full_text_list(
    window: TimeWindow | None, fulltext_ids: set[str]
) -> None:
    fake = stores()
    result = TopicSearch(fake.topics, fake.events, None).run(NS, "lake", NOW, k=8, window=window)
    assert {h.topic.topic_id for h in result.hits if "fulltext" in h.sources} == fulltext_ids


def test_an_event_in_the_window_boosts_an_older_topic() -> None:
    fake = stores()
    event = TopicEvent(namespace=NS, topic_id="rome", at=NOW - timedelta(days=1),
                       delta_summary="read another chapter", source_message_ids=[])  # fmt: skip
    fake.events.record(NS, [event])
    hits = search(fake, {"what": axis(0, 1, 1)}).search(NS, "what", NOW, k=4, window=LAST_WEEK)
    rome = next(h for h in hits if h.topic.topic_id == "rome")
    assert rome.components["event_in_window_boost"] == 1.5
    assert all("event_in_window_boost" not in h.components for h in hits if h is not rome)


# -- expansion and degraded mode -------------------------------------------------------------------
def test_expansion_only_when_asked_and_never_to_an_archived_topic() -> None:
    fake = stores()
    fake.topics.link(NS, [LinkRequest("lake", "rome", EdgeType.RELATES_TO, 2.0),
                          LinkRequest("lake", "trip", EdgeType.NEXT, 1.0)], NOW)  # fmt: skip
    fake.topics.archive(NS, "trip", NOW)
    engine = TopicSearch(fake.topics, fake.events, None)  # full text only: "cabin" finds one
    assert ids(engine.search(NS, "cabin", NOW, k=4)) == ["lake"]
    deep = engine.search(NS, "cabin", NOW, k=4, expand=True)
    assert ids(deep) == ["lake", "rome"]
    assert deep[1].reason == "RELATES_TO neighbour of 'Lake House'"


def test_a_neighbour_outside_the_seeds_is_scored_from_its_seed() -> None:
    fake = stores()
    fake.topics.link(NS, [LinkRequest("bill", "rome", EdgeType.DEPENDS_ON, 1.0)], NOW)
    engine = TopicSearch(fake.topics, fake.events, None)  # full text only: rome is no hit
    hits = engine.search(NS, "billing", NOW, k=4, expand=True)
    assert ids(hits) == ["bill", "rome"]
    bill, rome = hits
    assert rome.sources == ["graph:DEPENDS_ON"]
    assert rome.reason == "DEPENDS_ON neighbour of 'Billing Migration'"
    assert rome.components["relevance"] == pytest.approx(bill.components["relevance"] * 0.5)


@pytest.mark.parametrize(
    ("embedder", "degraded"),
    [(DownEmbedder(), True), (None, False)],
    ids=["model-down", "no-model"],
)
def test_without_a_model_full_text_still_answers(embedder: Any, degraded: bool) -> None:
    fake = stores()
    result = TopicSearch(fake.topics, fake.events, embedder).run(NS, "lake", NOW, k=4)
    assert result.degraded is degraded
    assert ids(result.hits) == ["lake", "trip"]
    assert all(h.sources == ["fulltext"] for h in result.hits)
    assert result.cosine == {}


def test_rank_decides_not_age_an_old_best_match_beats_a_new_second_best() -> None:
    """A question about May finds May's topic though October's are newer. With the old
    defaults (RRF k=60, recency floor 0.5) rank 1 and rank 2 were 2% apart and recency (up to
    2x) put the newer topic first; on LoCoMo that halved topic-only recall (docs/topics.md)."""
    corpus = {
        "may": ("Support Group", "the support group in May", 150, axis(1, 0, 0)),
        "oct": ("Support Network", "a support network in October", 1, axis(0.8, 0.6, 0)),
    }
    table = {"support group": axis(1, 0, 0)}
    fake = stores(corpus)
    assert ids(search(fake, table).search(NS, "support group", NOW)) == ["may", "oct"]
    old = SearchConfig(rrf_k=60.0, recency_floor=0.5, fusion="rrf")
    before = TopicSearch(fake.topics, fake.events, Lookup(table), old)
    assert ids(before.search(NS, "support group", NOW)) == ["oct", "may"]


# -- the speakers' names -----------------------------------------------------------------------
class Recording(Lookup):
    """A ``Lookup`` that remembers the texts it embedded."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        super().__init__(table)
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return super().embed(texts)


FRIENDS = {
    "tart": ("Chocolate Tart", "Joanna: I made a chocolate tart with raspberries.", 5,
             axis(1, 0, 0)),
    "film": ("Movie Night", "Joanna: Nate and I watched a movie.", 5, axis(0, 1, 0)),
}  # fmt: skip


def test_unnamed_drops_the_speakers_names_and_their_possessive() -> None:
    assert unnamed("When did Joanna make Nate's tart?", {"joanna", "nate"}).split() == [
        "When",
        "did",
        "make",
        "tart?",
    ]
    assert unnamed("Joanna?", {"joanna"}) == "Joanna?"  # nothing else: the text itself
    assert unnamed("When did Joanna bake?", set()) == "When did Joanna bake?"


def test_search_reads_the_message_without_the_namespaces_speakers() -> None:
    """The topics' vectors and full text leave the speakers out, so the name is dropped before
    embedding and before the full-text query: the question is embedded without it, and a topic
    whose one-liner only shares the name ("Joanna: Nate and I watched a movie.") is not a
    full-text candidate."""
    asked: list[list[str]] = []

    def speakers(namespace: str, names: Sequence[str]) -> set[str]:
        asked.append(list(names))
        return {"joanna", "nate"} & {n.lower() for n in names}

    question = "When did Joanna make a tart?"
    table = {"When did make a tart?": axis(1, 0, 0)}
    model = Recording(table)
    engine = TopicSearch(stores(FRIENDS).topics, FakeStores().events, model, speakers=speakers)
    result = engine.run(NS, question, NOW, k=2)
    assert model.seen == ["When did make a tart?"]
    assert any("Joanna" in names for names in asked)
    assert ids(result.hits)[0] == "tart"
    assert "film" not in result.text_scores  # matched by "joanna" alone before
    # without a speakers lookup the text is read as given (names and all)
    plain = Recording(table)
    given = TopicSearch(engine.topics, engine.events, plain).run(NS, question, NOW, k=2)
    assert plain.seen == [question]
    assert "film" in given.text_scores


def _far_lake_notes() -> tuple[Any, TopicSearch, list[float] | None]:
    """40 "lake" notes far from the query's vector and one orchard near it (the vector query's
    hits do not cover the notes the full text ranks first): the stores, the search, the query
    "lake" embedded."""
    corpus = {f"t{i}": (f"Lake note {i}", f"lake detail {i}", i, axis(i / 40, 1, 0))
              for i in range(40)}  # fmt: skip
    corpus["near"] = ("Orchard", "apple trees", 1, axis(1, 0, 0))
    fake = stores(corpus)
    finder = search(fake, {"lake": axis(1, 0, 0)})
    return fake, finder, finder.embed_query("lake")


def test_a_vector_query_that_did_not_wait_for_the_text_ranking_gives_the_same_pool() -> None:
    """The context path hands its full-text ranking over as a callable: when it is back by the
    time the vector is there, the vector query reads its topics; when it is not, the vector query
    runs at once and the ranked topics it did not return are read by id after it. Both ways give
    the same candidates, scores and order, here with ranked topics far from the query's vector
    (the vector query's hits do not cover them)."""
    fake, finder, vector = _far_lake_notes()
    # the far topics ranked by full text (the caller's BM25 ranking, as text_ranking gives it)
    ranking = [TextRank(f"t{i}", 5.0 - i, 4.0 - i) for i in range(4)]
    reads: list[list[str]] = []
    by_id = fake.topics.ranked_topics

    def counted(namespace: str, ranks: Sequence[TextRank], **kw: Any) -> Any:
        known = {t.topic_id for t in kw["read"]}
        reads.append([r.topic_id for r in ranks if r.topic_id not in known])
        return by_id(namespace, ranks, **kw)

    fake.topics.ranked_topics = counted  # type: ignore[method-assign]
    waited, at_once = (
        finder.pool(NS, "lake", NOW, 2, None, vector, lambda: ranking, None, lambda r=ready: r)
        for ready in (True, False)
    )
    # read with the vector query / read by id after it
    assert reads == [[], ["t0", "t1", "t2", "t3"]], reads
    assert waited.rankings == at_once.rankings and len(waited.rankings) == 2
    assert waited.rankings[0] == ["t0", "t1", "t2", "t3"]  # full text first, then vector
    assert set(waited.topics) == set(at_once.topics) > set(waited.rankings[1])
    assert waited.cosine == at_once.cosine and waited.text_scores == at_once.text_scores
    assert waited.content_scores == at_once.content_scores
    assert finder.rank(waited, 2).hits == finder.rank(at_once, 2).hits


def test_a_partial_full_text_candidate_is_scored_as_if_read_and_named_partial() -> None:
    """With ``partial``, a ranked full-text candidate the vector query did not return is not
    read at all: it is scored from its ranking's row (``partial_topic``: id, name, utility,
    first and last seen) and named in ``CandidatePool.partial`` for the caller to read. The
    ranking is the one the topics read by id give: same ids, scores, components, reasons."""
    fake, finder, vector = _far_lake_notes()
    rows = {t.topic_id: t for t in fake.topics.get(NS, [f"t{i}" for i in range(4)])}
    ranking = [
        TextRank(f"t{i}", 5.0 - i, 4.0 - i, partial_topic(NS, {
            "topic_id": f"t{i}", "name": rows[f"t{i}"].name, "one_liner": "",
            "utility_score": rows[f"t{i}"].stats.utility_score,
            "first_seen_at": rows[f"t{i}"].time.first_seen_at.isoformat(),
            "last_seen_at": rows[f"t{i}"].time.last_seen_at.isoformat(),
        }))
        for i in range(4)
    ]  # fmt: skip
    reads: list[list[str]] = []
    by_id = fake.topics.ranked_topics

    def counted(namespace: str, ranks: Sequence[TextRank], **kw: Any) -> Any:
        known = {t.topic_id for t in kw["read"]}
        skipped = {r.topic_id for r in ranks if kw.get("partial") and r.partial is not None}
        reads.append([r.topic_id for r in ranks if r.topic_id not in known | skipped])
        return by_id(namespace, ranks, **kw)

    fake.topics.ranked_topics = counted  # type: ignore[method-assign]
    pools = [
        finder.pool(NS, "lake", NOW, 2, None, vector, lambda: ranking, None, lambda r=ready: r,
                    partial=partial)
        for ready in (True, False)
        for partial in (False, True)
    ]  # fmt: skip
    # read with the vector query / partial / read by id after it / partial
    assert reads == [[], [], ["t0", "t1", "t2", "t3"], []], reads
    full, partial_waited, _, partial_at_once = pools
    assert full.partial == set() and partial_waited.partial == {"t0", "t1", "t2", "t3"}
    assert partial_at_once.partial == partial_waited.partial
    assert all(partial_waited.topics[t].aliases == [] for t in partial_waited.partial)
    for pool in pools[1:]:
        assert pool.rankings == full.rankings and pool.cosine == full.cosine
        assert pool.text_scores == full.text_scores
        assert pool.content_scores == full.content_scores

    def shown(hits: list[Any]) -> list[Any]:
        return [(h.topic.topic_id, h.score, h.components, h.sources, h.reason) for h in hits]

    expected = shown(finder.rank(full, 4).hits)
    assert any(t in {h[0] for h in expected} for t in partial_waited.partial)  # one ranks
    for pool in pools[1:]:
        assert shown(finder.rank(pool, 4).hits) == expected
