"""The passage vectors held in memory (graph/passage_vectors.py): exact scores and the exact
scan's order (ties by time, seq, message id; near ties all handed to Neo4j), time bounds, rows
added past a gen without duplicates, the least recently used namespace dropped by bytes, and
when a stale copy is refreshed from its gen or read whole."""

from __future__ import annotations

import numpy as np
import pytest

from graph.passage_vectors import (
    CANDIDATES_MAX,
    DIMENSIONS,
    Entry,
    PassageVectors,
    Row,
    Stamp,
    incremental,
    row_bytes,
)

S = Stamp("e1", 1)


def axis(i: int, scale: float = 1.0) -> list[float]:
    v = [0.0] * DIMENSIONS
    v[i] = scale
    return v


def mixed(a: int, b: int, share: float) -> list[float]:
    """A unit vector at cosine ``share`` to ``axis(a)``."""
    v = [0.0] * DIMENSIONS
    v[a], v[b] = share, float(np.sqrt(1 - share * share))
    return v


def entry(rows: list[Row], stamp: Stamp = S) -> Entry:
    e = Entry(stamp)
    e.add(rows, stamp)
    return e


def test_the_nearest_are_the_exact_best_first() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, DIMENSIONS))
    e = entry([Row(f"m{i:03d}", 0, i, v.tolist()) for i, v in enumerate(vectors)])
    q = rng.normal(size=DIMENSIONS)
    units = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = np.argsort(-(units @ (q / np.linalg.norm(q))))[:10]
    assert e.nearest(q.tolist(), 10) == [(f"m{i:03d}", 0) for i in exact]


def test_vectors_are_scored_by_direction_not_length() -> None:
    e = entry([Row("long", 0, 1, axis(0, 9.0)), Row("near", 0, 2, mixed(0, 1, 0.9))])
    assert e.nearest(axis(0, 0.1), 1) == [("long", 0)]


def test_equal_scores_go_to_the_older_passage_then_seq_then_message() -> None:
    rows = [Row("b", 1, 50, axis(0)), Row("a", 1, 50, axis(0)), Row("c", 0, 50, axis(0)),
            Row("d", 0, 10, axis(0)), Row("x", 0, 1, axis(1))]  # fmt: skip
    assert entry(rows).nearest(axis(0), 4) == [("d", 0), ("c", 0), ("a", 1), ("b", 1)]


def test_a_near_tie_beyond_k_is_handed_on_and_a_distant_one_is_not() -> None:
    rows = [Row("best", 0, 1, axis(0)), Row("second", 0, 2, mixed(0, 1, 0.8)),
            Row("near", 0, 3, mixed(0, 2, 0.8 - 2e-6)), Row("far", 0, 4, mixed(0, 3, 0.7))]  # fmt: skip
    assert entry(rows).nearest(axis(0), 2) == [("best", 0), ("second", 0), ("near", 0)]


def test_a_huge_group_of_one_score_is_cut_in_the_scans_order() -> None:
    rows = [Row(f"m{i:04d}", 0, 1000 - i, axis(0)) for i in range(CANDIDATES_MAX + 50)]
    found = entry(rows).nearest(axis(0), 3)
    assert len(found) == CANDIDATES_MAX
    assert found[0] == (f"m{CANDIDATES_MAX + 49:04d}", 0)  # the oldest first


def test_only_passages_said_before_until() -> None:
    rows = [Row("old", 0, 100, mixed(0, 1, 0.5)), Row("new", 0, 200, axis(0))]
    e = entry(rows)
    assert e.nearest(axis(0), 1) == [("new", 0)]
    assert e.nearest(axis(0), 1, until_us=200) == [("old", 0)]
    assert e.nearest(axis(0), 1, until_us=100) == []


def test_nothing_for_an_empty_copy_a_zero_vector_or_k_zero() -> None:
    assert Entry(S).nearest(axis(0), 5) == []
    e = entry([Row("a", 0, 1, axis(0))])
    assert e.nearest([0.0] * DIMENSIONS, 5) == [] and e.nearest(axis(0), 0) == []


def test_rows_past_the_gen_are_appended_once_and_the_stamp_moves() -> None:
    e = entry([Row("a", 0, 1, axis(0))])
    later = Stamp("e1", 3)
    e.add([Row("a", 0, 1, axis(0)), Row("b", 0, 2, axis(1))], later)  # "a" read again: kept once
    for i in range(40):  # grows past its first capacity
        e.add([Row(f"c{i}", 0, 3 + i, axis(2 + i))], later)
    assert e.size == 42 and len(e.keys) == 42 and e.stamp == later
    assert e.nearest(axis(1), 1) == [("b", 0)] and e.nearest(axis(41), 1) == [("c39", 0)]


def test_a_vector_of_another_size_is_refused() -> None:
    with pytest.raises(ValueError):
        entry([Row("a", 0, 1, [1.0, 0.0])])


def test_the_least_recently_used_namespace_is_dropped_by_bytes() -> None:
    one = entry([Row(f"m{i}", 0, i, axis(i)) for i in range(16)])
    cache = PassageVectors(budget=int(one.nbytes * 2.5))
    cache.put("a", one)
    cache.put("b", entry([Row(f"m{i}", 0, i, axis(i)) for i in range(16)]))
    assert cache.get("a") is one  # "a" used: "b" is now the oldest
    cache.put("c", entry([Row(f"m{i}", 0, i, axis(i)) for i in range(16)]))
    assert sorted(cache.namespaces()) == ["a", "c"] and cache.nbytes <= cache.budget


def test_a_copy_that_outgrows_the_budget_is_dropped() -> None:
    cache = PassageVectors(budget=row_bytes() * 20)
    e = entry([Row("a", 0, 1, axis(0))])
    cache.put("a", e)
    assert cache.fits(20) and not cache.fits(21)
    e.add([Row(f"m{i}", 0, i, axis(i)) for i in range(30)], S)
    cache.resized("a")
    assert cache.get("a") is None


def test_a_namespace_is_never_answered_from_anothers_copy() -> None:
    cache = PassageVectors(budget=1 << 20)
    cache.put("alice", entry([Row("alice-1", 0, 1, axis(0))]))
    assert cache.get("bob") is None
    cache.drop("alice")
    assert cache.get("alice") is None


@pytest.mark.parametrize(
    ("held", "seen", "rows_past_gen"),
    [
        (Stamp("e1", 4), Stamp("e1", 9), True),  # passages added since
        (Stamp("e1", 4), Stamp("e1", 4), True),  # nothing new: an empty read
        (Stamp("e1", 4), Stamp("e2", 9), False),  # a passage removed: a new epoch
        (Stamp("e1", 4), Stamp("e1", 2), False),  # a copy newer than the stamp: read again
        (Stamp("e1", 4), Stamp(None, 0), False),  # the namespace deleted
        (Stamp(None, 0), Stamp("e1", 1), False),  # a namespace's first stamp
    ],
)
def test_a_stale_copy_is_read_past_its_gen_only_when_nothing_was_removed(
    held: Stamp, seen: Stamp, rows_past_gen: bool
) -> None:
    assert incremental(held, seen) is rows_past_gen
