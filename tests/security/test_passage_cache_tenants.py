"""The passage vectors an API worker holds in memory (graph/passage_vectors.py) are one process's
state shared by every tenant it serves. Bob, in another namespace of the same worker, writes
passages with alice's very vectors and a flood of others, and searches them over and over:
alice's copy is neither filled nor read again (the same rows under the same stamp: bob's writes
bump only bob's stamp), her answers, their order and scores are the same, and no search of bob's
returns a row of hers. What bob can still do is push her copy out of a full budget (docs/security.md,
"Shared resources that remain": her next search reads it again)."""

from __future__ import annotations

import numpy as np
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from retrieval.embedding import MiniLMEmbedder
from tests.integration.test_passage_vectors import _shape, _unit, _write


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
        assert store.vectors is not None
        copy = store.vectors.get(alice)
        assert copy is not None
        stamp, size = copy.stamp, copy.size

        _write(driver, bob, vectors)  # the same vectors
        _write(driver, bob, [[_unit(rng) for _ in range(3)] for _ in range(200)], start=100)
        for q in questions:
            found = store.search(bob, q, 50)
            assert found and not {h.message.message_id for h in found} & hers

        after = [_shape(store.search(alice, q, 10)) for q in questions]
        assert after == before
        assert store.vectors.get(alice) is copy  # not read again, not filled
        assert copy.stamp == stamp and copy.size == size
    finally:
        for ns in (alice, bob):
            drop_namespace(driver, ns)
