"""The awake loop end to end: the real ``openai`` client over HTTP to the fake Responses server,
the real Neo4j, the real embedding model, real skills in a temporary workspace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from agent.fake_responses import Fail, FakeResponses, function_call, function_outputs, message
from agent.tools import ToolContext
from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from sleepwake.conversation import IncomingMessage

NOW = datetime(2026, 3, 9, 10, 0, tzinfo=UTC)
TRACE = """Traceback (most recent call last):
  File "app.py", line 4, in <module>
    print(load()["db_url"])
KeyError: 'db_url'
"""


@pytest.fixture
def fake() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


@pytest.fixture
def container(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    fake: FakeResponses,
    tmp_path: Path,
) -> Container:
    s = settings.model_copy(
        update={
            "openai_api_key": "sk-test",
            "openai_base_url": fake.base_url,
            "tail_turns": 2,
            "extractor": "deterministic",  # sleeps here use the rules; the loop uses the fake
        }
    )
    c = Container(
        s,
        clock=FixedClock(NOW),
        skill_settings=SkillSettings(workspaces_dir=tmp_path, namespace=namespace),
        driver=driver,
        embedder=embedder,
    )
    workspaces = c.workspaces  # the namespace's own workspace
    assert workspaces is not None
    (workspaces.for_namespace(namespace) / "app.py").write_text(
        "def load():\n    return {}\n\nprint(load()['db_url'])\n", encoding="utf-8"
    )
    day = datetime(2026, 3, 3, 18, 0, tzinfo=UTC)
    turns = [
        ("user", "I'm planning Maya's surprise birthday party at the lake house on March 14."),
        ("assistant", "Lovely. What budget do you have for the party?"),
        ("user", "The party budget is 300 dollars and Tom brings the cake."),
        ("assistant", "Noted: 300 dollars, Tom brings the cake."),
    ]
    c.conversation.append(
        namespace,
        [IncomingMessage(role=r, content=t, at=day + timedelta(minutes=i))
         for i, (r, t) in enumerate(turns)],
        auto_sleep=False,
    )  # fmt: skip
    c.sleeper.sleep(namespace, day + timedelta(hours=1), "explicit")
    return c


def _script(request: dict[str, Any]) -> list[dict[str, Any]]:
    outputs = function_outputs(request)
    if not outputs:
        return [
            function_call("topics_search", {"query": "party planning", "time_window": None,
                                            "k": 3}, call_id="call_search"),
            function_call("skills_run", {"skill_id": "debug",
                                         "args": {"trace": TRACE, "use_llm": False}},
                          call_id="call_debug"),
        ]  # fmt: skip
    found = json.loads(outputs["call_search"])["topics"][0]["name"]
    return [message(f"Your party topic is {found}; the crash is a missing db_url key.")]


def test_chat_calls_tools_feeds_outputs_back_and_ends_with_the_answer(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    fake.script = _script
    asked = "How is the planning for Maya's party going? And why does app.py crash?"
    result = container.agent.chat(namespace, asked, NOW)

    assert result.stopped == "final" and result.steps == 2
    assert [(c.name, c.ok) for c in result.tool_calls] == [
        ("topics_search", True),
        ("skills_run", True),
    ]
    first, second = fake.requests
    assert first["model"] == "gpt-5.2-codex"
    tools = {t["name"]: t for t in first["tools"]}
    assert tools["topics_search"]["strict"] is True
    assert tools["topics_search"]["parameters"]["additionalProperties"] is False
    assert {"topics_get", "topics_upsert", "topics_link", "memory_sleep", "memory_wake",
            "skills_search", "skills_run", "repo_read_file"} <= set(tools)  # fmt: skip
    # the memory block carries the retrieved party topic; the user message comes last
    memory = [i for i in first["input"] if i.get("role") == "developer"]
    assert memory and "lake house" in memory[0]["content"]
    assert first["input"][-1] == {"role": "user", "content": asked}
    # the second request replays both calls and answers each by call_id
    calls = [i for i in second["input"] if i.get("type") == "function_call"]
    assert [c["call_id"] for c in calls] == ["call_search", "call_debug"]
    outputs = function_outputs(second)
    found = json.loads(outputs["call_search"])["topics"]
    best = found[0]
    assert any("birthday party" in " ".join([t["one_liner"], *t["facts"]]) for t in found)
    assert result.reply == f"Your party topic is {best['name']}; the crash is a missing db_url key."
    debugged = json.loads(outputs["call_debug"])
    assert debugged["ok"] is True
    assert debugged["output"]["exception"]["type"] == "KeyError"
    # both turns are in the continuous conversation, the reply records its tool calls
    stored = container.messages.tail(namespace, 2)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[1].content == result.reply
    assert [c["name"] for c in stored[1].tool_calls] == ["topics_search", "skills_run"]
    assert stored[1].tool_calls[1]["arguments"] == {"skill_id": "debug"}  # args kept brief
    # a later sleep puts the skill that ran into the wake packet
    container.sleeper.sleep(namespace, NOW + timedelta(hours=1), "explicit")
    packet = container.sleep_store.wake_packets(namespace, limit=1)[0]
    assert "skill:debug" in packet.recent_skill_refs


def test_a_tool_error_goes_back_to_the_model_which_recovers(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    fake.enqueue(
        [function_call("topics_get", {"topic_ids": ["no-such-topic"]}, call_id="c1")],
        [function_call("topics_search", {"query": "party", "time_window": "in the blue moon",
                                         "k": 2}, call_id="c2")],
        [message("Nothing found.")],
    )  # fmt: skip
    result = container.agent.chat(namespace, "what do you remember?", NOW)
    assert result.reply == "Nothing found."
    assert [c.ok for c in result.tool_calls] == [False, False]
    first_error = json.loads(function_outputs(fake.requests[1])["c1"])["error"]
    assert "NotFound" in first_error and "no-such-topic" in first_error
    second_error = json.loads(function_outputs(fake.requests[2])["c2"])["error"]
    assert "in the blue moon" in second_error


def test_the_loop_stops_at_the_step_limit(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    fake.script = lambda _: [function_call("skills_search", {"query": "debug", "k": None})]
    result = container.agent.chat(namespace, "keep searching", NOW)
    assert result.stopped == "step_limit"
    assert len(fake.requests) == container.settings.agent_max_steps
    assert result.reply == ""


def test_an_unknown_model_falls_back_to_the_configured_one(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    fake.enqueue(Fail(404, "The model `gpt-5.2-codex` does not exist", "not_found_error"))
    fake.enqueue([message("hello from the fallback")])
    result = container.agent.chat(namespace, "quick typo fix please", NOW)
    assert [r["model"] for r in fake.requests] == ["gpt-5.2-codex", "gpt-5.1-codex"]
    assert result.model == "gpt-5.1-codex" and result.reply == "hello from the fallback"
    assert fake.requests[0]["reasoning"] == {"effort": "low"}


def test_topics_upsert_from_the_model_cites_the_user_turn(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    fake.enqueue(
        [function_call("topics_upsert", {"topic_id": None, "name": "Deploy freeze",
                                         "one_liner": "No deploys on Fridays",
                                         "facts": ["never deploy on a Friday"], "aliases": None,
                                         "open_loops": None})],
        [message("Noted.")],
    )  # fmt: skip
    result = container.agent.chat(namespace, "remember: never deploy on a Friday", NOW)
    assert result.tool_calls[0].ok
    search = {"query": "deploy friday", "k": 3}
    hits = container.tools.invoke("topics_search", search, ToolContext(namespace, NOW))["topics"]
    topic = container.topics.get(namespace, [hits[0]["topic_id"]])[0]
    assert topic.name == "Deploy freeze"
    assert topic.facts[0].source_message_ids == [result.message_ids[0]]


def test_a_tight_context_budget_makes_the_turn_sleep_first(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    tight = container.settings.model_copy(
        update={"context_budget_tokens": 500, "sleep_buffer_share": 0.5}
    ).sleep_policy()
    container = Container(
        container.settings,
        clock=container.clock,
        skill_settings=container.skill_settings,
        driver=container.driver,
        embedder=container.embedder,
        policy=tight,
    )
    fake.enqueue([message("ok")])
    long_turn = "Here is the full plan for the lake house weekend. " * 30
    result = container.agent.chat(namespace, long_turn, NOW)
    assert result.sleeps and result.sleeps[0]["reason"] == "budget"
    assert result.sleeps[0]["messages_compacted"] > 0
    assert container.sleep_store.wake_packets(namespace, limit=1)
