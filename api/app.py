"""The FastAPI application. Shared objects are built once in the lifespan, never per request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from api.container import Container
from api.settings import Settings
from graph.db import index_states, server_info
from graph.errors import (
    AlreadyRunning,
    EmbeddingUnavailable,
    Neo4jUnavailable,
    NotFound,
    SheriffError,
    ValidationFailed,
    VersionConflict,
)

_STATUS = {
    ValidationFailed: 422,
    NotFound: 404,
    VersionConflict: 409,
    AlreadyRunning: 409,
    Neo4jUnavailable: 503,
    EmbeddingUnavailable: 503,
}


def create_app(container: Container | None = None) -> FastAPI:
    """Build the app; ``container`` is injectable for tests."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        c = container or Container(Settings())
        c.migrate()
        c.embedder.embed(["warm-up"])  # load the model before the first request
        app.state.container = c
        yield
        c.close()

    app = FastAPI(title="Sheriff Claw", version="0.1.0", lifespan=lifespan)

    @app.exception_handler(SheriffError)
    async def sheriff_error(_: Request, exc: SheriffError) -> JSONResponse:
        status = next((s for t, s in _STATUS.items() if isinstance(exc, t)), 500)
        return JSONResponse({"error": type(exc).__name__, "detail": str(exc)}, status_code=status)

    @app.get("/health", tags=["health"])
    def health(request: Request) -> dict[str, Any]:
        """Neo4j version, index states and the embedding model in use."""
        c: Container = request.app.state.container
        indexes = index_states(c.driver, c.settings.neo4j_database)
        return {
            "status": "ok" if all(i["state"] == "ONLINE" for i in indexes) else "degraded",
            "neo4j": server_info(c.driver, c.settings.neo4j_database),
            "indexes": indexes,
            "embedding": {"model": c.embedder.model_name, "dimensions": c.embedder.dimensions},
        }

    return app
