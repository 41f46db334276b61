"""A small thread-safe cache whose entries expire: the per-process cache of the API keys
(``api/auth.py``).

Each entry is kept ``ttl`` seconds after it was put, and at most ``size`` entries are kept (the
least recently used goes first), so a process's memory stays bounded whatever it is asked. A
``ttl`` of zero or less keeps nothing (caching off). Written here rather than taken from a
library: ``functools.lru_cache`` has no expiry and the process needs no more than these lines.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    def __init__(self, ttl: float, size: int, clock: Callable[[], float] = time.monotonic) -> None:
        if size < 1:
            raise ValueError("a cache holds at least one entry")
        self.ttl = ttl
        self.size = size
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()  # key -> (expiry, value)

    def get(self, key: K) -> V | None:
        """The value put under ``key`` less than ``ttl`` seconds ago, else None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= self._clock():
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: K, value: V) -> None:
        if self.ttl <= 0:
            return
        with self._lock:
            self._entries[key] = (self._clock() + self.ttl, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def drop(self, key: K) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)
