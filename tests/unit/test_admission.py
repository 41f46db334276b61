"""The API worker's context gate (api/admission.py): at most ``slots`` builds at once, the rest
served namespace by namespace in turn, each namespace's in arrival order; a request cancelled
while it waits gives its place up. Real threads and a real event loop; no timing: the builds
block on an event until every request has arrived."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import pytest

from api.admission import ContextGate


def crowd(
    slots: int, requests: int, namespace: Callable[[int], str] = lambda i: "ns"
) -> tuple[list[int], int, dict[int, int], tuple[int, int]]:
    """``requests`` builds (request ``i`` from ``namespace(i)``) through a gate of ``slots``,
    queued one by one, released together: the order they started in, the most that ran at
    once, their results, and (running, waiting) once all had arrived."""
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
            results[i] = await gate.run(namespace(i), build, i)

        async with anyio.create_task_group() as tg:
            for i in range(requests):
                tg.start_soon(one, i)
                while gate.running + gate.waiting < i + 1:  # arrived: holding or queued
                    await anyio.sleep(0.001)
            seen = (gate.running, gate.waiting)
            release.set()

    async def bounded() -> None:
        with anyio.fail_after(30):  # a broken gate hangs; fail instead
            await main()

    anyio.run(bounded)
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


def test_namespaces_take_turns_so_a_burst_cannot_starve_another() -> None:
    """Namespace a queues five builds before b queues one: b's runs second, not sixth; each
    namespace's own keep their order."""
    burst = {0: "a", 1: "a", 2: "a", 3: "a", 4: "a", 5: "b", 6: "c"}
    started, peak, _, seen = crowd(1, 7, burst.__getitem__)
    assert seen == (1, 6) and peak == 1
    assert started == [0, 1, 5, 6, 2, 3, 4]


def test_a_request_cancelled_while_it_waits_gives_its_place_up() -> None:
    ran: list[str] = []
    release = threading.Event()

    def build(name: str) -> str:
        ran.append(name)
        assert release.wait(30), "never released"
        return name

    async def main() -> tuple[int, int]:
        gate = ContextGate(1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.run, "a", build, "first")
            while gate.running < 1:
                await anyio.sleep(0.001)
            scope = anyio.CancelScope()  # a client that goes away while it waits

            async def leave() -> None:
                with scope:
                    await gate.run("b", build, "gone")

            tg.start_soon(leave)
            while gate.waiting < 1:
                await anyio.sleep(0.001)
            scope.cancel()
            while gate.waiting:
                await anyio.sleep(0.001)
            tg.start_soon(gate.run, "c", build, "next")
            while gate.waiting < 1:
                await anyio.sleep(0.001)
            release.set()
        return gate.running, gate.waiting

    async def bounded() -> tuple[int, int]:
        with anyio.fail_after(30):  # a broken gate hangs; fail instead
            return await main()

    assert anyio.run(bounded) == (0, 0)
    assert ran == ["first", "next"]


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
        async def run(self, namespace: str, build: Any, *args: object) -> Any:
            gated.append(namespace)
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
    assert gated == ["ns"] and not answered.is_error
    assert answered.structured_content == {"tool": CONTEXT_TOOL, "namespace": "ns"}
