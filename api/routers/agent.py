"""``/v1/tools`` (the host tools in Responses format, and calling one by name) and ``/v1/chat``
(one turn of the awake loop). Both use the container's single tool registry, the same one the
loop hands to the model."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import AfterValidator, BaseModel, Field

from agent.loop import ChatResult
from agent.tools import ToolContext
from api.deps import ContainerDep, NamespaceDep
from api.routers.common import errors
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
def list_tools(c: ContainerDep) -> ToolsPublic:
    """Every host tool as a Responses API function tool, ready for ``tools=[...]``."""
    return ToolsPublic(tools=c.tools.specs())


@router.post("/tools/{name}", responses=errors(403, 404, 409, 502))
def call_tool(name: str, body: ToolCallCreate, c: ContainerDep, ns: NamespaceDep) -> ToolCallPublic:
    """Run one tool in your namespace: 404 for an unknown tool, 422 naming each bad argument,
    the tool's own error status otherwise."""
    now: datetime = body.now or c.clock.now()
    output = c.tools.invoke(name, body.arguments, ToolContext(namespace=ns, now=now))
    return ToolCallPublic(name=name, output=output)


@router.post("/chat", responses=errors(409, 502))
def chat(body: ChatCreate, c: ContainerDep, ns: NamespaceDep) -> ChatResult:
    """One user turn through the awake loop (memory context, model, tool calls); 503 when no
    Responses API endpoint is configured."""
    session = f"{ns}/{body.session_id}" if body.session_id else None
    return c.agent.chat(ns, body.message, body.now or c.clock.now(), session)
