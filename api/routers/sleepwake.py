"""``/v1/sleep``, ``/v1/sleep-runs``, ``/v1/wake`` and ``/v1/wake-packet``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from api.deps import NamespaceDep, NowDep, SleepWakeDep
from api.routers.common import NOT_RETRY_SAFE, errors
from api.schemas import SleepCreate, SleepRunList, WakeCreate
from graph.models import WakePacket
from graph.sleep_queue import SleepRun
from sleepwake.sleep import SleepSummary
from sleepwake.wake import WakeResult

router = APIRouter(tags=["sleep and wake"])


@router.post(  # minutes of work by design, under a lease of its own
    "/sleep",
    responses={**errors(409), 202: {"model": SleepRun}},
    dependencies=NOT_RETRY_SAFE,
)
def sleep(
    sleepwake: SleepWakeDep,
    ns: NamespaceDep,
    now: NowDep,
    response: Response,
    body: SleepCreate | None = None,
    wait: Annotated[
        bool, Query(description="false: queue the sleep for the workers, answer 202 with its run")
    ] = True,
) -> SleepSummary | SleepRun:
    """Sleep now: compact the buffer into topics and write a wake packet (409 while another
    sleep of this namespace runs). With ``wait=false`` the sleep is queued for the sleep
    workers and the answer (202) is its run: follow it at ``/v1/sleep-runs/{run_id}``."""
    when = body.now if body is not None and body.now is not None else now
    if not wait:
        response.status_code = 202
        return sleepwake.queue_sleep(ns, when)
    return sleepwake.sleep(ns, when, "explicit")


@router.get("/sleep-runs", responses=errors(404))
def sleep_runs(
    sleepwake: SleepWakeDep,
    ns: NamespaceDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before: Annotated[
        str | None, Query(max_length=100, description="the next_before of the previous page")
    ] = None,
) -> SleepRunList:
    """Every sleep attempt of this namespace, newest first: outcome, error, attempt, counts,
    step durations, extraction (chunks, fallbacks, retries, tokens)."""
    runs = sleepwake.runs(ns, limit, before)
    return SleepRunList(runs=runs, next_before=runs[-1].run_id if len(runs) == limit else None)


@router.get("/sleep-runs/{run_id}", responses=errors(404))
def sleep_run(run_id: str, sleepwake: SleepWakeDep, ns: NamespaceDep) -> SleepRun:
    """One sleep attempt (404 when this namespace has none such)."""
    return sleepwake.run(ns, run_id)


@router.post("/wake")
def wake(body: WakeCreate, sleepwake: SleepWakeDep, ns: NamespaceDep, now: NowDep) -> WakeResult:
    """Wake for a new message: the packet, whether to resume, and the topics it recalls."""
    return sleepwake.wake(ns, body.message, body.now or now, k=body.k)


@router.get("/wake-packet", responses=errors(404))
def wake_packet(sleepwake: SleepWakeDep, ns: NamespaceDep) -> WakePacket:
    """The latest wake packet (404 before the first sleep)."""
    return sleepwake.latest_packet(ns)
