"""The passage vectors an API worker holds in memory (graph/passage_vectors.py) are one process's
state shared by every tenant it serves. Bob, in another namespace of the same worker, writes
passages with alice's very vectors and a flood of others, and searches them over and over:
alice's copy is neither filled nor read again (the same rows under the same stamp: bob's writes
bump only bob's stamp), her answers, their order and scores are the same, and no search of bob's
returns a row of hers. What bob can still do is push her copy out of a full budget (docs/security.md,
"Shared resources that remain": her next search reads it again), and have her copy read after
his: never her answers wait on his load (the worker reads copies in the background)."""

from __future__ import annotations

import threading

import numpy as np
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from graph.passage_vectors import Entry
from graph.passages import PassageStore
from graph.vector_loads import LoadQueue
from retrieval.embedding import MiniLMEmbedder
from tests.integration.test_passage_vectors import _shape, _unit, _write

# a background load's guard against a hang (never a timing bound: a load here takes ms)
HANG_S = 600.0


def test_another_tenant_can_neither_fill_nor_read_a_tenants_copy(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
) -> None:
    alice, bob = namespace, other_namespace
    rng = np.random.default_rng(28)
    vectors = [[_unit(rng)] for _ in range(60)]
    questions = [v[0] for v in vectors[:6]] + [_unit(rng) for _ in range(4)]
    c = Container(settings, driver=driver, embedder=embedder)
    store = c.passages
    try:
        hers = {m.message_id for m in _write(driver, alice, vectors)}
        before = [_shape(store.search(alice, q, 10)) for q in questions]
        assert store.vectors is not None and store.loads is not None
        assert store.loads.wait_idle(HANG_S)  # her copy read by the worker's load thread
        copy = store.vectors.get(alice)
        assert copy is not None
        stamp, size = copy.stamp, copy.size

        _write(driver, bob, vectors)  # the same vectors
        _write(driver, bob, [[_unit(rng) for _ in range(3)] for _ in range(200)], start=100)
        for q in questions:
            found = store.search(bob, q, 50)
            assert found and not {h.message.message_id for h in found} & hers
        assert store.loads.wait_idle(HANG_S)
        for q in questions:  # from bob's copy now
            found = store.search(bob, q, 50)
            assert found and not {h.message.message_id for h in found} & hers

        after = [_shape(store.search(alice, q, 10)) for q in questions]
        assert after == before
        assert store.vectors.get(alice) is copy  # not read again, not filled
        assert copy.stamp == stamp and copy.size == size
    finally:
        for ns in (alice, bob):
            drop_namespace(driver, ns)


def test_another_tenants_load_never_makes_a_tenant_wait(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    """Bob's copy is being read (held here until alice is done): alice's searches are answered
    meanwhile, by Neo4j and the same as the exact scan, and her copy waits its turn behind his
    (one load at a time per worker), then serves her."""
    alice, bob = namespace, other_namespace
    rng = np.random.default_rng(33)
    loads = LoadQueue()  # the worker's own thread
    store, cypher = PassageStore(driver, loads=loads), PassageStore(driver, cache_mb=0)
    started, released, finished = threading.Event(), threading.Event(), threading.Event()
    load = store._load

    def held(ns: str) -> Entry | None:
        if ns == bob:
            started.set()
            released.wait(HANG_S)  # the test releases it
            finished.set()
        return load(ns)

    store._load = held  # type: ignore[method-assign]
    try:
        _write(driver, bob, [[_unit(rng)] for _ in range(50)])
        _write(driver, alice, [[_unit(rng)] for _ in range(50)])
        q = _unit(rng)
        store.search(bob, q, 10)  # asks for bob's copy
        assert started.wait(HANG_S)
        answers = [_shape(store.search(alice, v, 10)) for v in (q, _unit(rng))]
        assert not finished.is_set()  # answered while bob's load was still running
        assert answers[0] == _shape(cypher.search(alice, q, 10))
        assert loads.waiting() == [bob, alice]
        released.set()
        assert loads.wait_idle(HANG_S)
        assert store.vectors is not None and sorted(store.vectors.namespaces()) == sorted(
            [alice, bob]
        )
        got = store._search_memory(alice, q, 10, None)
        assert got is not None and _shape(got) == answers[0]
    finally:
        released.set()
        for ns in (alice, bob):
            drop_namespace(driver, ns)
