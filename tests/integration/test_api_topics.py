"""/v1/topics: create, read with events and edges, versioned update (409), search with windows,
neighbours, links; unknown ids are 404 and refused input leaves the topic as it was."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

NOW = "2026-03-10T12:00:00Z"


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws")) as c:
        yield c


@pytest.fixture
def auth(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


def _create(client: TestClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = client.post("/v1/topics", json=body, headers=auth)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def test_create_then_read_with_events(client: TestClient, auth: dict[str, str]) -> None:
    created = _create(
        client,
        auth,
        name="Garden party",
        one_liner="A garden party for Ana's birthday on Saturday.",
        aliases=["ana's party"],
        facts=[{"text": "Ana turns 30", "at": "2026-03-01T10:00:00Z"}],
        numbers=[{"key": "guests", "value": 25, "unit": "people", "at": "2026-03-01T10:00:00Z"}],
        open_loops=[{"text": "Who brings the cake?"}],
        first_seen_at="2026-03-01T10:00:00Z",
        last_seen_at="2026-03-02T10:00:00Z",
        artifact_refs=["repo:docs/party.md"],
    )
    assert created["version"] == 1 and created["embedding_model"].endswith("MiniLM-L6-v2")
    got = client.get(f"/v1/topics/{created['topic_id']}", headers=auth).json()
    assert got["name"] == "Garden party" and got["aliases"] == ["ana's party"]
    assert got["numbers"][0]["value"] == 25 and got["facts"][0]["text"] == "Ana turns 30"
    assert got["time"]["first_seen_at"] == "2026-03-01T10:00:00Z"
    assert got["links"]["artifact_refs"] == ["repo:docs/party.md"]
    assert [e["delta_summary"] for e in got["events"]] == ["created via the API"]


def test_secrets_are_redacted_before_they_are_stored(
    client: TestClient, auth: dict[str, str]
) -> None:
    created = _create(client, auth, name="Deploy", facts=[{"text": "password=hunter2hunter2"}])
    assert "hunter2" not in created["facts"][0]["text"]
    assert "[REDACTED:password]" in created["facts"][0]["text"]


def test_update_with_the_read_version_then_a_stale_one_conflicts(
    client: TestClient, auth: dict[str, str]
) -> None:
    topic = _create(client, auth, name="Sheriff Claw", one_liner="Memory for agents.")
    tid = topic["topic_id"]
    ok = client.patch(
        f"/v1/topics/{tid}",
        json={"version": 1, "one_liner": "Time-aware graph memory for agents.",
              "skill_refs": ["skill:write_docs"]},
        headers=auth,
    )  # fmt: skip
    assert ok.status_code == 200, ok.text
    assert ok.json()["version"] == 2 and ok.json()["name"] == "Sheriff Claw"
    stale = client.patch(f"/v1/topics/{tid}", json={"version": 1, "name": "X"}, headers=auth)
    assert stale.status_code == 409
    assert stale.json()["error"] == "VersionConflict" and "version 2" in stale.json()["detail"]
    got = client.get(f"/v1/topics/{tid}", headers=auth).json()
    assert got["name"] == "Sheriff Claw" and got["version"] == 2
    assert got["one_liner"] == "Time-aware graph memory for agents."
    assert got["links"]["skill_refs"] == ["skill:write_docs"]
    assert got["events"][-1]["delta_summary"] == "updated via the API: one_liner, skill_refs"


def test_refused_updates_leave_the_topic_intact(client: TestClient, auth: dict[str, str]) -> None:
    tid = _create(client, auth, name="Budget")["topic_id"]
    cases = [
        ({"name": "no version"}, "body.version"),
        ({"version": 1, "name": ""}, "body.name"),
        ({"version": 1, "facts": [{"text": "x", "at": "yesterday"}]}, "body.facts.0.at"),
        ({"version": 1, "numbers": [{"key": "k", "value": 1}]}, "body.numbers.0.at"),
        ({"version": 1, "colour": "red"}, "body.colour"),
        ({"version": 2**60}, "body.version"),
    ]
    for body, field in cases:
        response = client.patch(f"/v1/topics/{tid}", json=body, headers=auth)
        assert response.status_code == 422, (body, response.text)
        assert field in [f["field"] for f in response.json()["fields"]], (body, response.text)
    early = client.patch(
        f"/v1/topics/{tid}", json={"version": 1, "last_seen_at": "2000-01-01T00:00:00Z"},
        headers=auth,
    )  # fmt: skip
    assert early.status_code == 422 and "first_seen_at" in early.json()["detail"]
    got = client.get(f"/v1/topics/{tid}", headers=auth).json()
    assert got["name"] == "Budget" and got["version"] == 1 and len(got["events"]) == 1


def test_unknown_ids_are_404(client: TestClient, auth: dict[str, str]) -> None:
    tid = _create(client, auth, name="Real")["topic_id"]
    ghost = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/v1/topics/{ghost}", headers=auth).status_code == 404
    assert client.patch(f"/v1/topics/{ghost}", json={"version": 1}, headers=auth).status_code == 404
    assert client.get(f"/v1/topics/{ghost}/neighbours", headers=auth).status_code == 404
    missing = client.post(f"/v1/topics/{tid}/links", json={"to": ghost}, headers=auth)
    assert missing.status_code == 404 and ghost in missing.json()["detail"]
    assert client.get(f"/v1/topics/{'x' * 65}", headers=auth).status_code == 422


def test_links_and_neighbours(client: TestClient, auth: dict[str, str]) -> None:
    party = _create(client, auth, name="Garden party")["topic_id"]
    cake = _create(client, auth, name="Cake order")["topic_id"]
    venue = _create(client, auth, name="Venue")["topic_id"]
    edge = client.post(
        f"/v1/topics/{party}/links", json={"to": cake, "type": "depends_on", "weight": 2},
        headers=auth,
    )  # fmt: skip
    assert edge.status_code == 200, edge.text
    assert edge.json()["type"] == "DEPENDS_ON" and edge.json()["weight"] == 2
    again = client.post(
        f"/v1/topics/{party}/links", json={"to": cake, "type": "DEPENDS_ON"}, headers=auth
    )
    assert again.json()["weight"] == 3
    client.post(f"/v1/topics/{venue}/links", json={"to": party}, headers=auth).raise_for_status()
    near = client.get(f"/v1/topics/{party}/neighbours", headers=auth).json()
    assert [(n["name"], n["type"], n["direction"]) for n in near] == [
        ("Cake order", "DEPENDS_ON", "out"),
        ("Venue", "RELATES_TO", "in"),
    ]
    only = client.get(
        f"/v1/topics/{party}/neighbours", params={"types": "RELATES_TO"}, headers=auth
    ).json()
    assert [n["name"] for n in only] == ["Venue"]
    self_link = client.post(f"/v1/topics/{party}/links", json={"to": party}, headers=auth)
    assert self_link.status_code == 422 and "itself" in self_link.json()["detail"]
    bad_type = client.post(f"/v1/topics/{party}/links", json={"to": cake, "type": "LIKES"},
                           headers=auth)  # fmt: skip
    assert bad_type.json()["fields"][0]["field"] == "body.type"
    assert len(client.get(f"/v1/topics/{party}", headers=auth).json()["edges"]) == 2


def test_search_ranks_and_explains_with_windows(client: TestClient, auth: dict[str, str]) -> None:
    _create(client, auth, name="Birthday party", one_liner="Ana's birthday party in the garden.",
            first_seen_at="2026-03-05T10:00:00Z")  # fmt: skip
    _create(client, auth, name="Office party", one_liner="The office Christmas party.",
            first_seen_at="2025-12-15T10:00:00Z")  # fmt: skip
    _create(client, auth, name="Tax return", one_liner="Filing the yearly tax return.",
            first_seen_at="2026-03-06T10:00:00Z")  # fmt: skip
    got = client.get(
        "/v1/topics/search", params={"query": "party", "window": "last week", "now": NOW},
        headers=auth,
    ).json()  # fmt: skip
    assert got["hits"][0]["name"] == "Birthday party"
    assert got["time_window"]["phrase"] == "last week"
    assert "seen within 'last week'" in got["hits"][0]["reason"]
    assert got["hits"][0]["components"]["time_window_boost"] > 1
    posted = client.post(
        "/v1/topics/search",
        json={"query": "the party in December", "now": NOW, "k": 1},
        headers=auth,
    ).json()
    assert [h["name"] for h in posted["hits"]] == ["Office party"]
    assert posted["time_window"]["kind"] == "month"
    ranged = client.post(
        "/v1/topics/search",
        json={"query": "party", "from": "2025-12-01T00:00:00Z", "to": "2026-01-01T00:00:00Z",
              "now": NOW},
        headers=auth,
    ).json()  # fmt: skip
    assert ranged["hits"][0]["name"] == "Office party"
    assert ranged["time_window"]["kind"] == "explicit_range"
    empty = client.post("/v1/topics/search", json={"query": "  "}, headers=auth)
    assert empty.status_code == 422 and empty.json()["fields"][0]["field"] == "body.query"
