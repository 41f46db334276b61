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


def test_the_mcp_context_tool_waits_at_the_gate_and_other_tools_do_not() -> None:
    """``memory_context`` over MCP queues with POST /v1/context (one gate per worker); the
    other tools run as before."""
    from datetime import UTC, datetime
    from types import SimpleNamespace
    from typing import Any, cast

    import mcp_types as types

    from api.mcp_server import CONTEXT_TOOL, MemoryServer

    gated: list[str] = []

    class Gate:
        async def run(self, build: Any, *args: object) -> Any:
            gated.append("in")
            return build(*args)

    class Tools:
        def invoke(self, name: str, arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
            return {"tool": name, "namespace": ctx.namespace}

    clock = SimpleNamespace(now=lambda: datetime(2026, 3, 2, 12, tzinfo=UTC))
    server = MemoryServer(
        cast(Any, SimpleNamespace(clock=clock)), cast(Any, Tools()), lambda _: "ns",
        cast(Any, Gate()),
    )  # fmt: skip

    async def call(name: str) -> types.CallToolResult:
        params = types.CallToolRequestParams(name=name, arguments={})
        return await server.call_tool(cast(Any, None), params)

    searched = anyio.run(call, "memory_search")
    assert gated == [] and not searched.is_error
    answered = anyio.run(call, CONTEXT_TOOL)
    assert gated == ["in"] and not answered.is_error
    assert answered.structured_content == {"tool": CONTEXT_TOOL, "namespace": "ns"}
