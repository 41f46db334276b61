"""Background sleep: the queue the sleep policy writes to, and the worker that drains it.

An append only records messages; when the policy says a sleep is due, ``SleepScheduler``
marks the namespace due in Neo4j. Any number of ``SleepWorker`` s (threads of ``sheriff up``,
``sheriff worker`` processes, on any machine) claim due namespaces one at a time under a short
lease, run the sleep while a heartbeat renews the lease, and record every attempt as a
``:SleepRun``. A failed sleep is retried with exponential backoff and jitter; after
``max_attempts`` the run is recorded as failed and the namespace is tried again after
``failure_cooldown``. A worker killed mid-sleep wrote nothing (the sleep commits in one
transaction, fenced by the lease); its lease expires and another worker takes the namespace
over, recording the dead attempt as abandoned.

A worker with a passage indexer writes new messages' passages on a second thread of its own,
beside the sleeps (``passage_thread``): the model computes outside the GIL, so one worker
process uses two cores. The two never write a message in conflicting ways: a sleep writes a
message's ``compacted_at`` and its topic links, the passage writer its passages and
``passages_pending``, each in one transaction that locks the message, and a passage write
checks the message is unchanged and still pending (``write_message_passages.cypher``). A
worker killed mid-batch wrote none of that batch: its messages stay pending and are found
again by the next worker.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from graph.clock import Clock
from graph.errors import LeaseLost
from graph.protocols import SleepQueueProtocol
from graph.sleep_queue import Claim, SleepRun
from retrieval.passage_index import PassageIndexer
from sleepwake.lease import held_lease
from sleepwake.policy import SleepReason
from sleepwake.sleep import Sleeper, SleepSummary

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How failed sleeps are retried: ``base * 2^(attempt-1)`` seconds (at most ``cap``),
    times a random factor in [0.5, 1.5); ``max_attempts`` tries, then a recorded failure and a
    new series after ``failure_cooldown``."""

    max_attempts: int = 5
    base: timedelta = timedelta(seconds=2)
    cap: timedelta = timedelta(minutes=5)
    failure_cooldown: timedelta = timedelta(minutes=10)

    def delay(self, attempt: int, rng: random.Random) -> timedelta:
        """The wait before attempt ``attempt + 1``."""
        seconds = min(self.cap.total_seconds(), self.base.total_seconds() * 2 ** (attempt - 1))
        return timedelta(seconds=seconds * rng.uniform(0.5, 1.5))


class SleepScheduler:
    """What the conversation's sleep policy calls in background mode: mark the namespace due."""

    def __init__(self, queue: SleepQueueProtocol, clock: Clock) -> None:
        self.queue = queue
        self.clock = clock

    def mark_due(self, namespace: str, now: datetime, reason: str) -> str:
        """Queue a sleep of ``namespace`` dated ``now``; the run id its next attempt gets."""
        return self.queue.mark_due(namespace, now, reason, self.clock.now(), str(uuid.uuid4()))


class SleepWorker:
    """Claims due namespaces and sleeps them, one at a time, recording every attempt."""

    def __init__(
        self,
        queue: SleepQueueProtocol,
        sleeper: Sleeper,
        clock: Clock,
        retry: RetryPolicy | None = None,
        worker_id: str | None = None,
        rng: random.Random | None = None,
        namespace: str | None = None,
        passages: PassageIndexer | None = None,
        passage_thread: bool = True,
    ) -> None:
        self.queue = queue
        # writes new messages' passages (None: not this worker's job): on a thread of its own
        # beside the sleeps (``passage_thread``), or else whenever no sleep is due
        self.passages = passages
        self.passage_thread = passage_thread
        self.sleeper = sleeper
        self.clock = clock
        self.retry = retry or RetryPolicy()
        self.worker_id = worker_id or f"worker-{uuid.uuid4().hex[:8]}"
        self.rng = rng or random.Random()
        self.namespace = namespace  # only this namespace's sleeps (None: every namespace)

    def run_once(self) -> SleepRun | None:
        """Claim one due namespace and sleep it; the run record, or None if nothing was due."""
        holder = f"{self.worker_id}/{uuid.uuid4().hex[:12]}"
        wall = self.clock.now()
        ttl = self.sleeper.policy.lease_ttl
        claim = self.queue.claim(holder, wall, wall + ttl, str(uuid.uuid4()), self.namespace)
        if claim is None:
            return None
        run = SleepRun(
            run_id=claim.run_id, namespace=claim.namespace, reason=claim.reason,
            holder=holder, attempt=claim.attempt, started_at=wall, slept_at=claim.slept_at,
        )  # fmt: skip
        self.queue.start_run(run)
        log.info("sleep of %s: attempt %d (run %s)", claim.namespace, claim.attempt, run.run_id)
        release: dict[str, Any] | None = {}  # how the claim is given back (None: it was lost)
        try:
            summary = self.sleeper.sleep(
                claim.namespace, claim.slept_at, _reason(claim.reason), holder=holder
            )
        except LeaseLost as exc:  # another worker took the namespace over: its sleep counts
            _ended(run, self.clock.now(), "abandoned", str(exc))
            release = None
        except Exception as exc:
            log.warning("sleep of %s failed (attempt %d)", claim.namespace, claim.attempt,
                        exc_info=True)  # fmt: skip
            release = self._failed(claim, run, exc)
        else:
            _summarise(run, summary, self.clock.now())
        # the run's record before the claim is given back: whoever sees the namespace neither
        # due nor held (another worker, GET /v1/sleep/runs) finds every run recorded (released
        # first, a committed sleep still read "running" for a moment under load)
        self.queue.finish_run(run)
        if release is not None:
            self.queue.finish(claim, **release)
        return run

    def _failed(self, claim: Claim, run: SleepRun, exc: Exception) -> dict[str, Any]:
        """Record the failure and when the next try is (backoff, or the cooldown); how the
        claim is given back."""
        now = self.clock.now()
        give_up = claim.attempt >= self.retry.max_attempts
        wait = self.retry.failure_cooldown if give_up else self.retry.delay(claim.attempt, self.rng)
        run.retry_at = now + wait
        _ended(run, now, "failed" if give_up else "retrying", f"{type(exc).__name__}: {exc}")
        return {"retry_at": run.retry_at, "reset_attempts": give_up}

    def index_passages(self) -> int:
        """One batch of new messages' passages written (``retrieval.passage_index``), of this
        worker's namespace or any, or else one step of the backfill of older messages; how
        many messages (0: none pending, no walk left, or no indexer)."""
        if self.passages is None:
            return 0
        written = self.passages.run_once(self.namespace)
        if written:
            return written
        # nothing new is pending: one bounded step of the backfill of older messages (they are
        # written by the next call, so new messages always go first)
        return self.passages.backfill_once(self.namespace)

    def run_forever(
        self, stop: threading.Event, poll_seconds: float = 1.0, niceness: int = 0
    ) -> None:
        """Drain the queue until ``stop`` is set, writing new messages' passages (and the
        backfill of older ones) on a thread of their own beside the sleeps (with an indexer
        and ``passage_thread``; else whenever no sleep is due); each loop polls every
        ``poll_seconds`` when idle. An error reaching Neo4j is logged and retried at the next
        poll (the worker keeps on). Returns once both loops ended (each ends its batch or
        sleep first). ``niceness``: both threads' CPU priority lowered by that much (a worker
        beside API processes: its embeddings yield to their requests; Linux nices threads one
        by one, and the model, loaded lazily, computes in the calling thread)."""
        lower_priority(niceness)
        writer = self._passage_thread(stop, poll_seconds, niceness)
        log.info("sleep worker %s started", self.worker_id)

        def step() -> bool:
            ran = self.run_once()
            return ran is not None or (writer is None and self.index_passages() > 0)

        self._poll(stop, poll_seconds, step, "cannot reach the queue")
        if writer is not None:
            writer.join()
        log.info("sleep worker %s stopped", self.worker_id)

    def _passage_thread(
        self, stop: threading.Event, poll_seconds: float, niceness: int
    ) -> threading.Thread | None:
        """The passage thread, started (None: no indexer, or ``passage_thread`` is off)."""
        if self.passages is None or not self.passage_thread:
            return None
        writer = threading.Thread(
            target=self._write_passages_forever, args=(stop, poll_seconds, niceness),
            name=f"{self.worker_id}-passages", daemon=True,
        )  # fmt: skip
        writer.start()
        return writer

    def _write_passages_forever(
        self, stop: threading.Event, poll_seconds: float, niceness: int
    ) -> None:
        """The passage thread of ``run_forever``: batches of new messages' passages (then
        backfill steps) until ``stop``; an idle or failed round waits ``poll_seconds``."""
        lower_priority(niceness, "the passage writer")
        self._poll(stop, poll_seconds, lambda: self.index_passages() > 0, "passages not written")

    def _poll(
        self, stop: threading.Event, poll_seconds: float, step: Callable[[], bool], failed: str
    ) -> None:
        """Run ``step`` until ``stop``; an idle round (``step`` found no work) or a failed one
        (logged as ``failed``; the loop keeps on) waits ``poll_seconds``."""
        while not stop.is_set():
            try:
                busy = step()
            except Exception:
                log.warning("sleep worker %s: %s", self.worker_id, failed, exc_info=True)
                busy = False
            if not busy:
                stop.wait(poll_seconds)

    @contextmanager
    def writing_passages(self, poll_seconds: float = 0.1) -> Iterator[None]:
        """``run_forever``'s passage thread while the block runs (the caller runs the sleeps,
        ``run_once``), as a worker process writes passages while new messages arrive; on
        leaving, the thread ends its batch and every passage still pending is written before
        the block's end returns. Without an indexer or ``passage_thread``: just the writes on
        leaving."""
        stop = threading.Event()
        writer = self._passage_thread(stop, poll_seconds, 0)
        try:
            yield
        finally:
            stop.set()
            if writer is not None:
                writer.join()
        while self.index_passages():
            pass

    def drain(self) -> list[SleepRun]:
        """Run every due sleep (of this worker's namespace, or any) while the passage thread
        writes the pending passages (``writing_passages``; without ``passage_thread``: after
        the sleeps), until neither finds work; the sleep runs, in order. A passage write that
        keeps failing is raised once the sleeps are done."""
        runs: list[SleepRun] = []
        with self.writing_passages():
            while (run := self.run_once()) is not None:
                runs.append(run)
        return runs


def lower_priority(niceness: int, work: str = "the sleep worker") -> None:
    """Lower the calling thread's CPU priority by ``niceness`` (no-op at 0, or where the
    platform refuses: ``work``, the thread's, then runs at normal priority). Linux gives each
    thread its own priority; a thread cannot raise it again, so only a thread of its own is
    lowered (the sleep worker's, an import's)."""
    if niceness <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except OSError:  # a platform or sandbox that refuses
        log.info("cannot lower the priority of %s; it runs at normal priority", work)


def _reason(reason: str) -> SleepReason:
    return "idle" if reason == "idle" else "explicit" if reason == "explicit" else "budget"


def _ended(run: SleepRun, now: datetime, outcome: str, error: str | None = None) -> None:
    run.finished_at = now
    run.outcome = outcome  # type: ignore[assignment]
    run.error = error[:2000] if error else None


def _summarise(run: SleepRun, summary: SleepSummary, now: datetime) -> None:
    """Fill a run's record from the sleep's summary."""
    _ended(run, now, "skipped" if summary.skipped else "done")
    run.messages_compacted = summary.messages_compacted
    run.topics_created = summary.topics_created
    run.topics_updated = summary.topics_updated
    run.events = summary.events
    run.duration_ms = summary.duration_ms
    run.step_ms = dict(summary.step_ms)
    run.extraction = dict(summary.extraction)


def run_explicit(
    queue: SleepQueueProtocol, sleeper: Sleeper, clock: Clock, namespace: str, now: datetime
) -> SleepSummary:
    """A caller's sleep run here and now, recorded as a run (``AlreadyRunning`` while another
    sleep of the namespace holds the lease: no attempt, no record)."""
    holder = f"explicit/{uuid.uuid4().hex[:12]}"
    ttl = sleeper.policy.lease_ttl
    with held_lease(sleeper.store, namespace, holder, clock, ttl) as wall:
        run = SleepRun(run_id=str(uuid.uuid4()), namespace=namespace, reason="explicit",
                       trigger="explicit", holder=holder, started_at=wall, slept_at=now)  # fmt: skip
        queue.start_run(run)
        try:
            summary = sleeper.sleep(namespace, now, "explicit", holder=holder)
        except Exception as exc:
            _ended(run, clock.now(), "failed", f"{type(exc).__name__}: {exc}")
            queue.finish_run(run)
            raise
        _summarise(run, summary, clock.now())
        queue.finish_run(run)
        return summary
