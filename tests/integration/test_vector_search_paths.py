"""TopicStore.search_vector's four ways to an answer give the same, exact hits.

``search_topics_vector`` scores a namespace of at most ``EXACT_VECTOR_MAX`` topics exactly
without asking the vector index (the first test); the others set it to -1 to reach the index
paths with few topics. The index is asked for the namespace's own nearest only (the namespace
is a filter property of the index); it answers when the window filter keeps ``k`` of the rows
it over-fetched; when it keeps fewer the query scores the window exactly (at most ``SCAN_MAX``
topics in it) or asks the index again for ``FETCH_MORE`` times the rows. The vectors here lie
around a random direction, so which path runs is set by the data and ``SCAN_MAX`` alone: the 200
topics nearest the query (the rows the first index call asks for) are outside
the window, the 10 farther ones inside it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from neo4j import Driver

import graph.topic_search
import graph.topics
from graph.models import EMBEDDING_DIMENSIONS, Topic, parse
from graph.topics import TopicStore
from tests.conftest import T0

NEAR, FAR = 200, 10  # topics outside / inside the window
WINDOW_START = T0 + timedelta(days=25)


def unit(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = v / np.linalg.norm(v)
    return out


@pytest.fixture
def seeded(driver: Driver, namespace: str) -> tuple[TopicStore, list[float], dict[str, np.ndarray]]:
    """210 topics at growing distance from a random direction; the 10 farthest were last seen
    inside the window."""
    gen = np.random.default_rng(7)
    axis = unit(gen.normal(size=EMBEDDING_DIMENSIONS))
    topics, vectors = [], []
    for i in range(NEAR + FAR):
        at = T0 + timedelta(days=30 if i >= NEAR else i % 20)
        topics.append(
            parse(
                Topic,
                {
                    "namespace": namespace,
                    "name": f"T{i}",
                    "one_liner": f"topic {i}",
                    "time": {"first_seen_at": at, "last_seen_at": at},
                },
            )
        )
        # the window's topics lie clearly farther (cosine ~0.45 against >= ~0.69) behind the
        # 200 rows the first index call asks for: with 50 near topics and a gap of ~0.01
        # at the border, the approximate index of a busy server (CI's, every other test's
        # vectors and deletions in it) returned five of them in its first 50 rows
        spread = 0.05 + 0.005 * i if i < NEAR else 2.0 + 0.02 * (i - NEAR)
        vectors.append(unit(axis + spread * unit(gen.normal(size=EMBEDDING_DIMENSIONS))))
    store = TopicStore(driver)
    store.create(topics, [v.tolist() for v in vectors], T0)
    by_id = {t.topic_id: v for t, v in zip(topics, vectors, strict=True)}
    return store, axis.tolist(), by_id


def exact_top(
    by_id: dict[str, np.ndarray], query: list[float], ids: list[str], k: int
) -> list[str]:
    q = np.asarray(query)
    return sorted(ids, key=lambda i: -float(by_id[i] @ q))[:k]


def _spy_raw(store: TopicStore, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """(raw, scanned) of every vector query ``store`` runs from now on."""
    seen: list[tuple[int, bool]] = []
    run = store._run

    def spy(text: str, params: dict[str, Any], **kw: Any) -> list[Any]:
        rows = run(text, params, **kw)
        if "exact_max" in params:
            seen.append((int(rows[0]["raw"]), bool(rows[0]["scanned"])))
        return rows

    monkeypatch.setattr(store, "_run", spy)
    return seen


def test_a_small_namespace_is_scored_exactly_without_the_shared_index(
    seeded: tuple[TopicStore, list[float], dict[str, np.ndarray]],
    namespace: str,
    driver: Driver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """210 topics (<= EXACT_VECTOR_MAX): the index is not asked (raw 0), with and without a
    window, and the hits are the exact top k; 400 topics of another namespace nearer the query
    than any of these change neither the hits, their scores nor the rows read."""
    store, query, by_id = seeded
    assert graph.topic_search.EXACT_VECTOR_MAX >= NEAR + FAR
    seen = _spy_raw(store, monkeypatch)
    alone = store.search_vector(namespace, query, k=5)
    windowed = store.search_vector(namespace, query, k=5, since=WINDOW_START)
    assert [h.topic.topic_id for h in alone] == exact_top(by_id, query, list(by_id), 5)
    in_window = list(by_id)[NEAR:]
    assert [h.topic.topic_id for h in windowed] == exact_top(by_id, query, in_window, 5)
    assert seen == [(0, True), (0, True)]
    assert {h.source for h in alone + windowed} == {"vector-scan"}
    gen = np.random.default_rng(5)
    crowd = f"{namespace}-crowd"
    near = [unit(np.asarray(query) + 0.01 * unit(gen.normal(size=EMBEDDING_DIMENSIONS)))
            for _ in range(400)]  # fmt: skip
    others = [
        parse(Topic, {"namespace": crowd, "name": f"C{i}", "one_liner": f"crowd {i}",
                      "time": {"first_seen_at": T0, "last_seen_at": T0}})
        for i in range(len(near))
    ]  # fmt: skip
    TopicStore(driver).create(others, [v.tolist() for v in near], T0)
    try:
        again = store.search_vector(namespace, query, k=5)
        again_windowed = store.search_vector(namespace, query, k=5, since=WINDOW_START)
        assert [(h.topic.topic_id, h.score) for h in again] == [
            (h.topic.topic_id, h.score) for h in alone
        ]
        assert [(h.topic.topic_id, h.score) for h in again_windowed] == [
            (h.topic.topic_id, h.score) for h in windowed
        ]
        assert seen[2:] == [(0, True), (0, True)]
    finally:
        driver.execute_query("MATCH (t:Topic {namespace: $ns}) DETACH DELETE t", ns=crowd)


@pytest.mark.parametrize(
    ("scan_max", "source"),
    [(2000, "vector-scan"), (3, "vector")],  # window of 10: scored exactly / index asked again
)
def test_a_window_the_first_index_call_misses_is_answered_exactly(
    seeded: tuple[TopicStore, list[float], dict[str, np.ndarray]],
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    scan_max: int,
    source: str,
) -> None:
    store, query, by_id = seeded
    monkeypatch.setattr(graph.topic_search, "SCAN_MAX", scan_max)
    monkeypatch.setattr(graph.topic_search, "EXACT_VECTOR_MAX", -1)
    in_window = list(by_id)[NEAR:]
    hits = store.search_vector(namespace, query, k=5, since=WINDOW_START, overfetch=1)
    assert [h.topic.topic_id for h in hits] == exact_top(by_id, query, in_window, 5)
    assert {h.source for h in hits} == {source}
    assert all(h.topic.time.last_seen_at >= WINDOW_START for h in hits)


def test_without_a_window_the_index_answers(
    seeded: tuple[TopicStore, list[float], dict[str, np.ndarray]],
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, query, by_id = seeded
    monkeypatch.setattr(graph.topic_search, "EXACT_VECTOR_MAX", -1)
    hits = store.search_vector(namespace, query, k=5)
    assert [h.topic.topic_id for h in hits] == exact_top(by_id, query, list(by_id), 5)
    assert {h.source for h in hits} == {"vector"}
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_a_crowded_namespace_reads_only_its_own_rows_of_the_index(
    driver: Driver, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another tenant's vectors, twenty for each of this namespace's and as near the query,
    sit in the same vector index: the search, confined to the namespace inside the index
    (``SEARCH ... WHERE t.namespace = $namespace``), asks once, gets only the namespace's 40
    topics back (``raw``: what the index returned, never the neighbour's rows) and answers the
    exact hits, the same before and after the neighbour's topics are stored."""
    monkeypatch.setattr(graph.topic_search, "SCAN_MAX", 10)  # 40 topics: too many to scan here
    monkeypatch.setattr(graph.topic_search, "EXACT_VECTOR_MAX", -1)
    gen = np.random.default_rng(11)
    axis = unit(gen.normal(size=EMBEDDING_DIMENSIONS))
    crowd = f"{namespace}-crowd"

    def topics(ns: str, n: int, step: float) -> tuple[list[Topic], list[np.ndarray]]:
        made = [
            parse(Topic, {"namespace": ns, "name": f"T{i}", "one_liner": f"topic {i}",
                          "time": {"first_seen_at": T0, "last_seen_at": T0}})
            for i in range(n)
        ]  # fmt: skip
        vectors = [
            unit(axis + (0.05 + step * i) * unit(gen.normal(size=EMBEDDING_DIMENSIONS)))
            for i in range(n)
        ]
        return made, vectors

    store = TopicStore(driver)
    own, own_vectors = topics(namespace, 40, 0.01)
    store.create(own, [v.tolist() for v in own_vectors], T0)
    by_id = {t.topic_id: v for t, v in zip(own, own_vectors, strict=True)}
    asked: list[tuple[int, int]] = []  # (fetch, raw) of every vector query
    run = store._run

    def spy(text: str, params: dict[str, Any], **kw: Any) -> list[Any]:
        rows = run(text, params, **kw)
        if "fetch_more" in params:
            asked.append((int(params["fetch"]), int(rows[0]["raw"])))
        return rows

    monkeypatch.setattr(store, "_run", spy)
    query = axis.tolist()
    alone = store.search_vector(namespace, query, k=5)
    others, other_vectors = topics(crowd, 800, 0.0005)  # the same distances, twenty times over
    store.create(others, [v.tolist() for v in other_vectors], T0)
    try:
        crowded = store.search_vector(namespace, query, k=5)
        fetch = graph.topics.MIN_INDEX_FETCH
        assert asked == [(fetch, 40), (fetch, 40)]  # one index call each, its own 40 rows
        want = exact_top(by_id, query, list(by_id), 5)
        assert [h.topic.topic_id for h in alone] == want
        assert [(h.topic.topic_id, h.score) for h in crowded] == [
            (h.topic.topic_id, h.score) for h in alone
        ]
        assert {h.source for h in crowded} == {"vector"}
    finally:
        driver.execute_query("MATCH (t:Topic {namespace: $ns}) DETACH DELETE t", ns=crowd)
