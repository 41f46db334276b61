"""graph.index_share: the first fetch a namespace's share of the vector index calls for, and
the bounded, expiring cache of the counts."""

from __future__ import annotations

import pytest

from graph.index_share import MARGIN, Share, ShareCache, first_fetch
from tests.fakes.clock import ManualClock

BASE, FLOOR, LIMIT = 50, 2000, 10_000


def test_a_namespace_alone_or_unknown_keeps_the_usual_fetch() -> None:
    assert first_fetch(BASE, 8, None, FLOOR, LIMIT) == BASE
    assert first_fetch(BASE, 8, Share(own=10_000, total=10_000), FLOOR, LIMIT) == BASE
    assert first_fetch(BASE, 8, Share(own=0, total=10_000), FLOOR, LIMIT) == BASE


def test_a_namespace_that_dominates_the_index_keeps_the_usual_fetch() -> None:
    # 50 rows hold ~45 of its topics: more than MARGIN x 8
    assert first_fetch(BASE, 8, Share(own=100_000, total=110_000), FLOOR, LIMIT) == BASE


def test_a_crowded_namespace_asks_for_enough_rows_at_once() -> None:
    share = Share(own=10_000, total=110_000)
    fetch = first_fetch(BASE, 8, share, FLOOR, LIMIT)
    assert fetch == 200  # MARGIN x 8 x 11 = 176, rounded up to a multiple of 50
    assert fetch % BASE == 0 and fetch * share.own / share.total >= MARGIN * 8


def test_a_small_namespace_is_left_to_the_exact_scan() -> None:
    # 20 topics among 110k: the index would be asked for 88k rows; the scan of 20 is exact
    assert first_fetch(BASE, 8, Share(own=20, total=110_000), FLOOR, LIMIT) == BASE
    assert first_fetch(BASE, 8, Share(own=FLOOR, total=1_000_000), FLOOR, LIMIT) == BASE


def test_the_fetch_never_passes_the_limit() -> None:
    assert first_fetch(BASE, 8, Share(own=2_001, total=5_000_000), FLOOR, LIMIT) == LIMIT


def test_counts_expire_after_their_ttl() -> None:
    clock = ManualClock()
    cache = ShareCache(ttl=60.0, size=4, clock=clock)
    cache.put("a", Share(3000, 30_000))
    clock.t = 59.9
    assert cache.get("a") == Share(3000, 30_000)
    clock.t = 60.0
    assert cache.get("a") is None and len(cache) == 0


def test_the_cache_keeps_the_most_recently_used_namespaces() -> None:
    cache = ShareCache(ttl=60.0, size=2, clock=ManualClock())
    cache.put("a", Share(3000, 30_000))
    cache.put("b", Share(4000, 30_000))
    assert cache.get("a") is not None  # "b" is now the least recently used
    cache.put("c", Share(5000, 30_000))
    assert len(cache) == 2
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None


def test_a_cache_without_room_is_refused_and_one_without_time_keeps_nothing() -> None:
    with pytest.raises(ValueError):
        ShareCache(ttl=60.0, size=0)
    off = ShareCache(ttl=0.0, size=4)
    off.put("a", Share(3000, 30_000))
    assert off.get("a") is None and len(off) == 0
