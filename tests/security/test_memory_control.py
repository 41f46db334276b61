"""Memory control stays inside the key's namespace: forget, facts, history, export and import
with another tenant's ids answer 404 (or are kept apart) and change nothing of theirs; an
import file cannot write into another namespace, even when its header names that namespace and
its records carry that namespace's ids. Real server app, real Neo4j."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
VICTIM_TURNS = [
    ("user", "The Zanzibar merger plan needs board approval by Friday."),
    ("assistant", "Understood: board approval for the Zanzibar merger plan by Friday."),
    ("user", "My favourite colour is blue."),
    ("user", "The caterer is Rosa's Kitchen; they want a deposit by Thursday."),
]


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=0) as c:
        yield c


@pytest.fixture
def victim(client: TestClient, namespace: str) -> dict[str, str]:
    auth = bearer(new_key(client, namespace))
    body = [{"role": r, "content": t, "at": (DAY1 + timedelta(minutes=i)).isoformat(),
             "external_id": f"v-{i}"} for i, (r, t) in enumerate(VICTIM_TURNS)]  # fmt: skip
    client.post("/v1/messages", json={"messages": body, "auto_sleep": False},
                headers=auth).raise_for_status()  # fmt: skip
    client.post("/v1/sleep", json={"now": (DAY1 + timedelta(hours=1)).isoformat()},
                headers=auth).raise_for_status()  # fmt: skip
    return auth


@pytest.fixture
def attacker(client: TestClient, other_namespace: str) -> dict[str, str]:
    return bearer(new_key(client, other_namespace))


def _export(client: TestClient, auth: dict[str, str]) -> str:
    text = client.get("/v1/export", headers=auth).text
    return "\n".join(line for line in text.splitlines() if '"kind": "header"' not in line)


def _records(document: str, kind: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in document.splitlines() if f'"kind": "{kind}"' in x]


def test_another_namespaces_ids_are_404_and_nothing_is_deleted(
    client: TestClient, victim: dict[str, str], attacker: dict[str, str]
) -> None:
    before = _export(client, victim)
    topic = _records(before, "topic")[0]
    message = _records(before, "message")[0]
    fact = topic["facts"][0]["fact_id"]
    attempts = [
        ("DELETE", f"/v1/topics/{topic['topic_id']}", {"messages": "true"}, None),
        ("DELETE", f"/v1/topics/{topic['topic_id']}", {"dry_run": "true"}, None),
        ("DELETE", f"/v1/messages/{message['message_id']}", {}, None),
        ("DELETE", "/v1/messages", {"external_id": "v-0"}, None),
        ("GET", f"/v1/topics/{topic['topic_id']}/history", {}, None),
        ("GET", f"/v1/topics/{topic['topic_id']}", {"as_of": "2026-03-03T00:00:00Z"}, None),
        ("POST", f"/v1/topics/{topic['topic_id']}/facts/{fact}/correct", {}, {"text": "x"}),
        ("POST", f"/v1/topics/{topic['topic_id']}/facts/{fact}/retract", {}, {}),
        ("POST", "/v1/tools/memory_forget", {},
         {"arguments": {"topic_id": topic["topic_id"], "dry_run": False}}),
        ("POST", "/v1/tools/facts_correct", {},
         {"arguments": {"topic_id": topic["topic_id"], "fact_id": fact, "text": "x"}}),
        ("POST", "/v1/tools/topics_history", {}, {"arguments": {"topic_id": topic["topic_id"]}}),
    ]  # fmt: skip
    for method, path, params, body in attempts:
        response = client.request(method, path, params=params, json=body, headers=attacker)
        assert response.status_code == 404, (path, response.text)
    assert _export(client, victim) == before


def test_forget_by_query_and_namespace_reach_only_the_callers_namespace(
    client: TestClient, victim: dict[str, str], attacker: dict[str, str], namespace: str
) -> None:
    before = _export(client, victim)
    listed = client.post("/v1/forget", json={"query": "Zanzibar"}, headers=attacker).json()
    assert listed["matches"] == {"query": "Zanzibar", "topics": [], "items": [], "messages": [],
                                 "truncated": False}  # fmt: skip
    client.post("/v1/forget", json={"query": "Zanzibar", "dry_run": False},
                headers=attacker).raise_for_status()  # fmt: skip
    refused = client.delete("/v1/namespace", params={"confirm": namespace}, headers=attacker)
    assert refused.status_code == 422 and "query.confirm" in refused.json()["detail"]
    own = client.delete("/v1/namespace", params={"confirm": listed["report"]["namespace"]},
                        headers=attacker)  # fmt: skip
    assert own.status_code == 200 and own.json()["keys_revoked"] == 1
    assert _export(client, victim) == before
    assert client.get("/v1/messages", headers=victim).status_code == 200  # the victim's key lives


def test_an_import_cannot_write_into_the_namespace_its_file_names(
    client: TestClient, victim: dict[str, str], attacker: dict[str, str], namespace: str
) -> None:
    before = _export(client, victim)
    stolen = client.get("/v1/export", headers=victim).text.splitlines()
    header = json.loads(stolen[0])
    assert header["namespace"] == namespace  # the file names the victim's namespace
    rewritten = []
    for line in stolen:  # and tries to rewrite the victim's topics under their own ids
        record = json.loads(line)
        if record["kind"] == "topic":
            record["name"] = "owned"
            record["one_liner"] = "owned by the attacker"
            record["facts"] = [{"text": "owned", "source_message_ids": []}]
        rewritten.append(json.dumps(record))
    report = client.post("/v1/import", content="\n".join(rewritten), headers=attacker).json()
    assert report["namespace"] != namespace and report["source_namespace"] == namespace
    assert report["remapped_ids"] == sum(report["counts"][k]["created"] for k in
                                         ("message", "topic", "event", "wake_packet"))  # fmt: skip
    assert _export(client, victim) == before  # not one property of the victim's changed
    mine = _export(client, attacker)
    assert "owned" in mine
    victim_ids = {r["topic_id"] for r in _records(before, "topic")}
    assert not victim_ids & {r["topic_id"] for r in _records(mine, "topic")}
    for packet in _records(mine, "wake_packet"):
        assert not victim_ids & set(packet["top_topic_ids"])


def test_crafted_references_to_another_namespace_are_refused(
    client: TestClient, victim: dict[str, str], attacker: dict[str, str]
) -> None:
    before = _export(client, victim)
    target = _records(before, "topic")[0]["topic_id"]
    lines = [
        {"kind": "header", "format": "sheriff-claw-export", "version": 1, "namespace": "x",
         "exported_at": "2026-03-05T00:00:00Z",
         "embedding": {"model": "m", "dimensions": 384}, "vectors": False},
        {"kind": "topic", "topic_id": "mine", "name": "Mine",
         "time": {"first_seen_at": "2026-03-05T00:00:00Z", "last_seen_at": "2026-03-05T00:00:00Z"}},
        {"kind": "event", "event_id": "e-1", "topic_id": target, "at": "2026-03-05T00:00:00Z",
         "delta_summary": "attached to the victim's topic"},
        {"kind": "edge", "from_topic_id": "mine", "to_topic_id": target, "type": "RELATES_TO",
         "weight": 50.0},
        {"kind": "end", "counts": {"topic": 1, "event": 1, "edge": 1}},
    ]  # fmt: skip
    document = "\n".join(json.dumps(x) for x in lines)
    report = client.post("/v1/import", content=document, headers=attacker).json()
    assert report["counts"]["topic"]["created"] == 1
    assert report["counts"]["event"]["refused"] == 1 and report["counts"]["edge"]["refused"] == 1
    assert _export(client, victim) == before
