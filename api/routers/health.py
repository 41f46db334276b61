"""Open endpoints: ``/health`` and ``/metrics`` (no API key)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

from api.container import Container
from api.metrics import Metrics
from graph.db import index_states, server_info

router = APIRouter()


@router.get("/health", tags=["health"])
def health(request: Request) -> JSONResponse:
    """Neo4j version, index states and the embedding model in use; 503 when Neo4j is down."""
    c: Container = request.app.state.container
    embedding = {"model": c.embedder.model_name, "dimensions": c.embedder.dimensions}
    try:
        neo4j = server_info(c.driver, c.settings.neo4j_database)
        indexes = index_states(c.driver, c.settings.neo4j_database)
    except (ServiceUnavailable, SessionExpired, Neo4jError) as exc:
        body: dict[str, Any] = {
            "status": "down",
            "neo4j": {"error": str(exc)},
            "embedding": embedding,
        }
        return JSONResponse(body, status_code=503)
    body = {
        "status": "ok" if all(i["state"] == "ONLINE" for i in indexes) else "degraded",
        "neo4j": neo4j,
        "indexes": indexes,
        "embedding": embedding,
    }
    return JSONResponse(jsonable_encoder(body))


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus exposition text."""
    collected: Metrics = request.app.state.metrics
    body, content_type = collected.render()
    return Response(body, media_type=content_type)
