"""``/v1/sleep``, ``/v1/wake`` and ``/v1/wake-packet``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from api.deps import ContainerDep, NamespaceDep
from api.routers.common import errors
from api.schemas import SleepCreate, WakeCreate
from graph.errors import NotFound
from graph.models import WakePacket
from sleepwake.sleep import SleepSummary
from sleepwake.wake import WakeResult

if TYPE_CHECKING:
    from api.container import Container

router = APIRouter(tags=["sleep and wake"])


@router.post("/sleep", responses=errors(409))
def sleep(c: ContainerDep, ns: NamespaceDep, body: SleepCreate | None = None) -> SleepSummary:
    """Sleep now: compact the buffer into topics and write a wake packet. 409 while another
    sleep of this namespace runs."""
    now = body.now if body is not None and body.now is not None else c.clock.now()
    return c.sleeper.sleep(ns, now, "explicit")


@router.post("/wake")
def wake(body: WakeCreate, c: ContainerDep, ns: NamespaceDep) -> WakeResult:
    """Wake for a new message: the packet, whether to resume, and the topics it recalls."""
    return c.waker.wake(ns, body.message, body.now or c.clock.now(), k=body.k)


@router.get("/wake-packet", responses=errors(404))
def wake_packet(c: ContainerDep, ns: NamespaceDep) -> WakePacket:
    """The latest wake packet (404 before the first sleep)."""
    return latest_wake_packet(c, ns)


def latest_wake_packet(c: Container, ns: str) -> WakePacket:
    """The newest wake packet of ``ns``; ``NotFound`` before its first sleep (REST and MCP)."""
    packets = c.sleep_store.wake_packets(ns, limit=1)
    if not packets:
        raise NotFound("no wake packet yet: this namespace has never slept")
    return packets[0]
