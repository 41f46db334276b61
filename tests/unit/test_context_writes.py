"""The writes after packing (issue #13): the topics shown are marked used and the session's
suppression turn is counted; in Neo4j both go in one transaction (``ContextStore.finish``). A
failing suppression turn never fails the request and never loses the use mark; a failing use
mark is the request's failure.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest
from neo4j import WRITE_ACCESS

from graph.context import ContextStore, finish_query
from graph.cypher import query
from graph.suppression import Retention, SessionState, SessionTurn
from retrieval.context import ContextBuilder
from tests.fakes.context import SeparateReads
from tests.fakes.pipelines import sleep_history
from tests.unit.test_context_unit import IMPLICIT, NOW, build, remembered, topic_ids

KEEP = Retention(5, timedelta(minutes=15), timedelta(hours=24), 256)
TURN = SessionTurn("s1", 0.7, "fp", KEEP)


class BrokenSuppression:
    """A suppression store whose writes fail (Neo4j timed out on the session's node)."""

    def load(self, namespace: str, session_id: str, now: datetime) -> SessionState:
        return SessionState()

    def record(self, *args: Any) -> int:
        raise TimeoutError("suppression store timed out")

    def forget(self, namespace: str, record_ids: Sequence[str], *, whole: bool = False) -> int:
        return 0


def test_a_failing_suppression_turn_keeps_the_context_and_the_use_mark(
    caplog: pytest.LogCaptureFixture,
) -> None:
    m = remembered()
    stores = m.stores
    m.context = ContextBuilder(
        stores.topics, stores.messages, m.search,
        SeparateReads(stores.topics, stores.messages, stores.events, sleep_history(stores),
                      BrokenSuppression()),
    )  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="retrieval.context"):
        result = build(m, IMPLICIT, session_id="s1")
    shown = topic_ids(result)
    assert shown and "suppression state not recorded" in caplog.text
    stats = {t.topic_id: t.stats for t in m.topics.get(m.namespace, shown)}
    assert all(s.usage_count == 1 and s.last_used_at == NOW for s in stats.values())


class StubDriver:
    """Records the queries a ContextStore sends, each its own auto-commit transaction
    (``session().run``, graph.db.write_query); the two writes' one query fails when
    ``broken``."""

    def __init__(self, broken: bool = False, turn: int = 2) -> None:
        self.broken = broken
        self.turn = turn  # the session's turn after the write (1: a new session)
        self.alone: list[str] = []  # queries run, each its own transaction
        self.params: list[dict[str, Any]] = []
        self.modes: list[str] = []
        self.execute_query_bookmark_manager = object()

    @contextmanager
    def session(self, **kwargs: Any) -> Iterator[StubDriver]:
        self.modes.append(kwargs["default_access_mode"])
        yield self

    def run(self, text: str, params: dict[str, Any]) -> Any:
        self.alone.append(text)
        self.params.append(dict(params))
        if self.broken and text == FINISH:
            raise TimeoutError("the transaction timed out")
        return iter([{"marked": len(params.get("topic_ids", [])), "turn": self.turn, "swept": 0}])


MARK, TURN_Q, FINISH, SWEEP = (
    query("mark_topics_used"), query("record_suppression_turn"), finish_query(),
    query("sweep_suppression_sessions"),
)  # fmt: skip


def test_with_a_session_both_writes_are_one_query() -> None:
    # one query, so one transaction: the use mark and the turn together or not at all
    driver = StubDriver()
    ContextStore(driver).finish("ns", ["t1", "t2"], NOW, TURN)  # type: ignore[arg-type]
    assert driver.alone == [FINISH] and driver.modes == [WRITE_ACCESS]
    assert MARK in FINISH and TURN_Q in FINISH
    sent = driver.params[0]
    assert sent["topic_ids"] == ["t1", "t2"] and sent["record_ids"] == ["t1", "t2"]
    assert sent["session_id"] == "s1" and sent["namespace"] == "ns"


def test_a_new_sessions_first_turn_then_sweeps_idle_sessions_in_a_write_of_its_own() -> None:
    # the sweep locks other sessions' nodes: in the context's transaction it could deadlock
    driver = StubDriver(turn=1)
    ContextStore(driver).finish("ns", ["t1"], NOW, TURN)  # type: ignore[arg-type]
    assert driver.alone == [FINISH, SWEEP] and driver.modes == [WRITE_ACCESS, WRITE_ACCESS]
    assert driver.params[1]["namespace"] == "ns" and SWEEP not in FINISH


def test_without_a_session_or_topics_one_write_is_its_own_transaction() -> None:
    driver = StubDriver()
    store = ContextStore(driver)  # type: ignore[arg-type]
    store.finish("ns", ["t1"], NOW, None)
    store.finish("ns", [], NOW, TURN)  # the turn still counts: nothing was shown
    store.finish("ns", [], NOW, None)
    assert driver.alone == [MARK, TURN_Q]


def test_when_the_transaction_fails_the_use_mark_is_written_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = StubDriver(broken=True)
    with caplog.at_level(logging.WARNING, logger="graph.context"):
        ContextStore(driver).finish("ns", ["t1"], NOW, TURN)  # type: ignore[arg-type]
    assert driver.alone == [FINISH, MARK] and "suppression state not recorded" in caplog.text
