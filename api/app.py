"""The FastAPI application. Shared objects are built once in the lifespan, never per request.

Layers, outermost first: metrics and access log (every request, 413s included), the body size
limit, then FastAPI's routing. ``/health``, ``/metrics``, ``/docs`` and ``/openapi.json`` are
open; everything under ``/v1`` needs an API key, whose namespace scopes the request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from api import errors
from api.auth import api_keys_for
from api.container import Container
from api.deps import authenticate
from api.limits import BodyLimitMiddleware
from api.metrics import Metrics, MetricsMiddleware
from api.routers import V1_ROUTERS, health, transfer
from api.routers.common import V1_ERRORS
from api.settings import Settings
from api.skill_runs import NamespaceSkills

DESCRIPTION = """Time-aware graph memory for LLM agents.

Authenticate with `Authorization: Bearer <key>` (or `X-API-Key: <key>`); create a key with
`sheriff keys create --namespace NS`. Every `/v1` call works in the key's namespace only.
Errors are `{"error": kind, "detail": what was wrong}`; see docs/api.md."""


def create_app(
    container: Container | None = None, skills: NamespaceSkills | None = None
) -> FastAPI:
    """Build the app. A ``container`` passed in (tests, ``sheriff up``) stays the caller's to
    close; one built here is closed when the app shuts down. ``skills`` is injectable too."""
    settings = container.settings if container is not None else Settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        c = container if container is not None else Container(settings)
        c.migrate()
        c.embedder.embed(["warm-up"])  # load the model before the first request
        app.state.container = c
        app.state.api_keys = api_keys_for(c, lambda r: metrics.key_cache.labels(r).inc())
        if skills is not None:
            c.namespace_skills = skills  # the tools and the skills routes share it
        app.state.skills = c.namespace_skills
        yield
        if container is None:
            c.close()

    app = FastAPI(title="Sheriff Claw", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    app.state.metrics = metrics
    errors.install(app)
    app.include_router(health.router)
    for router in V1_ROUTERS:
        app.include_router(
            router, prefix="/v1", dependencies=[Depends(authenticate)], responses=V1_ERRORS
        )
    uploads = dict.fromkeys(transfer.IMPORT_PATHS, settings.api_max_import_bytes)
    app.add_middleware(
        BodyLimitMiddleware, max_bytes=settings.api_max_body_bytes, overrides=uploads
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics)  # added last = outermost
    return app
