"""The key gate when the key store cannot answer: Neo4j out of reach is a 503 that trips the
probe, never a 500, and the route behind the gate is not reached."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from api.keygate import KeyGateMiddleware
from graph.errors import Neo4jUnavailable


class _DownKeys:
    """A key service whose cache misses and whose store read finds Neo4j out of reach."""

    def from_cache(self, key: str | None) -> None:
        return None

    def from_store(self, key: str) -> Any:
        raise Neo4jUnavailable("no connection could be opened to Neo4j at bolt://x:7687")


class _Probe:
    def __init__(self) -> None:
        self.trips = 0

    def trip(self) -> None:
        self.trips += 1


def _app(reached: list[str]) -> Starlette:
    async def route(request: Request) -> PlainTextResponse:
        reached.append(request.url.path)
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/v1/context", route, methods=["POST"])])
    app.state.api_keys = _DownKeys()
    app.state.neo4j_probe = _Probe()
    app.add_middleware(KeyGateMiddleware)
    return app


@pytest.mark.anyio
async def test_a_key_store_out_of_reach_is_a_503_that_trips_the_probe() -> None:
    reached: list[str] = []
    app = _app(reached)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.post(
            "/v1/context", headers={"Authorization": "Bearer sk-claw-x"}, json={"message": "hi"}
        )
    assert answer.status_code == 503
    assert answer.json()["error"] == "Neo4jUnavailable"
    assert "no connection could be opened" in answer.json()["detail"]
    assert answer.headers.get("retry-after")
    assert app.state.neo4j_probe.trips == 1
    assert reached == []
