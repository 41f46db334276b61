"""Issue 10, validation findings, each as a regression test against the real app and Neo4j:
every bad request gets a clear 4xx naming the field, and the namespace holds exactly what it
held before (nodes, edges, messages). The Responses tools (POST /v1/tools/{name}) refuse what
REST refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.settings import Settings
from graph.messages import MessageStore
from graph.models import Message
from graph.validation import MAX_JSON_DEPTH
from tests.integration.api_support import bearer, new_key
from tests.security.support import census

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]
HOSTILE_NAME = "\x1b]0;pwned\x07\x1b[2JZanzibar \u202eevil"


@pytest.fixture
def auth(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


def nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth - 1):
        node["a"] = {}
        node = node["a"]
    return root


def msg(content: str, at: datetime | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"role": "user", "content": content, **extra}
    if at is not None:
        body["at"] = at.isoformat()
    return body


def post_messages(client: TestClient, auth: dict[str, str], *messages: Any) -> httpx.Response:
    return client.post("/v1/messages", json={"messages": list(messages)}, headers=auth)


def fields(response: httpx.Response) -> list[str]:
    return [f["field"] for f in response.json().get("fields") or []]


# -- tool_calls depth ---------------------------------------------------------------------------
def test_deeply_nested_tool_calls_are_refused_and_nothing_is_stored(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    post_messages(client, auth, msg("before", T0)).raise_for_status()
    before = census(driver, namespace)
    for depth in (900, MAX_JSON_DEPTH + 1):
        for _ in range(2):  # a client retrying the refusal stores nothing either
            bad = msg("deep", T0 + timedelta(minutes=1), tool_calls=[nested(depth)])
            response = post_messages(client, auth, bad)
            assert response.status_code == 422, response.text
            assert fields(response) == ["body.messages.0.tool_calls.0"]
            assert f"deeper than {MAX_JSON_DEPTH} levels" in response.json()["detail"]
    assert census(driver, namespace) == before
    listed = client.get("/v1/messages", headers=auth)
    assert listed.status_code == 200 and [m["content"] for m in listed.json()["messages"]] == [
        "before"
    ]
    ok = msg("at the limit", T0 + timedelta(minutes=2), tool_calls=[nested(MAX_JSON_DEPTH)])
    assert post_messages(client, auth, ok).status_code == 201


def test_a_deep_document_stored_before_the_limit_no_longer_breaks_reading(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    [stored] = MessageStore(driver).append(
        namespace, [Message(namespace=namespace, role="tool", content="old", at=T0)]
    )
    driver.execute_query(  # what the old code let through: 900 levels in the stored JSON
        "MATCH (m:Message {message_id: $id}) SET m.tool_calls_json = $deep",
        id=stored.message_id,
        deep=json.dumps([nested(900)]),
    )
    for _ in range(2):  # not a 500 on every later read of the namespace
        listed = client.get("/v1/messages", headers=auth)
        assert listed.status_code == 200, listed.text
        [message] = listed.json()["messages"]
        assert message["content"] == "old" and "withheld" in message["tool_calls"][0]
    context = client.post("/v1/context", json={"message": "old", "now": T0.isoformat()},
                          headers=auth)  # fmt: skip
    assert context.status_code == 200, context.text


# -- external_id idempotency --------------------------------------------------------------------
def test_a_retried_batch_is_stored_once_and_returns_the_stored_messages(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    batch = [msg("We chose Postgres.", T0, external_id="ext-1"),
             msg("For JSONB.", T0 + timedelta(minutes=1), external_id="ext-2")]  # fmt: skip
    first = post_messages(client, auth, *batch)
    assert first.status_code == 201 and first.json()["appended"] == 2
    after_first = census(driver, namespace)
    retry = post_messages(client, auth, *batch)
    assert retry.status_code == 201, retry.text
    assert (retry.json()["appended"], retry.json()["duplicates"]) == (0, 2)
    assert retry.json()["messages"] == first.json()["messages"]  # same ids, seqs, times
    assert census(driver, namespace) == after_first
    overlap = post_messages(client, auth, batch[1], msg("Next.", T0 + timedelta(minutes=2),
                                                        external_id="ext-3"))  # fmt: skip
    assert (overlap.json()["appended"], overlap.json()["duplicates"]) == (1, 1)
    assert len(census(driver, namespace)["messages"]) == 3


def test_a_batch_repeating_an_external_id_stores_it_once(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    same = msg("Saturday works.", T0, external_id="dup")
    response = post_messages(client, auth, same, same)
    assert response.status_code == 201, response.text
    first, second = response.json()["messages"]
    assert first == second and response.json()["appended"] == 1
    assert len(census(driver, namespace)["messages"]) == 1


def test_an_external_id_reused_for_a_different_message_is_a_409_and_nothing_changes(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    post_messages(client, auth, msg("Session one, line three.", T0, external_id="D1:3"))
    before = census(driver, namespace)
    clash = post_messages(
        client, auth, msg("fine", T0 + timedelta(minutes=1)),
        msg("Session two, line three.", T0 + timedelta(minutes=2), external_id="D1:3"),
    )  # fmt: skip
    assert clash.status_code == 409, clash.text
    assert clash.json()["error"] == "Conflict"
    assert fields(clash) == ["body.messages.1.external_id"]
    assert census(driver, namespace) == before


# -- time -------------------------------------------------------------------------------------------
OUT_OF_RANGE = [
    "3000-01-01T00:00:00Z",
    "2999-12-31T23:00:00-05:00",
    "1900-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59-05:00",
    "0001-01-01T00:00:00+05:00",
]


@pytest.mark.parametrize("when", OUT_OF_RANGE)
def test_times_are_checked_after_the_utc_conversion_on_every_route(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str, when: str
) -> None:
    before = census(driver, namespace)
    refusals = {
        "body.messages.0.at": client.post(
            "/v1/messages", json={"messages": [{"role": "user", "content": "x", "at": when}]},
            headers=auth),
        "body.first_seen_at": client.post(
            "/v1/topics", json={"name": "Garden", "first_seen_at": when}, headers=auth),
        "body.now": client.post("/v1/context", json={"message": "hi", "now": when}, headers=auth),
        "query.now": client.get("/v1/messages", params={"window": "last week", "now": when},
                                headers=auth),
        "body.now ": client.post("/v1/tools/topics_search",
                                 json={"arguments": {"query": "x"}, "now": when}, headers=auth),
    }  # fmt: skip
    for field, response in refusals.items():
        assert response.status_code == 422, (field, response.text)
        assert fields(response) == [field.strip()], (field, response.text)
    assert census(driver, namespace) == before


def test_a_batch_older_than_the_conversation_is_a_409_naming_the_field(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    post_messages(client, auth, msg("latest", T0 + timedelta(hours=1))).raise_for_status()
    before = census(driver, namespace)
    older = post_messages(client, auth, msg("ok", T0 + timedelta(hours=2)), msg("no", T0))
    assert older.status_code == 422 and "time order" in older.json()["detail"]  # in the batch
    stale = post_messages(client, auth, msg("stale", T0))
    assert stale.status_code == 409, stale.text
    assert fields(stale) == ["body.messages.0.at"] and "time order" in stale.json()["detail"]
    assert census(driver, namespace) == before
    later = post_messages(client, auth, msg("later", T0 + timedelta(hours=2)))
    assert later.status_code == 201
    stamped = post_messages(client, auth, msg("no time given"))  # the server's clock
    assert stamped.status_code == 201
    at = datetime.fromisoformat(stamped.json()["messages"][0]["at"])
    assert at >= T0 + timedelta(hours=2)  # never before the newest: moved forward if needed


# -- tools refuse what REST refuses -------------------------------------------------------------
def call(client: TestClient, auth: dict[str, str], tool: str, **arguments: Any) -> httpx.Response:
    return client.post(f"/v1/tools/{tool}", json={"arguments": arguments}, headers=auth)


def test_topics_upsert_returns_the_stored_version_and_embeds_as_rest_does(
    client: TestClient, auth: dict[str, str]
) -> None:
    created = call(client, auth, "topics_upsert", name="Zanzibar merger", one_liner="Q3 deal")
    assert created.status_code == 200, created.text
    out = created.json()["output"]
    stored = client.get(f"/v1/topics/{out['topic_id']}", headers=auth).json()
    assert out["version"] == stored["version"] == 1
    assert stored["embedding_model"] is not None  # the next sleep does not embed it again
    updated = call(client, auth, "topics_upsert", topic_id=out["topic_id"], facts=["Signed."])
    stored = client.get(f"/v1/topics/{out['topic_id']}", headers=auth).json()
    assert updated.json()["output"]["version"] == stored["version"] == 2


def test_topics_link_weights_are_bounded_as_rest_bounds_them(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    a = call(client, auth, "topics_upsert", name="Merger").json()["output"]["topic_id"]
    b = call(client, auth, "topics_upsert", name="Due diligence").json()["output"]["topic_id"]
    link = {"from_topic_id": a, "to_topic_id": b, "type": "DEPENDS_ON"}
    assert call(client, auth, "topics_link", **link).status_code == 200
    before = census(driver, namespace)
    for delta in (-10, 0, 100.5):
        for _ in range(4):  # four -10s drove the weight to -40
            refused = call(client, auth, "topics_link", **link, weight_delta=delta)
            assert refused.status_code == 422, refused.text
            assert "weight_delta" in refused.json()["detail"]
    rest = client.post(f"/v1/topics/{a}/links", json={"to": b, "weight": -10}, headers=auth)
    assert rest.status_code == 422 and fields(rest) == ["body.weight"]
    assert census(driver, namespace) == before
    [edge] = [e for e in before["edges"] if e["type"] == "DEPENDS_ON"]
    assert edge["weight"] == 1.0


def test_tools_refuse_control_characters_deep_args_and_a_far_clock(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    before = census(driver, namespace)
    hostile = call(client, auth, "topics_upsert", name=HOSTILE_NAME)
    assert hostile.status_code == 422 and "control characters" in hostile.json()["detail"]
    alias = call(client, auth, "topics_upsert", name="ok", aliases=["a\u202eb"])
    assert alias.status_code == 422
    deep = call(client, auth, "skills_run", skill_id="debug", args=nested(900))
    assert deep.status_code == 422, deep.text
    far = client.post("/v1/tools/topics_search",
                      json={"arguments": {"query": "x"}, "now": "9999-01-01T00:00:00Z"},
                      headers=auth)  # fmt: skip
    assert far.status_code == 422 and fields(far) == ["body.now"]
    chat = client.post("/v1/chat", json={"message": "hi", "now": "9999-01-01T00:00:00Z"},
                       headers=auth)  # fmt: skip
    assert chat.status_code == 422 and fields(chat) == ["body.now"]
    assert census(driver, namespace) == before


# -- control characters -------------------------------------------------------------------------
def test_control_characters_in_names_are_refused_by_rest_and_nothing_changes(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str
) -> None:
    topic = client.post("/v1/topics", json={"name": "Garden"}, headers=auth).json()
    before = census(driver, namespace)
    bad = {
        "body.name": client.post("/v1/topics", json={"name": HOSTILE_NAME}, headers=auth),
        "body.aliases.0": client.post(
            "/v1/topics", json={"name": "ok", "aliases": ["\u202eevil"]}, headers=auth),
        "body.facts.0.text": client.post(
            "/v1/topics", json={"name": "ok", "facts": [{"text": "a\x00b"}]}, headers=auth),
        "body.name ": client.patch(f"/v1/topics/{topic['topic_id']}",
                                   json={"version": topic["version"], "name": "x\x9b2J"},
                                   headers=auth),
    }  # fmt: skip
    for field, response in bad.items():
        assert response.status_code == 422, (field, response.text)
        assert fields(response) == [field.strip()]
    assert census(driver, namespace) == before
    again = client.get(f"/v1/topics/{topic['topic_id']}", headers=auth).json()
    assert (again["name"], again["version"]) == ("Garden", topic["version"])


def test_the_cli_prints_a_stored_hostile_name_as_escapes(
    client: TestClient, auth: dict[str, str], driver: Driver, namespace: str, settings: Settings
) -> None:
    topic = client.post("/v1/topics", json={"name": "Zanzibar merger plan"}, headers=auth).json()
    driver.execute_query(  # a name stored before the API refused control characters
        "MATCH (t:Topic {topic_id: $id}) SET t.name = $name, t.one_liner = $name",
        id=topic["topic_id"],
        name=HOSTILE_NAME,
    )
    uri, user, password = settings.connection()
    env = {**os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password}
    done = subprocess.run(
        [sys.executable, "-c", "from api.cli import main; main()",
         "search", "zanzibar", "-n", namespace],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Zanzibar" in done.stdout
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in done.stdout
    assert "\\x1b]0;pwned\\x07" in done.stdout and "\\u202e" in done.stdout


# -- no host paths ------------------------------------------------------------------------------
def test_refusals_name_no_host_path(client: TestClient, auth: dict[str, str]) -> None:
    responses = [
        post_messages(client, auth, msg("x", T0, tool_calls=[nested(900)])),
        client.post("/v1/messages", content=b"{not json", headers={**auth,
                    "Content-Type": "application/json"}),
        client.post("/v1/tools/no_such_tool", json={"arguments": {}}, headers=auth),
        call(client, auth, "topics_get", topic_ids=["nope"]),
        call(client, auth, "skills_run", skill_id="no_such_skill"),
        call(client, auth, "topics_search", query="x", time_window="banana"),
        client.get("/v1/topics/nope", headers=auth),
    ]  # fmt: skip
    places = {sys.prefix, sys.executable, os.getcwd(), str(ROOT), sys.base_prefix}
    for response in responses:
        assert 400 <= response.status_code < 500, response.text
        for place in places:
            assert place not in response.text, (place, response.text)
