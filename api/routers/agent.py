"""``/v1/tools`` (the host tools in Responses format, and calling one by name) and ``/v1/chat``
(one turn of the awake loop). Both use the container's single tool registry, the same one the
loop hands to the model."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

import anyio.from_thread
from fastapi import APIRouter, Request
from pydantic import AfterValidator, BaseModel, Field

from agent.loop import ChatResult
from agent.tools import ToolContext
from api.deps import AgentDep, NamespaceDep, NowDep, ToolsDep
from api.routers.common import NOT_RETRY_SAFE, errors
from graph.validation import Ident, JsonObject, Time, utf8

router = APIRouter(tags=["agent"])


class ToolsPublic(BaseModel):
    tools: list[dict[str, Any]] = Field(description="Responses API function tools (tools[])")


class ToolCallCreate(BaseModel):
    arguments: JsonObject = Field(
        default_factory=dict, description="the tool's arguments, per its parameters schema"
    )
    now: Time | None = Field(default=None, description="the clock (replays)")


class ToolCallPublic(BaseModel):
    name: str
    output: Any


class ChatCreate(BaseModel):
    message: Annotated[str, Field(min_length=1, max_length=20_000), AfterValidator(utf8)]
    now: Time | None = None
    session_id: Ident | None = None


@router.get("/tools")
def list_tools(tools: ToolsDep) -> ToolsPublic:
    """Every host tool as a Responses API function tool, ready for ``tools=[...]``."""
    return ToolsPublic(tools=tools.specs())


@router.post(  # a tool of any kind: a skill run, a command, a write
    "/tools/{name}", responses=errors(403, 404, 409, 502), dependencies=NOT_RETRY_SAFE
)
def call_tool(
    name: str,
    body: ToolCallCreate,
    request: Request,
    tools: ToolsDep,
    ns: NamespaceDep,
    now: NowDep,
) -> ToolCallPublic:
    """Run one tool in your namespace: 404 for an unknown tool, 422 naming each bad argument,
    the tool's own error status otherwise. A test run stops when the client goes away."""
    when: datetime = body.now or now
    ctx = ToolContext(namespace=ns, now=when, cancelled=client_gone(request))
    output = tools.invoke(name, body.arguments, ctx)
    return ToolCallPublic(name=name, output=output)


def client_gone(request: Request) -> Callable[[], bool]:
    """A check, callable from the worker thread a sync route runs in, that is True once the
    client has disconnected (long tools such as ``repo_run_tests`` then stop their work)."""

    def check() -> bool:
        try:
            return bool(anyio.from_thread.run(request.is_disconnected))
        except RuntimeError:  # not on an anyio worker thread: nobody to ask
            return False

    return check


@router.post(  # a model turn: its messages appended, tools run
    "/chat", responses=errors(409, 502), dependencies=NOT_RETRY_SAFE
)
def chat(body: ChatCreate, agent: AgentDep, ns: NamespaceDep, now: NowDep) -> ChatResult:
    """One user turn through the awake loop (memory context, model, tool calls); 503 when no
    Responses API endpoint is configured."""
    return agent().chat(ns, body.message, body.now or now, body.session_id)
