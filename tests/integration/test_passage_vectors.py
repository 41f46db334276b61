"""The passage vectors held in the API worker's memory (graph/passage_vectors.py,
``PassageStore.search``), against the real Neo4j: the answer equals the exact scan in Cypher
(the same messages, passages, scores and order, ties and time bounds included); a passage
written after the copy was loaded is found by the next search (the rows past its ``gen`` read);
a forgotten message's passage never comes back, not even from a copy that no write told of the
removal; one namespace's copy never answers for another; a namespace larger than the budget
takes the Cypher path with the same answer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from graph.messages import MessageHit, MessageStore
from graph.models import Message
from graph.passages import REFRESH_MAX, MessagePassages, PassageStore
from graph.vector_loads import LoadQueue
from retrieval.embedding import MiniLMEmbedder

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DIM = 384
# a background load's guard against a hang (never a timing bound: a load here takes ms)
HANG_S = 600.0


def _unit(rng: np.random.Generator) -> list[float]:
    v = rng.normal(size=DIM)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def _write(
    driver: Driver, ns: str, vectors: list[list[list[float]]], start: int = 0
) -> list[Message]:
    """One message a list of vectors (one passage each), a minute apart from ``start``."""
    said = [
        Message(namespace=ns, role="user", content=f"message {start + i} " + "word " * len(vs),
                at=T0 + timedelta(minutes=start + i))
        for i, vs in enumerate(vectors)
    ]  # fmt: skip
    stored = MessageStore(driver).append(ns, said)
    PassageStore(driver, cache_mb=0).write([
        MessagePassages(ns, m.message_id, m.content, [f"passage {j} of {m.content}"
                        for j in range(len(vs))], vs)
        for m, vs in zip(stored, vectors, strict=True)
    ])  # fmt: skip
    return stored


def _shape(hits: list[MessageHit]) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(h.message.message_id, h.score, h.passages) for h in hits]


@pytest.fixture
def spaces(driver: Driver, namespace: str, other_namespace: str) -> Iterator[tuple[str, str]]:
    yield namespace, other_namespace
    for ns in (namespace, other_namespace):
        drop_namespace(driver, ns)


def test_the_memory_answers_as_the_exact_scan_in_cypher(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(33)
    twin = _unit(rng)  # one passage said by many messages: a group of equal scores at the cut
    vectors = [[_unit(rng) for _ in range(1 + i % 3)] for i in range(150)]
    vectors += [[twin] for _ in range(12)]
    _write(driver, ns, vectors)
    cached, cypher = PassageStore(driver), PassageStore(driver, cache_mb=0)
    queries = [_unit(rng) for _ in range(6)] + [twin, vectors[7][0]]
    for q in queries:
        for k in (1, 5, 20):
            for until in (None, T0 + timedelta(minutes=80)):
                got = cached._search_memory(ns, q, k, until)  # from memory, not the fallback
                assert got is not None
                assert _shape(got) == _shape(cypher.search(ns, q, k, until)), (k, until)
    assert cached.vectors is not None and cached.vectors.namespaces() == [ns]
    found = cached.search(ns, twin, 5)
    assert len(found) == 5 and len({h.score for h in found}) == 1  # the group cut by time
    assert [h.message.at for h in found] == sorted(h.message.at for h in found)


def test_a_passage_written_after_the_load_is_found_from_the_rows_past_the_gen(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(7)
    _write(driver, ns, [[_unit(rng)] for _ in range(40)])
    store = PassageStore(driver)
    q = _unit(rng)
    store.search(ns, q, 5)
    assert store.vectors is not None
    entry = store.vectors.get(ns)
    assert entry is not None and entry.size == 40
    new = _write(driver, ns, [[q]], start=100)[0]
    found = store._search_memory(ns, q, 5, None)
    assert found is not None and found[0].message.message_id == new.message_id
    assert store.vectors.get(ns) is entry and entry.size == 41  # appended, not read whole
    assert _shape(found) == _shape(PassageStore(driver, cache_mb=0).search(ns, q, 5))


def test_a_forgotten_message_never_comes_back(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(11)
    q = _unit(rng)
    stored = _write(driver, ns, [[_unit(rng)] for _ in range(20)] + [[q], [q]])
    c = Container(settings, driver=driver, embedder=embedder)
    store = c.passages
    assert store.loads is not None  # the API worker's: copies read in the background
    assert store.search(ns, q, 3)[0].message.message_id == stored[-2].message_id
    assert store.loads.wait_idle(HANG_S)
    assert store._search_memory(ns, q, 3, None) is not None  # the copy is in
    # forgotten through the product: the stamp's new epoch has the copy read again
    c.services.forget.messages_by_id(ns, [stored[-2].message_id])
    found = store.search(ns, q, 3)
    assert stored[-2].message_id not in {h.message.message_id for h in found}
    assert found[0].message.message_id == stored[-1].message_id
    assert store.loads.wait_idle(HANG_S)
    # removed behind the stamp's back (a write path that forgot it): the copy is stale, and
    # still the passage cannot come back, its rows being read by key within the namespace
    entry = store.vectors.get(ns) if store.vectors else None
    assert entry is not None and (stored[-1].message_id, 0) in entry.keys
    driver.execute_query(
        "MATCH (m:Message {namespace: $ns, message_id: $id})-[:HAS_PASSAGE]->(p) DETACH DELETE p",
        ns=ns, id=stored[-1].message_id,
    )  # fmt: skip
    found = store.search(ns, q, 3)
    assert stored[-1].message_id not in {h.message.message_id for h in found}
    assert len(found) == 2  # the stale copy's best was dropped, nothing else in its place


def test_two_namespaces_never_see_each_others_rows(driver: Driver, spaces: tuple[str, str]) -> None:
    ns, other = spaces
    rng = np.random.default_rng(5)
    shared = [[_unit(rng)] for _ in range(30)]
    mine, theirs = _write(driver, ns, shared), _write(driver, other, shared)
    store = PassageStore(driver)
    for q in (v[0] for v in shared[:5]):
        a, b = store.search(ns, q, 10), store.search(other, q, 10)
        assert {h.message.message_id for h in a} <= {m.message_id for m in mine}
        assert {h.message.message_id for h in b} <= {m.message_id for m in theirs}
        assert [h.score for h in a] == [h.score for h in b]
    assert store.vectors is not None and sorted(store.vectors.namespaces()) == sorted([ns, other])
    drop_namespace(driver, other)  # the other tenant gone: its copy answers nothing of it
    assert store.search(other, shared[0][0], 10) == []
    assert len(store.search(ns, shared[0][0], 10)) == 10


def test_a_namespace_larger_than_the_budget_takes_the_cypher_path(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(9)
    _write(driver, ns, [[_unit(rng) for _ in range(3)] for _ in range(250)])  # 750 passages
    small = PassageStore(driver, cache_mb=1)  # ~600 passages
    q = _unit(rng)
    got = small.search(ns, q, 10)
    assert small.vectors is not None and small.vectors.namespaces() == []
    assert _shape(got) == _shape(PassageStore(driver, cache_mb=0).search(ns, q, 10))


def test_a_first_search_is_answered_in_neo4j_while_the_copy_is_read_off_the_request(
    driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(29)
    _write(driver, ns, [[_unit(rng) for _ in range(2)] for _ in range(60)])
    loads = LoadQueue(start=None)  # the worker thread driven by hand
    store, cypher = PassageStore(driver, loads=loads), PassageStore(driver, cache_mb=0)
    assert store.vectors is not None
    queries = [_unit(rng) for _ in range(4)]
    for q in queries:  # searched before the copy is in: Neo4j answers, the load is asked once
        assert _shape(store.search(ns, q, 10)) == _shape(cypher.search(ns, q, 10))
        assert store._search_memory(ns, q, 10, None) is None
    assert store.vectors.namespaces() == [] and loads.waiting() == [ns]
    assert loads.run_next()  # the background thread's one load
    assert store.vectors.namespaces() == [ns] and loads.waiting() == []
    for q in queries:  # the same answers, now from the copy
        got = store._search_memory(ns, q, 10, None)
        assert got is not None and _shape(got) == _shape(cypher.search(ns, q, 10))


def test_a_removal_or_a_long_burst_has_the_copy_read_again_in_the_background(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    rng = np.random.default_rng(31)
    q = _unit(rng)
    stored = _write(driver, ns, [[_unit(rng)] for _ in range(30)] + [[q]])
    loads = LoadQueue(start=None)
    store, cypher = PassageStore(driver, loads=loads), PassageStore(driver, cache_mb=0)
    assert store.vectors is not None
    store.search(ns, q, 5)
    loads.run_next()
    assert store._search_memory(ns, q, 5, None) is not None
    # a few appends: brought up to date on the request (the rows past its gen)
    _write(driver, ns, [[_unit(rng)] for _ in range(3)], start=40)
    assert store._search_memory(ns, q, 5, None) is not None and loads.waiting() == []
    # forgotten (a new epoch): the copy is dropped, Neo4j answers without the message, and the
    # copy is queued to be read whole
    c = Container(settings, driver=driver, embedder=embedder)
    c.services.forget.messages_by_id(ns, [stored[-1].message_id])
    found = store.search(ns, q, 5)
    assert _shape(found) == _shape(cypher.search(ns, q, 5))
    assert stored[-1].message_id not in {h.message.message_id for h in found}
    assert store.vectors.namespaces() == [] and loads.waiting() == [ns]
    loads.run_next()
    got = store._search_memory(ns, q, 5, None)
    assert got is not None and _shape(got) == _shape(found)
    # more than REFRESH_MAX messages written since: read whole in the background too
    _write(driver, ns, [[_unit(rng)] for _ in range(REFRESH_MAX + 1)], start=100)
    found = store.search(ns, q, 5)
    assert _shape(found) == _shape(cypher.search(ns, q, 5))
    assert store.vectors.namespaces() == [] and loads.waiting() == [ns]
    loads.run_next()
    entry = store.vectors.get(ns)
    assert entry is not None and entry.size == 30 + 3 + REFRESH_MAX + 1
