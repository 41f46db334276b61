"""Open endpoints: ``/health`` and ``/metrics`` (no API key).

Both are ``async def`` so they never wait for a token of the threadpool that runs the sync
``/v1`` routes (anyio's 40 threads): a few slow requests there must not make the server look
dead. Neo4j's state comes from ``app.state.neo4j_probe`` (``api.probe``, made in the lifespan):
one probe at a time in a thread of its own, cached for a second, and never waited on for more
than its timeout, so ``/health`` answers within ~1.5 s even while Neo4j is down or hanging.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from api.container import Container
from api.metrics import Metrics
from api.probe import Neo4jProbe, State

router = APIRouter()


@router.get("/health", tags=["health"])
async def health(request: Request) -> JSONResponse:
    """The state of each dependency (Neo4j with its version and indexes, the embedding model);
    503 when Neo4j is down."""
    c: Container = request.app.state.container
    probe: Neo4jProbe = request.app.state.neo4j_probe
    status, body = health_body(await probe.state(), c)
    return JSONResponse(jsonable_encoder(body), status_code=status)


def health_body(neo4j: State, c: Container) -> tuple[int, dict[str, Any]]:
    """The health body and its status code from Neo4j's probed state (no I/O)."""
    embedding = {"model": c.embedder.model_name, "dimensions": c.embedder.dimensions}
    dependencies: dict[str, Any] = {
        "neo4j": {"state": neo4j["state"], "age_s": neo4j["age_s"]},
        "embedder": {"state": "up"},  # loaded in the lifespan: the app does not start without it
    }
    if neo4j["state"] != "up":
        dependencies["neo4j"]["error"] = neo4j["error"]
        body = {"status": "down", "neo4j": {"error": neo4j["error"]}, "embedding": embedding}
        return 503, {**body, "dependencies": dependencies}
    indexes = neo4j["indexes"]
    online = all(i["state"] == "ONLINE" for i in indexes)
    return 200, {
        "status": "ok" if online else "degraded",
        "neo4j": neo4j["server"],
        "indexes": indexes,
        "embedding": embedding,
        "dependencies": dependencies,
    }


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus exposition text (rendered in memory: nothing here blocks)."""
    collected: Metrics = request.app.state.metrics
    body, content_type = collected.render()
    return Response(body, media_type=content_type)
