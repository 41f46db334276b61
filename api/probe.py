"""Neo4j's state for ``/health``, asked without ever making ``/health`` wait on a dead server.

One probe runs at a time, in a thread of its own (the driver is blocking); its answer is cached
for ``ttl`` seconds, so a burst of health checks costs one round trip. A probe that has not
answered within ``timeout`` reports Neo4j ``down`` at once and goes on in the background: the
next check after it finishes sees its answer. A probe still running after ``stuck_after`` is
given up and a fresh one started, so a connection that never answers cannot freeze the state;
at most ``THREADS`` threads are ever held by such probes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError

State = dict[str, Any]
THREADS = 3


class Neo4jProbe:
    """``await probe.state()`` -> ``{"state": "up", "server": ..., "indexes": [...]}`` or
    ``{"state": "down", "error": ...}``, each with ``age_s`` (how old the answer is)."""

    def __init__(
        self,
        ask: Callable[[], tuple[dict[str, Any], list[dict[str, Any]]]],
        *,
        ttl: float = 1.0,
        timeout: float = 1.5,
        stuck_after: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ask = ask  # (server info, index states), blocking
        self.ttl = ttl
        self.timeout = timeout
        self.stuck_after = stuck_after
        self._clock = clock
        self._pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="neo4j-probe")
        self._last: tuple[float, State] | None = None
        self._running: asyncio.Future[State] | None = None
        self._started = 0.0

    async def state(self) -> State:
        """Neo4j's state, at most ``ttl`` old, within ``timeout`` seconds whatever Neo4j does."""
        cached = self._cached()
        if cached is not None:
            return cached
        if self._running is None or self._running.done() or self._stuck():
            self._running = asyncio.get_running_loop().run_in_executor(self._pool, self._probe)
            self._started = self._clock()
        try:
            fresh = await asyncio.wait_for(asyncio.shield(self._running), self.timeout)
        except TimeoutError:
            return {"state": "down", "error": f"no answer within {self.timeout:g} s", "age_s": 0}
        return {**fresh, "age_s": 0}

    def close(self) -> None:
        """Stop the probe thread (a probe stuck on a dead server is left to its own timeout)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _stuck(self) -> bool:
        return self._clock() - self._started > self.stuck_after

    def _cached(self) -> State | None:
        if self._last is None:
            return None
        at, state = self._last
        age = self._clock() - at
        return {**state, "age_s": round(age, 3)} if age < self.ttl else None

    def _probe(self) -> State:
        """Ask Neo4j once (blocking, in the probe thread) and remember the answer."""
        try:
            server, indexes = self._ask()
            state: State = {"state": "up", "server": server, "indexes": indexes}
        except (DriverError, Neo4jError, OSError) as exc:
            state = {"state": "down", "error": str(exc) or type(exc).__name__}
        self._last = (self._clock(), state)
        return state
