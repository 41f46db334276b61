"""Secrets planted through every door that writes end up redacted: REST, the Responses tools
(``/v1/tools``), MCP, the export-format import, the ChatGPT import, fact correction and
retraction (their ``reason`` too), skill and artifact references. Then every property of every
node and relationship of the namespace is scanned: 0 secrets. Ids a caller chooses that hold a
secret shape are refused (422) on every door, not stored. Real server, real Neo4j, real model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from neo4j import Driver

from graph.redaction import contains_secret
from tests.integration.live_server import LiveServer, bearer, mcp_session
from tests.security.support import dump
from tests.security.test_redaction import AWS_ID, DB_PASSWORD, GITHUB, JWT, OPENAI, PEM, PEM_BODY

URL_PASSWORD = "Hx" + "-v4ult-Pw9"
PLANTED = {"openai": OPENAI, "aws": AWS_ID, "github": GITHUB, "jwt": JWT, "pem": PEM_BODY,
           "password": DB_PASSWORD, "url_password": URL_PASSWORD}  # fmt: skip
PASSWORD_LINE = f"the db password: {DB_PASSWORD}"
DAY = "2026-03-{:02d}T{:02d}:00:00Z"


@dataclass
class Door:
    server: LiveServer
    key: str
    namespace: str

    def rest(self) -> httpx.Client:
        return self.server.rest(self.key)


@pytest.fixture(scope="module")
def door(server: LiveServer, driver: Driver) -> Iterator[Door]:
    namespace = f"test-door-{id(server):x}"
    door = Door(server, server.new_key(namespace), namespace)
    try:
        _chatgpt(door)  # oldest first: every door appends after the conversation so far
        _rest(door)
        _mcp(door)
        _import(door)
        yield door
    finally:
        driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def _chatgpt(door: Door) -> None:
    def node(nid: str, parent: str | None, role: str, text: str, at: float) -> dict[str, Any]:
        return {"message": {"id": nid, "author": {"role": role}, "create_time": at,
                            "content": {"content_type": "text", "parts": [text]}},
                "parent": parent, "children": []}  # fmt: skip

    start = 1772355600.0  # 2026-03-01T09:00Z
    mapping = {
        "c1": node("c1", None, "user", f"my OpenAI key is {OPENAI} for the billing bot", start),
        "c2": node("c2", "c1", "assistant", f"Stored. And {PASSWORD_LINE}", start + 60),
        "c3": node("c3", "c2", "user", f"the deploy key:\n{PEM}\nand jwt {JWT}", start + 120),
    }
    history = [{"title": "keys", "create_time": start, "current_node": "c3", "mapping": mapping}]
    with door.rest() as http:
        report = _ok(http.post("/v1/import/chatgpt", content=json.dumps(history)))
    assert report["appended"] == 3


def _rest(door: Door) -> None:
    with door.rest() as http:
        _ok(http.post("/v1/messages", json={"auto_sleep": False, "messages": [
            {"role": "user", "content": f"aws {AWS_ID} and {PASSWORD_LINE}", "at": DAY.format(9, 9),
             "speaker": f"ops {GITHUB}",
             "tool_calls": [{"id": "c", "arguments": {"token": JWT}, "output": OPENAI}]}]}))  # fmt: skip
        topic = _ok(http.post("/v1/topics", json={
            "name": "Billing deploy", "one_liner": f"uses {GITHUB}",
            "facts": [{"text": f"the key is {OPENAI}"}, {"text": f"old pem\n{PEM}"}],
            "skill_refs": [f"deploy-with-{GITHUB}"],
            "artifact_refs": [f"postgres://billing:{URL_PASSWORD}@db.internal/app"]}))  # fmt: skip
        assert _leaks(json.dumps(topic)) == []  # the answer is the topic as stored
        path = f"/v1/topics/{topic['topic_id']}/facts"
        first, second = (f["fact_id"] for f in topic["facts"])
        corrected = _ok(http.post(f"{path}/{first}/correct", json={
            "text": f"the key is now {JWT}", "reason": PASSWORD_LINE}))  # fmt: skip
        assert _leaks(json.dumps(corrected)) == []
        _ok(http.post(f"{path}/{second}/retract", json={"reason": f"leaked {AWS_ID}"}))
        _ok(http.post("/v1/tools/topics_upsert", json={"arguments": {
            "name": "Deploy credentials", "facts": [f"token {GITHUB}", PASSWORD_LINE],
            "open_loops": [f"rotate {OPENAI}"]}, "now": DAY.format(9, 10)}))  # fmt: skip
        _ok(http.post("/v1/sleep", json={"now": DAY.format(9, 11)}))


def _mcp(door: Door) -> None:
    async def run() -> None:
        async with mcp_session(door.server.mcp_url, bearer(door.key)) as s:
            for name, args in (
                ("messages_append", {"messages": [{"role": "user", "at": DAY.format(9, 12),
                                                   "content": f"over mcp: jwt {JWT}"}]}),
                ("topics_upsert", {"name": "Vault", "facts": [f"vault token {GITHUB}"],
                                   "one_liner": f"the {PASSWORD_LINE}"}),
            ):  # fmt: skip
                result = await s.call_tool(name, args)
                assert not result.is_error, result.content
            made = json.loads(result.content[0].text)  # type: ignore[union-attr]
            got = await s.call_tool("topics_get", {"topic_ids": [made["topic_id"]]})
            found = json.loads(got.content[0].text)  # type: ignore[union-attr]
            topic = (found if isinstance(found, list) else found["topics"])[0]
            fact = topic["facts"][0]["fact_id"]
            retract = {"topic_id": topic["topic_id"], "fact_id": fact, "reason": f"was {OPENAI}"}
            result = await s.call_tool("facts_retract", retract)
            assert not result.is_error, result.content

    anyio.run(run)


def _import(door: Door) -> None:
    at = DAY.format(10, 9)
    span = {"first_seen_at": at, "last_seen_at": at}
    fact = {"text": f"imported {OPENAI}", "at": at, "invalid_at": at, "invalid_reason": f"leaked "
            f"{AWS_ID}", "source_message_ids": ["i-m1"]}  # fmt: skip
    lines: list[dict[str, Any]] = [
        {"kind": "header", "format": "sheriff-claw-export", "version": 1, "namespace": "elsewhere",
         "exported_at": at, "embedding": {"model": "other", "dimensions": 384}, "vectors": False},
        {"kind": "message", "message_id": "i-m1", "role": "tool", "content": PASSWORD_LINE,
         "at": at, "speaker": f"bot {GITHUB}", "external_id": "import-1",
         "tool_calls": [{"id": "c", "arguments": {"api_key": OPENAI}, "output": JWT}]},
        {"kind": "topic", "topic_id": "i-t1", "name": f"Imported {GITHUB}",
         "one_liner": f"key {OPENAI}", "aliases": [f"aws {AWS_ID}"], "facts": [fact],
         "numbers": [{"key": f"limit for {GITHUB}", "value": 3, "unit": "req", "at": at}],
         "open_loops": [{"text": f"rotate\n{PEM}"}], "time": {**span, "notable_events": [
             {"at": at, "event": f"leaked {JWT}"}]},
         "skill_refs": [f"skill-{GITHUB}"], "artifact_refs": [f"https://u:{URL_PASSWORD}@h/x"],
         "mentioned_in": ["i-m1"]},
        {"kind": "topic", "topic_id": "i-t2", "name": "Imported neighbour", "time": span},
        {"kind": "event", "event_id": "i-e1", "topic_id": "i-t1", "at": at,
         "delta_summary": f"added {PASSWORD_LINE}"},
        {"kind": "edge", "from_topic_id": "i-t1", "to_topic_id": "i-t2", "type": "RELATES_TO",
         "weight": 2.0},
        {"kind": "wake_packet", "packet_id": "i-w1", "slept_at": at,
         "conversation_tail": [{"role": "user", "content": f"jwt {JWT}", "at": at}],
         "active_subject_hints": [f"key {OPENAI}"], "recent_skill_refs": [f"run-{GITHUB}"],
         "in_progress": {"status": "running", "resume_hint": f"use {PASSWORD_LINE}"}},
        {"kind": "skill_run", "run_id": "i-r1", "skill_id": "write_docs", "outcome": "failed",
         "started_at": at, "finished_at": at, "duration_ms": 5, "error": f"auth {OPENAI}",
         "tool_calls": [f"repo.read:{GITHUB}"]},
        {"kind": "end", "counts": {"message": 1, "topic": 2, "event": 1, "edge": 1,
                                   "wake_packet": 1, "skill_run": 1}},
    ]  # fmt: skip
    with door.rest() as http:
        report = _ok(http.post("/v1/import", content="\n".join(json.dumps(x) for x in lines)))
    assert report["refused"] == [], report
    assert all(report["counts"][k]["created"] >= 1 for k in report["counts"]), report


def _leaks(text: str) -> list[str]:
    return [name for name, secret in PLANTED.items() if secret in text]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def test_every_door_wrote(door: Door, driver: Driver) -> None:
    """The scenario stored something through each door, so the scan below can fail."""
    rows = [json.loads(x) for x in dump(driver, door.namespace)]
    labels = {label for _, what, _ in rows if isinstance(what, list) for label in what}
    assert {"Message", "Topic", "TopicEvent", "WakePacket", "SkillRun"} <= labels
    text = json.dumps(rows)
    for marker in ("openai_key", "aws_access_key_id", "github_token", "jwt", "private_key",
                   "password", "url_password"):  # fmt: skip
        assert f"[REDACTED:{marker}]" in text, marker
    for planted in ("chatgpt:c1", "import-1", "Imported [REDACTED:github_token]", "skill-[REDACTED",
                    "leaked [REDACTED:aws_access_key_id]", "was [REDACTED:openai_key]",
                    "the db password: [REDACTED:password]", "run-[REDACTED"):  # fmt: skip
        assert planted in text, planted


def test_no_property_of_any_node_or_relationship_holds_a_secret(door: Door, driver: Driver) -> None:
    found = []
    for line in dump(driver, door.namespace):
        _, what, props = json.loads(line)
        for key, value in props.items():
            for text in _strings(value):
                if _leaks(text) or contains_secret(text):
                    found.append((what, key, _leaks(text) or "an unredacted shape"))
    assert found == []


REFUSED_IDS: dict[str, tuple[str, dict[str, Any], str]] = {
    "a message's external_id": ("/v1/messages", {"messages": [{"role": "user", "content": "x",
                                "external_id": f"id-{GITHUB}"}]}, "external_id"),
    "the context's session_id": ("/v1/context", {"message": "hi", "session_id": OPENAI},
                                 "session_id"),
    "the chat's session_id": ("/v1/chat", {"message": "hi", "session_id": AWS_ID}, "session_id"),
    "a fact's source_message_ids": ("/v1/topics", {"name": "X", "facts": [
        {"text": "y", "source_message_ids": [JWT]}]}, "source_message_ids"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REFUSED_IDS))
def test_a_secret_shaped_id_is_refused_on_rest(door: Door, driver: Driver, case: str) -> None:
    path, body, field = REFUSED_IDS[case]
    before = dump(driver, door.namespace)
    with door.rest() as http:
        r = http.post(path, json=body)
    assert r.status_code == 422 and field in r.text, r.text
    assert dump(driver, door.namespace) == before


def test_a_secret_shaped_id_is_refused_over_mcp(door: Door, driver: Driver) -> None:
    before = dump(driver, door.namespace)

    async def run() -> None:
        async with mcp_session(door.server.mcp_url, bearer(door.key)) as s:
            args = {"messages": [{"role": "user", "content": "x", "external_id": OPENAI}]}
            result = await s.call_tool("messages_append", args)
            assert result.is_error and "external_id" in str(result.content)

    anyio.run(run)
    assert dump(driver, door.namespace) == before
