"""The topic vectors an API worker holds in memory (graph/topic_vectors.py) are one process's
state shared by every tenant it serves. Bob, in another namespace of the same worker, writes
topics with alice's very vectors and a flood of others, archives and deletes some, and searches
them over and over: alice's copy is neither filled nor read again (the same object under the
same stamp: bob's writes move only bob's stamp), her answers, their order and scores are the
same, and no search of bob's returns a topic of hers. Bob's copy being read never delays her
answers: they come from Neo4j (the exact scan's answer) until her own copy's turn."""

from __future__ import annotations

import threading

import numpy as np
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from graph.forget import ForgetCommit, ForgetStore
from graph.topic_vectors import TopicEntry
from graph.topics import TopicStore
from graph.vector_loads import LoadQueue
from retrieval.embedding import MiniLMEmbedder
from tests.integration.test_topic_vectors import T0, _seed, _shape, _topic, _unit

HANG_S = 600.0  # a background load's guard against a hang (never a timing bound)


def test_another_tenant_can_neither_fill_nor_read_a_tenants_copy(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
) -> None:
    alice, bob = namespace, other_namespace
    rng = np.random.default_rng(29)
    c = Container(settings, driver=driver, embedder=embedder)
    store, writer = c.topics, TopicStore(driver)
    try:
        _, picks = _seed(writer, alice, rng)
        questions = picks + [_unit(rng) for _ in range(4)]
        store.search_vector_reading(alice, questions[0], 8)  # asks for her copy
        assert store.topic_loads is not None and store.topic_loads.wait_idle(HANG_S)
        assert store.topic_vectors is not None
        copy = store.topic_vectors.get(alice)
        assert copy is not None
        before = [_shape(store.search_vector_reading(alice, q, 8)) for q in questions]
        assert store.topic_vectors.get(alice) is copy  # served from it

        # bob: alice's vectors, a flood of others, an archive and a delete
        theirs = [_topic(bob, f"bob {i}", i % 30) for i in range(len(picks) + 300)]
        writer.create(theirs, picks + [_unit(rng) for _ in range(300)], T0)
        writer.archive(bob, theirs[1].topic_id, T0)
        ForgetStore(driver).commit(ForgetCommit(bob, T0, delete_topic_ids=[theirs[2].topic_id]))
        mine = {t.topic_id for t in writer.list_live(alice)}
        for q in questions:
            hits, _ = store.search_vector_reading(bob, q, 30)
            assert hits and not {h.topic.topic_id for h in hits} & mine
        assert store.topic_loads.wait_idle(HANG_S)
        for q in questions:  # from bob's copy now
            hits, _ = store.search_vector_reading(bob, q, 30)
            assert hits and not {h.topic.topic_id for h in hits} & mine
        assert store.topic_vectors.get(bob) is not None

        after = [_shape(store.search_vector_reading(alice, q, 8)) for q in questions]
        assert after == before
        assert store.topic_vectors.get(alice) is copy and copy.epoch is not None
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
    rng = np.random.default_rng(31)
    loads = LoadQueue()  # the worker's own thread
    store, cypher = TopicStore(driver, cache_mb=8, loads=loads), TopicStore(driver)
    started, released, finished = threading.Event(), threading.Event(), threading.Event()
    load = store._load_topics

    def held(ns: str) -> TopicEntry | None:
        if ns == bob:
            started.set()
            released.wait(HANG_S)  # the test releases it
            finished.set()
        return load(ns)

    store._load_topics = held  # type: ignore[method-assign]
    try:
        _seed(TopicStore(driver), bob, rng)
        _, picks = _seed(TopicStore(driver), alice, rng)
        store.search_vector_reading(bob, picks[0], 8)  # asks for bob's copy
        assert started.wait(HANG_S)
        answers = [_shape(store.search_vector_reading(alice, v, 8)) for v in picks[:3]]
        assert not finished.is_set()  # answered while bob's load was still running
        assert answers == [_shape(cypher.search_vector_reading(alice, v, 8)) for v in picks[:3]]
        assert loads.waiting() == [("topics", bob), ("topics", alice)]
        released.set()
        assert loads.wait_idle(HANG_S)
        assert store.topic_vectors is not None
        assert sorted(store.topic_vectors.namespaces()) == sorted([alice, bob])
        got = [_shape(store.search_vector_reading(alice, v, 8)) for v in picks[:3]]
        assert got == answers
    finally:
        released.set()
        for ns in (alice, bob):
            drop_namespace(driver, ns)
