"""``/mcp`` keeps tenants apart like ``/v1``: no or a bad key gets 401, the namespace comes from
the key only (no tool argument or resource URI names one), a key never reads or changes another
namespace through MCP, an MCP session belongs to the key that opened it, a revoked key stops at
its next request, and the repo tools are not reachable over MCP. Real server, real Neo4j."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult
from neo4j import Driver

from api.settings import Settings
from graph.keys import looks_like_key
from tests.integration.live_server import LiveServer, bearer, mcp_session

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "probe", "version": "1"}},
}  # fmt: skip
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
UNKNOWN_KEY = "shc_" + "A" * 43
TOOL_ARGS: dict[str, dict[str, Any]] = {
    "memory_context": {"message": "what do you know?"},
    "messages_append": {"messages": [{"role": "user", "content": "hello"}]},
    "topics_search": {"query": "merger"},
    "topics_get": {"topic_ids": ["x"]},
    "topics_upsert": {"name": "Planted"},
    "topics_link": {"from_topic_id": "a", "to_topic_id": "b", "type": "RELATES_TO"},
    "memory_sleep": {},
    "memory_wake": {"message": "hi"},
    "skills_search": {"query": "docs"},
    "skills_run": {"skill_id": "debug", "args": {"trace": "x"}},
    "memory_forget": {"query": "merger", "dry_run": False},
    "facts_correct": {"topic_id": "x", "fact_id": "f", "text": "new"},
    "facts_retract": {"topic_id": "x", "fact_id": "f"},
    "topics_history": {"topic_id": "x"},
}


def text(result: CallToolResult) -> str:
    return str(result.content[0].text)  # type: ignore[union-attr]


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, text(result)
    found: dict[str, Any] = json.loads(text(result))
    return found


def property_names(node: Any) -> set[str]:
    """Every property name anywhere in a JSON schema."""
    if isinstance(node, list):
        return set().union(*(property_names(v) for v in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    names = set(node.get("properties", {}))
    return names.union(*(property_names(v) for v in node.values()))


def count_nodes(driver: Driver, namespace: str) -> int:
    records, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns AND NOT n:ApiKey RETURN count(n) AS n", ns=namespace
    )
    return int(records[0]["n"])


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not-a-key"},
        {"Authorization": f"Bearer {UNKNOWN_KEY}"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"X-API-Key": UNKNOWN_KEY},
    ],
    ids=["none", "malformed", "unknown", "other-scheme", "unknown-x-api-key"],
)
def test_no_or_bad_key_gets_401_like_rest(server: LiveServer, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        rest = http.get("/v1/tools", headers=headers)
        for method in ("POST", "GET", "DELETE"):
            body = INITIALIZE if method == "POST" else None
            answer = http.request(method, "/mcp", json=body, headers={**MCP_HEADERS, **headers})
            assert answer.status_code == 401, (method, answer.text)
            assert answer.json() == rest.json() and answer.json()["error"] == "AuthFailed"
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert "mcp-session-id" not in answer.headers


def test_a_revoked_key_gets_401_and_its_session_stops(server: LiveServer, namespace: str) -> None:
    record, key = server.keys().create(namespace, "to revoke")
    assert looks_like_key(key)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            assert not (await s.call_tool("topics_search", {"query": "x"})).is_error
            server.keys().revoke(record.key_id)
            with pytest.raises(MCPError, match="error response"):  # the SDK's word for a 401
                await s.call_tool("topics_search", {"query": "x"})

    anyio.run(run)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        answer = http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(key)})
    assert answer.status_code == 401 and answer.json()["detail"] == "the API key has been revoked"


def test_a_key_never_reads_or_changes_another_namespace(
    server: LiveServer, driver: Driver, namespace: str, other_namespace: str
) -> None:
    alice, bob = server.new_key(other_namespace), server.new_key(namespace)
    with server.rest(alice) as rest:
        made = rest.post("/v1/topics", json={"name": "Zanzibar merger plan",
                                             "one_liner": "alice's secret merger",
                                             "facts": [{"text": "offer is 40 million"}]})  # fmt: skip
        assert made.status_code == 201, made.text
        secret = made.json()
        rest.post("/v1/messages", json={"messages": [
            {"role": "user", "content": "The Zanzibar merger offer is 40 million."}]})  # fmt: skip
        assert rest.post("/v1/sleep").status_code == 200
        sid = secret["topic_id"]
        stored = rest.get(f"/v1/topics/{sid}").json()  # as alice's own sleep left it
    before = count_nodes(driver, other_namespace)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(bob)) as s:
            mine = json.loads(text(await s.call_tool("topics_upsert", {"name": "Bob's garden"})))
            assert error_of(await s.call_tool("topics_get", {"topic_ids": [sid]}))["error"] == (
                "NotFound"
            )
            for args in (
                {"topic_id": sid, "facts": ["planted by bob"]},
                {"topic_id": sid, "one_liner": "overwritten"},
            ):
                assert error_of(await s.call_tool("topics_upsert", args))["error"] == "NotFound"
            link = {"from_topic_id": mine["topic_id"], "to_topic_id": sid, "type": "DEPENDS_ON"}
            assert error_of(await s.call_tool("topics_link", link))["error"] == "NotFound"
            fact = stored["facts"][0]["fact_id"]
            for tool, args in (
                ("memory_forget", {"topic_id": sid, "dry_run": False}),
                ("facts_correct", {"topic_id": sid, "fact_id": fact, "text": "offer is 0"}),
                ("facts_retract", {"topic_id": sid, "fact_id": fact}),
                ("topics_history", {"topic_id": sid}),
            ):
                assert error_of(await s.call_tool(tool, args))["error"] == "NotFound", tool
            swept = json.loads(text(await s.call_tool(
                "memory_forget", {"query": "Zanzibar merger", "dry_run": False})))  # fmt: skip
            assert swept["matches"]["topics"] == [] and swept["report"]["topics_deleted"] == []
            for tool, args in (
                ("topics_search", {"query": "Zanzibar merger plan"}),
                ("memory_context", {"message": "what is the Zanzibar merger offer?",
                                    "explicit": True, "full_records": True}),
                ("memory_wake", {"message": "the Zanzibar merger"}),
            ):  # fmt: skip
                answer = await s.call_tool(tool, args)
                assert not answer.is_error and "Zanzibar" not in text(answer), tool
                assert sid not in text(answer) and "40 million" not in text(answer)
            await assert_resources_hide(s, sid)

    anyio.run(run)
    assert count_nodes(driver, other_namespace) == before
    with server.rest(alice) as rest:
        assert rest.get(f"/v1/topics/{sid}").json() == stored


async def assert_resources_hide(s: Any, secret_id: str) -> None:
    """Resources list and read only the caller's own topics and wake packet."""
    listed = [str(r.uri) for r in (await s.list_resources()).resources]
    assert f"sheriff://topics/{secret_id}" not in listed and len(listed) == 3
    index = (await s.read_resource("sheriff://topics")).contents[0].text
    assert secret_id not in index and "Zanzibar" not in index
    with pytest.raises(MCPError, match="not found"):
        await s.read_resource(f"sheriff://topics/{secret_id}")
    with pytest.raises(MCPError, match="no wake packet yet"):
        await s.read_resource("sheriff://wake-packet")


def test_tool_arguments_cannot_name_a_namespace(
    server: LiveServer, driver: Driver, namespace: str, other_namespace: str
) -> None:
    key = server.new_key(namespace)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            listed = {t.name for t in (await s.list_tools()).tools}
            assert listed == set(TOOL_ARGS)
            for name, args in TOOL_ARGS.items():
                schema = next(
                    t.input_schema for t in (await s.list_tools()).tools if t.name == name
                )
                assert "namespace" not in property_names(schema), name
                body = error_of(await s.call_tool(name, {**args, "namespace": other_namespace}))
                assert body["error"] == "ValidationFailed", name
                assert "namespace: Extra inputs are not permitted" in body["detail"], name
            nested = {"messages": [{"role": "user", "content": "x", "namespace": other_namespace}]}
            body = error_of(await s.call_tool("messages_append", nested))
            assert "messages.0.namespace: Extra inputs are not permitted" in body["detail"]

    anyio.run(run)
    assert count_nodes(driver, other_namespace) == 0
    assert count_nodes(driver, namespace) == 0  # every refused call wrote nothing


def test_a_session_belongs_to_the_key_that_opened_it(
    server: LiveServer, namespace: str, other_namespace: str
) -> None:
    alice, bob = server.new_key(other_namespace), server.new_key(namespace)
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        opened = http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(alice)})
        assert opened.status_code == 200, opened.text
        session = {"mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}  # fmt: skip
        hijack = http.post("/mcp", json=listing, headers={**MCP_HEADERS, **session, **bearer(bob)})
        assert hijack.status_code == 404 and "tools" not in hijack.text
        closed = http.delete("/mcp", headers={**MCP_HEADERS, **session, **bearer(bob)})
        assert closed.status_code == 404
        own = http.post("/mcp", json=listing, headers={**MCP_HEADERS, **session, **bearer(alice)})
        assert own.status_code == 200 and "topics_search" in own.text


def test_repo_tools_are_not_reachable_over_mcp(server: LiveServer, namespace: str) -> None:
    key = server.new_key(namespace)
    attempts = [
        ("repo_read_file", {"path": ".sheriff/neo4j/password"}),
        ("repo_list_files", {"pattern": "**/*"}),
        ("repo_write_file", {"path": "skills/write_docs/skill.py", "content": "raise SystemExit"}),
        ("repo_run_tests", {"command": "pytest -q"}),
    ]

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            assert not [t.name for t in (await s.list_tools()).tools if t.name.startswith("repo_")]
            for name, args in attempts:
                body = error_of(await s.call_tool(name, args))
                assert (
                    body["error"] == "ToolNotFound" and f"unknown tool {name!r}" in body["detail"]
                )

    anyio.run(run)


@pytest.mark.parametrize(
    "uri",
    [
        "sheriff://topics/../wake-packet",
        "sheriff://topics/%2e%2e%2fwake-packet",
        "sheriff://topics/",
        "sheriff://topics/" + "a" * 65,
        "sheriff://other-namespace/topics",
        "sheriff://topics?namespace=other",
        "file:///work/main/.sheriff/neo4j/password",
    ],
)
def test_resource_uris_name_nothing_outside_the_namespace(
    server: LiveServer, settings: Settings, namespace: str, uri: str
) -> None:
    key = server.new_key(namespace)

    async def run() -> None:
        async with mcp_session(server.mcp_url, bearer(key)) as s:
            with pytest.raises(MCPError) as caught:
                await s.read_resource(uri)
            assert caught.value.data == {"uri": uri}
            assert password not in str(caught.value)

    password = settings.connection()[2]
    assert password
    anyio.run(run)
