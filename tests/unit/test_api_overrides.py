"""The REST routes over the application services, with no database: the routes depend on one
service each (api/deps.py), so a test swaps in a service built on the in-memory fakes through
FastAPI's ``dependency_overrides`` (no Container, no Neo4j, no model)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.deps import Principal, authenticate, clock_now, get_topics, get_windows
from retrieval.search import TopicSearch
from service.topics import TopicService
from service.windows import WindowResolver
from tests.fakes import FakeStores, HashEmbedder

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
NS = "unit-tenant"


@pytest.fixture
def client() -> Iterator[TestClient]:
    stores, embedder = FakeStores(), HashEmbedder()
    windows = WindowResolver(stores.sleep)
    search = TopicSearch(stores.topics, stores.events, embedder)
    topics = TopicService(stores.topics, stores.events, search, embedder, windows)  # type: ignore[arg-type]
    app = create_app()  # its lifespan (Neo4j, the model) runs only if the client is entered
    app.dependency_overrides[authenticate] = lambda: Principal(key_id="k", namespace=NS)
    app.dependency_overrides[get_topics] = lambda: topics
    app.dependency_overrides[get_windows] = lambda: windows
    app.dependency_overrides[clock_now] = lambda: NOW
    yield TestClient(app)  # not entered: no lifespan, so no database and no model


def test_a_topic_is_created_read_and_found_through_the_routes(client: TestClient) -> None:
    made = client.post(
        "/v1/topics",
        json={"name": "Billing migration", "one_liner": "moving invoices to the new ledger",
              "facts": [{"text": "cut-over on 20 March"}]},
    )  # fmt: skip
    assert made.status_code == 201, made.text
    topic = made.json()
    assert topic["version"] == 1 and topic["embedding_model"] == HashEmbedder().model_name
    got = client.get(f"/v1/topics/{topic['topic_id']}").json()
    assert got["name"] == "Billing migration" and got["events"][0]["delta_summary"]
    found = client.get("/v1/topics/search", params={"query": "billing ledger migration"}).json()
    assert [h["topic_id"] for h in found["hits"]][:1] == [topic["topic_id"]]


def test_the_same_validation_and_errors_as_with_the_database(client: TestClient) -> None:
    assert client.get("/v1/topics/no-such-topic").status_code == 404
    bad = client.post("/v1/topics", json={"name": "a\x1b[2Jb"})
    assert bad.status_code == 422 and "control characters" in bad.json()["detail"]
    vague = client.get("/v1/topics/search", params={"query": "x", "window": "banana"})
    assert vague.status_code == 422 and "'banana' is not a time phrase" in vague.json()["detail"]
