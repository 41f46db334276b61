"""api.probe.Neo4jProbe: /health's view of Neo4j never waits on a dead server."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from api.probe import Neo4jProbe
from graph.errors import Neo4jUnavailable
from tests.fakes.clock import ManualClock

UP = ({"name": "Neo4j Kernel", "version": "5.26.0", "edition": "community"}, [])


def test_an_answer_is_cached_for_ttl_then_asked_again() -> None:
    calls: list[int] = []
    clock = ManualClock()

    def ask() -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise Neo4jUnavailable("connection refused")
        return UP

    async def run() -> list[dict[str, Any]]:
        probe = Neo4jProbe(ask, ttl=1.0, clock=clock)
        first = await probe.state()
        clock.t = 0.5
        cached = await probe.state()
        clock.t = 1.5
        down = await probe.state()
        clock.t = 3.0
        back = await probe.state()
        probe.close()
        return [first, cached, down, back]

    first, cached, down, back = asyncio.run(run())
    assert first["state"] == "up" and first["server"]["version"] == "5.26.0"
    assert cached["state"] == "up" and cached["age_s"] == 0.5
    assert down == {"state": "down", "error": "connection refused", "age_s": 0}
    assert back["state"] == "up"  # recovers by itself once Neo4j answers again
    assert len(calls) == 3


def test_a_hanging_server_is_down_within_the_timeout_and_holds_one_thread() -> None:
    """The checks answer while the probe still hangs (no wall-clock bound: they came back
    before the server was let go, and say they gave up at the probe's timeout)."""
    release = threading.Event()
    asked: list[int] = []
    while_hanging: list[bool] = []

    def ask() -> Any:
        asked.append(1)
        release.wait(10)
        return UP

    async def run() -> list[dict[str, Any]]:
        probe = Neo4jProbe(ask, timeout=0.2)
        states = await asyncio.gather(*(probe.state() for _ in range(5)))
        while_hanging.append(not release.is_set())
        release.set()
        await asyncio.sleep(0.1)
        states.append(await probe.state())  # the late answer, now cached
        probe.close()
        return states

    states = asyncio.run(run())
    assert while_hanging == [True]  # answered without waiting for the server
    assert all(s["state"] == "down" and s["timed_out"] for s in states[:5])
    assert all("no answer within 0.2 s" in s["error"] for s in states[:5])
    assert len(asked) == 1  # five checks, one probe in flight
    assert states[5]["state"] == "up"


def test_a_probe_stuck_past_stuck_after_is_replaced_by_a_fresh_one() -> None:
    release = threading.Event()
    calls: list[int] = []
    clock = ManualClock()

    def ask() -> Any:
        calls.append(1)
        if len(calls) == 1:
            release.wait(10)  # a connection that never answers
        return UP

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        probe = Neo4jProbe(ask, timeout=0.2, stuck_after=15.0, clock=clock)
        stuck = await probe.state()
        clock.t = 16.0
        fresh = await probe.state()
        release.set()
        probe.close()
        return stuck, fresh

    stuck, fresh = asyncio.run(run())
    assert stuck["state"] == "down"
    assert fresh["state"] == "up" and len(calls) == 2


def test_a_trip_holds_requests_back_until_a_probe_started_after_it_answers() -> None:
    answers = iter([Neo4jUnavailable("connection refused"), UP])

    def ask() -> Any:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def run() -> list[bool]:
        probe = Neo4jProbe(ask, ttl=0.0)
        admitted = [probe.admit()]  # never tripped: requests go through
        probe.trip()  # a request found Neo4j unreachable
        admitted.append(probe.admit())  # held back; a probe starts (and is refused)
        await asyncio.sleep(0.1)
        admitted.append(probe.admit())  # still held back; the next probe answers
        await asyncio.sleep(0.1)
        admitted.append(probe.admit())
        probe.close()
        return admitted

    assert asyncio.run(run()) == [True, False, False, True]


def test_an_answer_from_before_the_trip_does_not_reopen_the_gate() -> None:
    release = threading.Event()

    def ask() -> Any:
        release.wait(5)
        return UP

    async def run() -> tuple[bool, bool]:
        probe = Neo4jProbe(ask, timeout=0.05)
        await probe.state()  # a probe under way ...
        probe.trip()  # ... when Neo4j goes away
        release.set()
        await asyncio.sleep(0.1)  # its "up" predates the trip
        stale = probe.admit()
        await asyncio.sleep(0.1)  # the probe admit() started after the trip answers
        fresh = probe.admit()
        probe.close()
        return stale, fresh

    assert asyncio.run(run()) == (False, True)
