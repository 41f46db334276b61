"""The MCP server with real clients: the ``mcp`` SDK's ClientSession over streamable HTTP
(``/mcp`` of a uvicorn server) and over stdio (``sheriff mcp`` spawned), against the real
Neo4j. Every tool is listed and called; results, errors and resources are the REST API's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, PaginatedRequestParams

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.live_server import LiveServer, bearer, live_server, mcp_session

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {
    "memory_context", "messages_append", "topics_search", "topics_get", "topics_upsert",
    "topics_link", "memory_sleep", "memory_wake", "skills_search", "skills_run",
    "memory_forget", "facts_correct", "facts_retract", "topics_history",
}  # fmt: skip
TRACE = 'Traceback (most recent call last):\n  File "app/calc.py", line 3, in ratio\nZeroDivisionError: division by zero'


@pytest.fixture(scope="module")
def server(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with live_server(
        settings, embedder, tmp_path_factory.mktemp("ws"), extractor="deterministic"
    ) as live:
        yield live


def data(result: CallToolResult) -> Any:
    """The JSON a tool answered (its text content), checked against structuredContent."""
    parsed = json.loads(result.content[0].text)  # type: ignore[union-attr]
    wrapped = parsed if isinstance(parsed, dict) else {"result": parsed}
    if result.is_error:
        assert result.structured_content == {
            **parsed,
            "status": result.structured_content["status"],
        }
    else:
        assert result.structured_content == wrapped
    return parsed


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> Any:
    result = await session.call_tool(name, args)
    assert not result.is_error, (name, result.content)
    return data(result)


def test_tools_are_listed_with_schemas(server: LiveServer, namespace: str) -> None:
    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(server.new_key(namespace))) as session:
            listed = (await session.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            for tool in listed:
                schema = tool.input_schema
                assert schema["type"] == "object" and tool.description and tool.title
                assert "$ref" not in json.dumps(schema)
            by_name = {t.name: t for t in listed}
            assert by_name["topics_search"].annotations.read_only_hint is True  # type: ignore[union-attr]
            assert by_name["topics_upsert"].annotations.read_only_hint is False  # type: ignore[union-attr]
            search = by_name["topics_search"].input_schema
            assert search["required"] == ["query"] and "time_window" in search["properties"]
            assert by_name["memory_context"].input_schema["required"] == ["message"]
            messages = by_name["messages_append"].input_schema["properties"]["messages"]
            assert messages["items"]["properties"]["role"]["enum"] == [
                "user", "assistant", "system", "tool",
            ]  # fmt: skip

    anyio.run(run)


def test_every_tool_runs_and_matches_rest(server: LiveServer, namespace: str) -> None:
    key = server.new_key(namespace)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            appended = await call(s, "messages_append", {"messages": [
                {"role": "user", "content": "We decided to book the lake house for June."},
                {"role": "assistant", "content": "Noted: the lake house, June."},
            ]})  # fmt: skip
            assert appended["appended"] == 2
            lake = await call(s, "topics_upsert", {
                "name": "Lake house", "one_liner": "the June trip to the lake house",
                "facts": ["we decided to book it for June"],
            })  # fmt: skip
            boat = await call(s, "topics_upsert", {"name": "Boat rental", "facts": ["two kayaks"]})
            assert lake["created"] and boat["created"]
            edge = await call(s, "topics_link", {
                "from_topic_id": lake["topic_id"], "to_topic_id": boat["topic_id"],
                "type": "RELATES_TO",
            })  # fmt: skip
            assert edge["type"] == "RELATES_TO" and edge["weight"] == 1.0
            found = await call(s, "topics_search", {"query": "lake house", "time_window": "today"})
            assert found["time_window"]["phrase"] == "today"
            assert found["topics"][0]["topic_id"] == lake["topic_id"]
            got = await call(s, "topics_get", {"topic_ids": [lake["topic_id"]]})
            with server.rest(key) as rest:
                same = rest.post("/v1/tools/topics_get",
                                 json={"arguments": {"topic_ids": [lake["topic_id"]]}})  # fmt: skip
            assert got == same.json()["output"]
            assert "we decided to book it for June" in [f["text"] for f in got[0]["facts"]]
            context = await call(s, "memory_context", {
                "message": "what did we decide about the lake house?", "explicit": True,
            })  # fmt: skip
            assert context["request_class"] == "A" and context["items"]
            assert "lake house" in context["context_text"].lower()
            slept = await call(s, "memory_sleep", {})
            assert slept["reason"] == "explicit" and slept["wake_packet_id"], slept
            woke = await call(s, "memory_wake", {"message": "let's continue with the lake house"})
            assert woke["resume"]["action"] in ("resume", "confirm", "none")
            assert "Lake house" in [t["name"] for t in woke["topics"]]
            skills = await call(s, "skills_search", {"query": "debug a failing stack trace"})
            assert skills[0]["skill_id"] == "debug"
            ran = await call(s, "skills_run", {
                "skill_id": "debug", "args": {"trace": TRACE, "use_llm": False},
            })  # fmt: skip
            assert ran["skill_id"] == "debug" and ran["ok"] and ran["outcome"] == "success"
            fact = got[0]["facts"][0]["fact_id"]
            fixed = await call(s, "facts_correct", {
                "topic_id": lake["topic_id"], "fact_id": fact, "text": "we booked it for July",
            })  # fmt: skip
            assert fixed["closed"]["fact_id"] == fact
            assert fixed["replacement"]["text"] == "we booked it for July"
            history = await call(s, "topics_history", {"topic_id": lake["topic_id"]})
            texts = [f["text"] for f in history["facts"]]
            assert "we decided to book it for June" in texts and "we booked it for July" in texts
            kayaks = (await call(s, "topics_get", {"topic_ids": [boat["topic_id"]]}))[0]["facts"]
            retracted = await call(s, "facts_retract", {
                "topic_id": boat["topic_id"], "fact_id": kayaks[0]["fact_id"],
            })  # fmt: skip
            assert retracted["replacement"] is None and retracted["closed"]["invalid_at"]
            plan = await call(s, "memory_forget", {"topic_id": boat["topic_id"]})
            assert plan["dry_run"] and boat["topic_id"] in plan["topics_deleted"]
            gone = await call(s, "memory_forget", {"topic_id": boat["topic_id"], "dry_run": False})
            assert not gone["dry_run"]
            with server.rest(key) as rest:
                assert rest.get(f"/v1/topics/{boat['topic_id']}").status_code == 404

    anyio.run(run)


def test_errors_are_tool_errors_with_the_rest_messages(server: LiveServer, namespace: str) -> None:
    key = server.new_key(namespace)
    cases = [
        ("topics_get", {"topic_ids": ["no-such-topic"]}, 404),
        ("topics_search", {"query": "x", "k": 0}, 422),
        ("topics_search", {"query": "x", "time_window": "whenever, really"}, 422),
        ("topics_upsert", {"facts": ["a fact with no topic"]}, 422),
        ("skills_run", {"skill_id": "no_such_skill"}, 404),
    ]

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            with server.rest(key) as rest:
                for name, args, status in cases:
                    result = await s.call_tool(name, args)
                    assert result.is_error, (name, args)
                    body = data(result)
                    same = rest.post(f"/v1/tools/{name}", json={"arguments": args})
                    assert same.status_code == status == result.structured_content["status"]
                    assert body == same.json(), name
            unknown = await s.call_tool("no_such_tool", {})
            assert unknown.is_error and "unknown tool 'no_such_tool'" in data(unknown)["detail"]
            bad_context = await s.call_tool("memory_context", {"message": "hi", "budget": 1})
            assert bad_context.is_error and "budget" in data(bad_context)["detail"]

    anyio.run(run)


def test_resources_are_the_namespaces_topics_and_wake_packet(
    server: LiveServer, namespace: str
) -> None:
    key = server.new_key(namespace)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            with pytest.raises(MCPError, match="no wake packet yet"):
                await s.read_resource("sheriff://wake-packet")
            topic = await call(s, "topics_upsert", {"name": "Garden", "facts": ["plant tulips"]})
            uri = f"sheriff://topics/{topic['topic_id']}"
            listed = [str(r.uri) for r in (await s.list_resources()).resources]
            assert listed == ["sheriff://topics", "sheriff://wake-packet", uri]
            templates = (await s.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["sheriff://topics/{topic_id}"]
            read = json.loads((await s.read_resource(uri)).contents[0].text)  # type: ignore[union-attr]
            with server.rest(key) as rest:
                assert read == rest.get(f"/v1/topics/{topic['topic_id']}").json()
                index = json.loads(
                    (await s.read_resource("sheriff://topics")).contents[0].text  # type: ignore[union-attr]
                )
                assert [t["uri"] for t in index["topics"]] == [uri] and not index["truncated"]
                await call(s, "messages_append", {"messages": [
                    {"role": "user", "content": "Remind me to water the tulips."}]})  # fmt: skip
                await call(s, "memory_sleep", {})
                packet = (await s.read_resource("sheriff://wake-packet")).contents[0]
                assert json.loads(packet.text) == rest.get("/v1/wake-packet").json()  # type: ignore[union-attr]
            with pytest.raises(MCPError, match="unknown resource"):
                await s.read_resource("file:///etc/passwd")

    anyio.run(run)


def test_topic_resources_come_in_pages(
    server: LiveServer, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import api.mcp_server

    monkeypatch.setattr(api.mcp_server, "PAGE_SIZE", 2)
    key = server.new_key(namespace)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            for name in ("Alpha", "Beta", "Gamma"):
                await call(s, "topics_upsert", {"name": name})
            first = await s.list_resources()
            assert len(first.resources) == 4 and first.next_cursor == "2"
            second = await s.list_resources(params=PaginatedRequestParams(cursor="2"))
            assert len(second.resources) == 1 and second.next_cursor is None
            topics = {str(r.uri) for r in first.resources[2:] + second.resources}
            assert len(topics) == 3 and all(u.startswith("sheriff://topics/") for u in topics)
            for bad in ("abc", "-1", "\u00b2", "9" * 20):
                with pytest.raises(MCPError, match="invalid cursor"):
                    await s.list_resources(params=PaginatedRequestParams(cursor=bad))

    anyio.run(run)


def test_other_protocol_era_client_works_too(server: LiveServer, namespace: str) -> None:
    """``mcp.Client`` negotiates the newest protocol it can (server/discover) instead of the
    initialize handshake; the endpoint serves it with the same auth and tools."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    key = server.new_key(namespace)

    async def run() -> None:
        async with httpx2.AsyncClient(headers=bearer(key), timeout=120) as http:
            transport = streamable_http_client(server.mcp_url, http_client=http)
            async with Client(transport) as client:
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                made = await client.call_tool("topics_upsert", {"name": "Piano lessons"})
                assert not made.is_error
                found = await client.call_tool("topics_search", {"query": "piano"})
                assert "Piano lessons" in found.content[0].text  # type: ignore[union-attr]

    anyio.run(run)


def test_stdio_server_spawned_by_a_client(namespace: str) -> None:
    """``sheriff mcp --namespace NS`` as a desktop client starts it: stdout is the protocol."""
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "sheriff"),
        args=["mcp", "--namespace", namespace],
        env={**os.environ, "PYTHONPATH": str(ROOT), "SHERIFF_EXTRACTOR": "deterministic"},
        cwd=str(ROOT),
    )

    async def run() -> None:
        with anyio.fail_after(240):
            await session_over_stdio()

    async def session_over_stdio() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.server_info.name == "sheriff-claw" and "memory_context" in (
                init.instructions or ""
            )
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            made = await call(s, "topics_upsert", {"name": "Tax return", "facts": ["due in May"]})
            found = await call(s, "topics_search", {"query": "tax return"})
            assert found["topics"][0]["topic_id"] == made["topic_id"]
            appended = await call(s, "messages_append", {"messages": [
                {"role": "user", "content": "The tax return is due in May."}]})  # fmt: skip
            assert appended["messages"][0]["role"] == "user"
            uri = f"sheriff://topics/{made['topic_id']}"
            assert uri in [str(r.uri) for r in (await s.list_resources()).resources]
            error = await s.call_tool("topics_get", {"topic_ids": ["missing"]})
            assert error.is_error and data(error)["error"] == "NotFound"

    anyio.run(run)


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
def test_mcp_inspector_cli_lists_the_tools(server: LiveServer, namespace: str) -> None:
    """The official MCP Inspector's CLI mode (npm @modelcontextprotocol/inspector)."""
    command = [
        "npx", "-y", "@modelcontextprotocol/inspector@2", "--cli", server.mcp_url,
        "--transport", "http", "--header", f"Authorization: Bearer {server.new_key(namespace)}",
        "--method", "tools/list", "--strict",  # --strict: exit 6 on a schema portability error
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = json.loads(done.stdout)
    assert {t["name"] for t in listed["tools"]} == TOOLS
