"""Background sleep (issue #14 item 3): an append only records messages and queues the sleep;
a sleep worker claims it under a lease, runs it, and records every attempt as a :SleepRun.
Real Neo4j, the hashing embedder, a small policy so a few messages fill the buffer."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from retrieval.context import ContextRequest
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from sleepwake.worker import RetryPolicy
from tests.fakes import HashEmbedder

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# threshold 0.5 x 500 = 250 tokens; the last two turns stay verbatim; a short lease
POLICY = SleepPolicy(
    context_budget_tokens=500, buffer_share=0.5, tail_turns=2, lease_ttl=timedelta(seconds=2)
)
TURNS = [
    "The Lisbon Offsite is booked for the ninth of May at the riverside hotel near Belem.",
    "Marta owns the Lisbon Offsite budget of 12000 euros and wants receipts by Friday.",
    "We chose the Alfama walking tour over the boat trip because of the weather risk.",
    "Remind me to send the Lisbon Offsite agenda to the whole platform team next week.",
    "The keynote speaker for the Lisbon Offsite is Joana Silva from the data team.",
    "Flights land at eleven, so the first session starts after lunch, around two.",
]


class Boom(RuntimeError):
    pass


def build(settings: Settings, driver: Driver) -> Container:
    """Background mode; the hashing embedder (this is about orchestration, and it is fast)."""
    background = settings.model_copy(update={"sleep_mode": "background"})
    return Container(
        background, clock=FixedClock(DAY1), driver=driver, embedder=HashEmbedder(), policy=POLICY
    )


def say(container: Container, namespace: str, start: int = 0) -> list[str]:
    items = [
        IncomingMessage(role="user", content=(text + " ") * 3, at=DAY1 + timedelta(minutes=i))
        for i, text in enumerate(TURNS[start:], start=start)
    ]
    result = container.services.conversation.append(namespace, items)
    assert result.sleeps == [] and result.sleep_due  # queued, not run inside the append
    return [m.message_id for m in result.messages]


def test_an_append_queues_the_sleep_and_a_worker_runs_it_once(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    container = build(settings, driver)
    say(container, namespace)
    assert len(container.messages.buffer(namespace)) == len(TURNS)  # nothing compacted yet
    # read-your-writes: the message appended a moment ago is in the next context, pre-sleep
    found = container.context.build(
        ContextRequest(namespace=namespace, message="What did I tell you about the keynote speaker for the Lisbon Offsite?",
                       now=DAY1 + timedelta(minutes=10), budget=800)
    )  # fmt: skip
    assert "Joana Silva" in found.context_text

    worker = container.sleep_worker("w1")
    run = worker.run_once()
    assert run is not None and run.outcome == "done", run
    assert run.messages_compacted == len(TURNS) - POLICY.tail_turns and run.topics_created > 0
    assert run.step_ms and run.extraction["mode"] == "deterministic"
    assert worker.run_once() is None  # the mark was cleared: nothing left to do
    assert len(container.messages.buffer(namespace)) == POLICY.tail_turns
    [listed] = container.services.sleepwake.runs(namespace, 10)
    assert listed.run_id == run.run_id and listed.outcome == "done"
    assert listed.finished_at is not None and listed.finished_at >= listed.started_at


def test_a_failing_sleep_is_retried_with_backoff_and_every_attempt_is_a_run(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    container = build(settings, driver)
    failures = iter([True])

    def flaky(step: str) -> None:
        if step == "match" and next(failures, False):
            raise Boom("the graph went away mid-sleep")

    container.sleeper.faults = flaky
    say(container, namespace)
    worker = container.sleep_worker("w1")
    worker.retry = RetryPolicy(base=timedelta(seconds=0.2))
    first = worker.run_once()
    assert first is not None and first.outcome == "retrying" and "Boom" in (first.error or "")
    assert first.retry_at is not None and first.attempt == 1
    assert worker.run_once() is None  # backing off: not claimable before retry_at
    time.sleep(0.35)  # the backoff is 0.1-0.3 s with jitter
    second = worker.run_once()
    assert second is not None and second.outcome == "done" and second.attempt == 2
    runs = container.services.sleepwake.runs(namespace, 10)
    assert [r.outcome for r in runs] == ["done", "retrying"]
    page = container.services.sleepwake.runs(namespace, 1, before=runs[0].run_id)
    assert [r.run_id for r in page] == [runs[1].run_id]


def test_attempts_are_bounded_then_a_failure_is_recorded_and_retried_later(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    container = build(settings, driver)

    def broken(step: str) -> None:
        if step == "embed":
            raise Boom("always")

    container.sleeper.faults = broken
    say(container, namespace)
    worker = container.sleep_worker("w1")
    worker.retry = RetryPolicy(max_attempts=2, base=timedelta(0), failure_cooldown=timedelta(0))
    outcomes = [r.outcome if (r := worker.run_once()) else None for _ in range(3)]
    assert outcomes == ["retrying", "failed", "retrying"]  # a new series after the cooldown
    container.sleeper.faults = None
    done = worker.run_once()
    assert done is not None and done.outcome == "done"
    assert len(container.messages.buffer(namespace)) == POLICY.tail_turns


def test_queued_explicit_sleep_returns_its_run_and_the_worker_keeps_that_id(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    container = build(settings, driver)
    container.services.conversation.append(
        namespace,
        [IncomingMessage(role="user", content=t, at=DAY1 + timedelta(minutes=i))
         for i, t in enumerate(TURNS[:4])],
        auto_sleep=False,
    )  # fmt: skip
    queued = container.services.sleepwake.queue_sleep(namespace, DAY1 + timedelta(hours=1))
    assert queued.outcome == "queued"
    again = container.services.sleepwake.queue_sleep(namespace, DAY1 + timedelta(hours=1))
    assert again.run_id == queued.run_id  # already queued: the same sleep
    run = container.sleep_worker().run_once()
    assert run is not None and run.run_id == queued.run_id and run.outcome == "done"
    assert container.services.sleepwake.run(namespace, queued.run_id).outcome == "done"


def test_a_policy_sleep_with_only_the_tail_left_writes_nothing(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    container = build(settings, driver)
    say(container, namespace)
    container.services.sleepwake.sleep(namespace, DAY1 + timedelta(hours=1))  # explicit first
    packets = len(container.sleep_store.wake_packets(namespace, limit=10))
    run = container.sleep_worker().run_once()  # the queued policy sleep finds only the tail
    assert run is not None and run.outcome == "skipped" and run.messages_compacted == 0
    assert len(container.sleep_store.wake_packets(namespace, limit=10)) == packets
    outcomes = [r.outcome for r in container.services.sleepwake.runs(namespace, 10)]
    assert outcomes == ["skipped", "done"]


@pytest.mark.parametrize("lost_at", ["wake_packet"])
def test_a_sleep_whose_lease_was_taken_over_commits_nothing(
    lost_at: str, settings: Settings, driver: Driver, namespace: str
) -> None:
    container = build(settings, driver)

    def stolen(step: str) -> None:
        if step == lost_at:  # a stalled worker: its lease expired and another took it
            driver.execute_query(
                "MATCH (l:SleepLease {namespace: $ns}) SET l.holder = 'someone-else'", ns=namespace
            )

    container.sleeper.faults = stolen
    say(container, namespace)
    run = container.sleep_worker().run_once()
    assert run is not None and run.outcome == "abandoned" and "taken over" in (run.error or "")
    assert len(container.messages.buffer(namespace)) == len(TURNS)  # nothing compacted
    assert container.sleep_store.wake_packets(namespace, limit=1) == []


def test_long_turns_then_short_ones_sleep_at_most_once_per_four_messages(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    """Issue #14's fault case on the real store, production policy, background mode: twelve
    ~2,000-character turns (each near the sleep threshold alone) then twelve short ones, one
    append each, the worker draining the queue after every append. At most 0.25 sleeps per
    message; every sleep that ran compacted something and wrote one wake packet."""
    container = Container(
        settings.model_copy(update={"sleep_mode": "background"}), clock=FixedClock(DAY1),
        driver=driver, embedder=HashEmbedder(), policy=SleepPolicy(),
    )  # fmt: skip
    long_turn = "We moved the ingest service to the new cluster and kept the old one. " * 30
    turns = [(long_turn[:2000], i) for i in range(12)]
    turns += [(f"Noted, step {i}.", 12 + i) for i in range(12)]
    worker = container.sleep_worker()
    for content, minute in turns:
        item = IncomingMessage(role="user", content=content, at=DAY1 + timedelta(minutes=minute))
        container.services.conversation.append(namespace, [item])
        while worker.run_once() is not None:
            pass
    runs = container.services.sleepwake.runs(namespace, 100)
    done = [r for r in runs if r.outcome == "done"]
    assert done and len(runs) / len(turns) <= 0.25, [
        (r.outcome, r.messages_compacted) for r in runs
    ]
    assert all(r.messages_compacted > 0 for r in done)
    assert len(container.sleep_store.wake_packets(namespace, limit=100)) == len(done)
