"""Open endpoints: ``/health`` and ``/metrics`` (no API key).

Both are ``async def`` so they never wait for a token of the threadpool that runs the sync
``/v1`` routes (anyio's 40 threads): a few slow requests there must not make the server look
dead. ``/health``'s two Neo4j queries are blocking, so they run in a thread of their own small
limiter (``app.state.probe_limiter``, made in the lifespan), not on the event loop.
"""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

from api.container import Container
from api.metrics import Metrics
from graph.db import index_states, server_info

router = APIRouter()

PROBE_THREADS = 4  # concurrent /health probes; more wait for one of these, not for the routes


@router.get("/health", tags=["health"])
async def health(request: Request) -> JSONResponse:
    """Neo4j version, index states and the embedding model in use; 503 when Neo4j is down."""
    c: Container = request.app.state.container
    limiter = getattr(request.app.state, "probe_limiter", None)
    status, body = await anyio.to_thread.run_sync(_probe, c, limiter=limiter)
    return JSONResponse(jsonable_encoder(body), status_code=status)


def _probe(c: Container) -> tuple[int, dict[str, Any]]:
    """The health body and its status code (blocking: Neo4j is asked twice)."""
    embedding = {"model": c.embedder.model_name, "dimensions": c.embedder.dimensions}
    try:
        neo4j = server_info(c.driver, c.settings.neo4j_database)
        indexes = index_states(c.driver, c.settings.neo4j_database)
    except (ServiceUnavailable, SessionExpired, Neo4jError) as exc:
        return 503, {"status": "down", "neo4j": {"error": str(exc)}, "embedding": embedding}
    return 200, {
        "status": "ok" if all(i["state"] == "ONLINE" for i in indexes) else "degraded",
        "neo4j": neo4j,
        "indexes": indexes,
        "embedding": embedding,
    }


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus exposition text (rendered in memory: nothing here blocks)."""
    collected: Metrics = request.app.state.metrics
    body, content_type = collected.render()
    return Response(body, media_type=content_type)
