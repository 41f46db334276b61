"""Admission control for context builds: at most N run at once in one API worker, the rest wait
their turn without holding a thread, namespace by namespace in turn.

Every build is CPU in this process (the embedding, decoding, ranking, packing) interleaved with
waits on Neo4j. With every request's build let in at once (the default thread pool runs 40),
twenty clients meant ten builds per worker sharing the GIL: each took ten times its own time,
a deep one twice that again, and the switching between them cost CPU of its own. A few builds
at a time keep the cores and Neo4j busy (one waits on Neo4j while another computes) and the
others wait, so a request's latency is its wait plus its own build, not its share of
everyone's (docs/performance.md, "Ninth pass").

The waiting requests are queued per namespace and the namespaces take turns (round robin; one
namespace's requests keep their order): every key is a tenant that may be hostile, and a burst
from one namespace must not make every other namespace wait behind all of it. With one
namespace waiting this is first come first served.

The gate lives on the worker's event loop (made in the app's lifespan, one per worker process):
its state is only touched there, so it needs no lock. A waiting request that is cancelled (its
client went away) leaves the queue, and one cancelled just after it was handed a slot passes the
slot on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


@dataclass(eq=False)
class _Waiter:
    event: anyio.Event = field(default_factory=anyio.Event)
    granted: bool = False  # a finishing build handed it its slot


class ContextGate:
    """The worker's context builds: ``slots`` at a time, each in a thread of its own."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"slots must be at least 1 (got {slots})")
        self.slots = slots
        self._running = 0
        # namespace -> its waiting requests, oldest first; dict order is the turn order
        self._queues: dict[str, deque[_Waiter]] = {}
        self._threads = anyio.CapacityLimiter(slots)  # a thread for every admitted build

    async def run(self, namespace: str, build: Callable[..., T], *args: object) -> T:
        """``build(*args)`` in a worker thread once a slot is free for ``namespace``."""
        await self._acquire(namespace)
        try:
            return await anyio.to_thread.run_sync(build, *args, limiter=self._threads)
        finally:
            self._release()

    @property
    def waiting(self) -> int:
        """Builds queued for a slot now."""
        return sum(len(q) for q in self._queues.values())

    @property
    def running(self) -> int:
        """Builds holding a slot now."""
        return self._running

    async def _acquire(self, namespace: str) -> None:
        if self._running < self.slots and not self._queues:
            self._running += 1
            return
        waiter = _Waiter()
        self._queues.setdefault(namespace, deque()).append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:  # cancelled while waiting, or just after being handed a slot
            if waiter.granted:
                self._release()
            else:
                self._leave(namespace, waiter)
            raise

    def _release(self) -> None:
        """A build finished: its slot goes to the next namespace's oldest waiter (that namespace
        then goes to the back of the turn order), or is freed when nobody waits."""
        if not self._queues:
            self._running -= 1
            return
        namespace, queue = next(iter(self._queues.items()))
        waiter = queue.popleft()
        del self._queues[namespace]
        if queue:
            self._queues[namespace] = queue
        waiter.granted = True
        waiter.event.set()

    def _leave(self, namespace: str, waiter: _Waiter) -> None:
        queue = self._queues.get(namespace)
        if queue is None:
            return
        queue.remove(waiter)
        if not queue:
            del self._queues[namespace]
