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
    assert body["neo4j"]["version"].startswith("2026.")  # the version managed (2025.01+ needed)
    names = {i["name"]: i for i in body["indexes"]}
    vectors = ("topic_embedding_ns", "topic_event_embedding_ns", "skill_embedding_ns",
               "passage_embedding_ns")  # fmt: skip
    for index in (*vectors, "topic_text"):
        assert names[index]["state"] == "ONLINE"
    assert {names[index]["type"] for index in vectors} == {"VECTOR"}
    assert "topic_embedding" not in names  # the unfiltered index, dropped by 023
    assert body["embedding"] == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "dimensions": 384,
    }
    assert body["status"] == "ok"
