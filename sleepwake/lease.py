"""A namespace's sleep lease (in Neo4j, it keeps two sleeps, or a sleep and a forget or an
import, off one namespace): ``held_lease`` takes it for a block and gives it back after, whatever
happens (an explicit sleep run, a forget, an import); ``Heartbeat`` renews it in a daemon thread
while a sleep runs (``sleepwake.sleep.Sleeper`` takes and gives back its own lease)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from graph.clock import Clock
from graph.protocols import SleepStoreProtocol

log = logging.getLogger(__name__)


@contextmanager
def held_lease(
    store: SleepStoreProtocol, namespace: str, holder: str, clock: Clock, ttl: timedelta
) -> Iterator[datetime]:
    """The namespace's lease held by ``holder`` for the block, from ``clock.now()`` (yielded)
    for ``ttl``; ``AlreadyRunning`` before the block when another holds it. Given back at the
    end of the block, also when it raises."""
    wall = clock.now()
    store.acquire_lease(namespace, holder, wall, wall + ttl)
    try:
        yield wall
    finally:
        store.release_lease(namespace, holder)


class Heartbeat:
    """Renews a sleep's lease every third of its time to live, in a daemon thread, while the
    sleep runs; ``lost`` turns true when a renewal finds the lease gone (taken over)."""

    def __init__(
        self, store: SleepStoreProtocol, namespace: str, holder: str, clock: Clock, ttl: timedelta
    ) -> None:
        self.store, self.namespace, self.holder = store, namespace, holder
        self.clock, self.ttl = clock, ttl
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{namespace}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
        self._thread.join(timeout=5)

    def stop(self) -> None:
        """No more renewals (the sleep is over, or gave its lease back in its commit)."""
        self._stop.set()

    def _beat(self) -> None:
        interval = max(self.ttl.total_seconds() / 3, 0.05)
        while not self._stop.wait(interval):
            try:
                renewed = self.store.renew_lease(
                    self.namespace, self.holder, self.clock.now() + self.ttl
                )
            except Exception:  # Neo4j away for a moment: try again at the next beat
                log.warning("lease heartbeat of %s failed", self.namespace, exc_info=True)
                continue
            if not renewed and not self._stop.is_set():
                log.warning("sleep of %s lost its lease", self.namespace)
                self.lost = True
                return
