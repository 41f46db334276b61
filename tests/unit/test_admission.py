"""The API worker's context gate (api/admission.py): at most ``slots`` builds at once, the rest
served in arrival order. Real threads and a real event loop; no timing: the builds block on an
event until every request has arrived."""

from __future__ import annotations

import threading

import anyio
import pytest

from api.admission import ContextGate


def crowd(slots: int, requests: int) -> tuple[list[int], int, dict[int, int], tuple[int, int]]:
    """``requests`` builds through a gate of ``slots``, queued one by one, released together:
    the order they started in, the most that ran at once, their results, and (running,
    waiting) once all had arrived."""
    started: list[int] = []
    active = peak = 0
    lock = threading.Lock()
    release = threading.Event()
    results: dict[int, int] = {}
    seen: tuple[int, int] = (0, 0)

    def build(i: int) -> int:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
            started.append(i)
        assert release.wait(30), "never released"
        with lock:
            active -= 1
        return i * 10

    async def main() -> None:
        nonlocal seen
        gate = ContextGate(slots)

        async def one(i: int) -> None:
            results[i] = await gate.run(build, i)

        async with anyio.create_task_group() as tg:
            for i in range(requests):
                tg.start_soon(one, i)
                while gate.running + gate.waiting < i + 1:  # arrived: holding or queued
                    await anyio.sleep(0.001)
            seen = (gate.running, gate.waiting)
            release.set()

    anyio.run(main)
    return started, peak, results, seen


def test_at_most_slots_builds_run_and_every_one_finishes() -> None:
    started, peak, results, seen = crowd(3, 8)
    assert seen == (3, 5)
    assert peak == 3
    assert results == {i: i * 10 for i in range(8)}
    assert sorted(started) == list(range(8))


def test_waiting_builds_are_served_first_come_first_served() -> None:
    started, peak, _, seen = crowd(1, 6)
    assert seen == (1, 5) and peak == 1
    assert started == [0, 1, 2, 3, 4, 5]


def test_a_gate_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ContextGate(0)
