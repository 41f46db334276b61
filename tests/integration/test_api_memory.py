"""The memory pipeline over REST: messages in, sleep, the wake packet, wake, the timeline, and
the awake-loop context (budget, trace, citations, time windows)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key
from tests.integration.dialogues import PARTY_AND_BIKE

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
SLEPT = DAY1 + timedelta(hours=2)
LATER = DAY1 + timedelta(days=8)  # the Tuesday of the following week
TURNS = PARTY_AND_BIKE


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=2) as c:
        yield c


@pytest.fixture
def slept(client: TestClient, namespace: str) -> dict[str, str]:
    """A namespace whose first day was talked through and slept."""
    auth = bearer(new_key(client, namespace))
    messages = [
        {"role": role, "content": text, "at": (DAY1 + timedelta(minutes=i)).isoformat()}
        for i, (role, text) in enumerate(TURNS)
    ]
    client.post(
        "/v1/messages", json={"messages": messages, "auto_sleep": False}, headers=auth
    ).raise_for_status()
    response = client.post("/v1/sleep", json={"now": SLEPT.isoformat()}, headers=auth)
    assert response.status_code == 200, response.text
    return auth


def _post(client: TestClient, path: str, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = client.post(path, json=body, headers=auth)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_sleep_compacts_and_writes_the_wake_packet(
    client: TestClient, slept: dict[str, str]
) -> None:
    packet = client.get("/v1/wake-packet", headers=slept).json()
    assert packet["slept_at"] == "2026-03-02T11:00:00Z"
    assert packet["top_topic_ids"]
    topic = client.get(f"/v1/topics/{packet['top_topic_ids'][0]}", headers=slept).json()
    assert topic["facts"] and topic["events"][0]["source_message_ids"]
    remaining = client.get("/v1/messages", headers=slept).json()["messages"]
    assert len(remaining) == len(TURNS)  # messages are never deleted, only marked compacted
    assert all(m["compacted_at"] for m in remaining[:-2])


def test_sleep_without_a_body_uses_the_clock(client: TestClient, namespace: str) -> None:
    auth = bearer(new_key(client, namespace))
    summary = client.post("/v1/sleep", headers=auth).json()
    assert summary["messages_compacted"] == 0 and summary["reason"] == "explicit"
    before = datetime.now(UTC) - timedelta(minutes=5)
    assert datetime.fromisoformat(summary["slept_at"]) > before


def test_the_wake_packet_is_404_before_the_first_sleep(client: TestClient, namespace: str) -> None:
    response = client.get("/v1/wake-packet", headers=bearer(new_key(client, namespace)))
    assert response.status_code == 404 and "never slept" in response.json()["detail"]


def test_wake_recalls_the_topics_of_the_message(client: TestClient, slept: dict[str, str]) -> None:
    woken = _post(client, "/v1/wake", slept, message="Is Rosa's Kitchen still catering the party?",
                  now=LATER.isoformat())  # fmt: skip
    assert woken["packet"]["slept_at"] == "2026-03-02T11:00:00Z"
    names = " ".join(t["name"] + " " + t["one_liner"] for t in woken["topics"]).lower()
    assert "party" in names or "rosa" in names


def test_timeline_lists_what_the_sleep_changed(client: TestClient, slept: dict[str, str]) -> None:
    thursday = (DAY1 + timedelta(days=3)).isoformat()
    got = client.get(
        "/v1/timeline", params={"window": "last week", "now": thursday}, headers=slept
    ).json()
    assert got["time_window"]["phrase"] == "last week"
    assert got["events"] and all(e["at"].startswith("2026-03-02T09:0") for e in got["events"])
    assert all(e["topic_name"] for e in got["events"])
    empty = client.get(
        "/v1/timeline", params={"window": "yesterday", "now": LATER.isoformat()}, headers=slept
    ).json()
    assert empty["events"] == []


def test_context_recalls_cites_and_fits_the_budget(
    client: TestClient, slept: dict[str, str]
) -> None:
    ctx = _post(client, "/v1/context", slept, message="how much is the caterer's deposit for the party?",
                now=LATER.isoformat(), budget=300, trace=True)  # fmt: skip
    assert "Rosa" in ctx["context_text"]
    assert 0 < ctx["used_tokens"] <= ctx["budget"] == 300
    assert ctx["trace"] and {"record_id", "decision"} <= set(ctx["trace"][0])
    assert ctx["items"] and ctx["request_class"] in {"A", "B"}
    lean = _post(client, "/v1/context", slept, message="how much is the caterer's deposit?",
                 now=LATER.isoformat())  # fmt: skip
    assert lean["trace"] is None


def test_context_resolves_time_phrases_against_the_sleep(
    client: TestClient, slept: dict[str, str]
) -> None:
    ctx = _post(client, "/v1/context", slept, message="what did we talk about before you slept?",
                now=LATER.isoformat())  # fmt: skip
    assert ctx["time_window"]["end"] == "2026-03-02T11:00:00Z"
    assert ctx["deep"] is True


def test_context_refuses_a_bad_budget(client: TestClient, slept: dict[str, str]) -> None:
    response = client.post("/v1/context", json={"message": "hi", "budget": 10}, headers=slept)
    assert response.status_code == 422
    assert response.json()["fields"][0]["field"] == "body.budget"
