"""In-memory ``SleepQueueProtocol``: the due marks, claims and run records of
``graph.sleep_queue.SleepQueueStore``, over the ``FakeGraph`` whose leases the fake sleep store
takes and renews (a claim is the same lease a sleep's heartbeat renews and its commit checks)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from graph.clock import ensure_utc
from graph.sleep_queue import Claim, SleepRun
from tests.fakes.graph import FakeGraph, Lease


@dataclass
class _Due:
    since: datetime | None = None
    now: datetime | None = None
    reason: str | None = None
    version: int = 0
    run_id: str | None = None
    attempts: int = 0
    retry_at: datetime | None = None


class FakeSleepQueue:
    """Due marks per namespace, leases in the shared graph, runs by id."""

    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph if graph is not None else FakeGraph()
        self.due: dict[str, _Due] = {}
        self.runs: dict[str, SleepRun] = {}

    def mark_due(
        self, namespace: str, now: datetime, reason: str, wall: datetime, run_id: str
    ) -> str:
        """Queue a sleep dated ``now`` (the latest wins); the id its next attempt gets."""
        with self.graph.lock:
            d = self.due.setdefault(namespace, _Due())
            d.version += 1
            d.reason = reason
            d.now = max(d.now, ensure_utc(now)) if d.now else ensure_utc(now)
            d.since = d.since or ensure_utc(wall)
            d.run_id = d.run_id or run_id
            return d.run_id

    def claim(
        self,
        holder: str,
        wall: datetime,
        expires_at: datetime,
        run_id: str,
        namespace: str | None = None,
    ) -> Claim | None:
        """The longest-waiting due namespace with a free (or expired) lease, now held."""
        wall = ensure_utc(wall)
        with self.graph.lock:
            ready = [
                (d.since, ns)
                for ns, d in self.due.items()
                if d.since is not None and namespace in (None, ns) and self._free(ns, wall)
                and (d.retry_at is None or d.retry_at <= wall)
            ]  # fmt: skip
            if not ready:
                return None
            _, ns = min(ready)
            d = self.due[ns]
            d.attempts += 1
            claimed, d.run_id = d.run_id or run_id, None
            self.graph.leases[ns] = Lease(holder, wall, ensure_utc(expires_at))
            assert d.now is not None
            return Claim(namespace=ns, holder=holder, slept_at=d.now, reason=d.reason or "budget",
                         due_version=d.version, attempt=d.attempts, run_id=claimed)  # fmt: skip

    def _free(self, namespace: str, wall: datetime) -> bool:
        lease = self.graph.leases.get(namespace)
        return (
            lease is None
            or lease.holder is None
            or (lease.expires_at is not None and lease.expires_at < wall)
        )

    def finish(
        self, claim: Claim, retry_at: datetime | None = None, reset_attempts: bool = False
    ) -> bool:
        """Give the lease back: done clears the mark unless it moved on; failed keeps it."""
        with self.graph.lock:
            lease = self.graph.leases.get(claim.namespace)
            if lease is None or lease.holder != claim.holder:
                return False
            lease.holder, lease.expires_at = None, None
            d = self.due[claim.namespace]
            d.retry_at = ensure_utc(retry_at) if retry_at else None
            if retry_at is None or reset_attempts:
                d.attempts = 0
            if retry_at is None and d.version == claim.due_version:
                d.since = d.now = None
            return True

    def start_run(self, run: SleepRun) -> None:
        """Record a run; a started one marks other holders' running runs abandoned."""
        with self.graph.lock:
            self.runs[run.run_id] = run.model_copy(deep=True)
            if run.outcome != "running":
                return
            for other in self.runs.values():
                if (other.namespace, other.outcome) == (run.namespace, "running") and (
                    other.holder != run.holder
                ):
                    other.outcome, other.finished_at = "abandoned", run.started_at
                    other.error = "the worker stopped before the sleep finished; the lease expired and was taken over"  # fmt: skip

    def finish_run(self, run: SleepRun) -> None:
        """Record how a run ended."""
        with self.graph.lock:
            self.runs[run.run_id] = run.model_copy(deep=True)

    def list_runs(
        self, namespace: str, limit: int = 50, before: SleepRun | None = None
    ) -> list[SleepRun]:
        """Runs newest first, after the page that ended with ``before``."""
        mine = [r for r in self.runs.values() if r.namespace == namespace]
        mine.sort(key=lambda r: (r.started_at, r.run_id), reverse=True)
        if before is not None:
            mine = [
                r for r in mine if (r.started_at, r.run_id) < (before.started_at, before.run_id)
            ]
        return [r.model_copy(deep=True) for r in mine[:limit]]

    def get_run(self, namespace: str, run_id: str) -> SleepRun | None:
        """One run by id, in this namespace only."""
        run = self.runs.get(run_id)
        return run.model_copy(deep=True) if run is not None and run.namespace == namespace else None
