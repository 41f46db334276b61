"""The OpenAI Agents SDK with this memory: a real ``Runner`` with ``SheriffSession`` and the memory
function tools, through the real ``openai`` client to the fake Responses server, against the
real Neo4j. The session stores each item as a message of the namespace and hands the history
back from the tail; the tools run in the session's namespace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner
from agents.mcp import MCPServerStreamableHttp, MCPServerStreamableHttpParams
from neo4j import Driver
from openai import AsyncOpenAI

from agent.agents_sdk import SheriffSession, memory_tools
from agent.fake_responses import FakeResponses, function_call, function_outputs, message
from api.container import Container
from api.memory_tools import memory_registry
from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.live_server import bearer, live_server

RUN = RunConfig(tracing_disabled=True)  # no trace export: the tests have no network


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


@pytest.fixture(scope="module")
def container(settings: Settings, driver: Driver, embedder: MiniLMEmbedder) -> Iterator[Container]:
    c = Container(  # the session's driver and model, not a second one
        settings.model_copy(update={"extractor": "deterministic"}), driver=driver, embedder=embedder
    )
    yield c


def agent_for(c: Container, fake: FakeResponses, namespace: str) -> Agent[Any]:
    client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
    return Agent(
        name="assistant",
        instructions="You have a long-term memory; use its tools.",
        model=OpenAIResponsesModel(model="gpt-test", openai_client=client),
        tools=memory_tools(memory_registry(c), namespace, c.clock),
    )


def test_an_agent_remembers_through_the_session_and_the_tools(
    container: Container, fake: FakeResponses, namespace: str
) -> None:
    upsert = {"topic_id": None, "name": "Lake house", "one_liner": "the June trip",
              "facts": ["book it for June"], "aliases": None, "open_loops": None}  # fmt: skip
    fake.enqueue(
        [function_call("topics_upsert", upsert, call_id="c1")],
        [message("Noted: the lake house in June.")],
        [function_call("topics_get", {"topic_ids": ["no-such-topic"]}, call_id="c2")],
        [message("You planned the lake house for June.")],
    )
    before = len(fake.requests)
    agent = agent_for(container, fake, namespace)

    async def run() -> tuple[Any, Any]:
        first = await Runner.run(
            agent, "Let's book the lake house for June.",
            session=SheriffSession.for_services(container.services, namespace), run_config=RUN,
        )  # fmt: skip
        # a new session object (another process, a restart): the history comes from the memory
        second = await Runner.run(
            agent, "What did we plan?",
            session=SheriffSession.for_services(container.services, namespace), run_config=RUN,
        )  # fmt: skip
        return first, second

    first, second = anyio.run(run)
    assert first.final_output == "Noted: the lake house in June."
    assert second.final_output == "You planned the lake house for June."
    requests = fake.requests[before:]
    offered = {t["name"] for t in requests[0]["tools"]}
    assert offered == set(memory_registry(container).names()) - {"messages_append"}
    made = json.loads(function_outputs(requests[1])["c1"])
    assert made["created"] is True
    assert [t.name for t in container.topics.list_live(namespace)] == ["Lake house"]

    history = requests[2]["input"]
    assert [(i.get("role"), i.get("type")) for i in history] == [
        ("user", None), (None, "function_call"), (None, "function_call_output"),
        ("assistant", None), ("user", None),
    ]  # fmt: skip
    assert history[0]["content"] == "Let's book the lake house for June."
    assert history[1]["call_id"] == "c1" and json.loads(history[1]["arguments"]) == upsert
    assert history[3]["content"] == "Noted: the lake house in June."
    error = json.loads(function_outputs(requests[3])["c2"])["error"]
    assert error == "NotFound: no topic with id no-such-topic in this memory"

    stored = container.messages.tail(namespace, 20)
    assert [m.role for m in stored] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert stored[1].tool_calls[0]["name"] == "topics_upsert" and stored[1].external_id
    assert stored[2].tool_calls == [{"type": "function_call_output", "call_id": "c1"}]


def test_pop_and_clear_change_the_sessions_view_not_the_memory(
    container: Container, namespace: str
) -> None:
    session = SheriffSession.for_services(container.services, namespace)
    other_view = SheriffSession.for_services(container.services, namespace)

    async def run() -> None:
        assert await session.get_items() == [] and await session.pop_item() is None
        await session.add_items([
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "second"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
        ])  # fmt: skip
        assert await session.get_items() == [
            {"role": "user", "content": "first"}, {"role": "assistant", "content": "second"},
        ]  # fmt: skip
        assert await session.get_items(limit=1) == [{"role": "assistant", "content": "second"}]
        assert await session.pop_item() == {"role": "assistant", "content": "second"}
        assert await session.get_items() == [{"role": "user", "content": "first"}]
        assert len(await other_view.get_items()) == 2  # the memory still has it
        await session.add_items([{"role": "user", "content": "third"}])
        assert [i["content"] for i in await session.get_items()] == ["first", "third"]
        await session.clear_session()
        assert await session.get_items() == []
        await session.add_items([{"role": "developer", "content": "be brief"}])
        assert await session.get_items() == [{"role": "developer", "content": "be brief"}]

    anyio.run(run)
    assert [m.content for m in container.messages.tail(namespace, 10)] == [
        "first", "second", "third", "be brief",
    ]  # fmt: skip


def test_an_agent_uses_the_memory_over_mcp(
    settings: Settings,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
    tmp_path: Path,
) -> None:
    """The other way in: the SDK's own MCP client on ``/mcp`` of a running server, with a key."""
    fake.enqueue(
        [function_call("topics_upsert", {"name": "Dentist", "facts": ["Tuesday 9am"]},
                       call_id="m1")],
        [message("Saved.")],
    )  # fmt: skip
    before = len(fake.requests)
    with live_server(settings, embedder, tmp_path, extractor="deterministic") as server:
        key = server.new_key(namespace)

        async def run() -> Any:
            params: MCPServerStreamableHttpParams = {
                "url": server.mcp_url, "headers": bearer(key), "timeout": 120,
            }  # fmt: skip
            async with MCPServerStreamableHttp(params, name="sheriff") as memory:
                client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
                agent: Agent[Any] = Agent(
                    name="assistant",
                    model=OpenAIResponsesModel(model="gpt-test", openai_client=client),
                    mcp_servers=[memory],
                )
                return await Runner.run(agent, "Dentist on Tuesday at 9.", run_config=RUN)

        result = anyio.run(run)
        with server.rest(key) as rest:
            found = rest.post("/v1/topics/search", json={"query": "dentist"}).json()
    assert result.final_output == "Saved."
    offered = {t["name"] for t in fake.requests[before]["tools"]}
    assert {"memory_context", "topics_upsert", "messages_append"} <= offered
    assert not {n for n in offered if n.startswith("repo_")}
    output = next(
        i["output"] for i in fake.requests[before + 1]["input"]
        if i.get("type") == "function_call_output" and i["call_id"] == "m1"
    )  # fmt: skip
    assert json.loads(output[0]["text"])["created"] is True  # MCP content parts, as input_text
    assert [h["name"] for h in found["hits"]] == ["Dentist"]
