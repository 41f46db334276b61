"""Neo4j's state for ``/health``, asked without ever making ``/health`` wait on a dead server.

One probe runs at a time, in a thread of its own (the driver is blocking); its answer is cached
for ``ttl`` seconds, so a burst of health checks costs one round trip. A probe that has not
answered within ``timeout`` reports Neo4j ``down`` at once and goes on in the background: the
next check after it finishes sees its answer. A probe still running after ``stuck_after`` is
given up and a fresh one started, so a connection that never answers cannot freeze the state;
at most ``THREADS`` threads are ever held by such probes.

The probe is also a circuit breaker for the ``/v1`` routes (``Neo4jGate``): when a request finds
Neo4j unreachable (``trip``), later requests answer 503 at once instead of entering the driver,
until a probe started after the trip gets an answer. A server that is starting can accept a
connection and then leave it unanswered for half a minute; with the gate, only the probe waits on
such a connection, never a client.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from api.limits import ASGIApp, Receive, Scope, Send
from graph.errors import SheriffError

log = logging.getLogger(__name__)

State = dict[str, Any]
THREADS = 6
RETRY_AFTER_S = 2


class Neo4jProbe:
    """``await probe.state()`` -> ``{"state": "up", "server": ..., "indexes": [...]}`` or
    ``{"state": "down", "error": ...}``, each with ``age_s`` (how old the answer is)."""

    def __init__(
        self,
        ask: Callable[[], tuple[dict[str, Any], list[dict[str, Any]]]],
        *,
        ttl: float = 1.0,
        timeout: float = 1.5,
        stuck_after: float = 5.0,
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
        self._generation = 0  # bumped by every trip: older probes' answers are stale
        self._tripped = False
        self._back_at: float | None = None  # when a probe last found Neo4j back after a trip

    async def state(self, timeout: float | None = None, max_age: float | None = None) -> State:
        """Neo4j's state, at most ``max_age`` (default ``ttl``) old, within ``timeout`` (default
        the probe's) seconds whatever Neo4j does. No answer in time is ``down`` with
        ``"timed_out": True`` (Neo4j may be only slow)."""
        wait = self.timeout if timeout is None else timeout
        cached = self._cached(self.ttl if max_age is None else min(max_age, self.ttl))
        if cached is not None:
            return cached
        running = self._start()
        try:
            fresh = await asyncio.wait_for(asyncio.shield(running), wait)
        except TimeoutError:
            error = f"no answer within {wait:g} s"
            return {"state": "down", "error": error, "timed_out": True, "age_s": 0}
        return {**fresh, "age_s": 0}

    def trip(self) -> None:
        """A request found Neo4j unreachable: drop the cached answer and hold requests back
        (``admit``) until a probe started after now gets an answer."""
        if not self._tripped:
            log.warning("Neo4j out of reach: requests answer 503 until the probe reaches it")
        self._generation += 1
        self._last = None
        self._tripped = True

    def admit(self) -> bool:
        """Whether a request may go to Neo4j. While tripped: no, and a probe is started (on
        the running event loop) if none is under way and the last answer is over ``ttl`` old."""
        if not self._tripped:
            return True
        if self._cached(self.ttl) is None:  # at most one probe per ``ttl`` while Neo4j is away
            self._start()
        return False

    def recovering(self, window: float) -> bool:
        """Whether Neo4j is away (tripped) or came back less than ``window`` seconds ago: a
        restarted Neo4j answers the probe long before it serves queries at its usual speed
        (measured: appends held 15-33 s a minute after the restart)."""
        if self._tripped:
            return True
        return self._back_at is not None and self._clock() - self._back_at < window

    def close(self) -> None:
        """Stop the probe thread (a probe stuck on a dead server is left to its own timeout)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self) -> asyncio.Future[State]:
        """The probe under way, or a new one if there is none (or it is stuck)."""
        if self._running is None or self._running.done() or self._stuck():
            ask = functools.partial(self._probe, self._generation)
            self._running = asyncio.get_running_loop().run_in_executor(self._pool, ask)
            self._started = self._clock()
        return self._running

    def _stuck(self) -> bool:
        return self._clock() - self._started > self.stuck_after

    def _cached(self, max_age: float) -> State | None:
        if self._last is None:
            return None
        at, state = self._last
        age = self._clock() - at
        return {**state, "age_s": round(age, 3)} if age < max_age else None

    def _probe(self, generation: int) -> State:
        """Ask Neo4j once (blocking, in the probe thread) and remember the answer, unless a trip
        came after this probe started (its answer may predate the outage)."""
        try:
            server, indexes = self._ask()
            state: State = {"state": "up", "server": server, "indexes": indexes}
        except (SheriffError, OSError) as exc:  # graph/ translates the driver's errors
            state = {"state": "down", "error": str(exc) or type(exc).__name__}
        if generation == self._generation:
            self._last = (self._clock(), state)
            if state["state"] == "up" and self._tripped:
                log.warning("Neo4j answers again: requests go through")
                self._tripped = False
                self._back_at = self._clock()
        return state


class Neo4jGate:
    """ASGI middleware: a request under ``prefixes`` answers 503 (``Retry-After``) at once while
    the app's ``neo4j_probe`` holds requests back; anything else passes through untouched."""

    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...] = ("/v1/", "/mcp")) -> None:
        self.app = app
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        probe = probe_of(scope)
        gated = scope["type"] == "http" and scope.get("path", "").startswith(self.prefixes)
        if gated and probe is not None and not probe.admit():
            await answer_503(send)
            return
        await self.app(scope, receive, send)


def probe_of(scope: Scope) -> Neo4jProbe | None:
    """The app's probe (made in the lifespan), or None before the app started."""
    app = scope.get("app")
    return getattr(getattr(app, "state", None), "neo4j_probe", None)


async def answer_503(send: Send) -> None:
    """The 503 + ``Retry-After`` that the gate and the request deadline (api.deadline) send."""
    body = json.dumps(
        {"error": "Neo4jUnavailable", "detail": "the database is not reachable; retry shortly"}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(RETRY_AFTER_S).encode()),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
