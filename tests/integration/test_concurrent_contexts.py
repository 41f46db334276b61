"""Concurrent contexts of ONE namespace against the real Neo4j: none fails, none deadlocks, and
every request's writes land (each packed topic's use counted once per request that packed it,
each session's turns all counted, its injections remembered).

A context marks the topics it packed as used and counts its session's turn, in one write. Two
requests packing the same topics in different orders locked them in different orders and Neo4j
killed one as a deadlock; the write now takes its locks in one order (``mark_topics_used``,
``record_suppression_turn``). A deadlock that was retried away is logged with its code
(``graph.db``), so "no DeadlockDetected in the log" says none happened, not only that none
surfaced.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

from api.settings import Settings
from graph.context import ContextStore
from graph.models import Topic, TopicTime
from graph.suppression import Retention, SessionTurn, SuppressionStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from tests.integration.test_context import DAY1, DAY1_TURNS, IMPLICIT, PARTY_QUESTION, build

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
KEEP = Retention(cool_turns=5, cool_time=timedelta(minutes=15), ttl=timedelta(hours=24),
                 max_entries=256)  # fmt: skip
THREADS = 12
ROUNDS = 4
PLANS = [
    ("Garden planning", "The tomato seedlings go into the raised garden bed in April."),
    ("Garden watering", "The garden drip irrigation runs at six every morning."),
    ("Garden pests", "Aphids on the garden roses; neem oil spray every week."),
    ("Garden compost", "The garden compost bin needs turning every two weeks."),
    ("Garden tools", "The garden shears went to Ben's for sharpening."),
    ("Garden budget", "The garden budget for spring is 300 euros."),
    ("Garden herbs", "Basil and thyme grow by the kitchen garden window."),
    ("Garden fence", "The garden fence needs a new gate latch before May."),
]
QUESTIONS = [
    IMPLICIT,
    PARTY_QUESTION,
    "I should call Rosa's Kitchen about the deposit for the party",
    "Mel's surprise party at the lake house needs a cake too",
]
LATER = DAY1 + timedelta(days=2)


def run_together(work: Callable[[int], None], n: int) -> list[BaseException]:
    """``work(i)`` for i in range(n), in n threads released together; the errors raised."""
    barrier, errors = threading.Barrier(n), []

    def one(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as exc:  # every failure is the test's to report
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


@pytest.fixture
def topic_ids(driver: Driver, embedder: MiniLMEmbedder, namespace: str) -> Iterator[list[str]]:
    at = NOW - timedelta(days=3)
    topics = [
        Topic(namespace=namespace, name=name, one_liner=line,
              time=TopicTime(first_seen_at=at, last_seen_at=at))
        for name, line in PLANS
    ]  # fmt: skip
    vectors = embedder.embed([t.semantic_text() for t in topics])
    yield TopicStore(driver).create(topics, vectors, at)


def usage(driver: Driver, namespace: str) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        "MATCH (t:Topic {namespace: $ns}) RETURN t.topic_id AS id, t.usage_count AS n",
        ns=namespace,
    )
    return {r["id"]: int(r["n"] or 0) for r in records}


def test_concurrent_writes_of_one_namespace_in_clashing_orders_never_deadlock(
    driver: Driver, namespace: str, topic_ids: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Every thread marks all the topics, each in its own order (reversed, shuffled), with a
    turn of its own session: the orders that deadlocked."""
    contexts = ContextStore(driver)
    orders = [
        list(reversed(topic_ids)) if i % 2 else random.Random(i).sample(topic_ids, len(topic_ids))
        for i in range(THREADS)
    ]

    def finish(i: int) -> None:
        for r in range(ROUNDS):
            turn = SessionTurn(f"s{i}", 0.5 + r / 10, "fp", KEEP)
            contexts.finish(namespace, orders[i], NOW + timedelta(seconds=r), turn)

    assert run_together(finish, THREADS) == []
    assert "DeadlockDetected" not in caplog.text  # none retried away either
    assert usage(driver, namespace) == {tid: THREADS * ROUNDS for tid in topic_ids}
    sessions = SuppressionStore(driver)
    for i in range(THREADS):
        state = sessions.load(namespace, f"s{i}", NOW + timedelta(minutes=1))
        assert state.turn == ROUNDS and set(state.injections) == set(topic_ids)
        assert {e.turn for e in state.injections.values()} == {ROUNDS}


def test_concurrent_contexts_of_one_namespace_all_answer_and_land(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Whole contexts over a slept conversation, built side by side by threads as the API's
    workers build them: every one answers, each packed topic's use is counted once per context
    that packed it, and each session counts all its turns and suppresses what it was just
    shown (every thread repeats its question: the same task)."""
    stack = build(settings, driver, embedder, namespace)
    stack.say(DAY1, DAY1_TURNS)
    stack.sleep(DAY1 + timedelta(hours=10))
    packed: list[list[str]] = [[] for _ in range(THREADS)]
    classes: list[set[str]] = [set() for _ in range(THREADS)]

    def ask(i: int) -> None:
        for r in range(ROUNDS):
            got = stack.context(QUESTIONS[i % len(QUESTIONS)], LATER + timedelta(seconds=r),
                                session_id=f"s{i}", budget=2000)  # fmt: skip
            packed[i] += [x["record_id"] for x in got.items if x["kind"] == "topic"]
            classes[i].add(got.request_class)

    assert run_together(ask, THREADS) == []
    assert "DeadlockDetected" not in caplog.text
    counted = Counter(tid for ids in packed for tid in ids)
    assert sum(1 for ids in packed if ids) == THREADS  # every question found the party
    stored = usage(driver, namespace)
    assert stored == {tid: counted.get(tid, 0) for tid in stored}
    sessions = SuppressionStore(driver)
    implicit = [i for i in range(THREADS) if classes[i] == {"B"}]
    assert len(implicit) >= THREADS // 2  # the statements are implicit (suppression applies)
    for i in range(THREADS):
        state = sessions.load(namespace, f"s{i}", LATER + timedelta(minutes=1))
        assert state.turn == ROUNDS and set(state.injections) == set(packed[i])
    for i in implicit:  # what the session was shown is not shown again within its cool-down
        assert len(packed[i]) == len(set(packed[i])), i


def test_a_new_sessions_first_turn_sweeps_idle_sessions_and_later_turns_do_not(
    driver: Driver, namespace: str
) -> None:
    sessions, contexts = SuppressionStore(driver), ContextStore(driver)
    for i in range(3):
        sessions.record(namespace, f"old{i}", ["t"], NOW - timedelta(days=3), 0.5, "fp", KEEP)
    contexts.finish(namespace, [], NOW, SessionTurn("live", 0.5, "fp", KEEP))  # turn 1
    left: Any = driver.execute_query(
        "MATCH (s:SuppressionSession {namespace: $ns}) RETURN s.session_id AS id ORDER BY id",
        ns=namespace,
    )
    assert [r["id"] for r in left.records] == ["live"]
    sessions.record(namespace, "old3", ["t"], NOW - timedelta(days=3), 0.5, "fp", KEEP)
    contexts.finish(namespace, [], NOW, SessionTurn("live", 0.5, "fp", KEEP))  # turn 2
    assert sessions.load(namespace, "old3", NOW - timedelta(days=3)).turn == 1  # still there
