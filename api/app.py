"""The FastAPI application. Shared objects are built once in the lifespan, never per request.

Layers, outermost first: the request's trace span (only when an ``OTEL_*`` variable turns
tracing on: api/telemetry.py), metrics and access log (every request, 413s included), the Neo4j
gate (503 at once while Neo4j is known to be away), the key gate (401 for ``/v1`` and ``/mcp``
before a byte of the body is read: api/keygate.py), the body size limit (uploads counted as
they stream, never buffered), the deadline (503 for a
request that waits on an unreachable Neo4j: api/deadline.py), then FastAPI's routing. ``/health``, ``/metrics``, ``/docs`` and ``/openapi.json`` are
open; everything under ``/v1`` needs an API key, whose namespace scopes the request, and so
does ``/mcp``, the same memory as an MCP server (streamable HTTP; see docs/mcp.md).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from starlette.routing import Route

from api import errors, inspector, telemetry
from api.admission import ContextGate
from api.auth import api_keys_for
from api.container import Container
from api.deadline import DeadlineMiddleware
from api.deps import authenticate
from api.keygate import KeyGateMiddleware
from api.limits import BodyLimitMiddleware
from api.mcp_http import MCP_PATH, McpHttp
from api.metrics import Metrics, MetricsMiddleware
from api.probe import Neo4jGate, Neo4jProbe
from api.routers import V1_ROUTERS, health, transfer
from api.routers.common import V1_ERRORS
from api.serve import configure_logging
from api.settings import Settings
from api.telemetry import TracingMiddleware
from api.uploads import ImportSlots
from graph import tracing
from graph.db import health_check
from graph.errors import SheriffError
from graph.migrations import pending_migrations

DESCRIPTION = """Time-aware graph memory for LLM agents.

Authenticate with `Authorization: Bearer <key>` (or `X-API-Key: <key>`); create a key with
`sheriff keys create --namespace NS`. Every `/v1` call works in the key's namespace only.
Errors are `{"error": kind, "detail": what was wrong}`; see docs/api.md. The same memory is an
MCP server at `/mcp` (streamable HTTP, the same keys); see docs/mcp.md."""


def settle_heap() -> int:
    """Move every object the start-up made (the model and tokenizer, the skills, the pydantic
    schemas: ~160k tracked objects) out of the garbage collector's reach (``gc.freeze``), after
    one collection of start-up garbage; returns how many were frozen. Each full collection
    walked all of them: ~100 ms, once every ~40 context requests (2.6 ms a request on
    average, and a 100 ms stall for the request that triggered it); afterwards ~3 ms
    (docs/performance.md, tenth pass). Start-up objects live as long as the worker, so
    freezing them keeps nothing alive that would have been freed."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def create_app(container: Container | None = None, *, migrate: bool = True) -> FastAPI:
    """Build the app. A ``container`` passed in (tests) stays the caller's to close; one built
    here is built in the lifespan (so in the worker process serving it) and closed when the app
    shuts down. ``migrate=False``: the schema must already be current (``sheriff up`` migrates
    once, before it starts the workers), checked read-only."""
    settings = container.settings if container is not None else Settings()
    metrics = Metrics()
    mcp = McpHttp(stateless=settings.mcp_stateless_effective)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        c = container if container is not None else Container(settings)
        if migrate:
            c.migrate()
        else:
            _check_schema(c)
        c.warm_up()  # the model loaded before the first request
        app.state.container = c
        gate = ContextGate(c.settings.api_context_concurrency)  # this loop's, this worker's
        app.state.context_gate = gate
        app.state.api_keys = api_keys_for(c, lambda r: metrics.key_cache.labels(r).inc())
        _ = c.services, c.workspaces  # built now: a bad workspace root stops the start-up
        # /health's own thread and cache: it answers while the routes' threadpool is busy
        # and while Neo4j is down
        database = c.settings.neo4j_database
        probe = Neo4jProbe(lambda: health_check(c.driver, database))
        app.state.neo4j_probe = probe
        if container is None:  # this worker's start-up is over (tests' apps are not frozen)
            settle_heap()
        try:
            async with mcp.running(c, gate):  # the MCP sessions live as long as the app
                yield
        finally:
            probe.close()
        if container is None:
            c.close()

    app = FastAPI(title="Sheriff Claw", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    app.state.metrics = metrics
    # one import per namespace, and a bounded number in all, at a time
    app.state.import_slots = ImportSlots(settings.import_concurrency)
    errors.install(app)
    app.include_router(health.router)
    for router in V1_ROUTERS:
        app.include_router(
            router, prefix="/v1", dependencies=[Depends(authenticate)], responses=V1_ERRORS
        )
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp, include_in_schema=False))
    inspector.mount(app)  # the web inspector at /ui: routes only (docs/inspector.md)
    _add_middleware(app, settings, metrics)
    return app


def _add_middleware(app: FastAPI, settings: Settings, metrics: Metrics) -> None:
    """The middleware around every request, innermost first (the last added runs first)."""
    # inside the body limit: the budget starts once the body is in, not while a client uploads
    app.add_middleware(DeadlineMiddleware, budget=settings.api_deadline_seconds)
    uploads = dict.fromkeys(transfer.IMPORT_PATHS, settings.api_max_import_bytes)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.api_max_body_bytes,
        overrides=uploads,
        streamed=transfer.IMPORT_PATHS,
    )
    app.add_middleware(KeyGateMiddleware)  # outside the body limit: no key, nothing read
    app.add_middleware(Neo4jGate)  # 503 at once while Neo4j is known to be out of reach
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    if telemetry.setup(settings) or tracing.active():  # OTEL_* set: a span per request
        app.add_middleware(TracingMiddleware)  # added last = outermost


def worker_app() -> FastAPI:
    """The app of one ``sheriff up`` worker process (``uvicorn api.app:worker_app --factory``):
    its own container (driver, embedder) built in this process, the schema migrated already."""
    configure_logging()  # a spawned process: the CLI's set-up did not run here
    return create_app(migrate=False)


def _check_schema(c: Container) -> None:
    pending = pending_migrations(c.driver, c.settings.neo4j_database)
    if pending:
        raise SheriffError(
            f"the schema is not current (pending: {', '.join(pending)}): run `sheriff migrate`"
        )
