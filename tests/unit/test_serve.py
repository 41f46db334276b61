"""How many API workers ``sheriff up`` runs, and when /mcp runs without sessions."""

from __future__ import annotations

import os

import pytest

from api.serve import default_workers, threads_per_worker, worker_count
from api.settings import Settings


def test_the_default_is_the_cpus_this_process_may_use() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert default_workers() == expected >= 1


def test_the_option_wins_over_the_setting_which_wins_over_the_default() -> None:
    assert worker_count(3, Settings(api_workers=2)) == 3
    assert worker_count(None, Settings(api_workers=2)) == 2
    assert worker_count(None, Settings(api_workers=None)) == default_workers()


@pytest.mark.parametrize(
    ("workers", "setting", "stateless"),
    [(None, None, False), (1, None, False), (2, None, True), (2, False, False), (1, True, True)],
)
def test_mcp_is_stateless_exactly_when_a_session_could_reach_another_worker(
    workers: int | None, setting: bool | None, stateless: bool
) -> None:
    settings = Settings(api_workers=workers, mcp_stateless=setting)
    assert settings.mcp_stateless_effective is stateless


def test_a_worker_count_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="api_workers"):
        Settings(api_workers=0)


def test_the_cpus_are_shared_out_between_the_workers_models() -> None:
    cpus = default_workers()
    assert threads_per_worker(1) == cpus
    assert threads_per_worker(cpus) == 1
    assert threads_per_worker(cpus * 4) == 1  # never zero


def test_connections_to_the_workers_port_have_nagle_off() -> None:
    """The shared port's connections get TCP_NODELAY from asyncio, as a one-worker server's do
    (without it every response waited ~40 ms for the client's delayed ACK)."""
    import asyncio
    import socket

    import uvicorn

    from api.serve import listening_socket

    sock = listening_socket(uvicorn.Config("api.app:worker_app", host="127.0.0.1", port=0))
    assert sock.proto == socket.IPPROTO_TCP
    nodelay: list[int] = []

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            conn = transport.get_extra_info("socket")
            nodelay.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def accept_one() -> None:
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        port = sock.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(100):
            if nodelay:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        await server.wait_closed()

    asyncio.run(accept_one())
    assert nodelay and nodelay[0] != 0


def test_settle_heap_freezes_what_start_up_made() -> None:
    """After ``settle_heap`` the objects made before it are out of the collector's reach (a
    full collection no longer walks them)."""
    import gc

    from api.app import settle_heap

    kept = [{"start-up": i} for i in range(1000)]
    try:
        frozen = settle_heap()
        assert frozen == gc.get_freeze_count() >= len(kept)
        assert not any(o is kept for o in gc.get_objects())  # frozen: no generation holds it
    finally:
        gc.unfreeze()
    assert any(o is kept for o in gc.get_objects())
