"""``/v1/sleep``, ``/v1/wake`` and ``/v1/wake-packet``."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import NamespaceDep, NowDep, SleepWakeDep
from api.routers.common import errors
from api.schemas import SleepCreate, WakeCreate
from graph.models import WakePacket
from sleepwake.sleep import SleepSummary
from sleepwake.wake import WakeResult

router = APIRouter(tags=["sleep and wake"])


@router.post("/sleep", responses=errors(409))
def sleep(
    sleepwake: SleepWakeDep, ns: NamespaceDep, now: NowDep, body: SleepCreate | None = None
) -> SleepSummary:
    """Sleep now: compact the buffer into topics and write a wake packet. 409 while another
    sleep of this namespace runs."""
    when = body.now if body is not None and body.now is not None else now
    return sleepwake.sleep(ns, when, "explicit")


@router.post("/wake")
def wake(body: WakeCreate, sleepwake: SleepWakeDep, ns: NamespaceDep, now: NowDep) -> WakeResult:
    """Wake for a new message: the packet, whether to resume, and the topics it recalls."""
    return sleepwake.wake(ns, body.message, body.now or now, k=body.k)


@router.get("/wake-packet", responses=errors(404))
def wake_packet(sleepwake: SleepWakeDep, ns: NamespaceDep) -> WakePacket:
    """The latest wake packet (404 before the first sleep)."""
    return sleepwake.latest_packet(ns)
