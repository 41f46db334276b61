"""/v1/tools and /v1/chat: the one tool registry over REST, in the key's namespace only, and the
awake loop through the real ``openai`` client to the fake Responses server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agent.fake_responses import FakeResponses, function_call, message
from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key, tenant_workspace

NOW = "2026-03-09T10:00:00+00:00"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


@pytest.fixture(scope="module")
def client(
    settings: Settings,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[TestClient]:
    ws = tmp_path_factory.mktemp("workspaces")
    with api_client(
        settings, embedder, ws, openai_api_key="sk-test", openai_base_url=fake.base_url,
        extractor="deterministic",
    ) as c:  # fmt: skip
        yield c


def _upsert(client: TestClient, key: str, name: str) -> str:
    r = client.post(
        "/v1/tools/topics_upsert",
        json={"arguments": {"name": name, "one_liner": f"all about {name}",
                            "facts": [f"{name} matters"]}, "now": NOW},
        headers=bearer(key),
    )  # fmt: skip
    assert r.status_code == 200, r.text
    return str(r.json()["output"]["topic_id"])


def test_tools_are_listed_in_responses_format(client: TestClient, namespace: str) -> None:
    r = client.get("/v1/tools", headers=bearer(new_key(client, namespace)))
    tools = {t["name"]: t for t in r.json()["tools"]}
    assert tools["topics_search"]["type"] == "function"
    assert tools["topics_search"]["strict"] is True
    assert "skills_run" in tools and "repo_read_file" in tools
    assert client.get("/v1/tools").status_code == 401


def test_calling_tools_stays_in_the_keys_namespace(
    client: TestClient, namespace: str, other_namespace: str
) -> None:
    other = other_namespace
    mine, theirs = new_key(client, namespace), new_key(client, other)
    secret_id = _upsert(client, theirs, "Their launch plan")
    _upsert(client, mine, "My garden")

    r = client.post("/v1/tools/topics_search", json={"arguments": {"query": "launch plan"}},
                    headers=bearer(mine))  # fmt: skip
    assert r.status_code == 200
    assert "Their launch plan" not in r.text
    r = client.post("/v1/tools/topics_get", json={"arguments": {"topic_ids": [secret_id]}},
                    headers=bearer(mine))  # fmt: skip
    assert r.status_code == 404
    r = client.post(
        "/v1/tools/topics_search",
        json={"arguments": {"query": "launch", "namespace": other}},
        headers=bearer(mine),
    )
    assert r.status_code == 422 and "namespace" in r.json()["detail"]


def test_tool_errors_have_clear_statuses(client: TestClient, namespace: str) -> None:
    auth = bearer(new_key(client, namespace))
    r = client.post("/v1/tools/topics_serch", json={"arguments": {}}, headers=auth)
    assert r.status_code == 404 and "topics_search" in r.json()["detail"]
    r = client.post("/v1/tools/topics_search", json={"arguments": {"k": 3}}, headers=auth)
    assert r.status_code == 422 and "query" in r.json()["detail"]
    r = client.post("/v1/tools/repo_read_file", json={"arguments": {"path": "../etc/passwd"}},
                    headers=auth)  # fmt: skip
    assert r.status_code == 403
    notes = tenant_workspace(client, namespace) / "notes.txt"
    notes.write_text("lake house: book it\n", encoding="utf-8")
    r = client.post("/v1/tools/repo_read_file", json={"arguments": {"path": "notes.txt"}},
                    headers=auth)  # fmt: skip
    assert r.status_code == 200 and "lake house" in r.json()["output"]["content"]


def test_chat_runs_the_loop_in_the_keys_namespace(
    client: TestClient, fake: FakeResponses, namespace: str
) -> None:
    key = new_key(client, namespace)
    _upsert(client, key, "Lake house booking")
    fake.enqueue(
        [function_call("topics_search", {"query": "lake house", "time_window": None, "k": 2},
                       call_id="s1")],
        [message("You wanted to book the lake house.")],
    )  # fmt: skip
    before = len(fake.requests)
    r = client.post("/v1/chat", json={"message": "what about the lake house?", "now": NOW},
                    headers=bearer(key))  # fmt: skip
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["reply"] == "You wanted to book the lake house." and body["stopped"] == "final"
    assert [c["name"] for c in body["tool_calls"]] == ["topics_search"]
    answered = fake.requests[before + 1]["input"]
    output = next(i for i in answered if i.get("type") == "function_call_output")
    assert output["call_id"] == "s1" and "Lake house booking" in output["output"]


def test_chat_without_a_model_endpoint_is_503(
    settings: Settings, embedder: MiniLMEmbedder, namespace: str, tmp_path: Path
) -> None:
    with api_client(settings, embedder, tmp_path, openai_api_key=None) as c:
        r = c.post("/v1/chat", json={"message": "hi"}, headers=bearer(new_key(c, namespace)))
    assert r.status_code == 503 and "--offline" in r.json()["detail"]


def test_topics_link_strengthens_an_edge_and_refuses_unknown_topics(
    client: TestClient, namespace: str
) -> None:
    key = new_key(client, namespace)
    a, b = _upsert(client, key, "Billing migration"), _upsert(client, key, "Invoices table")
    args = {"from_topic_id": b, "to_topic_id": a, "type": "DEPENDS_ON", "weight_delta": None}
    for expected in (1.0, 2.0):
        r = client.post("/v1/tools/topics_link", json={"arguments": args, "now": NOW},
                        headers=bearer(key))  # fmt: skip
        assert r.status_code == 200, r.text
        assert r.json()["output"]["weight"] == expected
    args["to_topic_id"] = "no-such-topic"
    r = client.post("/v1/tools/topics_link", json={"arguments": args}, headers=bearer(key))
    assert r.status_code == 404 and "no-such-topic" in r.json()["detail"]
