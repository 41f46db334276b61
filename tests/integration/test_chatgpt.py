"""A ChatGPT history comes in: tests/integration/data/chatgpt_conversations.json is a small
data export in ChatGPT's format (two conversations whose times interleave; an edited prompt
that forks a branch; a hidden empty system prompt; custom instructions; an empty text part; an
image part beside text and an image alone; model reasoning; a message without create_time).
Over REST and the CLI, into the real Neo4j with the production sleep policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

ROOT = Path(__file__).resolve().parents[2]
EXPORT = Path(__file__).parent / "data" / "chatgpt_conversations.json"
EXPECTED = [  # the current branches, merged by time
    ("user", "I'm planning a trip to Lisbon in May with Ana."),
    ("assistant", "Lisbon in May is lovely: warm days and the Santo Antonio festival starts in June."),
    ("user", "Actually, find me hotels in Baixa under 150 euros a night."),
    ("assistant", "Here are three hotels in Baixa under 150 euros a night."),
    ("system", "Custom instructions. About me: I'm a vegetarian living in Porto. "
               "How to respond: Be concise."),
    ("user", "My sourdough starter is called Bubbles and I feed it every morning."),
    ("assistant", "Bubbles is a great name for a starter."),
    ("user", "[image]\n\nThis is the Baixa hotel I liked."),
    ("assistant", "Great choice, it is close to the Rossio station."),
    ("user", "Bubbles doubled overnight, so the bake is on Saturday."),
]  # fmt: skip


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=2) as c:
        yield c


def _import(client: TestClient, auth: dict[str, str], body: bytes, **params: Any) -> Any:
    response = client.post("/v1/import/chatgpt", content=body, params=params, headers=auth)
    assert response.status_code == 200, response.text
    return response.json()


def _messages(client: TestClient, auth: dict[str, str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.get("/v1/messages", headers=auth).json()["messages"]
    return found


def test_the_current_branches_come_in_by_time_and_are_slept_on(
    client: TestClient, namespace: str
) -> None:
    auth = bearer(new_key(client, namespace))
    planned = _import(client, auth, EXPORT.read_bytes(), dry_run="true")
    assert planned["messages_found"] == len(EXPECTED) and planned["appended"] == 0
    assert planned["skipped"] == {"hidden": 1, "content thoughts": 1, "no text": 1}
    assert _messages(client, auth) == []  # a dry run writes nothing
    report = _import(client, auth, EXPORT.read_bytes())
    assert report["appended"] == len(EXPECTED) and report["conversations"] == 2
    stored = _messages(client, auth)
    assert [(m["role"], m["content"]) for m in stored] == EXPECTED
    assert [m["at"] for m in stored] == sorted(m["at"] for m in stored)
    assert stored[0]["at"] == "2026-01-05T10:01:00Z" and stored[0]["external_id"] == "chatgpt:m-u1"
    assert stored[6]["at"] == stored[5]["at"]  # no create_time: the previous message's time
    assert report["sleeps"] and all(m["compacted_at"] for m in stored[:-2])
    hits = client.get("/v1/topics/search", params={"query": "Lisbon trip"}, headers=auth).json()
    # the trip is a topic of its own, found by topic search; its name is the episode's keyphrase
    # (today "Santo Antonio", from the assistant's reply: a naming weakness left open in #12)
    trip = [h for h in hits["hits"] if "lisbon" in f"{h['name']} {h['one_liner']}".lower()]
    assert trip and trip[0] is hits["hits"][0], [(h["name"], h["one_liner"]) for h in hits["hits"]]
    everything = client.get("/v1/export", headers=auth).text
    assert "Alfama" not in everything  # the abandoned branch never came in
    assert "file-service" not in everything and "The user likes the hotel" not in everything


def test_importing_the_same_export_again_adds_nothing(client: TestClient, namespace: str) -> None:
    auth = bearer(new_key(client, namespace))
    _import(client, auth, EXPORT.read_bytes())
    again = _import(client, auth, EXPORT.read_bytes())
    assert again["appended"] == 0 and again["already_present"] == len(EXPECTED)
    assert len(_messages(client, auth)) == len(EXPECTED)


def test_a_history_older_than_the_conversation_is_refused_whole(
    client: TestClient, namespace: str
) -> None:
    auth = bearer(new_key(client, namespace))
    late = {"messages": [{"role": "user", "content": "hello", "at": "2026-02-01T00:00:00Z"}]}
    client.post("/v1/messages", json=late, headers=auth).raise_for_status()
    response = client.post("/v1/import/chatgpt", content=EXPORT.read_bytes(), headers=auth)
    assert response.status_code == 422 and "time order" in response.json()["detail"]
    assert [m["content"] for m in _messages(client, auth)] == ["hello"]


def _broken(change: Any) -> bytes:
    data = json.loads(EXPORT.read_text(encoding="utf-8"))
    change(data)
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"", "body"),
        (b"[{", "conversations: not valid JSON"),
        (b'{"mapping": {}}', "conversations: expected a JSON list"),
        (_broken(lambda d: d[0].pop("mapping")), "conversations[0]: mapping: Field required"),
        (_broken(lambda d: d[1]["mapping"]["b1"]["message"]["author"].pop("role")),
         "conversations[1]: mapping.b1.message.author.role"),
        (_broken(lambda d: d[0]["mapping"]["u1"].update(parent="nowhere")),
         "conversations[0].mapping.u1.parent"),
        (_broken(lambda d: d[1]["mapping"]["r"].update(parent="b3")), "loop"),
    ],
)  # fmt: skip
def test_a_bad_export_is_a_422_naming_the_field_and_nothing_is_written(
    client: TestClient, namespace: str, body: bytes, field: str
) -> None:
    auth = bearer(new_key(client, namespace))
    response = client.post("/v1/import/chatgpt", content=body, headers=auth)
    assert response.status_code == 422, response.text
    assert field in response.json()["detail"]
    assert _messages(client, auth) == []


def test_the_cli_imports_with_a_progress_bar(
    namespace: str, settings: Settings, client: TestClient
) -> None:
    uri, user, password = settings.connection()
    env = {**os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password,
           "SHERIFF_TAIL_TURNS": "2"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", "from api.cli import main; main()",
         "import", "chatgpt", str(EXPORT), "--namespace", namespace],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["appended"] == len(EXPECTED) and report["sleeps"]
    auth = bearer(new_key(client, namespace))
    assert [(m["role"], m["content"]) for m in _messages(client, auth)] == EXPECTED
