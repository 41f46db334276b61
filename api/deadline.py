"""A deadline on ``/v1`` requests while Neo4j does not answer: a 503 within a few seconds.

The driver's own bounds (connect, pool wait, retry time: graph/db.py ``Timeouts``) bound each
query, not a request: a request runs several queries, a stopping Neo4j holds a query a second or
two before it refuses it, and the driver's back-off sleeps 1 s, then 2 s, between attempts. A
request caught by a graceful Neo4j shutdown answered after 4.6-5.2 s that way (docs/neo4j.md).

So a request still unanswered after ``budget`` seconds asks the health probe (api.probe) whether
Neo4j answers. If Neo4j refuses it (connection refused, database unavailable), the client gets a
503 with ``Retry-After`` at once and the gate trips, so requests behind this one fail at once.
If it answers, or is merely slow to (a probe unanswered after ``check`` seconds: a busy Neo4j
under a large write is no outage, and cutting its writes would turn successes into 503s), the
request goes on and is checked again every ``recheck`` seconds. For
``settle`` seconds after Neo4j came back from an outage the probe's "up" is not trusted: a
restarted Neo4j answers the probe long before it serves queries again (appends were held
15-33 s a minute after a restart), so a request is cut at its budget then whatever the probe says.

The handler cut off this way is cancelled: one that had not reached its thread never runs, one
already in its thread finishes there (Python cannot stop a thread) and its answer is dropped; the
log says how it ended. Its write may therefore still commit after the 503, so only routes that
are safe to retry are cut: a route whose repeat would apply a change twice (creating a topic,
adding link weight, a model turn, a tool or skill run, an import, a synchronous sleep, an append
of messages without ``external_id``) claims ``exempt`` before it writes anything and is bounded
by the driver's timeouts only. docs/api.md lists which routes are which.

A write or read that Neo4j refuses as transient (a deadlock with a concurrent request, a lock
it could not grant) is no outage and never reaches this deadline as one: graph/ retries it with
a jittered back-off for at most ``graph.db.RETRY.window`` (1 s), well inside ``budget``, and
answers 409 ``Contended`` if it still does not get through (``graph.db.translate``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal

from fastapi import Request

from api.limits import ASGIApp, Message, Receive, Scope, Send
from api.probe import Neo4jProbe, answer_503, probe_of
from graph.errors import Neo4jUnavailable

log = logging.getLogger(__name__)

SCOPE_KEY = "sheriff.deadline"
_State = Literal["open", "exempt", "answered", "cut"]


class Deadline:
    """One request's deadline. Exactly one of three things happens first: the route claims an
    exemption, the response starts, or the middleware cuts the request (503)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the route claims from its worker thread
        self.state: _State = "open"

    def exempt(self) -> None:
        """The route is not safe to retry: never cut it. Raises ``Neo4jUnavailable`` if the
        request was cut already (its 503 is out; the route must not write anything)."""
        if not self._move("exempt"):
            raise Neo4jUnavailable("the request was answered 503 at its deadline")

    def answer(self) -> bool:
        """The response starts: True unless the request was cut (then drop what it sends)."""
        self._move("answered")
        return self.state != "cut"

    def cut(self) -> bool:
        """Claim the answer for a 503: True unless the route is exempt or already answering."""
        return self._move("cut")

    def _move(self, to: _State) -> bool:
        with self._lock:
            if self.state == "open":
                self.state = to
            return self.state == to


def exempt_from_deadline(request: Request) -> None:
    """Mark this request as not safe to retry (see the module docstring); a no-op outside the
    middleware (tests that mount a router alone)."""
    deadline = request.scope.get(SCOPE_KEY)
    if isinstance(deadline, Deadline):
        deadline.exempt()


async def no_deadline(request: Request) -> None:
    """Route dependency of the routes whose repeat would apply a change twice."""
    exempt_from_deadline(request)


@dataclass(eq=False)
class DeadlineMiddleware:
    """ASGI middleware: a request under ``prefixes`` unanswered after ``budget`` seconds answers
    503 while the app's ``neo4j_probe`` finds Neo4j refusing, or recovering from an outage."""

    app: ASGIApp
    budget: float = 3.0
    _: KW_ONLY
    check: float = 1.0
    recheck: float = 0.5
    settle: float = 120.0
    prefixes: tuple[str, ...] = ("/v1/",)
    # handlers still running after their 503
    _cut_off: set[asyncio.Task[None]] = field(default_factory=set, init=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        probe = probe_of(scope)
        path = scope.get("path", "")
        if scope["type"] != "http" or probe is None or self.budget <= 0:
            await self.app(scope, receive, send)
            return
        if not path.startswith(self.prefixes):
            await self.app(scope, receive, send)
            return
        deadline = Deadline()
        scope[SCOPE_KEY] = deadline

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start" and not deadline.answer():
                return
            if deadline.state != "cut":
                await send(message)

        started = time.monotonic()
        task = asyncio.ensure_future(self.app(scope, receive, guarded))
        try:
            cut = await self._cut_when_unreachable(task, deadline, probe)
        except asyncio.CancelledError:  # the server stops: the handler goes with this request
            task.cancel()
            raise
        if cut:
            await answer_503(send)
            self._let_finish(task, scope, started)
            return
        await task

    async def _cut_when_unreachable(
        self, task: asyncio.Task[None], deadline: Deadline, probe: Neo4jProbe
    ) -> bool:
        """Wait for ``task``; True when the request is to be cut (the deadline claimed)."""
        done, _ = await asyncio.wait({task}, timeout=self.budget)
        while not done and deadline.state == "open":
            if probe.recovering(self.settle):  # away, or back but cold: its "up" is not trusted
                return deadline.cut() or await self._finish(task)
            state = await probe.state(timeout=self.check, max_age=self.recheck)
            # a probe refused (not merely slow: a busy Neo4j under a large write is no outage)
            if state["state"] != "up" and not state.get("timed_out") and deadline.cut():
                probe.trip()  # hold the requests behind this one back
                return True
            done, _ = await asyncio.wait({task}, timeout=self.recheck)
        return False

    @staticmethod
    async def _finish(task: asyncio.Task[None]) -> bool:
        """The route claimed its exemption or its answer is under way: let it finish."""
        await asyncio.wait({task})
        return False

    def _let_finish(self, task: asyncio.Task[None], scope: Scope, started: float) -> None:
        """Cancel the cut-off handler (it stops unless it is in its thread) and log its end."""
        self._cut_off.add(task)
        route = f"{scope.get('method')} {scope.get('path')}"
        log.warning("%s: Neo4j away or settling; answered 503 after %.2f s", route, _since(started))

        def finished(t: asyncio.Task[None]) -> None:
            self._cut_off.discard(t)
            outcome = "cancelled" if t.cancelled() else repr(t.exception() or "done")
            log.warning("%s (cut off) ended after %.2f s: %s", route, _since(started), outcome)

        task.add_done_callback(finished)
        task.cancel()


def _since(started: float) -> float:
    return time.monotonic() - started
