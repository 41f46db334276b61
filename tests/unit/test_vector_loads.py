"""The queue of namespace loads off the request path (graph/vector_loads.py): one load at a
time, namespaces in the order first asked and each at most once queued or running (a tenant
asking again does not go ahead of another), a full queue refuses rather than grows, a failed
load is logged and the queue goes on, and the drain is started once and stops when empty. The
drain is driven by hand (``start`` records it), so no test waits on a clock."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from graph.vector_loads import LoadQueue


class Starts:
    """A ``start`` that records the drains asked for instead of running them."""

    def __init__(self) -> None:
        self.drains: list[Callable[[], None]] = []

    def __call__(self, drain: Callable[[], None]) -> None:
        self.drains.append(drain)


def test_namespaces_load_once_each_in_the_order_first_asked() -> None:
    done: list[str] = []
    q = LoadQueue(start=None)
    for ns in ["alice", "alice", "bob", "alice", "carol", "bob"]:
        assert q.ask(ns, lambda ns=ns: done.append(ns))
    assert q.waiting() == ["alice", "bob", "carol"]
    while q.run_next():
        pass
    assert done == ["alice", "bob", "carol"]
    assert q.waiting() == [] and q.wait_idle(0)


def test_a_namespace_asked_while_it_loads_is_not_queued_again() -> None:
    done: list[str] = []
    q = LoadQueue(start=None)

    def alice() -> None:
        # alice's searches keep asking while her copy is read; bob asks once
        assert q.ask("alice", lambda: done.append("alice again"))
        assert q.ask("bob", lambda: done.append("bob"))
        assert q.waiting() == ["alice", "bob"]
        assert not q.wait_idle(0)  # alice's load is running
        done.append("alice")

    q.ask("alice", alice)
    while q.run_next():
        pass
    assert done == ["alice", "bob"]


def test_a_full_queue_refuses_and_keeps_its_order() -> None:
    q = LoadQueue(limit=2, start=None)
    assert q.ask("a", lambda: None) and q.ask("b", lambda: None)
    assert not q.ask("c", lambda: None)  # refused: its searches stay in Neo4j, it asks again
    assert q.ask("a", lambda: None)  # already queued
    assert q.waiting() == ["a", "b"]
    q.run_next()
    assert q.ask("c", lambda: None) and q.waiting() == ["b", "c"]


def test_a_failed_load_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    done: list[str] = []
    q = LoadQueue(start=None)

    def broken() -> None:
        raise RuntimeError("Neo4j went away")

    q.ask("alice", broken)
    q.ask("bob", lambda: done.append("bob"))
    with caplog.at_level(logging.WARNING):
        assert q.run_next()
    assert "vector load of a namespace failed" in caplog.text
    assert q.run_next() and done == ["bob"]
    assert q.ask("alice", lambda: done.append("alice"))  # asked again by its next search
    assert q.run_next() and done == ["bob", "alice"]


def test_one_drain_at_a_time_started_again_once_it_stopped() -> None:
    starts = Starts()
    done: list[str] = []
    q = LoadQueue(start=starts)
    q.ask("alice", lambda: done.append("alice"))
    q.ask("bob", lambda: done.append("bob"))
    assert len(starts.drains) == 1  # bob waits for the drain alice started
    starts.drains[0]()  # the drain thread's body: runs until the queue is empty, then stops
    assert done == ["alice", "bob"] and q.wait_idle(0)
    q.ask("carol", lambda: done.append("carol"))
    assert len(starts.drains) == 2
    starts.drains[1]()
    assert done == ["alice", "bob", "carol"]
