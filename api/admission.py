"""Admission control for context builds: at most N run at once in one API worker, the rest wait
their turn in arrival order without holding a thread.

Every build is CPU in this process (the embedding, decoding, ranking, packing) interleaved with
waits on Neo4j. With every request's build let in at once (the default thread pool runs 40),
twenty clients meant ten builds per worker sharing the GIL: each took ten times its own time,
a deep one twice that again, and the switching between them cost CPU of its own. A few builds
at a time keep the cores and Neo4j busy (one waits on Neo4j while another computes) and the
others wait in a FIFO queue, so a request's latency is its wait plus its own build, not its
share of everyone's (docs/performance.md, "Ninth pass"). ``anyio.CapacityLimiter`` is that
queue: its waiters are woken in the order they arrived.

The limiter belongs to one event loop, so it is made in the app's lifespan (one per worker
process), never at import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class ContextGate:
    """The worker's context builds: ``slots`` at a time, run in a thread each."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"slots must be at least 1 (got {slots})")
        self.slots = slots
        self._limiter = anyio.CapacityLimiter(slots)

    async def run(self, build: Callable[..., T], *args: object) -> T:
        """``build(*args)`` in a worker thread once a slot is free (FIFO)."""
        return await anyio.to_thread.run_sync(build, *args, limiter=self._limiter)

    @property
    def waiting(self) -> int:
        """Builds queued for a slot now."""
        return self._limiter.statistics().tasks_waiting

    @property
    def running(self) -> int:
        """Builds holding a slot now."""
        return self._limiter.borrowed_tokens
