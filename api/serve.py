"""Serving the API from N worker processes on one port (``sheriff up --workers N``).

The parent binds the port once and starts N uvicorn workers (``spawn``: fresh interpreters, so
no driver, connection pool or model crosses a fork); each worker imports ``api.app:worker_app``
and builds its own ``Container`` (Neo4j driver, embedding model) in its lifespan. Start-up work
that must happen once (Neo4j up, migrations) is the caller's, before :func:`serve`. The kernel
hands each new connection to one of the workers; nothing a request needs from an earlier request
lives in one worker's memory only (docs/architecture.md, "API processes and state").

Ctrl-C or SIGTERM to the parent stops every worker: each finishes its requests in flight (up
to ``GRACEFUL_S``), then the parent exits. A worker that dies is replaced; a worker that fails
to start (a broken model, a schema that is not current) stops the whole server.
"""

from __future__ import annotations

import logging
import os
import socket

import uvicorn
from uvicorn.supervisors import Multiprocess

from api.logs import JsonFormatter
from api.settings import Settings
from graph.errors import SheriffError
from graph.redaction import DEFAULT, install_log_redaction

WORKER_APP = "api.app:worker_app"
GRACEFUL_S = 20  # in-flight requests get this long to finish on shutdown
# a worker that does not answer the parent's ping for this long is killed and replaced; uvicorn's
# 5 s default killed workers still importing torch on a busy machine
HEALTHCHECK_S = 60
STARTUP_FAILURE = 3  # uvicorn's exit code of a worker whose start-up failed


def default_workers() -> int:
    """The CPUs this process may run on (a container's or taskset's limit, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def worker_count(option: int | None, settings: Settings) -> int:
    """``--workers``, else ``SHERIFF_API_WORKERS``, else :func:`default_workers`."""
    return option or settings.api_workers or default_workers()


def threads_per_worker(workers: int) -> int:
    """Compute threads each worker's model may use: the CPUs shared out, at least one."""
    return max(1, default_workers() // workers)


def configure_logging(log_format: str | None = None) -> None:
    """Log setup of the CLI and of every worker process: INFO to stderr, secrets redacted;
    text lines, or JSON ones with the trace ids (``log_format``, default
    ``SHERIFF_LOG_FORMAT``: ``Settings.log_format``, read here before Settings is built; a
    bad value is refused when it is)."""
    install_log_redaction(DEFAULT)  # the container adds the operator's patterns once built
    log_format = log_format or os.environ.get("SHERIFF_LOG_FORMAT", "text")
    if log_format.strip().lower() == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logging.basicConfig(level=logging.INFO, handlers=[handler])
    else:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def listening_socket(config: uvicorn.Config) -> socket.socket:
    """The port the workers share, bound by ``config`` (``Config.bind_socket``), as a socket
    whose protocol reads TCP.

    ``bind_socket`` creates it with protocol 0, and the connections it accepts inherit that
    value; asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets whose protocol reads
    TCP, so every response of a multi-worker server waited for the client's delayed ACK: ~45 ms
    added to each request (sequential p50 107.7 ms with 2 workers against 64.0 ms with 1, the
    same 58 ms of server work; docs/performance.md). Re-reading the descriptor's own family,
    type and protocol from the kernel fixes the value the workers and their connections see."""
    sock = config.bind_socket()
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return sock  # a Unix socket has no Nagle
    return socket.socket(fileno=sock.detach())


def serve(settings: Settings, workers: int) -> None:
    """Serve the API on ``settings.api_host:api_port`` with ``workers`` processes until Ctrl-C
    or SIGTERM; ``SheriffError`` when a worker could not start."""
    # the workers read their Settings from the environment: tell them how many they are (an
    # MCP session cannot span workers, so /mcp runs stateless when there is more than one)
    os.environ["SHERIFF_API_WORKERS"] = str(workers)
    # each worker's model runtime would start one compute thread per CPU: N workers would run
    # N x CPUs threads on CPUs threads' worth of cores; share the CPUs out unless the operator
    # chose (OMP_NUM_THREADS is read by torch and by OpenMP builds at import)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads_per_worker(workers)))
    config = uvicorn.Config(
        WORKER_APP,
        factory=True,
        host=settings.api_host,
        port=settings.api_port,
        workers=workers,
        timeout_graceful_shutdown=GRACEFUL_S,
        timeout_worker_healthcheck=HEALTHCHECK_S,
        # every request is logged once, by the app (api.access: route, status, duration,
        # request id, namespace); uvicorn's own line per request repeated it
        access_log=False,
    )
    server = uvicorn.Server(config)
    if workers == 1:  # no supervisor: this process is the worker
        server.run()
        failed = not server.started
    else:
        supervisor = Multiprocess(config, sockets=[listening_socket(config)])
        supervisor.run()
        failed = any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes)
    if failed:
        raise SheriffError("the API did not start (the log above says why)")
