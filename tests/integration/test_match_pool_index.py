"""Sleep's match pool above ``EXACT_MATCH_MAX`` (``match_topic_candidates.cypher``): the vector
index asked with ``SEARCH ... WHERE t.namespace = $namespace`` finds the same nearest topics and
cosines as the exact scan, and never a neighbour's topic, however near the neighbour's vectors
lie. ``EXACT_MATCH_MAX`` is lowered to reach the index path with few topics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from neo4j import Driver

import graph.sleep
from graph.models import EMBEDDING_DIMENSIONS, Topic, parse
from graph.sleep import SleepStore
from graph.topics import TopicStore
from tests.conftest import T0


def unit(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = v / np.linalg.norm(v)
    return out


def pool(store: SleepStore, ns: str, rows: list[dict[str, Any]]) -> list[tuple[int, str, float]]:
    hits = store.match_pool(ns, [dict(r) for r in rows], k=5)
    return sorted((h.idx, h.fields.topic_id, round(h.cosine, 5)) for h in hits)


def test_the_index_path_matches_the_exact_scan_and_only_the_namespace(
    driver: Driver, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gen = np.random.default_rng(21)
    axes = [unit(gen.normal(size=EMBEDDING_DIMENSIONS)) for _ in range(3)]
    crowd = f"{namespace}-crowd"

    def topics(ns: str, n: int, spread: float) -> tuple[list[Topic], list[list[float]]]:
        made = [parse(Topic, {"namespace": ns, "name": f"{ns[-5:]} T{i}", "one_liner": f"t {i}",
                              "time": {"first_seen_at": T0, "last_seen_at": T0}})
                for i in range(n)]  # fmt: skip
        vectors = [
            unit(axes[i % 3] + spread * (1 + i / n) * unit(gen.normal(size=EMBEDDING_DIMENSIONS)))
            for i in range(n)
        ]
        return made, [v.tolist() for v in vectors]

    writer = TopicStore(driver)
    own, own_vectors = topics(namespace, 60, 0.3)
    writer.create(own, own_vectors, T0)
    others, other_vectors = topics(crowd, 300, 0.05)  # nearer every query than any of its own
    writer.create(others, other_vectors, T0)
    store = SleepStore(driver)
    rows = [{"idx": i, "vector": axis.tolist(), "names": []} for i, axis in enumerate(axes)]
    try:
        exact = pool(store, namespace, rows)
        monkeypatch.setattr(graph.sleep, "EXACT_MATCH_MAX", 10)  # 60 topics: the index path
        seen: list[str] = []
        run = graph.sleep._runner

        def spy(tx: Any) -> Any:
            inner = run(tx)

            def call(text: str, params: dict[str, Any]) -> Any:
                seen.append(text.split("\n", 1)[0])
                return inner(text, params)

            return call

        monkeypatch.setattr(graph.sleep, "_runner", spy)
        indexed = pool(store, namespace, rows)
    finally:
        driver.execute_query("MATCH (t:Topic {namespace: $ns}) DETACH DELETE t", ns=crowd)
    assert any("match_topic_candidates" in s or "sleep candidate" in s for s in seen), seen
    assert len(exact) == 15  # 5 nearest for each of the 3 rows
    assert indexed == exact
    own_ids = {t.topic_id for t in own}
    assert {topic_id for _, topic_id, _ in indexed} <= own_ids
