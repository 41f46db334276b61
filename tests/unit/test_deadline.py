"""api.deadline: a /v1 request waiting on an unreachable Neo4j is answered 503 at its deadline;
a slow request on a reachable Neo4j, and a route that is not safe to retry, are never cut.

No test bounds a duration by the wall clock (a loaded host stretches every one): when a request
was cut is read from the order of events instead. The middleware asks the probe only once the
budget has passed, so "probe" before "cancelled" (and no "finished") says the 503 came after the
budget and before the handler could finish."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import Depends, FastAPI, Request

from api.deadline import Deadline, DeadlineMiddleware, exempt_from_deadline, no_deadline
from api.probe import Neo4jProbe
from graph.errors import Neo4jUnavailable

UP = ({"name": "Neo4j Kernel", "version": "5.26.0", "edition": "community"}, [])
BUDGET = 0.2


def down() -> Any:
    raise Neo4jUnavailable("the database is not reachable: connection refused")


def hangs() -> Any:
    time.sleep(2.0)
    return UP


def make_app(ask: Callable[[], Any], events: list[str]) -> FastAPI:
    app = FastAPI()

    def asked() -> Any:
        events.append("probe")
        return ask()

    app.state.neo4j_probe = Neo4jProbe(asked, ttl=1.0)

    @app.post("/v1/slow")
    async def slow() -> dict[str, str]:
        try:
            await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        events.append("finished")
        return {"answer": "slow"}

    @app.post("/v1/create", dependencies=[Depends(no_deadline)])
    async def create() -> dict[str, str]:
        await asyncio.sleep(0.6)
        return {"answer": "created"}

    @app.post("/other/slow")
    async def other() -> dict[str, str]:
        await asyncio.sleep(0.6)
        return {"answer": "other"}

    app.add_middleware(DeadlineMiddleware, budget=BUDGET, check=0.2, recheck=0.1)
    return app


async def ask_all(app: FastAPI, *paths: str) -> list[tuple[int, float, Any]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:

        async def one(path: str) -> tuple[int, float, Any]:
            started = time.monotonic()
            answer = await client.post(path)
            return answer.status_code, time.monotonic() - started, answer.json()

        out = await asyncio.gather(*(one(p) for p in paths))
        await asyncio.sleep(0.1)  # let cut-off handlers see their cancellation
        return list(out)


def admits(app: FastAPI) -> bool:
    """Whether the gate lets a request through now (asked on an event loop, as the gate does)."""

    async def ask() -> bool:
        return bool(app.state.neo4j_probe.admit())

    return asyncio.run(ask())


def test_a_request_waiting_on_an_unreachable_neo4j_is_answered_503_and_trips_the_gate() -> None:
    events: list[str] = []
    app = make_app(down, events)
    [(status, _, body)] = asyncio.run(ask_all(app, "/v1/slow"))
    assert status == 503 and body["error"] == "Neo4jUnavailable"
    # cut once the budget had passed (the probe is asked only then), before the handler could
    # finish: it was stopped, its answer never sent
    assert events[0] == "probe" and events[-1] == "cancelled" and "finished" not in events
    assert admits(app) is False  # requests behind it answer 503 at once


def test_a_probe_without_answer_does_not_cut_the_request() -> None:
    app = make_app(hangs, [])  # Neo4j busy (a large write on a loaded host), not refusing
    [(status, seconds, body)] = asyncio.run(ask_all(app, "/v1/slow"))
    assert (status, body) == (200, {"answer": "slow"}) and seconds >= 1.0
    assert admits(app) is True


def test_a_slow_request_on_a_reachable_neo4j_is_never_cut() -> None:
    events: list[str] = []
    [(status, seconds, body)] = asyncio.run(ask_all(make_app(lambda: UP, events), "/v1/slow"))
    assert (status, body) == (200, {"answer": "slow"}) and seconds >= 1.0
    assert events[-1] == "finished" and "cancelled" not in events


def test_routes_not_safe_to_retry_and_paths_outside_v1_are_never_cut() -> None:
    app = make_app(down, [])
    answers = asyncio.run(ask_all(app, "/v1/create", "/other/slow"))
    assert [(s, b["answer"]) for s, _, b in answers] == [(200, "created"), (200, "other")]


def test_a_sync_route_that_claimed_its_exemption_is_never_cut() -> None:
    """A sync route claims from its worker thread, which may start after the budget on a busy
    host (then it is cut before it writes: the next test). Here the order is fixed whatever the
    host's speed: the middleware asks the probe at the budget, the route claims while the probe
    is under way, and only then does Neo4j refuse the probe."""
    asking, claimed = threading.Event(), threading.Event()

    def refuses_after_the_claim() -> Any:
        asking.set()
        claimed.wait(5.0)
        return down()

    app = make_app(refuses_after_the_claim, [])

    @app.post("/v1/append")
    def append(request: Request) -> dict[str, str]:  # a sync route: runs in a thread
        asking.wait(5.0)
        exempt_from_deadline(request)
        claimed.set()
        time.sleep(0.4)
        return {"answer": "appended"}

    [(status, seconds, body)] = asyncio.run(ask_all(app, "/v1/append"))
    assert asking.is_set() and claimed.is_set()
    assert (status, body) == (200, {"answer": "appended"}) and seconds >= BUDGET + 0.4


def test_a_route_claims_its_exemption_only_before_the_cut() -> None:
    deadline = Deadline()
    assert deadline.cut() is True
    assert deadline.answer() is False  # the handler's late answer is dropped
    with pytest.raises(Neo4jUnavailable):
        deadline.exempt()  # the 503 is out: the route must write nothing
    exempt = Deadline()
    exempt.exempt()
    assert exempt.cut() is False and exempt.state == "exempt"


def test_a_slow_request_is_cut_while_neo4j_settles_after_an_outage() -> None:
    events: list[str] = []
    app = make_app(lambda: UP, events)

    async def after_an_outage() -> list[tuple[int, float, Any]]:
        app.state.neo4j_probe.trip()  # a request found Neo4j away; the probe finds it back
        return await ask_all(app, "/v1/slow")

    [(status, _, _)] = asyncio.run(after_an_outage())
    assert status == 503  # the probe's "up" is not trusted yet: cut before the handler finished
    assert events[-1] == "cancelled" and "finished" not in events
