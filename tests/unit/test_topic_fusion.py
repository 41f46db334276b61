"""How topic search fuses its vector and full-text candidates, on score lists taken from real
kept namespaces (benchmarks/diagnose_fusion.py): score fusion reads the BM25 of the question's
content words, so a long chat topic whose gist holds "how", "many", "the" and "have" does not
outrank one the question is about.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from graph.models import Topic, parse
from retrieval.config import SearchConfig
from retrieval.search import CandidatePool, TopicSearch
from tests.fakes import FakeStores
from tests.fakes.pipelines import T0

NOW = T0 + timedelta(days=30)

# LongMemEval d23cf73b, "How many different cuisines have I learned to cook or tried out in the
# past few months?", deep search (40 per list; the first of each shown): name -> (cosine,
# BM25 of every word, BM25 of the content words); None: not in that list. The topics holding the
# evidence are stir-fry, dinner party and simple recipe.
D23CF73B: dict[str, tuple[float | None, float | None, float | None]] = {
    "cashew-based ricotta cheese substitute": (0.244, 5.52, 3.41),
    "top-rated restaurants": (0.382, 3.28, 1.69),
    "stir-fry": (0.379, 2.31, 1.32),
    "cookbook": (0.258, 5.98, 2.37),
    "monthly pass": (None, 4.79, 3.73),
    "portrayal": (0.080, 5.57, 2.85),
    "Pok Pok": (0.376, 2.21, 0.90),
    "coffee shop downtown": (0.088, 4.77, 2.45),
    "dinner party": (0.259, 2.26, 1.24),
    "kimchi": (0.263, 1.81, 0.83),
    "Family Guy": (None, 5.13, 2.24),
    "Commonwealth Games": (0.145, 4.70, 1.31),
    "simple recipe": (0.299, None, None),
    "silicone spatulas": (0.271, 2.01, 0.0),  # "or", "the", "to": no content word
    "ages": (0.224, 1.93, 0.0),
}


def pool_of(lists: dict[str, tuple[float | None, float | None, float | None]]) -> CandidatePool:
    """A candidate pool as ``TopicSearch.pool`` leaves it: both rankings and their scores."""
    pool = CandidatePool("ns", NOW, None)
    for name, (cosine, bm25, content) in lists.items():
        pool.topics[name] = parse(
            Topic,
            {"topic_id": name, "namespace": "ns", "name": name,
             "time": {"first_seen_at": T0, "last_seen_at": T0}},
        )  # fmt: skip
        if cosine is not None:
            pool.cosine[name] = cosine
        if bm25 is not None and content is not None:
            pool.text_scores[name], pool.content_scores[name] = bm25, content
    pool.rankings = [
        sorted(pool.cosine, key=lambda t: -pool.cosine[t]),
        sorted(pool.text_scores, key=lambda t: -pool.text_scores[t]),
    ]
    pool.sources = {t: ["pool"] for t in pool.topics}
    return pool


def ranked(pool: CandidatePool, config: SearchConfig | None = None) -> list[str]:
    fake = FakeStores()
    engine = TopicSearch(fake.topics, fake.events, None, config or SearchConfig())
    return [h.topic.topic_id for h in engine.rank(pool, k=len(pool.topics)).hits]


def test_topics_matched_by_function_words_fall_below_the_evidence() -> None:
    order = ranked(pool_of(D23CF73B))
    # "Commonwealth Games" (cosine 0.145) and "Family Guy" (no vector) had their BM25 from
    # "have", "how", "in", "the", "to": the evidence topic "dinner party" now ranks above both
    assert order.index("dinner party") < order.index("Family Guy")
    assert order.index("dinner party") < order.index("Commonwealth Games")
    assert order.index("stir-fry") < order.index("portrayal")
    # the vector-only evidence passes the topics that hold no content word at all
    assert order.index("simple recipe") < order.index("silicone spatulas")


def test_the_same_lists_fused_on_every_word_put_function_word_matches_first() -> None:
    """What the fix is against (score fusion before it): with the BM25 of every word, the
    function-word matches outrank the evidence and the vector-only evidence comes last."""
    pool = pool_of(D23CF73B)
    pool.content_scores = dict(pool.text_scores)
    order = ranked(pool)
    assert order.index("dinner party") > order.index("Family Guy")
    assert order.index("dinner party") > order.index("Commonwealth Games")
    assert order[-1] == "simple recipe"


def test_a_topic_with_no_content_word_keeps_only_its_vector_share() -> None:
    pool = pool_of(D23CF73B)
    fake = FakeStores()
    relevance = TopicSearch(fake.topics, fake.events, None).relevance(pool)
    lo, hi = 0.080, 0.382  # the cosines' min and max over the vector candidates
    near = (0.271 - lo) / (hi - lo)
    assert relevance["silicone spatulas"] == pytest.approx(0.4 * near)
    assert relevance["monthly pass"] == pytest.approx(0.6)  # the best content BM25, no vector


def test_a_question_of_function_words_only_is_ranked_on_them() -> None:
    """When no word of the question is a content word, the store gives the every-word BM25 as
    the content score (``graph.fulltext.content_words`` keeps all words then), so the text list
    still counts."""
    lists = {"the who": (0.2, 4.0, 4.0), "who knows": (0.3, 1.0, 1.0), "other": (0.1, None, None)}
    assert ranked(pool_of(lists))[0] == "the who"


def test_rank_fusion_reads_the_rankings_not_the_scores() -> None:
    pool = pool_of(D23CF73B)
    first = ranked(pool, SearchConfig(fusion="rrf"))
    pool.content_scores = {t: 0.0 for t in pool.content_scores}
    assert ranked(pool, SearchConfig(fusion="rrf")) == first


def test_when_no_candidate_holds_a_content_word_every_word_counts() -> None:
    """ "What did we decide last week?" over a small namespace: neither topic holds "decide",
    "last" or "week" ("decided" is another word to the index). Read on content words alone the
    text list would say nothing and the farther of two vector candidates would get 0, which no
    time-window boost can lift; so the every-word BM25 ("we", "did") counts, as before."""
    lists = {"schema log": (0.52, 1.8, 0.0), "Lisbon offsite": (0.41, 2.4, 0.0)}
    fake = FakeStores()
    relevance = TopicSearch(fake.topics, fake.events, None).relevance(pool_of(lists))
    assert relevance["schema log"] == pytest.approx(0.4 + 0.6 * 1.8 / 2.4)
    assert relevance["Lisbon offsite"] == pytest.approx(0.6)
