"""Reads of a namespace's vectors into the worker's memory, off the request path.

A namespace's first search in an API worker used to read its whole copy on the request that met
it (39,000 passages: 2.7 s of the worker's CPU, and a 5.5 s p99 with 20 clients). Now that
request, and every other until the copy is in, is served by the search in Neo4j, and the read is
asked of this queue: one worker thread reads one namespace's copy at a time (its passages or,
``graph.topic_vectors``, its topics), in the order first asked, each at most once queued or
running. So:

- no request waits on a load, its own namespace's or another's;
- a namespace waits for the loads queued before it, each one namespace's, so a tenant asking
  again and again does not go ahead of another (a key opens one namespace: fair across
  tenants), and a tenant with a large conversation delays another's copy by one load at most
  per turn, never its answers;
- at most ``QUEUE_MAX`` namespaces wait; one asked beyond that is not queued (its searches stay
  in Neo4j and the next one asks again).

Pure of Neo4j: the job is the store's (``graph.passages``). ``start`` runs the drain (a daemon
thread by default); tests pass one that does nothing and call ``run_next`` themselves.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)

QUEUE_MAX = 256  # namespaces waiting for a load at most (one entry each)


def _thread(drain: Callable[[], None]) -> None:
    threading.Thread(target=drain, name="sheriff-vector-load", daemon=True).start()


class LoadQueue:
    """Namespaces waiting for their vectors to be read, served one at a time in the order first
    asked (see the module doc)."""

    def __init__(
        self,
        limit: int = QUEUE_MAX,
        start: Callable[[Callable[[], None]], None] | None = _thread,
    ) -> None:
        self.limit = limit
        self._start = start
        self._cond = threading.Condition()
        self._queued: OrderedDict[Hashable, Callable[[], None]] = OrderedDict()
        self._running: Hashable | None = None
        self._draining = False  # a drain thread is at work (or started)

    def ask(self, namespace: Hashable, job: Callable[[], None]) -> bool:
        """Queue ``job`` (the read of ``namespace``'s vectors) unless that namespace is queued or
        being read already, or the queue is full; starts the drain when none runs. Whether the
        namespace is now queued or running. ``namespace``: the namespace's name for its passages,
        a key of it for another copy (the topics': ``("topics", name)``), so that the two
        copies of one namespace are two loads."""
        with self._cond:
            if namespace == self._running or namespace in self._queued:
                return True
            if len(self._queued) >= self.limit:
                return False
            self._queued[namespace] = job
            if self._draining or self._start is None:
                return True
            self._draining = True
        self._start(self._drain)
        return True

    def run_next(self) -> bool:
        """Run the first queued job in this thread (a failure is logged, not raised: the
        namespace stays served by Neo4j and its next search asks again). Whether one ran."""
        with self._cond:
            if not self._queued:
                return False
            namespace, job = self._queued.popitem(last=False)
            self._running = namespace
        try:
            job()
        except Exception:  # a failed load leaves the Neo4j path; logged
            log.warning("vector load of a namespace failed", exc_info=True)
        finally:
            with self._cond:
                self._running = None
                self._cond.notify_all()
        return True

    def waiting(self) -> list[Hashable]:
        """The namespace being read (first), then those queued, in the order they will be."""
        with self._cond:
            running = [self._running] if self._running is not None else []
            return running + list(self._queued)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is queued or running (for tests and benchmarks that need the
        copies in; a request never calls it). False when ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._running is None and not self._queued, timeout)

    def _drain(self) -> None:
        while True:
            with self._cond:
                if not self._queued:
                    self._draining = False
                    self._cond.notify_all()
                    return
            self.run_next()
