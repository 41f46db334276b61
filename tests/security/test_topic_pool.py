"""Issue 33: which of a large namespace's topics the topic search ranks never follows what another
tenant stores (docs/security.md, "Exact for small namespaces, exact groups for large ones").

Alice has more topics matching a question than the rerank pool holds (600 against
``RERANK_POOL`` = 200). Lucene's BM25 takes its statistics from every tenant, so when bob floods
the index with one of the question's words, Lucene's best 200 of hers change (the control
below: the pool as it was chosen before). The topic search's query scores constants that
depend on the topic and the question alone (``graph.fulltext.pool_query``) and keeps only whole
groups of one score, so her pool, its order and every score stay the same.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from neo4j import Driver

from graph.fulltext import in_namespace, lucene_query
from graph.models import Topic, TopicTime
from graph.topic_search import RERANK_POOL, TextRank
from graph.topics import TopicStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE_TOPICS = 600
BOB_FLOOD = 3000
ASKED = "what did we decide about the {a} {b}"


def _words(ns: str) -> tuple[str, str]:
    """Two words no other run wrote: a deleted document still counts in Lucene's statistics
    until its segment is merged, so an earlier run's flood would have made fixed words common
    already (the control would not bite)."""
    tag = ns.rsplit("-", 1)[-1]
    return f"zapplex{tag}", f"qbananor{tag}"


def _topic(ns: str, i: int, name: str, one_liner: str) -> Topic:
    at = T0 + timedelta(minutes=i)
    return Topic(
        namespace=ns, name=name, one_liner=one_liner,
        time=TopicTime(first_seen_at=at, last_seen_at=at),
    )  # fmt: skip


def _alice(ns: str) -> list[Topic]:
    """Every topic matches the question: a fifth by both its rare words, a fifth by the first
    ("zapplex"), the rest by the second (alone, the first is the rarer: Lucene puts its topics
    first), half of them by common words of the question too."""
    a, b = _words(ns)
    out = []
    for i in range(ALICE_TOPICS):
        name = (f"{a} {b}", a, b, b, b)[i % 5]
        line = "what did we decide about it" if i % 2 else f"came up again in the chat {i}"
        out.append(_topic(ns, i, f"{name} {i}", line))
    return out


def _write(store: TopicStore, topics: list[Topic]) -> None:
    for start in range(0, len(topics), 1000):
        batch = topics[start : start + 1000]
        store.create(batch, None, T0)


def _pool(store: TopicStore, ns: str, fuzzy: bool) -> list[tuple[str, float, float | None]]:
    """Every candidate the search ranks (``k`` as large as the pool), in its order, with its
    scores."""
    asked = _asked(ns)
    search = store.text_query(ns, asked, RERANK_POOL, fuzzy=fuzzy)
    assert search is not None
    ranks: list[TextRank] = store.text_ranking(ns, asked, RERANK_POOL, search, fuzzy)
    return [(r.topic_id, round(r.score, 9), r.content_score) for r in ranks]


def _asked(ns: str) -> str:
    a, b = _words(ns)
    return ASKED.format(a=a, b=b)


def _lucene_first(driver: Driver, ns: str) -> list[str]:
    """The control: the pool as it was chosen before, Lucene's BM25 best ``RERANK_POOL``."""
    records, _, _ = driver.execute_query(
        "CALL db.index.fulltext.queryNodes('topic_text', $q, {limit: $n}) YIELD node "
        "RETURN node.topic_id AS id",
        q=in_namespace(ns, lucene_query(_asked(ns), fuzzy=False)), n=RERANK_POOL,
    )  # fmt: skip
    return [r["id"] for r in records]


def test_a_flood_of_another_tenants_topics_leaves_a_large_namespaces_pool_alone(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    store = TopicStore(driver)
    _write(store, _alice(namespace))
    before = {fuzzy: _pool(store, namespace, fuzzy) for fuzzy in (False, True)}
    answer_before = store.search_text(namespace, _asked(namespace), k=10, fuzzy=False)
    control_before = _lucene_first(driver, namespace)
    assert len(control_before) == RERANK_POOL  # she has more matches than the pool
    assert 10 <= len(before[False]) <= ALICE_TOPICS

    a, _ = _words(namespace)
    flood = [_topic(other_namespace, i, f"{a} {a} {i}", f"{a} {a} {a}") for i in range(BOB_FLOOD)]
    _write(store, flood)

    control_after = _lucene_first(driver, namespace)  # the flood bites Lucene's order:
    assert len(set(control_after) - set(control_before)) >= 10  # other topics of hers
    for fuzzy in (False, True):
        assert _pool(store, namespace, fuzzy) == before[fuzzy]
    answer_after = store.search_text(namespace, _asked(namespace), k=10, fuzzy=False)
    assert [(h.topic.topic_id, h.score) for h in answer_after] == [
        (h.topic.topic_id, h.score) for h in answer_before
    ]
