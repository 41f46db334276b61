"""Request limits and metrics on the real app: 413 for oversize bodies (declared or chunked),
nothing stored; the Prometheus counters by route template and status."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

LIMIT = 4096


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    ws = tmp_path_factory.mktemp("ws")
    with api_client(settings, embedder, ws, api_max_body_bytes=LIMIT) as c:
        yield c


@pytest.fixture
def auth(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


def _body(size: int) -> bytes:
    """A valid messages body of exactly ``size`` bytes."""
    empty = json.dumps({"messages": [{"role": "user", "content": ""}]}).encode()
    return json.dumps(
        {"messages": [{"role": "user", "content": "x" * (size - len(empty))}]}
    ).encode()


def _chunks(data: bytes, size: int = 1000) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def _stored(client: TestClient, auth: dict[str, str]) -> int:
    return len(client.get("/v1/messages", headers=auth).json()["messages"])


def test_a_declared_oversize_body_is_413(client: TestClient, auth: dict[str, str]) -> None:
    headers = {**auth, "Content-Type": "application/json"}
    response = client.post("/v1/messages", content=_body(LIMIT + 1), headers=headers)
    assert response.status_code == 413
    assert response.json() == {
        "error": "PayloadTooLarge",
        "detail": f"request body over the {LIMIT}-byte limit: "
        f"the request declares Content-Length {LIMIT + 1}",
    }
    assert _stored(client, auth) == 0


def test_a_chunked_oversize_body_is_413(client: TestClient, auth: dict[str, str]) -> None:
    headers = {**auth, "Content-Type": "application/json"}
    request = client.build_request(
        "POST", "/v1/messages", content=_chunks(_body(LIMIT + 1)), headers=headers
    )
    assert "content-length" not in request.headers
    assert request.headers["transfer-encoding"] == "chunked"
    response = client.send(request)
    assert response.status_code == 413
    assert "is larger than that" in response.json()["detail"]
    assert _stored(client, auth) == 0


def test_a_body_at_the_limit_is_accepted(client: TestClient, auth: dict[str, str]) -> None:
    headers = {**auth, "Content-Type": "application/json"}
    response = client.post("/v1/messages", content=_chunks(_body(LIMIT)), headers=headers)
    assert response.status_code == 201, response.text
    assert _stored(client, auth) == 1


def test_malformed_json_is_a_422_that_says_so(client: TestClient, auth: dict[str, str]) -> None:
    headers = {**auth, "Content-Type": "application/json"}
    response = client.post("/v1/messages", content=b'{"messages": [', headers=headers)
    assert response.status_code == 422
    assert response.json()["fields"][0]["type"] == "json_invalid"


def test_metrics_count_by_route_template_and_status(
    client: TestClient, auth: dict[str, str]
) -> None:
    for tid in ("a", "b", "c"):
        assert client.get(f"/v1/topics/{tid}", headers=auth).status_code == 404
    client.get("/v1/messages")  # 401
    response = client.get("/v1/messages", headers={**auth, "X-Request-ID": "req-42"})
    assert response.headers["x-request-id"] == "req-42"
    text = client.get("/metrics").text
    assert (
        'sheriff_http_requests_total{method="GET",route="/v1/topics/{topic_id}",status="404"}'
        in text
    )
    assert 'route="/v1/topics/a"' not in text
    assert 'sheriff_auth_total{outcome="missing"}' in text
    assert 'sheriff_api_key_cache_total{result="hit"}' in text
    assert "sheriff_http_request_duration_seconds_bucket" in text
    assert "process_resident_memory_bytes" in text
