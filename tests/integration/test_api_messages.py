"""/v1/messages: append (with the production sleep policy), list by window, and refusals that
name the bad field and leave the stored conversation as it was."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws")) as c:
        yield c


@pytest.fixture
def auth(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


def _msg(content: str, at: datetime, role: str = "user", **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "at": at.isoformat(), **extra}


def test_append_returns_the_stored_messages_in_order(
    client: TestClient, auth: dict[str, str]
) -> None:
    body = {
        "messages": [
            _msg("We should plan the garden party.", T0, external_id="ext-1"),
            _msg("Saturday works.", T0 + timedelta(minutes=1), role="assistant"),
        ]
    }
    response = client.post("/v1/messages", json=body, headers=auth)
    assert response.status_code == 201, response.text
    data = response.json()
    assert data["appended"] == 2 and data["sleeps"] == []
    first, second = data["messages"]
    assert second["seq"] == first["seq"] + 1
    assert first["external_id"] == "ext-1" and second["role"] == "assistant"
    assert first["at"] == "2026-03-02T09:00:00Z"


def test_a_long_silence_runs_the_sleep_policy(client: TestClient, auth: dict[str, str]) -> None:
    talk = [_msg(f"Turn {i} about the rose bed and the compost.", T0 + timedelta(minutes=i))
            for i in range(14)]  # fmt: skip
    client.post("/v1/messages", json={"messages": talk}, headers=auth).raise_for_status()
    later = {"messages": [_msg("Back again: how are the roses?", T0 + timedelta(hours=9))]}
    data = client.post("/v1/messages", json=later, headers=auth).json()
    [sleep] = data["sleeps"]
    assert sleep["reason"] == "idle" and sleep["messages_compacted"] > 0
    assert client.get("/v1/wake-packet", headers=auth).status_code == 200


def test_auto_sleep_false_only_appends(client: TestClient, auth: dict[str, str]) -> None:
    talk = [_msg(f"Line {i}", T0 + timedelta(hours=7 * i)) for i in range(15)]
    data = client.post(
        "/v1/messages", json={"messages": talk, "auto_sleep": False}, headers=auth
    ).json()
    assert data["appended"] == 15 and data["sleeps"] == []


def test_list_by_phrase_and_by_range(client: TestClient, auth: dict[str, str]) -> None:
    talk = [_msg(f"Day {d} note", T0 - timedelta(days=d)) for d in (20, 9, 3, 0)]
    client.post("/v1/messages", json={"messages": talk[::1]}, headers=auth).raise_for_status()
    now = (T0 + timedelta(hours=1)).isoformat()
    week = client.get("/v1/messages", params={"window": "last week", "now": now}, headers=auth)
    data = week.json()
    assert [m["content"] for m in data["messages"]] == ["Day 3 note", "Day 0 note"]
    assert data["time_window"]["phrase"] == "last week" and data["truncated"] is False
    ranged = client.get(
        "/v1/messages",
        params={"from": (T0 - timedelta(days=10)).isoformat(), "to": T0.isoformat(), "limit": 1},
        headers=auth,
    ).json()
    assert [m["content"] for m in ranged["messages"]] == ["Day 9 note"]
    assert ranged["truncated"] is True


def test_window_errors_say_what_is_wrong(client: TestClient, auth: dict[str, str]) -> None:
    both = client.get(
        "/v1/messages", params={"window": "yesterday", "from": T0.isoformat()}, headers=auth
    )
    assert both.status_code == 422 and "not both" in both.json()["detail"]
    vague = client.get("/v1/messages", params={"window": "banana"}, headers=auth)
    assert vague.status_code == 422 and "'banana' is not a time phrase" in vague.json()["detail"]
    naive = client.get("/v1/messages", params={"from": "2026-03-02T09:00:00"}, headers=auth)
    assert naive.status_code == 422
    assert naive.json()["fields"][0]["field"] == "query.from"


def test_bad_messages_name_the_field_and_write_nothing(
    client: TestClient, auth: dict[str, str]
) -> None:
    bad_role = {"messages": [_msg("ok", T0), _msg("hi", T0, role="robot")]}
    response = client.post("/v1/messages", json=bad_role, headers=auth)
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "ValidationFailed"
    assert body["fields"][0]["field"] == "body.messages.1.role"
    assert "body.messages.1.role" in body["detail"]

    naive = {"messages": [{"role": "user", "content": "hi", "at": "2026-03-02T09:00:00"}]}
    fields = client.post("/v1/messages", json=naive, headers=auth).json()["fields"]
    assert fields[0]["field"] == "body.messages.0.at" and "timezone" in fields[0]["message"]

    backwards = {"messages": [_msg("second", T0), _msg("first", T0 - timedelta(hours=1))]}
    response = client.post("/v1/messages", json=backwards, headers=auth)
    assert response.status_code == 422 and "time order" in response.json()["detail"]

    blank = client.post("/v1/messages", json={"messages": [_msg("   ", T0)]}, headers=auth)
    assert blank.json()["fields"][0]["field"] == "body.messages.0.content"
    unknown = client.post("/v1/messages", json={"messages": [], "extra": 1}, headers=auth)
    assert {f["field"] for f in unknown.json()["fields"]} == {"body.messages", "body.extra"}

    assert client.get("/v1/messages", headers=auth).json()["messages"] == []
