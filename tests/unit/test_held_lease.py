"""``sleepwake.lease.held_lease``: the namespace's sleep lease held for a block (an explicit
sleep run, a forget, an import), refused while another holds it, given back whatever happens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph.clock import FixedClock
from graph.errors import AlreadyRunning
from sleepwake.lease import held_lease
from tests.fakes.sleep import FakeSleepStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TTL = timedelta(minutes=10)


def test_the_lease_is_held_for_the_block_from_the_clocks_now() -> None:
    store = FakeSleepStore()
    with held_lease(store, "ns", "forget-1", FixedClock(T0), TTL) as wall:
        assert wall == T0
        lease = store.graph.leases["ns"]
        assert (lease.holder, lease.expires_at) == ("forget-1", T0 + TTL)
        with pytest.raises(AlreadyRunning):  # a second writer of the namespace meanwhile
            store.acquire_lease("ns", "import-2", T0, T0 + TTL)
        store.acquire_lease("other", "import-2", T0, T0 + TTL)  # another namespace is free
    assert store.graph.leases["ns"].holder is None


def test_the_lease_is_given_back_when_the_block_raises() -> None:
    store = FakeSleepStore()
    with pytest.raises(RuntimeError), held_lease(store, "ns", "h", FixedClock(T0), TTL):
        raise RuntimeError("the work failed")
    store.acquire_lease("ns", "next", T0, T0 + TTL)  # free again


def test_a_lease_held_by_another_refuses_the_block_and_stays_theirs() -> None:
    store = FakeSleepStore()
    store.acquire_lease("ns", "sleep-worker", T0, T0 + TTL)
    ran = False
    with pytest.raises(AlreadyRunning), held_lease(store, "ns", "h", FixedClock(T0), TTL):
        ran = True
    assert not ran and store.graph.leases["ns"].holder == "sleep-worker"
