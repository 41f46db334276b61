"""The API skeleton's health endpoint against the real Neo4j and model."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.app import create_app
from api.container import Container
from api.settings import Settings


def test_health_reports_neo4j_version_indexes_and_model(settings: Settings) -> None:
    container = Container(settings)
    with TestClient(create_app(container)) as client:
        body = client.get("/health").json()
    assert body["neo4j"]["version"].startswith(("5.26", "2026."))  # the versions managed
    names = {i["name"]: i for i in body["indexes"]}
    for index in ("topic_embedding", "topic_event_embedding", "skill_embedding", "topic_text"):
        assert names[index]["state"] == "ONLINE"
    assert names["topic_embedding"]["type"] == "VECTOR"
    assert body["embedding"] == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "dimensions": 384,
    }
    assert body["status"] == "ok"
