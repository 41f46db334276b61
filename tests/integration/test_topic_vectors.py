"""The live topic vectors held in the API worker's memory (graph/topic_vectors.py,
``TopicStore.search_vector_reading`` with ``cache_mb``), against the real Neo4j: the answer
equals the exact scan in Cypher (the same topics, scores, order and label, ties and time
windows included, and the same by-id topics besides); a topic created, touched, re-embedded,
merged, archived, forgotten, imported or rewritten after the copy was read is answered right by
the next search (its write moves the namespace's stamp, so the copy serves nothing more); a
dropped namespace's copy never answers; one namespace's copy never answers for another; a
namespace with topics and no stamp is never held."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from neo4j import Driver

from graph.db import drop_namespace
from graph.forget import ForgetCommit, ForgetStore, TopicRewrite
from graph.models import Topic, parse
from graph.topic_search import ScoredTopic
from graph.topics import TopicStore
from graph.transfer import ImportCommit, TransferStore
from graph.vector_loads import LoadQueue

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DIM = 384
HANG_S = 600.0  # a background load's guard against a hang (never a timing bound)


def _unit(rng: np.random.Generator) -> list[float]:
    v = rng.normal(size=DIM)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def _near(rng: np.random.Generator, base: list[float], noise: float) -> list[float]:
    v = np.asarray(base) + rng.normal(size=DIM) * noise / np.sqrt(DIM)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def _topic(ns: str, name: str, day: int, span: int = 0) -> Topic:
    return parse(Topic, {
        "namespace": ns, "name": name, "one_liner": f"{name} in one line",
        "time": {"first_seen_at": T0 + timedelta(days=day),
                 "last_seen_at": T0 + timedelta(days=day + span)},
    })  # fmt: skip


def _shape(found: tuple[list[ScoredTopic], list[Topic]]) -> tuple[list[Any], list[Any]]:
    hits, read = found
    return (
        [(h.topic.topic_id, h.topic.name, h.score, h.source, h.topic.version) for h in hits],
        [(t.topic_id, t.version) for t in read],
    )


@pytest.fixture
def spaces(driver: Driver, namespace: str, other_namespace: str) -> Iterator[tuple[str, str]]:
    yield namespace, other_namespace
    for ns in (namespace, other_namespace):
        drop_namespace(driver, ns)


def _seed(store: TopicStore, ns: str, rng: np.random.Generator) -> tuple[list[Topic], list[Any]]:
    """90 topics over 60 days, and a group of 8 with one vector (equal scores at any cut): two
    share a name (ordered by first seen), two share name and first seen (ordered by id)."""
    topics = [_topic(ns, f"topic {i:03d}", i % 60, i % 5) for i in range(90)]
    vectors = [_unit(rng) for _ in topics]
    twin = _unit(rng)
    names = ["zeta", "alpha", "mid", "mid", "beta", "beta", "omega", "gamma"]
    days = [3, 9, 20, 4, 30, 30, 12, 50]
    topics += [_topic(ns, n, d, 2) for n, d in zip(names, days, strict=True)]
    vectors += [twin] * len(names)
    store.create(topics, vectors, T0)
    return topics, [twin, *vectors[:5]]


def test_the_memory_answers_as_the_exact_scan_in_cypher(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(33)
    topics, picks = _seed(TopicStore(driver), ns, rng)
    cached, cypher = TopicStore(driver, cache_mb=8), TopicStore(driver)
    queries = [_unit(rng) for _ in range(4)] + picks + [_near(rng, picks[0], 0.3)]
    windows = [
        (None, None),
        (T0 + timedelta(days=10), None),
        (None, T0 + timedelta(days=31)),
        (T0 + timedelta(days=5), T0 + timedelta(days=35)),
        (T0 + timedelta(days=400), None),  # empty
    ]
    read_ids = [topics[3].topic_id, topics[-1].topic_id, "no-such-topic"]
    for q in queries:
        for k in (1, 3, 8, 30):
            for since, until in windows:
                for light in (True, False):
                    args: dict[str, Any] = {"since": since, "until": until, "light": light}
                    mem = cached.search_vector_reading(ns, q, k, topic_ids=read_ids, **args)
                    ref = cypher.search_vector_reading(ns, q, k, topic_ids=read_ids, **args)
                    assert _shape(mem) == _shape(ref), (k, since, until, light)
    assert cached.topic_vectors is not None and cached.topic_vectors.namespaces() == [ns]
    # the group of equal scores is ordered by name, then first seen, then id, on both paths
    hits = cypher.search_vector(ns, picks[0], 8)
    keys = [(h.topic.name, h.topic.time.first_seen_at, h.topic.topic_id) for h in hits]
    assert keys == sorted(keys) and len({h.score for h in hits}) == 1


def test_every_write_of_a_topic_is_answered_by_the_next_search(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(7)
    writer = TopicStore(driver)
    topics, _ = _seed(writer, ns, rng)
    loads = LoadQueue(start=None)  # the worker's queue, drained here by hand
    cached, cypher = TopicStore(driver, cache_mb=8, loads=loads), TopicStore(driver)

    def same(q: list[float], k: int = 5, **window: Any) -> list[Any]:
        mem = cached.search_vector_reading(ns, q, k, **window)
        assert _shape(mem) == _shape(cypher.search_vector_reading(ns, q, k, **window))
        return _shape(mem)[0]

    def held() -> bool:
        assert cached.topic_vectors is not None
        return cached.topic_vectors.get(ns) is not None

    def load() -> None:
        """A search (which asks for a copy when none is held or it is stale), the queue
        drained, and the copy held is current: the next write meets a copy it must move."""
        cached.search_vector_reading(ns, q, 1)
        while loads.run_next():
            pass
        assert held()
        stamp = cached.search_vector_reading(ns, q, 1)
        assert held() and _shape(stamp) == _shape(cypher.search_vector_reading(ns, q, 1))

    q = _unit(rng)
    same(q)  # no copy yet: Cypher answers, the copy is asked of the queue
    assert not held() and loads.waiting() == [("topics", ns)]
    loads.run_next()
    assert held()

    # created: the next search finds it (the stale copy dropped, Cypher answers, then reloaded)
    new = _topic(ns, "brand new", 70)
    writer.create([new], [q], T0)
    assert same(q)[0][0] == new.topic_id and not held()
    load()
    assert same(q)[0][0] == new.topic_id

    # touched (last seen moved into a window) and re-embedded (update)
    since = T0 + timedelta(days=200)
    assert same(q, since=since) == []
    touched = writer.get_one(ns, topics[0].topic_id)
    later = touched.time.model_copy(update={"last_seen_at": T0 + timedelta(days=210)})
    writer.update(touched.model_copy(update={"time": later}), None, T0, touched.version)
    assert [h[0] for h in same(q, since=since)] == [topics[0].topic_id]
    load()
    assert [h[0] for h in same(q, since=since)] == [topics[0].topic_id]
    moved = writer.get_one(ns, topics[1].topic_id)
    writer.update(moved, _near(rng, q, 0.01), T0, moved.version)
    assert [h[0] for h in same(q)[:2]] == [new.topic_id, topics[1].topic_id]
    load()

    # merged (read-modify-write), then archived: gone from every search
    writer.merge(ns, topics[1].topic_id, lambda t: (t, _unit(rng)), T0)
    assert topics[1].topic_id not in [h[0] for h in same(q, k=2)]
    load()
    assert same(q)[0][0] == new.topic_id
    writer.archive(ns, new.topic_id, T0)
    assert new.topic_id not in [h[0] for h in same(q, k=30)]
    load()

    # forgotten (deleted) and rewritten by a forget (the redaction rewrite's path)
    gone = same(q, k=3)[0][0]
    ForgetStore(driver).commit(ForgetCommit(ns, T0, delete_topic_ids=[gone]))
    after = [h[0] for h in same(q, k=3)]
    assert gone not in after and len(after) == 3
    load()
    kept = next(t for t in topics[2:] if t.topic_id != gone)
    current = writer.get_one(ns, kept.topic_id)
    rewrite = TopicRewrite(current, q, current.version)
    ForgetStore(driver).commit(ForgetCommit(ns, T0, rewrite_topics=[rewrite]))
    assert same(q)[0][0] == kept.topic_id
    load()

    # imported
    brought = _topic(ns, "imported", 80)
    TransferStore(driver).commit(ImportCommit(ns, T0, new_topics=[(brought, q)]))
    # a tie at 1.0 with the rewritten topic: "imported" sorts before "topic NNN"
    assert [h[0] for h in same(q, k=2)] == [brought.topic_id, kept.topic_id]
    load()

    # the namespace dropped: nothing is answered from the copy held before
    assert held()
    drop_namespace(driver, ns)
    assert same(q, k=30) == []
    assert not held()


def test_a_namespace_never_reads_another_namespaces_copy(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, other = spaces
    rng = np.random.default_rng(5)
    writer = TopicStore(driver)
    _, picks = _seed(writer, ns, rng)
    cached = TopicStore(driver, cache_mb=8)
    assert cached.search_vector(ns, picks[0], 5)  # ns's copy read and held
    assert cached.search_vector(other, picks[0], 5) == []  # other holds nothing
    theirs = _topic(other, "theirs", 1)
    writer.create([theirs], [picks[0]], T0)  # the same vector in the other namespace
    hits = cached.search_vector(other, picks[0], 5)
    assert [h.topic.topic_id for h in hits] == [theirs.topic_id]
    assert all(h.topic.namespace == ns for h in cached.search_vector(ns, picks[0], 30))
    assert cached.topic_vectors is not None
    assert sorted(cached.topic_vectors.namespaces()) == sorted([ns, other])


def test_a_namespace_with_topics_and_no_stamp_is_never_held(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(9)
    writer = TopicStore(driver)
    _, picks = _seed(writer, ns, rng)
    # a store written before the stamps (or by a path that moves none)
    driver.execute_query("MATCH (s:TopicStamp {namespace: $ns}) DELETE s", ns=ns)
    cached, cypher = TopicStore(driver, cache_mb=8), TopicStore(driver)
    mem = cached.search_vector_reading(ns, picks[0], 5)
    assert _shape(mem) == _shape(cypher.search_vector_reading(ns, picks[0], 5))
    assert cached.topic_vectors is not None and cached.topic_vectors.namespaces() == []


def test_a_namespace_larger_than_the_budget_takes_the_cypher_path(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(11)
    _, picks = _seed(TopicStore(driver), ns, rng)
    small = TopicStore(driver, cache_mb=8)
    assert small.topic_vectors is not None
    small.topic_vectors.budget = 50 * 2000  # fewer bytes than the namespace's 98 topics
    mem = small.search_vector_reading(ns, picks[0], 8)
    assert _shape(mem) == _shape(TopicStore(driver).search_vector_reading(ns, picks[0], 8))
    assert small.topic_vectors.namespaces() == []
