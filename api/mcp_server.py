"""The memory as an MCP server (the official ``mcp`` SDK's low-level ``Server``).

One server definition for both transports: streamable HTTP at ``/mcp`` in the API app
(:mod:`api.mcp_http`, the namespace from the caller's API key) and stdio (``sheriff mcp
--namespace NS``, the namespace from the operator's command line). ``namespace_of`` is the only
difference: no tool argument or resource URI can name a namespace.

Tools are :func:`api.memory_tools.memory_registry`: the same parameter models (their JSON
schema is the tool's ``inputSchema``) and the same handlers as ``/v1/tools`` and the REST
routes. A failure comes back as a tool error (``isError``) whose text is the REST error body,
``{"error": kind, "detail": message}``, with the same message REST gives. Resources: every
topic of the namespace (``sheriff://topics/{topic_id}``, as ``GET /v1/topics/{id}``), an index
of them (``sheriff://topics``) and the latest wake packet (``sheriff://wake-packet``).

Handlers run the blocking store and model calls in worker threads, as FastAPI does for the
REST routes, so one slow call never stalls the event loop.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agent.tools import Tool, ToolContext, ToolRegistry
from api.auth import AuthFailed
from api.errors import error_body, status_of
from api.memory_tools import TITLES, memory_registry
from api.routers.topics import topic_detail
from graph import tracing
from graph.errors import SheriffError, ValidationFailed
from graph.models import Topic
from graph.tracing import span

if TYPE_CHECKING:
    from api.admission import ContextGate
    from api.container import Container

log = logging.getLogger(__name__)

NamespaceOf = Callable[[ServerRequestContext[Any, Any]], str]
TOPICS_URI = "sheriff://topics"
CONTEXT_TOOL = "memory_context"  # builds a context: queued at the worker's context gate
TOPIC_PREFIX = "sheriff://topics/"
WAKE_PACKET_URI = "sheriff://wake-packet"
PAGE_SIZE = 100  # topics per resources/list page
INDEX_LIMIT = 1000  # topics in the sheriff://topics index
JSON = "application/json"
INSTRUCTIONS = (
    "Sheriff Claw is your long-term, time-aware memory. With each new user message call "
    "memory_context and use what it returns. Record facts and decisions worth keeping with "
    "topics_upsert, find older ones with topics_search (a time phrase like 'last week' narrows "
    "it), and append the conversation with messages_append so the memory can learn from it."
)


def fixed_namespace(namespace: str) -> NamespaceOf:
    """Every request in ``namespace`` (stdio: one local user, chosen by the operator)."""
    return lambda _ctx: namespace


def namespace_from_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """The namespace of the API key that authenticated this HTTP request (set by the ``/mcp``
    endpoint); refused if there is none, so a request that skipped the check reads nothing."""
    request = ctx.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser) or not user.access_token.subject:
        raise MCPError(code=types.INVALID_REQUEST, message=str(AuthFailed("missing")))
    return user.access_token.subject


def input_schema(params: type[BaseModel]) -> dict[str, Any]:
    """The tool's ``inputSchema``: its parameter model's JSON schema with ``$ref``s inlined
    (some clients do not resolve them) and without pydantic's generated titles. Worked out
    once per model (``list_tools`` runs on the event loop: ~3 ms for every tool's schema on
    each call before), a fresh copy each time."""
    found: dict[str, Any] = json.loads(_input_schema(params))
    return found


@lru_cache(maxsize=256)  # the parameter models are classes defined in code: a fixed few
def _input_schema(params: type[BaseModel]) -> str:
    schema = params.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return inline(defs[node["$ref"].rsplit("/", 1)[-1]])
        return {
            k: ({p: inline(s) for p, s in v.items()} if k == "properties" else inline(v))
            for k, v in node.items()
            if k != "title"
        }

    return json.dumps(inline(schema))


# What each tool does to the memory, as MCP's annotations say it (a tool not listed in a set is
# not so): a read-only tool changes nothing; a destructive one may delete or overwrite what is
# stored (anything else only adds, or keeps the old as history); an idempotent one, called again
# with the same arguments, changes nothing more. tests/unit/test_mcp_annotations.py checks
# every offered tool is judged here.
BOOKKEEPING = {  # reads that record that they happened: not read-only, nothing lost
    "memory_context",  # marks the packed topics used and counts the session's turn
    "memory_wake",  # records when the memory woke
}
DESTRUCTIVE = {
    "memory_forget",  # deletes topics, messages, events for real
    "memory_sleep",  # compacts the conversation, merges and rewrites topics, archives
    "topics_upsert",  # replaces a topic's one-liner
    "skills_run",  # a skill may use tools that overwrite (when the operator allows them)
}
IDEMPOTENT = {
    "memory_forget",  # what is gone stays gone; a second call finds nothing
    "facts_retract",  # a retracted fact stays retracted (again: a conflict, nothing changed)
    "facts_correct",  # the corrected fact is closed: correcting it again is a conflict
}


def mcp_tool(tool: Tool) -> types.Tool:
    """The MCP description of one registry tool, its annotations from what it does."""
    read_only = not tool.writes and tool.name not in BOOKKEEPING
    return types.Tool(
        name=tool.name,
        title=TITLES.get(tool.name),
        description=tool.description,
        input_schema=input_schema(tool.params),
        annotations=types.ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=tool.name in DESTRUCTIVE,
            idempotent_hint=read_only or tool.name in IDEMPOTENT,
            open_world_hint=tool.name == "skills_run",  # a skill may call a model
        ),
    )


@dataclass
class MemoryServer:
    """The MCP request handlers over one container."""

    c: Container
    tools: ToolRegistry
    namespace_of: NamespaceOf
    gate: ContextGate | None = None  # memory_context waits here with POST /v1/context

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], _: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.namespace_of(ctx)  # only an authenticated caller sees the tools
        return types.ListToolsResult(tools=[mcp_tool(t) for t in self.tools.tools.values()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool_ctx = ToolContext(namespace=self.namespace_of(ctx), now=self.c.clock.now())
        run = partial(self.run_tool, params.name, params.arguments or {}, tool_ctx)
        if self.gate is not None and params.name == CONTEXT_TOOL:
            return await self.gate.run(tool_ctx.namespace, run)
        return await anyio.to_thread.run_sync(run)

    def run_tool(
        self, name: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> types.CallToolResult:
        """Invoke a tool; every failure becomes a tool error carrying the REST error body."""
        started = time.perf_counter()
        with span(self._span_name(name), ctx.namespace) as traced:
            try:
                output = to_jsonable_python(self.tools.invoke(name, arguments, ctx))
                result = _ok(output)
            except Exception as exc:  # each kind is mapped (and logged when ours) in _failed
                result = _failed(name, exc)
            if traced is not None and result.is_error:
                traced.set_status(Status(StatusCode.ERROR, "tool error"))
        log.info(
            "mcp tool call name=%s ok=%s duration_ms=%.1f namespace=%s",
            name, not result.is_error, (time.perf_counter() - started) * 1000, ctx.namespace,
            extra={"tool": name, "ok": not result.is_error, "surface": "mcp"},
        )  # fmt: skip
        return result

    def _span_name(self, name: str) -> str:
        """The tool call's span name (only looked up while tracing is on): a tool the registry
        does not know is ``<unknown>``, never the client's text."""
        if not tracing.active():
            return "mcp.tool"
        return f"mcp.tool {name if name in self.tools.tools else '<unknown>'}"

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        ns = self.namespace_of(ctx)
        offset = _offset(params.cursor if params is not None else None)
        found = await anyio.to_thread.run_sync(
            partial(self.c.topics.list_live, ns, limit=offset + PAGE_SIZE + 1)
        )
        page = found[offset : offset + PAGE_SIZE]
        fixed = _fixed_resources() if offset == 0 else []
        return types.ListResourcesResult(
            resources=fixed + [_topic_resource(t) for t in page],
            next_cursor=str(offset + PAGE_SIZE) if len(found) > offset + PAGE_SIZE else None,
        )

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], _: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self.namespace_of(ctx)
        template = types.ResourceTemplate(
            name="topic",
            title="A memory topic",
            uri_template=TOPIC_PREFIX + "{topic_id}",
            description="One topic with its facts, events and typed edges (GET /v1/topics/{id}).",
            mime_type=JSON,
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        ns, uri = self.namespace_of(ctx), str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(self.resource_text, ns, uri)
        except SheriffError as exc:
            code = types.INVALID_PARAMS if status_of(exc) < 500 else types.INTERNAL_ERROR
            raise MCPError(code=code, message=str(exc), data={"uri": uri}) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)]
        )

    def resource_text(self, ns: str, uri: str) -> str:
        """The JSON text of one resource of namespace ``ns``; the REST route's function each."""
        if uri == WAKE_PACKET_URI:
            return self.c.services.sleepwake.latest_packet(ns).model_dump_json()
        if uri == TOPICS_URI:
            return json.dumps(self.topic_index(ns), ensure_ascii=False)
        if uri.startswith(TOPIC_PREFIX):
            topic_id = unquote(uri.removeprefix(TOPIC_PREFIX))
            if not 1 <= len(topic_id) <= 64 or "/" in topic_id:
                raise ValidationFailed(f"not a topic id: {topic_id[:80]!r}")
            return topic_detail(self.c.services.topics, ns, topic_id).model_dump_json()
        raise ValidationFailed(
            f"unknown resource {uri[:200]!r}; known: {TOPICS_URI}, {TOPIC_PREFIX}{{topic_id}}, "
            f"{WAKE_PACKET_URI}"
        )

    def topic_index(self, ns: str) -> dict[str, Any]:
        found = self.c.topics.list_live(ns, limit=INDEX_LIMIT + 1)
        return {
            "topics": [
                {
                    "topic_id": t.topic_id,
                    "uri": TOPIC_PREFIX + t.topic_id,
                    "name": t.name,
                    "one_liner": t.one_liner,
                    "last_seen_at": t.time.last_seen_at.isoformat(),
                }
                for t in found[:INDEX_LIMIT]
            ],
            "truncated": len(found) > INDEX_LIMIT,
        }


def build_server(
    c: Container, namespace_of: NamespaceOf, gate: ContextGate | None = None
) -> Server[Any]:
    """The MCP server over container ``c``; ``namespace_of`` says whose memory a request is;
    ``gate``: the API worker's context gate (none over stdio: one client)."""
    handlers = MemoryServer(c, memory_registry(c), namespace_of, gate)
    return Server(
        "sheriff-claw",
        version=_version(),
        title="Sheriff Claw memory",
        instructions=INSTRUCTIONS,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_resource_templates,
        on_read_resource=handlers.read_resource,
    )


def _ok(output: Any) -> types.CallToolResult:
    # structuredContent must be an object before protocol 2026-07-28: lists are wrapped
    structured = output if isinstance(output, dict) else {"result": output}
    text = json.dumps(output, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def _failed(name: str, exc: Exception) -> types.CallToolResult:
    """The tool error for ``exc``: the body and status REST's error handlers would give (a
    database error comes as the product's own: graph/ translates the driver's)."""
    if isinstance(exc, SheriffError):
        status, body = status_of(exc), error_body(type(exc).__name__, str(exc))
        if status >= 500:
            log.error("mcp tool %s failed: %s", name, exc, exc_info=exc)
    else:
        log.error("mcp tool %s raised", name, exc_info=exc)
        status, body = 500, error_body("InternalError", "internal error; see the server log")
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(body, ensure_ascii=False))],
        structured_content={**body, "status": status},
        is_error=True,
    )


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > 9:
        raise MCPError(code=types.INVALID_PARAMS, message=f"invalid cursor {cursor[:40]!r}")
    return int(cursor)


def _fixed_resources() -> list[types.Resource]:
    return [
        types.Resource(
            uri=TOPICS_URI,
            name="topics",
            title="All topics",
            description="Every live topic of this memory (id, name, one-liner, last seen), "
            "most useful first.",
            mime_type=JSON,
        ),
        types.Resource(
            uri=WAKE_PACKET_URI,
            name="wake-packet",
            title="Latest wake packet",
            description="What the last sleep left for the next wake: goal, open loops, the "
            "conversation tail, the topics to resume with.",
            mime_type=JSON,
        ),
    ]


def _topic_resource(topic: Topic) -> types.Resource:
    return types.Resource(
        uri=TOPIC_PREFIX + topic.topic_id,
        name=topic.name,
        description=topic.one_liner or None,
        mime_type=JSON,
        annotations=types.Annotations(last_modified=topic.time.last_seen_at.isoformat()),
    )


def _version() -> str:
    try:
        return version("sheriff-claw")
    except PackageNotFoundError:
        return "0.1.0"
