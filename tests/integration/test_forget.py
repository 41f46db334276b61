"""Forget for real, through REST: after a forget, nothing deleted comes back from any surface -
topic search (vector and full-text), context, timeline, neighbours, wake, tools, export,
analytics - and a later sleep cannot rebuild it. Real Neo4j, real MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.settings import Settings
from graph.analytics import AnalyticsStore
from graph.sleep import SleepStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, keys, new_key
from tests.integration.dialogues import PARTY_AND_BIKE

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SLEPT = DAY1 + timedelta(hours=2)
SECRET = "zanzibar"
ECHOES = {"query", "skills", "skill_routing"}
TURNS = [
    ("user", "The Zanzibar merger plan needs board approval by Friday."),
    ("assistant", "Understood: board approval for the Zanzibar merger plan by Friday."),
    *PARTY_AND_BIKE,
]


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=2) as c:
        yield c


@dataclass
class World:
    client: TestClient
    auth: dict[str, str]
    namespace: str
    messages: list[dict[str, Any]]

    def get(self, path: str, **params: Any) -> Any:
        response = self.client.get(path, params=params, headers=self.auth)
        assert response.status_code == 200, response.text
        return response.json()

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.client.post(path, json=body or {}, headers=self.auth)
        assert response.status_code == 200, response.text
        return response.json()

    def delete(self, path: str, **params: Any) -> Any:
        response = self.client.delete(path, params=params, headers=self.auth)
        assert response.status_code == 200, response.text
        return response.json()

    def export(self) -> str:
        response = self.client.get("/v1/export", headers=self.auth)
        assert response.status_code == 200, response.text
        return "\n".join(
            line for line in response.text.splitlines() if '"kind": "header"' not in line
        )  # the header carries the export time: everything else must be stable

    def topics(self) -> list[dict[str, Any]]:
        return [
            json.loads(line) for line in self.export().splitlines() if '"kind": "topic"' in line
        ]

    def topic_named(self, word: str) -> dict[str, Any]:
        found = [t for t in self.topics() if word in t["name"].lower()]
        assert found, [t["name"] for t in self.topics()]
        return found[0]


@pytest.fixture
def world(client: TestClient, namespace: str) -> World:
    """Day 1 talked through and slept (the last two turns stay in the buffer)."""
    auth = bearer(new_key(client, namespace))
    body = [
        {"role": r, "content": t, "at": (DAY1 + timedelta(minutes=i)).isoformat(),
         "external_id": f"turn-{i}"}
        for i, (r, t) in enumerate(TURNS)
    ]  # fmt: skip
    appended = client.post("/v1/messages", json={"messages": body, "auto_sleep": False},
                           headers=auth)  # fmt: skip
    assert appended.status_code == 201, appended.text
    slept = client.post("/v1/sleep", json={"now": SLEPT.isoformat()}, headers=auth)
    assert slept.status_code == 200, slept.text
    return World(client, auth, namespace, appended.json()["messages"])


def _every_surface(w: World, driver: Driver, gone: set[str], text: str | None) -> None:
    """None of ``gone`` (ids) and, when given, ``text`` comes back from any read surface."""

    def clean(label: str, value: Any) -> None:
        if isinstance(value, dict):  # echoes of the request (query, skill args) are not memory
            value = {k: v for k, v in value.items() if k not in ECHOES}
        dumped = json.dumps(value, default=str).lower()
        leaked = [i for i in gone if i.lower() in dumped]
        assert not leaked, f"{label} still shows {leaked}"
        at = dumped.find(text) if text else -1
        assert at < 0, f"{label} still shows {dumped[max(0, at - 300) : at + 100]!r}"

    query = "Zanzibar merger plan board approval"
    clean("search", w.get("/v1/topics/search", query=query, k=50))
    clean("search with a window", w.post("/v1/topics/search", {"query": query, "window":
                                                               "last week", "now": "2026-03-09T12:00:00Z"}))  # fmt: skip
    store = TopicStore(driver)
    clean("full-text index", [h.topic for h in store.search_text(w.namespace, query, k=50)])
    vector = w.client.app.state.container.embedder.embed([query])[0]  # type: ignore[attr-defined]
    clean("vector index", [h.topic for h in store.search_vector(w.namespace, vector, k=50)])
    clean("known names", sorted(store.known_names(w.namespace, ["Zanzibar merger plan"])))
    for body in ({"message": "What about the Zanzibar merger plan?", "explicit": True,
                  "full_records": True, "trace": True, "session_id": "s1"},
                 {"message": "what needs board approval by Friday?", "trace": True}):  # fmt: skip
        clean("context", w.post("/v1/context", body))
    clean("timeline", w.get("/v1/timeline"))
    for topic in w.topics():
        clean("neighbours", w.get(f"/v1/topics/{topic['topic_id']}/neighbours"))
        clean("topic", w.get(f"/v1/topics/{topic['topic_id']}", history=True))
        clean("history", w.get(f"/v1/topics/{topic['topic_id']}/history"))
    clean("wake", w.post("/v1/wake", {"message": "where were we with the Zanzibar merger?"}))
    clean("wake packet", w.get("/v1/wake-packet"))
    for name, args in (("topics_search", {"query": query}),
                       ("memory_wake", {"message": "the Zanzibar merger plan"})):  # fmt: skip
        clean(f"tool {name}", w.post(f"/v1/tools/{name}", {"arguments": args}))
    for tid in gone:  # a forgotten topic is unknown to the tools, as to REST
        got = w.client.post("/v1/tools/topics_get", json={"arguments": {"topic_ids": [tid]}},
                            headers=w.auth)  # fmt: skip
        assert got.status_code == 404, got.text
    clean("export", w.export())
    analytics = AnalyticsStore(driver)
    for analytic in analytics.catalogue():
        params = {"topic": next(iter(gone), "x")} if analytic.param("topic") else {}
        rows = analytics.run(analytic.name, w.namespace, params, now=SLEPT).rows
        clean(f"analytic {analytic.name}", rows)


def test_forgetting_a_topic_with_its_messages_leaves_no_trace_anywhere(
    world: World, driver: Driver
) -> None:
    topic = world.topic_named(SECRET)
    sources = {world.messages[0]["message_id"], world.messages[1]["message_id"]}
    before = {t["topic_id"] for t in world.topics()}
    report = world.delete(f"/v1/topics/{topic['topic_id']}", messages="true")
    assert topic["topic_id"] in report["topics_deleted"]
    assert set(report["messages_deleted"]) == sources
    assert report["events_deleted"] >= 1 and not report["dry_run"]
    gone = set(report["topics_deleted"]) | sources
    after = {t["topic_id"] for t in world.topics()}
    assert after == before - set(report["topics_deleted"])  # the rest of the memory is intact
    assert any("party" in t["name"].lower() for t in world.topics())
    messages = world.get("/v1/messages")["messages"]
    assert [m["content"] for m in messages] == [t for _, t in TURNS[2:]]
    _every_surface(world, driver, gone, SECRET)


def test_a_later_sleep_cannot_rebuild_a_topic_forgotten_with_its_messages(world: World) -> None:
    topic = world.topic_named(SECRET)
    world.delete(f"/v1/topics/{topic['topic_id']}", messages="true")
    later = DAY1 + timedelta(days=1)
    more = [{"role": "user", "content": "The bike shop opens at nine.", "at": later.isoformat()},
            {"role": "user", "content": "Mel likes lemon cake.", "at": later.isoformat()},
            {"role": "user", "content": "I will call Rosa tomorrow.", "at": later.isoformat()}]  # fmt: skip
    world.client.post("/v1/messages", json={"messages": more, "auto_sleep": False},
                      headers=world.auth).raise_for_status()  # fmt: skip
    world.post("/v1/sleep", {"now": (later + timedelta(hours=1)).isoformat()})
    assert SECRET not in world.export().lower()


def test_forgetting_only_the_topic_keeps_its_messages_and_the_topic_stays_gone(
    world: World, driver: Driver
) -> None:
    topic = world.topic_named(SECRET)
    report = world.delete(f"/v1/topics/{topic['topic_id']}")
    assert report["topics_deleted"] == [topic["topic_id"]] and report["messages_deleted"] == []
    assert SECRET in json.dumps(world.get("/v1/messages")).lower()  # the conversation stays
    _every_surface(world, driver, {topic["topic_id"]}, None)
    world.post("/v1/sleep", {"now": (SLEPT + timedelta(hours=1)).isoformat()})
    assert topic["topic_id"] not in world.export()  # compacted messages are not re-read


def test_forgetting_a_message_removes_the_facts_it_alone_gave_other_topics(
    world: World, driver: Driver
) -> None:
    said = world.messages[4]  # "About 30 guests. The caterer is Rosa's Kitchen; ..."
    citing = [t for t in world.topics() if said["message_id"] in json.dumps(t)]
    # one turn gives at most one or two facts (issue #12), so one topic may be all that cites it
    assert citing
    report = world.delete(f"/v1/messages/{said['message_id']}")
    assert report["messages_deleted"] == [said["message_id"]]
    assert report["items_removed"] >= len(citing)
    _every_surface(world, driver, {said["message_id"]}, "they want a deposit by thursday")
    survivors = {t["topic_id"] for t in world.topics()}
    for topic in citing:  # every citing topic lost the fact; an emptied one is gone
        assert topic["topic_id"] in report["topics_rewritten"] + report["topics_deleted"]
        assert (topic["topic_id"] in survivors) == (topic["topic_id"] in report["topics_rewritten"])


def test_forgetting_by_external_id_and_a_tail_turn_cleans_the_wake_packet(world: World) -> None:
    packet = world.get("/v1/wake-packet")
    tail_ids = [t["message_id"] for t in packet["conversation_tail"]]
    last = world.messages[-1]
    assert last["message_id"] in tail_ids
    report = world.delete("/v1/messages", external_id=last["external_id"])
    assert report["messages_deleted"] == [last["message_id"]]
    assert report["wake_packets_cleaned"] == 1
    packet = world.get("/v1/wake-packet")
    assert last["message_id"] not in [t["message_id"] for t in packet["conversation_tail"]]
    assert TURNS[-1][1] not in json.dumps(world.post("/v1/wake", {"message": "hello again"}))


def test_forget_by_query_lists_first_then_deletes(world: World, driver: Driver) -> None:
    before = world.export()
    listed = world.post("/v1/forget", {"query": "Zanzibar"})
    assert listed["report"]["dry_run"] and world.export() == before  # the default is a dry run
    names = [t["name"].lower() for t in listed["matches"]["topics"]]
    assert names and all(SECRET in n for n in names)
    assert {m["message_id"] for m in listed["matches"]["messages"]} == {
        world.messages[0]["message_id"], world.messages[1]["message_id"]}  # fmt: skip
    done = world.post("/v1/forget", {"query": "zanzibar", "dry_run": False})
    assert done["report"]["topics_deleted"] == listed["report"]["topics_deleted"]
    gone = set(done["report"]["topics_deleted"]) | set(done["report"]["messages_deleted"])
    _every_surface(world, driver, gone, SECRET)
    assert world.post("/v1/forget", {"query": "zanzibar"})["matches"]["topics"] == []


def test_dry_runs_change_nothing(world: World) -> None:
    before = world.export()
    topic = world.topic_named(SECRET)
    plan = world.delete(f"/v1/topics/{topic['topic_id']}", messages="true", dry_run="true")
    assert plan["dry_run"] and topic["topic_id"] in plan["topics_deleted"]
    world.delete(f"/v1/messages/{world.messages[2]['message_id']}", dry_run="true")
    counted = world.delete("/v1/namespace", confirm=world.namespace, dry_run="true")
    assert counted["deleted"]["Message"] == len(TURNS) and counted["keys_revoked"] == 0
    assert world.export() == before
    assert world.client.get("/v1/wake-packet", headers=world.auth).status_code == 200


def test_the_suppression_cache_forgets_the_topic(world: World) -> None:
    container = world.client.app.state.container  # type: ignore[attr-defined]
    topic = world.topic_named(SECRET)
    session = {"message": "the Zanzibar merger plan", "session_id": "s-cache", "explicit": False}
    world.post("/v1/context", session)
    shown = container.suppression.load(
        world.namespace, f"{world.namespace}/s-cache", datetime.now(UTC)
    )
    assert topic["topic_id"] in shown.injections  # the context injected it: remembered
    world.delete(f"/v1/topics/{topic['topic_id']}")
    state = container.suppression.load(
        world.namespace, f"{world.namespace}/s-cache", datetime.now(UTC)
    )
    assert topic["topic_id"] not in state.injections


def test_a_running_sleep_holds_off_a_forget_and_nothing_is_deleted(
    world: World, driver: Driver
) -> None:
    leases = SleepStore(driver)
    wall = datetime.now(UTC)
    leases.acquire_lease(world.namespace, "someone-else", wall, wall + timedelta(minutes=5))
    try:
        topic = world.topic_named(SECRET)
        response = world.client.delete(f"/v1/topics/{topic['topic_id']}", headers=world.auth)
        assert response.status_code == 409 and "sleeping" in response.json()["detail"]
        assert topic["topic_id"] in world.export()
    finally:
        leases.release_lease(world.namespace, "someone-else")


def test_forgetting_the_namespace_deletes_everything_and_revokes_its_keys_at_once(
    world: World, driver: Driver
) -> None:
    second = bearer(new_key(world.client, world.namespace))
    assert world.client.get("/v1/wake-packet", headers=second).status_code == 200  # cached
    live = world.topics()
    report = world.delete("/v1/namespace", confirm=world.namespace)
    assert report["keys_revoked"] == 2 and report["deleted"]["Topic"] >= len(live) >= 2
    for auth in (world.auth, second):
        response = world.client.get("/v1/messages", headers=auth)
        assert response.status_code == 401 and "revoked" in response.json()["detail"]
    rows, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN labels(n)[0] AS label, n.revoked AS revoked",
        ns=world.namespace,
    )
    assert {r["label"] for r in rows} == {"ApiKey"} and all(r["revoked"] for r in rows)


@pytest.mark.parametrize(
    ("method", "path", "params", "body", "status", "field"),
    [
        ("DELETE", "/v1/topics/no-such-topic", {}, None, 404, "no-such-topic"),
        ("DELETE", "/v1/topics/TOPIC", {"messages": "maybe"}, None, 422, "query.messages"),
        ("DELETE", "/v1/messages/no-such-message", {}, None, 404, "no-such-message"),
        ("DELETE", "/v1/messages", {}, None, 422, "query.external_id"),
        ("DELETE", "/v1/messages", {"external_id": "nope"}, None, 404, "nope"),
        ("POST", "/v1/forget", {}, {"query": ""}, 422, "body.query"),
        ("POST", "/v1/forget", {}, {"query": "!!", "dry_run": False}, 422, "query"),
        ("POST", "/v1/forget", {}, {"query": "x y", "namespace": "other"}, 422, "body.namespace"),
        ("DELETE", "/v1/namespace", {}, None, 422, "query.confirm"),
        ("DELETE", "/v1/namespace", {"confirm": "someone-else"}, None, 422, "query.confirm"),
    ],
)
def test_bad_input_is_a_clear_4xx_and_nothing_is_deleted(
    world: World,
    method: str,
    path: str,
    params: dict[str, str],
    body: dict[str, Any] | None,
    status: int,
    field: str,
) -> None:
    before = world.export()
    path = path.replace("TOPIC", world.topic_named(SECRET)["topic_id"])
    response = world.client.request(method, path, params=params, json=body, headers=world.auth)
    assert response.status_code == status, response.text
    assert field in response.json()["detail"]
    assert world.export() == before


def test_the_cli_lists_then_forgets_then_drops_the_namespace(
    world: World, settings: Settings
) -> None:
    uri, user, password = settings.connection()
    env = {**os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password}

    def sheriff(*args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-c", "from api.cli import main; main()", *args, "-n", world.namespace],
            env=env, cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    before = world.export()
    listed = sheriff("forget", "query", "Zanzibar")
    assert listed["report"]["dry_run"] and listed["matches"]["topics"]
    assert world.export() == before  # without --yes nothing goes
    done = sheriff("forget", "query", "Zanzibar", "--yes")
    assert done["report"]["topics_deleted"] == listed["report"]["topics_deleted"]
    assert SECRET not in world.export().lower()
    dropped = sheriff("forget", "namespace", "--yes")
    assert dropped["keys_revoked"] == 1 and dropped["deleted"]["Message"] == len(TURNS) - 2
    key = world.auth["Authorization"].removeprefix("Bearer ")
    record = keys(world.client).store.find(key)  # this server trusts its cache for a TTL more
    assert record is not None and record.revoked
