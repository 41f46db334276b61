"""Wake in the awake loop (spec §4.3, §10.4; issue #14 items 1-2) against the real Neo4j, the real
embedding model and the real ``openai`` client talking to the offline stand-in model: a task cut
off by a sleep is resumed from its next step on the next turn when fresh and confirmed when
stale, with no tool call, through ``sheriff chat --offline`` and POST /v1/chat; the wake happens
once per sleep (also for concurrent turns); "since you woke" starts at the recorded wake; skills
reach the model as manifests, and a failing tool run routes to ``debug``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver
from typer.testing import CliRunner

from agent.fake_responses import Fail, FakeResponses, function_call, function_outputs, message
from agent.loop import LoopError
from agent.offline_model import offline_model
from api.cli import app
from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from retrieval.context import ContextRequest
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from sleepwake.conversation import IncomingMessage
from tests.integration.api_support import api_client, bearer, new_key

T0 = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
SLEPT = T0 + timedelta(hours=1)
MID_TASK = [
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "The billing migration depends on the schema review."),
    ("user", "We're planning Mel's surprise party at the lake house with Anna."),
    ("user", "We're halfway through migrating the billing tables; next step is the invoices."),
    ("assistant", "Understood, the invoices are next."),
    ("user", "Let's pause here for today."),
    ("assistant", "Sure, talk later."),
]
SETTINGS = {"tail_turns": 4, "extractor": "deterministic", "fresh_window_hours": 12.0}


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


@pytest.fixture
def container(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str, tmp_path: Path
) -> Iterator[tuple[Container, FakeResponses]]:
    """A namespace cut off mid-task by a sleep; the loop's model is the offline stand-in."""
    with FakeResponses(script=offline_model) as fake:
        s = settings.model_copy(
            update={**SETTINGS, "openai_api_key": "sk-test", "openai_base_url": fake.base_url}
        )
        c = Container(
            s,
            clock=FixedClock(SLEPT),
            skill_settings=SkillSettings(workspaces_dir=tmp_path, namespace=namespace),
            driver=driver,
            embedder=embedder,
        )
        turns = [
            IncomingMessage(role=r, content=t, at=T0 + timedelta(minutes=i))
            for i, (r, t) in enumerate(MID_TASK)
        ]
        c.conversation.append(namespace, turns, auto_sleep=False)
        c.sleeper.sleep(namespace, SLEPT, "explicit")
        yield c, fake


def test_sheriff_chat_offline_resumes_a_fresh_task_once_per_sleep(
    container: tuple[Container, FakeResponses], namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in SETTINGS.items():
        monkeypatch.setenv(f"SHERIFF_{key.upper()}", str(value))
    runner = CliRunner()
    fresh = SLEPT + timedelta(minutes=30)

    def chat(text: str, at: datetime) -> dict[str, Any]:
        args = ["chat", "-n", namespace, "--offline", "-m", text, "--now", _iso(at), "--json"]
        out = runner.invoke(app, args)
        assert out.exit_code == 0, out.output
        result: dict[str, Any] = json.loads(out.stdout)
        return result

    first = chat("ok, where were we?", fresh)
    assert first["wake"]["reason"] == "sleep" and first["wake"]["resume"]["action"] == "resume"
    assert first["tool_calls"] == []  # resumed from the wake packet, no tool needed
    assert first["reply"].startswith("Resuming migrating the billing tables")
    assert "next step is the invoices" in first["reply"]
    assert first["wake"]["top_topic_ids"]  # the packet's top topics, by id

    again = chat("and the party?", fresh + timedelta(minutes=1))
    assert again["wake"] is None  # one wake per sleep
    assert [c["name"] for c in again["tool_calls"]] == ["topics_search"]

    c, _ = container
    stored = c.messages.tail(namespace, 4)
    later = fresh + timedelta(minutes=1)
    assert [m.at for m in stored] == [fresh, fresh, later, later]  # --now stamps the turns

    bad = runner.invoke(app, ["chat", "-n", namespace, "--offline", "-m", "hi", "--now", "soon"])
    assert bad.exit_code == 1 and "--now: not an ISO-8601 timestamp" in bad.stderr


@pytest.fixture(scope="module")
def api(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with FakeResponses(script=offline_model) as fake:
        overrides = {**SETTINGS, "openai_api_key": "sk-test", "openai_base_url": fake.base_url}
        ws = tmp_path_factory.mktemp("workspaces")
        with api_client(settings, embedder, ws, **overrides) as client:
            yield client


def test_post_chat_confirms_a_stale_task_and_since_you_woke_starts_at_the_wake(
    api: TestClient, namespace: str
) -> None:
    auth = bearer(new_key(api, namespace))
    turns = [{"role": r, "content": t, "at": _iso(T0 + timedelta(minutes=i))}
             for i, (r, t) in enumerate(MID_TASK)]  # fmt: skip
    r = api.post("/v1/messages", json={"messages": turns, "auto_sleep": False}, headers=auth)
    assert r.status_code == 201, r.text
    assert api.post("/v1/sleep", json={"now": _iso(SLEPT)}, headers=auth).status_code == 200

    woke = SLEPT + timedelta(days=2)
    r = api.post("/v1/chat", json={"message": "hi, where were we?", "now": _iso(woke)},
                 headers=auth)  # fmt: skip
    assert r.status_code == 200, r.text
    stale = r.json()
    assert stale["wake"]["resume"]["action"] == "confirm" and stale["tool_calls"] == []
    assert stale["reply"].startswith("Before I continue migrating the billing tables")
    assert (
        "next step was the invoices" in stale["reply"]
        and "stale: slept 48.0 h ago" in stale["reply"]
    )

    later = woke + timedelta(hours=1)
    shed = {"role": "user", "content": "We painted the shed blue.", "at": _iso(later)}
    r = api.post("/v1/messages", json={"messages": [shed], "auto_sleep": False}, headers=auth)
    assert r.status_code == 201, r.text
    asked = later + timedelta(minutes=1)
    r = api.get("/v1/messages", params={"window": "since you woke", "now": _iso(asked)},
                headers=auth)  # fmt: skip
    assert r.status_code == 200, r.text
    since = r.json()
    assert since["time_window"]["start"].startswith(woke.isoformat()[:19])
    contents = [m["content"] for m in since["messages"]]
    assert contents == ["hi, where were we?", stale["reply"], "We painted the shed blue."]

    r = api.post("/v1/chat", json={"message": "ok, where were we?", "now": _iso(asked)},
                 headers=auth)  # fmt: skip
    assert r.json()["wake"] is None  # the stale wake was the one wake of that sleep


def test_concurrent_turns_after_a_sleep_wake_once(
    container: tuple[Container, FakeResponses], namespace: str
) -> None:
    c, _ = container
    at = SLEPT + timedelta(minutes=10)
    start = threading.Barrier(6)
    woken: list[Any] = []

    def turn() -> None:
        start.wait()
        woken.append(c.services.sleepwake.wake_if_due(namespace, "where were we?", at))

    threads = [threading.Thread(target=turn) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(woken) == 6
    assert sum(w is not None for w in woken) == 1  # state in Neo4j: one wake per sleep
    state = c.sleep_store.wake_state(namespace)
    assert state is not None and state.woke_at == at and state.reason == "sleep"


def test_a_turn_that_fails_gives_its_wake_back(
    container: tuple[Container, FakeResponses], namespace: str
) -> None:
    c, fake = container
    fake.enqueue(Fail(400, "bad request"))  # served before the offline script
    at = SLEPT + timedelta(minutes=10)
    with pytest.raises(LoopError):
        c.agent.chat(namespace, "ok, where were we?", at)
    result = c.agent.chat(namespace, "ok, where were we?", at + timedelta(minutes=1))
    assert result.wake is not None and result.wake["resume"]["action"] == "resume"


def test_a_long_silence_wakes_without_a_new_sleep(
    container: tuple[Container, FakeResponses], namespace: str
) -> None:
    c, fake = container
    c.services.sleepwake.wake_if_due(namespace, "hi", SLEPT + timedelta(minutes=5))
    c.conversation.append(
        namespace,
        [IncomingMessage(role="user", content="We're halfway through the invoice export; "
                         "next step is the CSV header.", at=SLEPT + timedelta(minutes=6))],
        auto_sleep=False,
    )  # fmt: skip
    quiet = SLEPT + timedelta(minutes=6) + c.settings.sleep_policy().wake_silence
    assert c.services.sleepwake.wake_if_due(namespace, "hi", quiet - timedelta(minutes=1)) is None
    result = c.agent.chat(namespace, "ok, where were we?", quiet + timedelta(minutes=1))
    assert result.wake is not None and result.wake["reason"] == "silence"
    assert result.reply == "Resuming the invoice export: next step is the CSV header."
    memory = next(i for i in fake.requests[-1]["input"] if i.get("role") == "developer")
    assert memory["content"].startswith("Wake (after a long silence;")


def test_skills_reach_the_model_as_manifests_light_and_deep(
    container: tuple[Container, FakeResponses], namespace: str
) -> None:
    c, _ = container
    c.services.sleepwake.wake(namespace, "hi", SLEPT)  # no wake block in these turns
    asked = "is the docs style guide short?"
    light = c.services.context.build(
        ContextRequest(namespace=namespace, message=asked, now=SLEPT, budget=1500)
    )
    assert light.skill_routing["mode"] == "light" and len(light.skills) <= 2
    for skill in light.skills:
        assert {"name", "description", "arguments", "when_to_use"} <= set(skill["manifest"])
        assert "docs" not in skill["manifest"] and "template" not in skill["manifest"]
    asked = "Refactor the parser module across files, then update the docs and the tests."
    deep = c.services.context.build(
        ContextRequest(namespace=namespace, message=asked, now=SLEPT, budget=1500)
    )
    assert deep.skill_routing["mode"] == "deep" and 3 <= len(deep.skills) <= 6
    for skill in deep.skills:
        manifest = skill["manifest"]
        assert manifest["arguments"]["type"] == "object"
        assert manifest["template"]["skill_id"] == skill["skill_id"] and manifest["docs"]

    result = c.agent.chat(namespace, asked, SLEPT)
    assert result.context["skills"] == [s["skill_id"] for s in deep.skills]


def test_a_failing_tool_run_routes_to_debug_in_chat(
    container: tuple[Container, FakeResponses], namespace: str
) -> None:
    c, fake = container
    c.services.sleepwake.wake(namespace, "hi", SLEPT)

    def script(request: dict[str, Any]) -> list[Any]:
        if not function_outputs(request):
            return [function_call("repo_read_file", {"path": "missing.py"}, call_id="read")]
        return [message("That file is not there.")]

    fake.script = script
    first = c.agent.chat(namespace, "show me what is in missing.py", SLEPT)
    assert [(t.name, t.ok) for t in first.tool_calls] == [("repo_read_file", False)]
    followed = [i for i in fake.requests[-1]["input"] if i.get("role") == "developer"]
    assert "The last tool call failed" in followed[-1]["content"]
    assert '"skill_id":"debug"' in followed[-1]["content"]  # routed on the failed output

    fake.script = lambda _: [message("ok")]
    second = c.agent.chat(namespace, "so what now?", SLEPT + timedelta(minutes=1))
    assert "debug" in second.context["skills"]  # the next turn routes on the stored failure
    memory = next(i for i in fake.requests[-1]["input"] if i.get("role") == "developer")
    assert '"skill_id":"debug"' in memory["content"]
