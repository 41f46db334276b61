"""The session suppression state: the Neo4j store (shared by every API worker) and the in-process
``LocalSuppression`` observe the same turns, entries, pruning, bounds, expiry and forgetting."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from neo4j import Driver

from graph.suppression import Retention, SessionState, SuppressionStore
from tests.conftest import T0
from tests.fakes.suppression import LocalSuppression

KEEP = Retention(cool_turns=5, cool_time=timedelta(minutes=15), ttl=timedelta(hours=1),
                 max_entries=4)  # fmt: skip


@pytest.fixture(params=["neo4j", "local"])
def store(request: pytest.FixtureRequest, driver: Driver) -> Iterator[Any]:
    yield SuppressionStore(driver) if request.param == "neo4j" else LocalSuppression()


def _ids(state: SessionState) -> list[str]:
    return list(state.injections)


def test_turns_count_up_and_entries_remember_when_and_how(store: Any, namespace: str) -> None:
    assert store.load(namespace, "s", T0) == SessionState()
    assert store.record(namespace, "s", ["t1", "t2"], T0, 0.7, "fp", KEEP) == 1
    assert store.record(namespace, "s", [], T0 + timedelta(minutes=1), 0.5, "fp2", KEEP) == 2
    state = store.load(namespace, "s", T0 + timedelta(minutes=2))
    assert state.turn == 2 and _ids(state) == ["t1", "t2"]
    entry = state.injections["t1"]
    assert (entry.turn, entry.at, entry.confidence, entry.fingerprint) == (1, T0, 0.7, "fp")
    assert store.load(namespace, "other", T0) == SessionState()  # sessions are apart


def test_reinjection_moves_the_entry_and_cooled_entries_are_dropped(
    store: Any, namespace: str
) -> None:
    store.record(namespace, "s", ["t1", "t2"], T0, 0.7, "fp", KEEP)
    store.record(namespace, "s", ["t1"], T0 + timedelta(minutes=1), 0.9, "fp", KEEP)
    state = store.load(namespace, "s", T0 + timedelta(minutes=1))
    assert _ids(state) == ["t2", "t1"] and state.injections["t1"].turn == 2
    later = T0 + timedelta(minutes=20)  # past the cool time; t2 is 5 turns old at turn 6
    for _ in range(4):
        store.record(namespace, "s", [], later, 0.5, "fp", KEEP)
    state = store.load(namespace, "s", later)
    assert state.turn == 6 and _ids(state) == ["t1"]  # t1 is 4 turns old: still blocking


def test_a_session_keeps_at_most_max_entries_the_newest(store: Any, namespace: str) -> None:
    store.record(namespace, "s", ["a", "b", "c"], T0, 0.7, "fp", KEEP)
    store.record(namespace, "s", ["d", "e"], T0, 0.7, "fp", KEEP)
    assert _ids(store.load(namespace, "s", T0)) == ["b", "c", "d", "e"]
    store.record(namespace, "s", ["f", "g", "h", "i", "j"], T0, 0.7, "fp", KEEP)
    assert _ids(store.load(namespace, "s", T0)) == ["g", "h", "i", "j"]


def test_an_idle_session_expires_and_starts_again(store: Any, namespace: str) -> None:
    store.record(namespace, "s", ["t1"], T0, 0.7, "fp", KEEP)
    expired = T0 + KEEP.ttl + timedelta(seconds=1)
    assert store.load(namespace, "s", expired) == SessionState()
    assert store.record(namespace, "s", ["t2"], expired, 0.7, "fp", KEEP) == 1
    assert _ids(store.load(namespace, "s", expired)) == ["t2"]


def test_forgetting_records_and_whole_namespaces(
    store: Any, namespace: str, other_namespace: str
) -> None:
    for ns in (namespace, other_namespace):
        store.record(ns, "s1", ["t1", "t2"], T0, 0.7, "fp", KEEP)
        store.record(ns, "s2", ["t1"], T0, 0.7, "fp", KEEP)
    assert store.forget(namespace, ["t1"]) == 2
    assert _ids(store.load(namespace, "s1", T0)) == ["t2"]
    assert _ids(store.load(namespace, "s2", T0)) == []
    assert _ids(store.load(other_namespace, "s1", T0)) == ["t1", "t2"]  # another namespace
    assert store.forget(namespace, [], whole=True) == 2
    assert store.load(namespace, "s1", T0) == SessionState()
    assert store.load(other_namespace, "s2", T0).turn == 1


def test_concurrent_turns_of_one_session_are_all_counted(driver: Driver, namespace: str) -> None:
    """Two workers serving one session at once: no lost update of the turn counter."""
    from concurrent.futures import ThreadPoolExecutor

    store = SuppressionStore(driver)
    with ThreadPoolExecutor(8) as pool:
        turns = list(pool.map(
            lambda i: store.record(namespace, "s", [f"t{i}"], T0, 0.7, "fp", KEEP), range(16)
        ))  # fmt: skip
    assert sorted(turns) == list(range(1, 17))
    assert store.load(namespace, "s", T0).turn == 16
