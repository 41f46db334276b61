"""Redaction before anything is stored: a scenario full of secrets against the real app, the real
Neo4j and the awake loop (real ``openai`` client, fake Responses server), then a scan of every
node and relationship property of the namespace, of every read the API offers and of the logs.

The scenario: messages with secrets in content, speaker and tool calls (arguments and outputs);
topics written over REST and through the tools; two /v1/chat turns whose model calls tools with
secret arguments; a skill run with a secret argument that fails; a sleep and a wake. An operator
pattern (``employee_id``) is configured too, so the settings path is covered end to end.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from agent.fake_responses import FakeResponses, function_call, message
from api.container import Container
from api.settings import Settings
from graph.redaction import contains_secret
from retrieval.embedding import MiniLMEmbedder
from sleepwake.export import export_memory
from tests.integration.api_support import api_client, bearer, new_key

# Fake credentials, assembled from pieces so this file does not look like a leak itself.
OPENAI = "sk-" + "proj-" + "Qw3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC"
ANTHROPIC = "sk-" + "ant-api03-" + "Mn4bV6cX8zL0kJ2hG4fD6sA8pO0iU2yT4rE6wQ8-AA"
AWS_ID = "AKIA" + "Z7XQ3MNB4V5C6X7Z"
AWS_SECRET = "tP9xQ2vL5nW8/rK3mY6bH1" + "zJ4cF7gD0sA2eU5iO8wR"
GITHUB = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"
GITHUB_PAT = "github_pat_" + "11AAAAAAA0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"
GITLAB = "glpat-" + "Rt5Yu7Io9Pa1Sd3Fg5Hj"
SLACK = "xoxb-" + "210987654321-2109876543210-QwErTyUiOpAsDfGhJkLzXcVb"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0ZZ11YYY/B0XX22WWW/qWeRtYuIoPaSdFgHjKlZxCvB"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiJzZWNyZXQtdXNlciIsImFkbWluIjp0cnVlfQ"
    ".q2Wv8rT6yU4iO2pA0sD8fG6hJ4kL2zX0cV8bN6mQ4wE"
)
PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi" + "Z1BjP5CE/Wm/Rr500P"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
URL_PASSWORD = "Pg" + "-s3cr3t-Pw"
DB_PASSWORD = "Zebra" + "!Moon42"
TOOL_PASSWORD = "Quartz" + "#Lamp77"
CARD = "4539 1488 " + "0343 6467"
EMPLOYEE = "EMP-" + "730915"

SECRETS = {
    "openai": OPENAI,
    "anthropic": ANTHROPIC,
    "aws_id": AWS_ID,
    "aws_secret": AWS_SECRET,
    "github": GITHUB,
    "github_pat": GITHUB_PAT,
    "gitlab": GITLAB,
    "slack": SLACK,
    "slack_hook": SLACK_HOOK,
    "jwt": JWT,
    "pem": PEM_BODY,
    "url_password": URL_PASSWORD,
    "db_password": DB_PASSWORD,
    "tool_password": TOOL_PASSWORD,
    "card": CARD,
    "card_digits": CARD.replace(" ", ""),
    "employee": EMPLOYEE,
}

MESSAGES = [
    ("user", f"We decided to deploy the billing service with the OpenAI key {OPENAI} today."),
    ("user", f"The Anthropic fallback key is {ANTHROPIC} and the jwt is {JWT}"),
    ("user", f"AWS access key id {AWS_ID}, aws_secret_access_key={AWS_SECRET} for the deploy"),
    ("assistant", f"Noted. GitHub token {GITHUB}, PAT {GITHUB_PAT} and GitLab {GITLAB}."),
    ("user", f"The Slack bot uses {SLACK} and posts to {SLACK_HOOK} after each deploy."),
    ("user", f"Here is the deploy key:\n{PEM}\nkeep it in the vault."),
    ("user", f"The billing database is postgres://billing:{URL_PASSWORD}@db.internal:5432/app"),
    ("user", f"the db password: {DB_PASSWORD} (rotate it next week)"),
    ("user", f"Charge the card {CARD} for the billing service; ask {EMPLOYEE} about it."),
]
T = "2026-03-09T{}:00+00:00"


@dataclass
class Scenario:
    namespace: str
    container: Container
    reads: dict[str, str] = field(default_factory=dict)  # what each API read answered
    model_inputs: list[str] = field(default_factory=list)  # each model call's input, as sent
    logs: list[str] = field(default_factory=list)
    skill_run: dict[str, Any] = field(default_factory=dict)


class _Capture(logging.Handler):
    def __init__(self, out: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.out = out
        self.setFormatter(logging.Formatter("%(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.out.append(self.format(record))


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


@pytest.fixture(scope="module")
def scenario(
    settings: Settings,
    embedder: MiniLMEmbedder,
    driver: Driver,
    fake: FakeResponses,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Scenario]:
    ws = tmp_path_factory.mktemp("ws")
    (ws / "app").mkdir()
    (ws / "app" / "billing.py").write_text("def charge() -> None:\n    pass\n", encoding="utf-8")
    ns = f"test-{uuid.uuid4().hex[:12]}"
    logs: list[str] = []
    handler, root = _Capture(logs), logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        with api_client(
            settings, embedder, ws, openai_api_key="sk-test", openai_base_url=fake.base_url,
            extractor="deterministic", redact_patterns={"employee_id": r"EMP-\d{6}"},
        ) as client:  # fmt: skip
            container: Container = client.app.state.container  # type: ignore[attr-defined]
            run = Scenario(ns, container, logs=logs)
            _play(client, fake, run)
            yield run
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)


def _play(client: TestClient, fake: FakeResponses, run: Scenario) -> None:
    auth = bearer(new_key(client, run.namespace))
    before = len(fake.requests)
    _post(client, auth, run, "append", "/v1/messages", _messages())
    _write_topics(client, auth, run)
    _chat(client, fake, auth, run, "10:00", _first_turn_replies())
    skill = client.post(
        "/v1/skills/run",
        json={"name": "write_docs", "args": {"target": f"app/{GITHUB}",
                                             "output": f"docs/password={TOOL_PASSWORD}.md"}},
        headers=auth,
    )  # fmt: skip
    assert skill.status_code == 200, skill.text
    run.skill_run = skill.json()
    _post(client, auth, run, "sleep", "/v1/sleep", {"now": T.format("10:30")})
    _chat(client, fake, auth, run, "11:00", [[message("Yes, the billing deploy is on track.")]])
    run.model_inputs = [json.dumps(r["input"]) for r in fake.requests[before:]]
    _read_everything(client, auth, run)


def _messages() -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        {"role": role, "content": text, "at": T.format(f"09:{i:02d}")}
        for i, (role, text) in enumerate(MESSAGES)
    ]
    items.append(
        {
            "role": "tool",
            "content": f"deploy finished; token {SLACK} was used",
            "at": T.format("09:30"),
            "speaker": f"deployer {GITLAB}",
            "tool_calls": [
                {
                    "id": "call_deploy",
                    "type": "function",
                    "function": {
                        "name": "deploy",
                        "arguments": json.dumps({"password": TOOL_PASSWORD, "key": OPENAI}),
                    },
                    "arguments": {"db_password": DB_PASSWORD, "env": {"AWS_KEY": AWS_ID}},
                    "output": f"connected to postgres://ci:{URL_PASSWORD}@db/app with {JWT}",
                }
            ],
        }
    )
    return {"messages": items, "auto_sleep": False}


def _write_topics(client: TestClient, auth: dict[str, str], run: Scenario) -> None:
    created = _post(
        client, auth, run, "topic_create", "/v1/topics",
        {"name": "Billing deploy", "one_liner": f"deploy billing with {GITHUB}",
         "facts": [{"text": f"the db password: {DB_PASSWORD}"}], "aliases": [f"{EMPLOYEE}"],
         "last_seen_at": T.format("09:40")},
    )  # fmt: skip
    topic = json.loads(created)
    patched = client.patch(
        f"/v1/topics/{topic['topic_id']}",
        json={"version": topic["version"], "open_loops": [{"text": f"rotate {AWS_ID}"}]},
        headers=auth,
    )
    assert patched.status_code == 200, patched.text
    run.reads["topic_patch"] = patched.text
    _post(
        client, auth, run, "tool_upsert", "/v1/tools/topics_upsert",
        {"arguments": {"name": "Payments", "one_liner": f"card {CARD} is the test card",
                       "facts": [f"slack hook {SLACK_HOOK}", f"pem {PEM}"]},
         "now": T.format("09:45")},
    )  # fmt: skip


def _first_turn_replies() -> list[list[dict[str, Any]]]:
    upsert = {
        "topic_id": None, "name": "Deploy credentials", "one_liner": f"key {OPENAI}",
        "facts": [f"password={TOOL_PASSWORD}", f"token {GITHUB}"], "aliases": None,
        "open_loops": [f"revoke {SLACK}"],
    }  # fmt: skip
    search = {"query": f"password is {TOOL_PASSWORD}", "time_window": None, "k": 3}
    return [
        [function_call("topics_upsert", upsert, call_id="u1"),
         function_call("topics_search", search, call_id="s1")],
        [message(f"Saved. I will remember {OPENAI} and the password {TOOL_PASSWORD}.")],
    ]  # fmt: skip


def _chat(
    client: TestClient,
    fake: FakeResponses,
    auth: dict[str, str],
    run: Scenario,
    at: str,
    replies: list[list[dict[str, Any]]],
) -> None:
    fake.enqueue(*replies)
    text = f"keep these: {AWS_ID} {GITLAB} and the db password: {DB_PASSWORD}"
    r = client.post("/v1/chat", json={"message": text, "now": T.format(at)}, headers=auth)
    assert r.status_code == 200, r.text


def _read_everything(client: TestClient, auth: dict[str, str], run: Scenario) -> None:
    now = T.format("11:30")
    gets = {
        "messages": "/v1/messages?limit=500",
        "wake_packet": "/v1/wake-packet",
        "timeline": "/v1/timeline",
        "topic_search": "/v1/topics/search?query=billing deploy password&k=20",
    }
    for name, path in gets.items():
        r = client.get(path, headers=auth)
        assert r.status_code == 200, (path, r.text)
        run.reads[name] = r.text
    for query in ("what do you know about the billing deploy keys?", "db password", "card"):
        body = {"message": query, "now": now, "explicit": True, "full_records": True,
                "trace": True, "budget": 4000}  # fmt: skip
        _post(client, auth, run, f"context {query}", "/v1/context", body)
    _post(client, auth, run, "wake", "/v1/wake", {"message": "back to the deploy", "now": now})
    topics = run.container.topics.list_live(run.namespace)
    ids = [t.topic_id for t in topics][:25]
    _post(
        client, auth, run, "topics_get", "/v1/tools/topics_get", {"arguments": {"topic_ids": ids}}
    )
    for topic_id in ids:
        r = client.get(f"/v1/topics/{topic_id}", headers=auth)
        run.reads[f"topic {topic_id}"] = r.text
    run.reads["export"] = export_memory(topics, 100_000, run.container.clock.now())


def _post(
    client: TestClient, auth: dict[str, str], run: Scenario, name: str, path: str, body: Any
) -> str:
    r = client.post(path, json=body, headers=auth)
    assert r.status_code in (200, 201), (path, r.text)
    run.reads[name] = r.text
    return r.text


def _leaks(text: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in text]


def _stored_strings(driver: Driver, namespace: str) -> list[tuple[str, str, str]]:
    """(what, property, text) for every string property of every node of the namespace, every
    node without a namespace next to one, and every relationship touching them."""
    nodes, _, _ = driver.execute_query(
        """
        MATCH (n) WHERE n.namespace = $ns
        OPTIONAL MATCH (n)--(m) WHERE m.namespace IS NULL
        WITH collect(DISTINCT n) + collect(DISTINCT m) AS found
        UNWIND found AS x
        RETURN DISTINCT labels(x)[0] AS what, properties(x) AS props
        """,
        ns=namespace,
    )
    rels, _, _ = driver.execute_query(
        """
        MATCH (n)-[r]-() WHERE n.namespace = $ns
        RETURN DISTINCT type(r) AS what, properties(r) AS props
        """,
        ns=namespace,
    )
    out: list[tuple[str, str, str]] = []
    for record in [*nodes, *rels]:
        for key, value in record["props"].items():
            values = value if isinstance(value, list) else [value]
            out.extend((record["what"], key, v) for v in values if isinstance(v, str))
    return out


def test_the_scenario_really_sent_the_secrets(scenario: Scenario) -> None:
    """The model got the raw secrets of the current turn, so the scans below can fail."""
    first_turn = scenario.model_inputs[0]
    assert AWS_ID in first_turn and GITLAB in first_turn and DB_PASSWORD in first_turn
    labels = {what for what, _, _ in _stored_strings(scenario.container.driver, scenario.namespace)}
    assert {"Message", "Topic", "TopicEvent", "WakePacket", "SkillRun"} <= labels


def test_no_stored_property_holds_a_secret(scenario: Scenario) -> None:
    found = [
        (what, key, _leaks(text) or "unredacted shape")
        for what, key, text in _stored_strings(scenario.container.driver, scenario.namespace)
        if _leaks(text) or contains_secret(text)
    ]
    assert found == []


def test_secrets_leave_markers_where_they_were(scenario: Scenario) -> None:
    stored = json.loads(scenario.reads["messages"])["messages"]
    text = json.dumps(stored)
    for kind in ("openai_key", "anthropic_key", "aws_access_key_id", "aws_secret_access_key",
                 "github_token", "gitlab_token", "slack_token", "slack_webhook", "jwt",
                 "private_key", "url_password", "password", "card_number", "employee_id"):  # fmt: skip
        assert f"[REDACTED:{kind}]" in text, kind
    tool = next(m for m in stored if m["role"] == "tool")
    call = tool["tool_calls"][0]
    assert call["arguments"]["db_password"] == "[REDACTED:password]"
    assert call["arguments"]["env"]["AWS_KEY"] == "[REDACTED:aws_access_key_id]"
    assert tool["speaker"] == "deployer [REDACTED:gitlab_token]"
    assert "billing service" in text  # the conversation itself is kept


def test_no_api_read_hands_a_secret_back(scenario: Scenario) -> None:
    leaks = {name: _leaks(text) for name, text in scenario.reads.items() if _leaks(text)}
    assert leaks == {}
    assert "[REDACTED:" in scenario.reads["wake_packet"]  # the tail kept the redacted turns


def test_the_model_never_gets_a_stored_secret_back(scenario: Scenario) -> None:
    """The second turn's input (tail, memory block, tool outputs) comes from stored data, and
    the first turn's tool outputs come from what the tools stored."""
    second_turn = scenario.model_inputs[-1]
    earlier_secrets = {k: v for k, v in SECRETS.items() if v not in (AWS_ID, GITLAB, DB_PASSWORD)}
    assert [k for k, v in earlier_secrets.items() if v in second_turn] == []
    outputs = [
        item["output"]
        for body in scenario.model_inputs
        for item in json.loads(body)
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    assert outputs and not any(_leaks(o) for o in outputs)


def test_the_skill_run_record_is_redacted(scenario: Scenario) -> None:
    run = scenario.skill_run
    assert run["recorded"] and run["ok"] is False
    records, _, _ = scenario.container.driver.execute_query(
        "MATCH (r:SkillRun {run_id: $id, namespace: $ns}) RETURN properties(r) AS p",
        id=run["run_id"],
        ns=scenario.namespace,
    )
    stored = json.dumps(records[0]["p"], default=str)
    assert _leaks(stored) == [] and not contains_secret(stored)


def test_logs_hold_no_secret(scenario: Scenario) -> None:
    """Nothing the scenario logged holds a secret, and a library's record (uvicorn's access
    log with a secret in the query string) is redacted by what the app installed."""
    # caught at the logger itself: a live uvicorn server of an earlier test may have configured
    # uvicorn's loggers not to propagate to the root
    access, capture = logging.getLogger("uvicorn.access"), _Capture(scenario.logs)
    level = access.level
    access.setLevel(logging.INFO)
    access.addHandler(capture)
    try:
        access.info(
            '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", f"/v1/x?token={GITHUB}", "1.1", 200
        )
    finally:
        access.setLevel(level)
        access.removeHandler(capture)
    assert scenario.logs[-1].endswith('"GET /v1/x?token=[REDACTED:github_token] HTTP/1.1" 200')
    assert len(scenario.logs) > 10  # the loop, the tools, the skill run and the sleep logged
    assert [line for line in scenario.logs if _leaks(line)] == []


def test_a_file_of_secrets_is_ingested_redacted(
    settings: Settings, embedder: MiniLMEmbedder, namespace: str, tmp_path: Path
) -> None:
    """``sheriff ingest``'s path: parse the JSON Lines, append through the conversation."""
    from sleepwake.conversation import parse_jsonl

    lines = [json.dumps({"role": role, "content": text, "at": T.format(f"08:{i:02d}")})
             for i, (role, text) in enumerate(MESSAGES)]  # fmt: skip
    container = Container(
        settings.model_copy(update={"redact_patterns": {"employee_id": r"EMP-\d{6}"}}),
        embedder=embedder,
    )
    try:
        container.conversation.append(namespace, parse_jsonl(lines), auto_sleep=False)
        stored = container.messages.in_range(namespace, None, None)
    finally:
        container.close()
    assert len(stored) == len(MESSAGES)
    assert [m.message_id for m in stored if _leaks(m.content)] == []
