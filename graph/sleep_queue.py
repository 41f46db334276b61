"""SleepQueueStore: background sleeps coordinated through Neo4j, and the record of every run.

The sleep policy marks a namespace due (``mark_due``); any sleep worker, on any machine, claims
the longest-waiting due namespace whose lease is free or expired (``claim``), runs the sleep
while a heartbeat renews the lease (``SleepStore.renew_lease``), and gives the lease back with
the outcome (``finish``): done clears the mark unless the policy marked the namespace again
meanwhile; failed keeps it, with the time of the next try. Nothing else coordinates workers:
API processes and workers hold no state of their own.

Every attempt is a ``:SleepRun`` node (``start_run`` / ``finish_run`` / ``list_runs``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store

RunOutcome = Literal[
    "queued", "running", "done", "skipped", "failed", "retrying", "abandoned", "busy"
]


class SleepRun(BaseModel):
    """One attempt at a sleep of one namespace."""

    run_id: str
    namespace: str
    reason: str
    trigger: Literal["worker", "explicit"] = "worker"
    holder: str
    attempt: int = Field(default=1, ge=1)
    started_at: datetime
    finished_at: datetime | None = None
    outcome: RunOutcome = "running"
    error: str | None = None
    slept_at: datetime | None = None  # the date the sleep is recorded at (policy time)
    messages_compacted: int = 0
    topics_created: int = 0
    topics_updated: int = 0
    events: int = 0
    duration_ms: float | None = None
    step_ms: dict[str, float] = {}
    extraction: dict[str, Any] = {}
    retry_at: datetime | None = None


class Claim(BaseModel):
    """A due namespace a worker now holds the lease of."""

    namespace: str
    holder: str
    slept_at: datetime
    reason: str
    due_version: int
    attempt: int
    run_id: str


_JSON_FIELDS = ("step_ms", "extraction")


class SleepQueueStore(Store):
    """The due marks, the worker claims and the run records (one node per attempt)."""

    def mark_due(
        self, namespace: str, now: datetime, reason: str, wall: datetime, run_id: str
    ) -> str:
        """Queue a sleep of ``namespace`` dated ``now`` (the latest date asked for wins); the
        id its next attempt will be recorded as (``run_id`` unless one was promised before)."""
        params = {"namespace": namespace, "now": ensure_utc(now), "reason": reason}
        rows = self._run(
            query("mark_sleep_due"), {**params, "wall": ensure_utc(wall), "run_id": run_id}
        )
        return str(rows[0]["run_id"])

    def claim(
        self,
        holder: str,
        wall: datetime,
        expires_at: datetime,
        run_id: str,
        namespace: str | None = None,
    ) -> Claim | None:
        """The longest-waiting due namespace (``namespace`` only, if given) whose lease is
        free, now held by ``holder``; its attempt is recorded as the run promised when it was
        queued, else as ``run_id``."""
        params = {
            "namespace": namespace,
            "holder": holder,
            "wall": ensure_utc(wall),
            "expires_at": ensure_utc(expires_at),
            "run_id": run_id,
        }
        rows = self._run(query("claim_due_sleep"), params)
        if not rows:
            return None
        r = rows[0]
        return Claim(
            namespace=r["namespace"],
            holder=holder,
            slept_at=r["due_now"].to_native().astimezone(UTC),
            reason=r["reason"] or "budget",
            due_version=int(r["due_version"]),
            attempt=int(r["attempt"]),
            run_id=r["run_id"],
        )

    def finish(
        self, claim: Claim, retry_at: datetime | None = None, reset_attempts: bool = False
    ) -> bool:
        """Give the lease back: done (``retry_at`` None) or failed, retried from ``retry_at``
        (``reset_attempts``: a new series of attempts then). False if the lease was lost."""
        params = {
            "namespace": claim.namespace,
            "holder": claim.holder,
            "due_version": claim.due_version,
            "retry_at": ensure_utc(retry_at) if retry_at else None,
            "reset_attempts": reset_attempts,
        }
        return bool(self._run(query("finish_due_sleep"), params))

    def start_run(self, run: SleepRun) -> None:
        """Record a run as started (and runs left running by a dead worker as abandoned)."""
        self._run(query("create_sleep_run"), {"namespace": run.namespace, "props": _props(run)})

    def finish_run(self, run: SleepRun) -> None:
        """Record how a run ended (outcome, error, counts, durations)."""
        props = _props(run)
        for key in ("run_id", "namespace"):
            props.pop(key)
        self._run(
            query("finish_sleep_run"),
            {"namespace": run.namespace, "run_id": run.run_id, "props": props},
        )

    def list_runs(
        self, namespace: str, limit: int = 50, before: SleepRun | None = None
    ) -> list[SleepRun]:
        """Runs of ``namespace``, newest first, after the page that ended with ``before``."""
        params = {
            "namespace": namespace,
            "limit": limit,
            "before": ensure_utc(before.started_at) if before else None,
            "before_id": before.run_id if before else None,
        }
        return [_run_from(r["r"]) for r in self._run(query("list_sleep_runs"), params, read=True)]

    def get_run(self, namespace: str, run_id: str) -> SleepRun | None:
        """One run by id (None when this namespace has no such run)."""
        rows = self._run(
            query("get_sleep_run"), {"namespace": namespace, "run_id": run_id}, read=True
        )
        return _run_from(rows[0]["r"]) if rows else None


def _props(run: SleepRun) -> dict[str, Any]:
    props = run.model_dump()
    for key in _JSON_FIELDS:
        props[f"{key}_json"] = json.dumps(props.pop(key), sort_keys=True, default=str)
    return props


def _run_from(node: Any) -> SleepRun:
    props = dict(node)
    for key in _JSON_FIELDS:
        props[key] = json.loads(props.pop(f"{key}_json", None) or "{}")
    for key, value in list(props.items()):
        if hasattr(value, "to_native"):  # a zoned DateTime: back to plain UTC
            props[key] = value.to_native().astimezone(UTC)
    return SleepRun.model_validate(props)
