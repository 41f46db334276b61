"""``graph.db.read_query`` and ``write_query``: one query as an auto-commit transaction with the
driver's bookmarks. A read is run again (a few times, backing off) when the error says a retry
may succeed; a write only when Neo4j refused it as transient (rolled back), never after a lost
connection (it may have been committed). On a stub driver, no I/O."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from neo4j import READ_ACCESS, WRITE_ACCESS
from neo4j.exceptions import (
    CypherSyntaxError,
    Neo4jError,
    ServiceUnavailable,
    TransientError,
)

from graph import db


class StubDriver:
    """Answers each ``session().run`` with the next of ``outcomes`` (rows, or an error)."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes = list(outcomes)
        self.sessions: list[dict[str, Any]] = []
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self.execute_query_bookmark_manager = object()

    @contextmanager
    def session(self, **kwargs: Any) -> Iterator[StubDriver]:
        self.sessions.append(kwargs)
        yield self

    def run(self, text: str, params: dict[str, Any]) -> Iterator[Any]:
        self.runs.append((text, params))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return iter(outcome)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr("graph.db.time.sleep", slept.append)
    return slept


def test_a_read_runs_once_in_a_read_session_that_shares_the_drivers_bookmarks() -> None:
    driver = StubDriver([{"n": 1}, {"n": 2}])
    rows = db.read_query(driver, "neo4j", "RETURN 1", {"x": 1})  # type: ignore[arg-type]
    assert rows == [{"n": 1}, {"n": 2}]
    assert driver.runs == [("RETURN 1", {"x": 1})]
    assert driver.sessions == [{
        "database": "neo4j", "bookmark_manager": driver.execute_query_bookmark_manager,
        "default_access_mode": READ_ACCESS,
    }]  # fmt: skip


def test_a_read_is_run_again_after_an_error_a_retry_may_mend(no_backoff: list[float]) -> None:
    driver = StubDriver(ServiceUnavailable("restarting"), [{"n": 1}])
    assert db.read_query(driver, "neo4j", "RETURN 1", {}) == [{"n": 1}]  # type: ignore[arg-type]
    assert len(driver.runs) == 2 and no_backoff == [db.READ_BACKOFF_S]


def test_a_read_gives_up_after_its_attempts(no_backoff: list[float]) -> None:
    down = [ServiceUnavailable("down") for _ in range(db.READ_ATTEMPTS)]
    driver = StubDriver(*down)
    with pytest.raises(ServiceUnavailable):
        db.read_query(driver, "neo4j", "RETURN 1", {})  # type: ignore[arg-type]
    assert len(driver.runs) == db.READ_ATTEMPTS
    assert no_backoff == [db.READ_BACKOFF_S * 2**i for i in range(db.READ_ATTEMPTS - 1)]


def test_an_error_no_retry_can_mend_is_raised_at_once(no_backoff: list[float]) -> None:
    bad = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="bad")
    assert isinstance(bad, CypherSyntaxError) and not bad.is_retryable()
    driver = StubDriver(bad, [{"n": 1}])
    with pytest.raises(CypherSyntaxError):
        db.read_query(driver, "neo4j", "RETURN", {})  # type: ignore[arg-type]
    assert len(driver.runs) == 1 and no_backoff == []


def deadlock() -> TransientError:
    found = Neo4jError._hydrate_neo4j(
        code="Neo.TransientError.Transaction.DeadlockDetected", message="deadlock"
    )
    assert isinstance(found, TransientError) and found.is_retryable()
    return found


def test_a_write_runs_once_in_a_write_session_that_shares_the_drivers_bookmarks() -> None:
    driver = StubDriver([{"turn": 3}])
    rows = db.write_query(driver, "neo4j", "MERGE (n) RETURN 3", {"x": 1})  # type: ignore[arg-type]
    assert rows == [{"turn": 3}] and driver.runs == [("MERGE (n) RETURN 3", {"x": 1})]
    assert driver.sessions == [{
        "database": "neo4j", "bookmark_manager": driver.execute_query_bookmark_manager,
        "default_access_mode": WRITE_ACCESS,
    }]  # fmt: skip


def test_a_write_neo4j_rolled_back_as_transient_is_run_again(no_backoff: list[float]) -> None:
    driver = StubDriver(deadlock(), [{"turn": 1}])
    assert db.write_query(driver, "neo4j", "MERGE (n)", {}) == [{"turn": 1}]  # type: ignore[arg-type]
    assert len(driver.runs) == 2 and no_backoff == [db.READ_BACKOFF_S]
    driver = StubDriver(*[deadlock() for _ in range(db.READ_ATTEMPTS)])
    with pytest.raises(TransientError):
        db.write_query(driver, "neo4j", "MERGE (n)", {})  # type: ignore[arg-type]
    assert len(driver.runs) == db.READ_ATTEMPTS


def test_a_write_whose_connection_was_lost_is_not_run_again(no_backoff: list[float]) -> None:
    # the commit may have happened: running it again could count the turn twice
    driver = StubDriver(ServiceUnavailable("connection lost"), [{"turn": 1}])
    with pytest.raises(ServiceUnavailable):
        db.write_query(driver, "neo4j", "MERGE (n)", {})  # type: ignore[arg-type]
    assert len(driver.runs) == 1 and no_backoff == []
