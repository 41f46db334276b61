"""Driver errors are mapped in graph/ only, and REST answers each for what it is: a transient
refusal (a deadlock) is retried and the request succeeds; one that outlives its retries is 409
``Contended``; only a database that cannot be reached is 503, its detail saying how; anything
else the database refused is 500. On a stub driver and a hand-moved clock: no I/O, no sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from neo4j.exceptions import (
    ConnectionAcquisitionTimeoutError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from api.errors import install
from graph import db
from graph.errors import Conflict, Contended, DatabaseFailed, Neo4jUnavailable
from tests.fakes.clock import ManualClock

DEADLOCK = "Neo.TransientError.Transaction.DeadlockDetected"


def refusal(code: str) -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message="ForsetiClient[...] (internal detail)")


class StubDriver:
    """Answers each ``session().run`` with the next of ``outcomes`` (rows, or an error)."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes = list(outcomes)
        self.runs = 0
        self.execute_query_bookmark_manager = object()

    @contextmanager
    def session(self, **_: Any) -> Iterator[StubDriver]:
        yield self

    def run(self, *_: Any) -> Iterator[Any]:
        self.runs += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return iter(outcome)


class CountStore(db.Store):
    """A store with one write, run as the context's write runs (``once``)."""

    def count(self) -> int:
        return int(self._run("MERGE (n) RETURN 1 AS n", {}, once=True)[0]["n"])


@pytest.fixture(autouse=True)
def fake_time(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    clock = ManualClock()

    def pause(seconds: float) -> None:
        clock.t += seconds

    monkeypatch.setattr(db, "RETRY", db.Retry(clock=clock, sleep=pause, jitter=lambda: 0.5))
    return clock


def app_over(driver: StubDriver) -> FastAPI:
    app = FastAPI()
    install(app)

    @app.post("/v1/count")
    def count() -> dict[str, int]:
        return {"n": CountStore(driver).count()}  # type: ignore[arg-type]

    return app


def post(app: FastAPI) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post("/v1/count")

    return asyncio.run(go())


def test_a_deadlock_is_retried_and_the_request_succeeds(fake_time: ManualClock) -> None:
    driver = StubDriver(refusal(DEADLOCK), refusal(DEADLOCK), [{"n": 1}])
    answer = post(app_over(driver))
    assert (answer.status_code, answer.json()) == (200, {"n": 1}) and driver.runs == 3
    assert 0 < fake_time.t < db.RETRY.window  # the retries' pauses, on the injected clock


def test_a_deadlock_past_the_retry_window_is_409_contended_not_503() -> None:
    answer = post(app_over(StubDriver(*[refusal(DEADLOCK) for _ in range(50)])))
    assert answer.status_code == 409 and answer.headers["retry-after"]
    body = answer.json()
    assert body["error"] == "Contended" and DEADLOCK in body["detail"]
    assert "ForsetiClient" not in body["detail"]  # Neo4j's own text stays in the log


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (ServiceUnavailable("Couldn't connect to 127.0.0.1:7687"), "no connection to it"),
        (SessionExpired("connection reset"), "the connection to it was lost"),
        (ConnectionAcquisitionTimeoutError("pool"), "within the pool's wait"),
        (refusal("Neo.TransientError.General.DatabaseUnavailable"), "not available"),
    ],
)
def test_a_database_out_of_reach_is_503_naming_how(error: Exception, says: str) -> None:
    answer = post(app_over(StubDriver(*[error] * 50)))  # a starting database is retried first
    assert answer.status_code == 503 and answer.headers["retry-after"]
    body = answer.json()
    assert body["error"] == "Neo4jUnavailable"
    assert body["detail"].startswith("the database is not reachable: ") and says in body["detail"]


def test_a_query_the_database_refused_is_500_not_an_outage() -> None:
    answer = post(app_over(StubDriver(refusal("Neo.ClientError.Statement.SyntaxError"))))
    assert answer.status_code == 500 and answer.json()["error"] == "DatabaseFailed"
    assert "retry-after" not in answer.headers


def test_every_store_method_raises_the_products_errors_only() -> None:
    cases = [
        (refusal(DEADLOCK), Contended),
        (refusal("Neo.ClientError.Schema.ConstraintValidationFailed"), Conflict),
        (refusal("Neo.ClientError.Statement.SyntaxError"), DatabaseFailed),
        (ServiceUnavailable("down"), Neo4jUnavailable),
    ]
    for error, kind in cases:
        outcomes = [error] * (50 if kind is Contended else 1)
        with pytest.raises(kind) as raised:
            CountStore(StubDriver(*outcomes)).count()  # type: ignore[arg-type]
        assert raised.value.__cause__ is error or kind is Contended


def test_a_generator_method_translates_while_it_is_iterated() -> None:
    class Pages(db.Store):
        def pages(self) -> Iterator[int]:
            yield 1
            raise ServiceUnavailable("lost mid-stream")

    stream = Pages(StubDriver()).pages()  # type: ignore[arg-type]
    assert next(stream) == 1
    with pytest.raises(Neo4jUnavailable):
        next(stream)
