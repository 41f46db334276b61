"""The sleep worker's orchestration (sleepwake/worker.py) over the in-memory fakes and a fixed
clock: claims, the backoff schedule, bounded attempts, a mark that arrives mid-sleep, a lease
taken over. The same paths run against Neo4j in tests/integration/test_sleep_worker.py."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import timedelta

import pytest

from graph.passages import MessagePassages, PendingMessage
from graph.sleep_queue import SleepRun
from retrieval.passage_index import PassageIndexer
from sleepwake.conversation import Conversation, IncomingMessage
from sleepwake.policy import SleepPolicy
from sleepwake.worker import RetryPolicy, SleepScheduler, SleepWorker
from tests.fakes.embedder import HashEmbedder
from tests.fakes.passages import FakePassages
from tests.fakes.pipelines import T0, Memory, wire

POLICY = SleepPolicy(context_budget_tokens=500, buffer_share=0.5, tail_turns=2)


def setup(retry: RetryPolicy | None = None) -> tuple[Memory, SleepWorker]:
    m = wire(POLICY)
    m.conversation = Conversation(m.stores.messages, m.sleeper, m.clock, POLICY,
                                  queue=SleepScheduler(m.stores.queue, m.clock))  # fmt: skip
    worker = SleepWorker(m.stores.queue, m.sleeper, m.clock, retry, "w", random.Random(7))
    items = [IncomingMessage(role="user", content="Falcon ships on Friday. " * 12,
                             at=T0 + timedelta(minutes=i)) for i in range(5)]  # fmt: skip
    assert m.conversation.append(m.namespace, items).sleep_due
    return m, worker


def test_the_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    retry = RetryPolicy(base=timedelta(seconds=2), cap=timedelta(seconds=30))
    rng = random.Random(1)
    for attempt, nominal in [(1, 2), (2, 4), (3, 8), (4, 16), (5, 30), (9, 30)]:
        wait = retry.delay(attempt, rng).total_seconds()
        assert 0.5 * nominal <= wait < 1.5 * nominal


def test_a_queued_sleep_runs_once_and_the_mark_is_cleared() -> None:
    m, worker = setup()
    run = worker.run_once()
    assert run is not None and run.outcome == "done" and run.messages_compacted == 3
    assert worker.run_once() is None
    assert [r.outcome for r in m.stores.queue.list_runs(m.namespace)] == ["done"]


def test_a_mark_during_the_sleep_keeps_the_namespace_due() -> None:
    m, worker = setup()

    def more(step: str) -> None:
        if step == "match":
            m.stores.queue.mark_due(m.namespace, T0 + timedelta(hours=1), "budget", T0, "later")

    m.sleeper.faults = more
    assert worker.run_once() is not None
    m.sleeper.faults = None
    again = worker.run_once()
    assert again is not None and again.run_id == "later" and again.outcome == "skipped"


def test_failures_back_off_then_give_up_then_start_again_after_the_cooldown() -> None:
    retry = RetryPolicy(max_attempts=3, base=timedelta(seconds=10),
                        failure_cooldown=timedelta(minutes=10))  # fmt: skip
    m, worker = setup(retry)

    def broken(step: str) -> None:
        if step == "embed":
            raise RuntimeError("model away")

    m.sleeper.faults = broken
    outcomes = []
    for _ in range(4):
        run = worker.run_once()
        assert run is not None and run.retry_at is not None
        outcomes.append((run.outcome, run.attempt))
        assert worker.run_once() is None  # not before retry_at
        m.clock.set(run.retry_at)
    assert outcomes == [("retrying", 1), ("retrying", 2), ("failed", 3), ("retrying", 1)]
    assert len(m.stores.messages.buffer(m.namespace)) == 5  # nothing compacted, nothing lost


@pytest.mark.parametrize("step", ["extract", "wake_packet", "commit"])
def test_a_sleep_whose_lease_was_taken_over_writes_nothing(step: str) -> None:
    m, worker = setup()

    def stolen(at: str) -> None:
        if at == step:
            m.stores.graph.leases[m.namespace].holder = "someone-else"

    m.sleeper.faults = stolen
    run = worker.run_once()
    assert run is not None and run.outcome == "abandoned"
    assert len(m.stores.messages.buffer(m.namespace)) == 5
    assert m.stores.sleep.wake_packets(m.namespace) == []


def test_a_lease_lost_after_the_commit_still_counts_the_sleep_as_done() -> None:
    """The heartbeat can find the lease taken over between the commit and the end of the sleep
    (a stalled worker): what was committed is recorded, not dropped as abandoned."""
    m, worker = setup()

    def stolen(at: str) -> None:
        if at == "after_commit":
            m.stores.graph.leases[m.namespace].holder = "someone-else"
            m.sleeper._local.beat.lost = True

    m.sleeper.faults = stolen
    run = worker.run_once()
    compacted = 5 - len(m.stores.messages.buffer(m.namespace))
    assert run is not None and run.outcome == "done"
    assert compacted > 0 and run.messages_compacted == compacted


@pytest.mark.parametrize("fails", [False, True], ids=["done", "failed"])
def test_the_run_is_recorded_before_the_claim_is_given_back(fails: bool) -> None:
    # whoever sees the namespace neither due nor held (another worker, a caller listing the
    # runs, the two-machine test) must find the run recorded: released first, a committed
    # sleep read "running" for a moment under load (CI: done runs counted 1 of 5 compacted)
    m, worker = setup()
    queue, order = m.stores.queue, []
    finish, finish_run = queue.finish, queue.finish_run

    def released(*args: object, **kw: object) -> bool:
        order.append(("finish", [r.outcome for r in queue.list_runs(m.namespace)]))
        return finish(*args, **kw)  # type: ignore[arg-type]

    def recorded(run: object) -> None:
        order.append(("finish_run", []))
        finish_run(run)  # type: ignore[arg-type]

    def boom(step: str) -> None:
        if step == "extract":
            raise RuntimeError("model down")

    queue.finish, queue.finish_run = released, recorded  # type: ignore[method-assign]
    m.sleeper.faults = boom if fails else None
    run = worker.run_once()
    assert run is not None and run.outcome == ("retrying" if fails else "done")
    assert order == [("finish_run", []), ("finish", ["retrying" if fails else "done"])]


def test_without_a_passage_thread_passages_are_written_only_when_no_sleep_is_due() -> None:
    m, _ = setup()
    store = FakePassages([PendingMessage(m.namespace, f"p{i}", "user", "Falcon ships.")
                          for i in range(3)])  # fmt: skip
    worker = SleepWorker(m.stores.queue, m.sleeper, m.clock, None, "w", random.Random(7),
                         passages=PassageIndexer(store, HashEmbedder(), batch=2),
                         passage_thread=False)  # fmt: skip
    assert worker.run_once() is not None and store.written == []  # a sleep was due: it ran
    stop = threading.Event()
    calls = []

    def idle(*_: object) -> bool:  # the first idle poll ends the loop
        calls.append(1)
        stop.set()
        return True

    stop.wait = idle  # type: ignore[method-assign]
    worker.run_forever(stop, poll_seconds=0)
    assert store.left == [] and len(store.written) == 3  # two batches, then idle once
    assert calls == [1]


def test_new_messages_go_before_the_backfill_and_each_namespace_is_walked() -> None:
    m, _ = setup()
    new = [PendingMessage(m.namespace, "new", "user", "Falcon ships today.")]
    old = [PendingMessage(ns, f"{ns}-{i}", "user", "An old note.")
           for ns in ("old-a", "old-b") for i in range(3)]  # fmt: skip
    store = FakePassages(new, old)
    worker = SleepWorker(m.stores.queue, m.sleeper, m.clock, None, "w", random.Random(7),
                         passages=PassageIndexer(store, HashEmbedder(), batch=2))  # fmt: skip
    assert worker.index_passages() == 1
    assert [w.message_id for w in store.written] == ["new"]  # the new message first
    assert worker.index_passages() == 2  # nothing new: one backfill step marks two old ones
    assert len(store.written) == 1 and len(store.left) == 2
    while worker.index_passages():
        pass
    written = [w.message_id for w in store.written]
    assert sorted(written) == sorted(["new", *(p.message_id for p in old)])
    assert store.old == [] and store.left == []


# -- the passage thread: sleeps and passages at once ---------------------------------------------
WAIT_S = 30  # a bound on a wait that the two threads end at once (never reached when they overlap)


class GatedEmbedder(HashEmbedder):
    """The passage writer's embedder: its first call waits until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        assert self.go.wait(WAIT_S), "the sleep never started"
        return super().embed(texts)


def overlapping(passage_thread: bool = True) -> tuple[Memory, SleepWorker, FakePassages, list[str]]:
    """A due sleep and three pending messages; the passages can only be embedded once the
    sleep has read its slice, and the sleep (at the end of its extraction) waits until they
    were written: the two finish only when they run at once. ``order``: what happened."""
    m, _ = setup()
    store = FakePassages([PendingMessage(m.namespace, f"p{i}", "user", "Falcon ships.")
                          for i in range(3)])  # fmt: skip
    gated = GatedEmbedder()
    worker = SleepWorker(m.stores.queue, m.sleeper, m.clock, None, "w", random.Random(7),
                         passages=PassageIndexer(store, gated, batch=2),
                         passage_thread=passage_thread)  # fmt: skip
    order: list[str] = []
    written = threading.Event()
    write = store.write

    def writing(messages: Sequence[MessagePassages]) -> int:
        order.append("passages")
        done = write(messages)
        if not store.left:
            written.set()
        return done

    def steps(step: str) -> None:
        if step == "slice":
            order.append("slice")
            gated.go.set()
        if step == "extract" and passage_thread:
            assert written.wait(WAIT_S), "the passages were not written while the sleep ran"
        if step == "commit":
            order.append("commit")

    store.write = writing  # type: ignore[method-assign]
    m.sleeper.faults = steps
    return m, worker, store, order


def test_drain_writes_the_passages_while_the_sleep_runs() -> None:
    _, worker, store, order = overlapping()
    runs = worker.drain()
    assert [r.outcome for r in runs] == ["done"]
    assert store.left == [] and len(store.written) == 3
    assert order == ["slice", "passages", "passages", "commit"]  # both batches inside the sleep
    assert worker.drain() == []  # nothing left of either


def test_without_a_passage_thread_drain_sleeps_first_then_writes_the_passages() -> None:
    _, worker, store, order = overlapping(passage_thread=False)
    worker.passages.embedder.go.set()  # type: ignore[union-attr]
    runs = worker.drain()
    assert [r.outcome for r in runs] == ["done"]
    assert order == ["slice", "commit", "passages", "passages"] and store.left == []


def test_run_forever_writes_the_passages_on_a_thread_of_their_own() -> None:
    m, worker, store, order = overlapping()
    stop = threading.Event()
    recorded = threading.Event()
    finish_run = m.stores.queue.finish_run

    def finished(run: SleepRun) -> None:
        finish_run(run)
        recorded.set()

    m.stores.queue.finish_run = finished  # type: ignore[method-assign]
    loop = threading.Thread(target=worker.run_forever, args=(stop, 0.01))
    loop.start()
    try:
        assert recorded.wait(WAIT_S)
    finally:
        stop.set()
        loop.join(WAIT_S)
    assert not loop.is_alive()  # run_forever returns only once its passage thread ended
    assert [r.outcome for r in m.stores.queue.list_runs(m.namespace)] == ["done"]
    assert order[:2] == ["slice", "passages"] and order[-1] == "commit" and store.left == []
    assert not any(t.name == "w-passages" for t in threading.enumerate())


def test_an_error_of_the_passage_writer_reaches_drain_after_the_sleep() -> None:
    m, worker, store, _ = overlapping()

    def broken(messages: Sequence[MessagePassages]) -> int:
        raise RuntimeError("neo4j away")

    store.write = broken  # type: ignore[method-assign]
    m.sleeper.faults = lambda step: worker.passages.embedder.go.set()  # type: ignore[union-attr]
    with pytest.raises(RuntimeError, match="neo4j away"):
        worker.drain()
    assert [r.outcome for r in m.stores.queue.list_runs(m.namespace)] == ["done"]
    assert len(store.left) == 3  # nothing written: still pending, found again


def test_writing_passages_beside_the_callers_sleeps_then_all_on_leaving() -> None:
    m, worker, store, order = overlapping()
    with worker.writing_passages(poll_seconds=0.01):
        run = worker.run_once()  # its extraction waits for the thread's writes
        late = PendingMessage(m.namespace, "late", "user", "Falcon slips a week.")
        store.left.append(late)  # arrives after the sleep: written before the block ends
    assert run is not None and run.outcome == "done"
    assert order[:2] == ["slice", "passages"] and "commit" in order
    assert store.left == [] and [w.message_id for w in store.written][-1] == "late"
    assert not any(t.name == "w-passages" for t in threading.enumerate())
