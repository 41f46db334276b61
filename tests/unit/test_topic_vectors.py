"""The worker's copy of a namespace's live topic vectors (graph/topic_vectors.py), pure: the
candidates are the best k by cosine with every one within NEAR of the k-th (ties at the cut all
read, for Neo4j to order), the window filters as the Cypher scan does (last seen at or after
since, first seen before until), the cache holds copies within its byte budget, least recently
used dropped first, and the load queue keeps a namespace's topic and passage loads apart."""

from __future__ import annotations

import numpy as np

from graph.topic_vectors import TopicEntry, TopicRow, TopicVectors
from graph.vector_loads import LoadQueue

DIM = 384


def _unit(rng: np.random.Generator) -> list[float]:
    v = rng.normal(size=DIM)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def _entry(vectors: list[list[float]], times: list[tuple[int, int]] | None = None) -> TopicEntry:
    times = times or [(0, 0)] * len(vectors)
    rows = [TopicRow(f"t{i:03d}", f, last, v) for i, (v, (f, last)) in
            enumerate(zip(vectors, times, strict=True))]  # fmt: skip
    return TopicEntry.of("epoch-1", len(rows) + 3, rows)


def test_the_best_k_and_every_tie_at_the_cut_are_candidates() -> None:
    rng = np.random.default_rng(1)
    q = _unit(rng)
    vectors = [_unit(rng) for _ in range(50)] + [q] * 2 + [[2 * x for x in q]]  # unnormalised
    twin = _unit(rng)
    vectors += [twin] * 5
    entry = _entry(vectors)
    assert entry.total == len(vectors) + 3 and entry.matrix.shape == (len(vectors), DIM)
    assert entry.nearest(q, 2) == ["t050", "t051", "t052"]  # three at cosine 1, all read
    scores = {f"t{i:03d}": float(np.dot(v, q) / np.linalg.norm(v)) for i, v in enumerate(vectors)}
    best = sorted(scores, key=lambda t: -scores[t])
    assert entry.nearest(q, 8)[:8] == best[:8]
    # the five equal vectors: asking for 2 of them reads all five
    assert set(entry.nearest(twin, 2)) == {f"t{i:03d}" for i in range(53, 58)}
    assert entry.nearest(q, 0) == [] and entry.nearest([0.0] * DIM, 3) == []
    assert TopicEntry.of("e", 0, []).nearest(q, 3) == []


def test_the_window_filters_on_last_and_first_seen() -> None:
    rng = np.random.default_rng(2)
    q = _unit(rng)
    vectors = [q] * 4
    times = [(10, 20), (30, 40), (50, 60), (5, 100)]
    entry = _entry(vectors, times)
    assert set(entry.nearest(q, 4, since_us=40)) == {"t001", "t002", "t003"}
    assert set(entry.nearest(q, 4, until_us=30)) == {"t000", "t003"}
    assert set(entry.nearest(q, 4, since_us=21, until_us=50)) == {"t001", "t003"}
    assert entry.nearest(q, 4, since_us=101) == []


def test_the_cache_holds_copies_within_its_budget() -> None:
    rng = np.random.default_rng(3)
    a, b = _entry([_unit(rng) for _ in range(10)]), _entry([_unit(rng) for _ in range(10)])
    cache = TopicVectors(a.nbytes + b.nbytes)
    cache.put("alice", a)
    cache.put("bob", b)
    assert cache.namespaces() == ["alice", "bob"] and cache.get("alice") is a
    cache.put("carol", _entry([_unit(rng) for _ in range(10)]))  # bob was used least recently
    assert cache.namespaces() == ["alice", "carol"]
    cache.drop("alice", b)  # not alice's copy: kept
    assert cache.get("alice") is a
    cache.drop("alice", a)
    assert cache.get("alice") is None


def test_a_namespaces_topic_and_passage_loads_are_two_jobs() -> None:
    ran: list[str] = []
    q = LoadQueue(start=None)
    assert q.ask("alice", lambda: ran.append("passages"))
    assert q.ask(("topics", "alice"), lambda: ran.append("topics"))
    assert q.ask(("topics", "alice"), lambda: ran.append("again"))  # already queued
    assert q.waiting() == ["alice", ("topics", "alice")]
    while q.run_next():
        pass
    assert ran == ["passages", "topics"]
