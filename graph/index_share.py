"""A namespace's share of the shared topic vector index, and the first fetch it calls for.

Every namespace's topic vectors sit in one vector index (``topic_embedding``), and Neo4j 5.26
cannot filter inside it: a search asks the index for its nearest rows and keeps the
namespace's. A namespace that holds a tenth of the index keeps about a tenth of what it asks
for, so its light search's 50 rows kept ~5 of the 8 it needs; the query then counted the
namespace (up to ``SCAN_MAX + 1`` rows) and asked the index again for 500 rows: three steps,
~26 ms of Neo4j's CPU a call against ~4 ms for the same namespace alone (docs/performance.md,
fourteenth pass). One tenant of 100k topics halved the throughput of a 10k one beside it.

Here a search that had to ask twice (the sign of a crowded index) learns the namespace's count
and the index's (one read, ``count_topic_index_share.cypher``), and later searches of that
namespace ask the index at once for enough rows to keep ``MARGIN`` times what they need at the
namespace's share, rounded up to a multiple of the usual first fetch: one index call of
~200 rows (~7 ms) in the example. The counts are kept ``TTL_S`` seconds per process, for at
most ``SIZE`` namespaces; they only size the fetch (every kept topic is still scored exactly
and the query's own fallbacks still run when a fetch falls short), so a stale or missing count
costs time, never a result. Searches with a time window keep their fetch: the window's own
count decides there (an exact scan of a small window cannot miss).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from graph.ttl_cache import TtlCache

MARGIN = 2  # rows of the namespace expected per row needed
TTL_S = 60.0
SIZE = 1024


@dataclass(frozen=True)
class Share:
    """``own`` topics of the namespace among ``total`` in the index (both counted at once)."""

    own: int
    total: int


def first_fetch(base: int, need: int, share: Share | None, floor: int, limit: int) -> int:
    """Rows to ask the index for first: ``base`` unless the namespace is larger than ``floor``
    (a smaller one is scanned exactly when the index falls short) and ``base`` rows would hold
    fewer than ``MARGIN * need`` of its topics at its share; then enough rows for that, rounded
    up to a multiple of ``base``, at most ``limit``."""
    if share is None or share.own <= floor or share.total <= share.own or share.own <= 0:
        return base
    wanted = MARGIN * need * share.total / share.own
    if base >= wanted:
        return base
    return min(math.ceil(wanted / base) * base, limit)


class ShareCache(TtlCache[str, Share]):
    """The counts learnt per namespace, each kept ``ttl`` seconds, at most ``size`` of them."""

    def __init__(
        self, ttl: float = TTL_S, size: int = SIZE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(ttl, size, clock)
