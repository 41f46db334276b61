"""``graph.db.read_query`` and ``write_query``: one query as an auto-commit transaction with the
driver's bookmarks. A read is run again (backing off, within the retry window) when the error
says a retry may succeed; a write only when Neo4j refused it as transient (rolled back), never
after a lost connection (it may have been committed). On a stub driver and a hand-moved clock,
no I/O and no sleeping."""

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
from tests.fakes.clock import ManualClock


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


class Pauses:
    """The retry pauses asked for; each moves the clock on by the pause (no real sleep)."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.taken: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.taken.append(seconds)
        self.clock.t += seconds


@pytest.fixture
def no_backoff() -> Pauses:
    return Pauses(ManualClock())


def policy(pauses: Pauses) -> db.Retry:
    """The default retry policy on the fake clock, without jitter (factor 1)."""
    return db.Retry(clock=pauses.clock, sleep=pauses, jitter=lambda: 0.5)


def backoff(n: int) -> list[float]:
    """The first ``n`` pauses of the default policy without jitter."""
    return [min(db.RETRY.cap, db.RETRY.first * 2**i) for i in range(n)]


def test_a_read_runs_once_in_a_read_session_that_shares_the_drivers_bookmarks() -> None:
    driver = StubDriver([{"n": 1}, {"n": 2}])
    rows = db.read_query(driver, "neo4j", "RETURN 1", {"x": 1})  # type: ignore[arg-type]
    assert rows == [{"n": 1}, {"n": 2}]
    assert driver.runs == [("RETURN 1", {"x": 1})]
    assert driver.sessions == [{
        "database": "neo4j", "bookmark_manager": driver.execute_query_bookmark_manager,
        "default_access_mode": READ_ACCESS,
    }]  # fmt: skip


def test_a_read_is_run_again_after_an_error_a_retry_may_mend(no_backoff: Pauses) -> None:
    driver = StubDriver(ServiceUnavailable("restarting"), [{"n": 1}])
    rows = db.read_query(driver, "neo4j", "RETURN 1", {}, policy(no_backoff))  # type: ignore[arg-type]
    assert rows == [{"n": 1}]
    assert len(driver.runs) == 2 and no_backoff.taken == backoff(1)


def test_a_read_gives_up_when_its_retry_window_is_spent(no_backoff: Pauses) -> None:
    driver = StubDriver(*[ServiceUnavailable("down") for _ in range(50)])
    with pytest.raises(ServiceUnavailable):
        db.read_query(driver, "neo4j", "RETURN 1", {}, policy(no_backoff))  # type: ignore[arg-type]
    # pauses double up to the cap, and no retry starts past the window
    taken = no_backoff.taken
    assert taken == backoff(len(taken)) and len(driver.runs) == len(taken) + 1
    assert sum(taken) <= db.RETRY.window < sum(taken) + db.RETRY.cap


def test_an_error_no_retry_can_mend_is_raised_at_once(no_backoff: Pauses) -> None:
    bad = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="bad")
    assert isinstance(bad, CypherSyntaxError) and not bad.is_retryable()
    driver = StubDriver(bad, [{"n": 1}])
    with pytest.raises(CypherSyntaxError):
        db.read_query(driver, "neo4j", "RETURN", {}, policy(no_backoff))  # type: ignore[arg-type]
    assert len(driver.runs) == 1 and no_backoff.taken == []


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


def test_a_write_neo4j_rolled_back_as_transient_is_run_again(
    no_backoff: Pauses, caplog: pytest.LogCaptureFixture
) -> None:
    driver = StubDriver(deadlock(), deadlock(), [{"turn": 1}])
    rows = db.write_query(driver, "neo4j", "MERGE (n)", {}, policy(no_backoff))  # type: ignore[arg-type]
    assert rows == [{"turn": 1}]
    assert len(driver.runs) == 3 and no_backoff.taken == backoff(2)
    # a deadlock retried away still shows in the log, by its code
    assert caplog.text.count("Neo.TransientError.Transaction.DeadlockDetected") == 2


def test_a_write_still_refused_when_its_window_is_spent_raises_the_transient_error(
    no_backoff: Pauses,
) -> None:
    driver = StubDriver(*[deadlock() for _ in range(50)])
    with pytest.raises(TransientError):
        db.write_query(driver, "neo4j", "MERGE (n)", {}, policy(no_backoff))  # type: ignore[arg-type]
    assert sum(no_backoff.taken) <= db.RETRY.window < sum(no_backoff.taken) + db.RETRY.cap


def test_the_pauses_are_jittered_so_the_two_sides_of_a_deadlock_part() -> None:
    low, high = db.Retry(jitter=lambda: 0.0), db.Retry(jitter=lambda: 0.999)
    assert low.pause(0) == db.RETRY.first / 2 and high.pause(0) > 1.49 * db.RETRY.first
    assert high.pause(30) < 1.5 * db.RETRY.cap


def test_a_write_whose_connection_was_lost_is_not_run_again(no_backoff: Pauses) -> None:
    # the commit may have happened: running it again could count the turn twice
    driver = StubDriver(ServiceUnavailable("connection lost"), [{"turn": 1}])
    with pytest.raises(ServiceUnavailable):
        db.write_query(driver, "neo4j", "MERGE (n)", {}, policy(no_backoff))  # type: ignore[arg-type]
    assert len(driver.runs) == 1 and no_backoff.taken == []
