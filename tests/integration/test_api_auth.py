"""API keys: 401s, both headers, revocation, the key cache, open endpoints, and namespace
isolation (a key never reaches another namespace's topics or messages, even by guessed id)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from api.auth import ApiKeys
from api.settings import Settings
from graph.keys import ApiKeyStore
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, keys, new_key

T = "2026-03-02T09:00:00Z"
NOW = datetime(2026, 3, 2, 9, tzinfo=UTC)


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws")) as c:
        yield c


def _assert_401(response: object, says: str) -> None:
    assert response.status_code == 401, response.text  # type: ignore[attr-defined]
    assert response.headers["www-authenticate"].startswith("Bearer")  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["error"] == "AuthFailed"
    assert says in body["detail"]


def test_requests_without_a_usable_key_are_refused(client: TestClient, namespace: str) -> None:
    _assert_401(client.get("/v1/messages"), "no API key")
    _assert_401(client.get("/v1/messages", headers=bearer("nope")), "malformed")
    _assert_401(client.get("/v1/messages", headers={"Authorization": "Basic eDp5"}), "malformed")
    unknown = "shc_" + "A" * 43
    _assert_401(client.get("/v1/messages", headers=bearer(unknown)), "not known")


def test_bearer_and_x_api_key_both_authenticate(client: TestClient, namespace: str) -> None:
    key = new_key(client, namespace)
    assert client.get("/v1/messages", headers=bearer(key)).status_code == 200
    assert client.get("/v1/messages", headers={"X-API-Key": key}).status_code == 200


def test_a_revoked_key_stops_working_at_once_despite_the_cache(
    client: TestClient, namespace: str
) -> None:
    key = new_key(client, namespace)
    assert client.get("/v1/wake-packet", headers=bearer(key)).status_code == 404  # now cached
    record = keys(client).store.find(key)
    assert record is not None
    keys(client).revoke(record.key_id)
    _assert_401(client.get("/v1/wake-packet", headers=bearer(key)), "revoked")


def test_a_cached_key_costs_no_database_lookup(client: TestClient, namespace: str) -> None:
    key = new_key(client, namespace)
    service = keys(client)
    calls: list[str] = []
    find = service.store.find
    service.store.find = lambda k: calls.append(k) or find(k)  # type: ignore[method-assign]
    try:
        for _ in range(3):
            assert client.get("/v1/messages", headers=bearer(key)).status_code == 200
    finally:
        del service.store.find  # back to the class's method
    assert calls == [key]


def test_a_key_revoked_by_another_process_stops_working_when_its_entry_expires(
    client: TestClient, namespace: str
) -> None:
    """Another worker (or ``sheriff keys revoke``) revokes through its own store: this worker's
    cached entry keeps the key working for at most the cache TTL, then the key is read from
    Neo4j again (off the event loop) and refused."""
    service = keys(client)
    key = new_key(client, namespace)
    record = service.store.find(key)
    assert record is not None
    short = ApiKeys(service.store, service.clock, ttl_s=0.5)
    client.app.state.api_keys = short  # type: ignore[attr-defined]
    try:
        assert client.get("/v1/messages", headers=bearer(key)).status_code == 200  # now cached
        container = client.app.state.container  # type: ignore[attr-defined]
        other = ApiKeyStore(container.driver, container.settings.neo4j_database)
        other.revoke(record.key_id, NOW)
        assert client.get("/v1/messages", headers=bearer(key)).status_code == 200  # the cache
        time.sleep(0.6)
        _assert_401(client.get("/v1/messages", headers=bearer(key)), "revoked")
        _assert_401(client.get("/v1/messages", headers=bearer(key)), "revoked")  # cached so
    finally:
        client.app.state.api_keys = service  # type: ignore[attr-defined]


def test_open_endpoints_need_no_key(client: TestClient) -> None:
    assert client.get("/health").status_code == 200
    assert client.get("/openapi.json").json()["info"]["title"] == "Sheriff Claw"
    assert client.get("/docs").status_code == 200
    metrics = client.get("/metrics")
    assert metrics.status_code == 200
    assert "sheriff_http_requests_total" in metrics.text


def test_a_key_never_reaches_another_namespace(
    client: TestClient, namespace: str, other_namespace: str
) -> None:
    mine, theirs = bearer(new_key(client, namespace)), bearer(new_key(client, other_namespace))
    secret = client.post(
        "/v1/topics",
        json={"name": "Project Nightjar", "one_liner": "The secret launch plan for Nightjar."},
        headers=theirs,
    ).json()
    client.post(
        "/v1/messages",
        json={"messages": [{"role": "user", "content": "Nightjar launches on Friday", "at": T}]},
        headers=theirs,
    )
    own = client.post("/v1/topics", json={"name": "Garden"}, headers=mine).json()
    tid = secret["topic_id"]

    assert client.get(f"/v1/topics/{tid}", headers=mine).status_code == 404
    patch = {"version": secret["version"], "name": "pwned"}
    assert client.patch(f"/v1/topics/{tid}", json=patch, headers=mine).status_code == 404
    assert client.get(f"/v1/topics/{tid}/neighbours", headers=mine).status_code == 404
    link = client.post(f"/v1/topics/{own['topic_id']}/links", json={"to": tid}, headers=mine)
    assert link.status_code == 404
    link = client.post(f"/v1/topics/{tid}/links", json={"to": own["topic_id"]}, headers=mine)
    assert link.status_code == 404
    hits = client.get("/v1/topics/search", params={"query": "Nightjar launch"}, headers=mine)
    assert [h["name"] for h in hits.json()["hits"]] == ["Garden"]
    assert client.get("/v1/messages", headers=mine).json()["messages"] == []
    ctx = client.post("/v1/context", json={"message": "remember Nightjar?"}, headers=mine)
    assert "Nightjar" not in ctx.json()["context_text"]
    assert client.get("/v1/timeline", headers=mine).json()["events"][0]["topic_name"] == "Garden"

    still = client.get(f"/v1/topics/{tid}", headers=theirs).json()
    assert still["name"] == "Project Nightjar" and still["version"] == secret["version"]
    assert still["edges"] == []
