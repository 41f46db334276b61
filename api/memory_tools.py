"""The memory tools offered to agents outside this process: over MCP (``/mcp`` and ``sheriff
mcp``) and as OpenAI Agents SDK function tools (:mod:`agent.agents_sdk`).

They are the host tools of :mod:`agent.tools` (same parameter models, so the same JSON schemas
and validation, and the same handlers) plus two that only an outside agent needs, which run the
functions behind their REST routes: ``memory_context`` (``POST /v1/context``) and
``messages_append`` (``POST /v1/messages``). One implementation, three surfaces.

The ``repo_*`` tools are not offered: they act on a workspace on the server's disk, and until
the operator switch for repo tools on the REST/MCP surfaces exists, an outside agent gets none
of them (calling one answers "unknown tool").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.tools import Tool, ToolContext, ToolRegistry
from api.routers.context import memory_context
from api.routers.messages import append
from api.schemas import ContextCreate, MessagesCreate
from service.services import Services

if TYPE_CHECKING:
    from api.container import Container

NOT_OFFERED_PREFIX = "repo_"

# Short display names for clients that show them (MCP ``title``).
TITLES = {
    "memory_context": "Memory context for a message",
    "messages_append": "Append messages to the conversation",
    "topics_search": "Search memory topics",
    "topics_get": "Get topics by id",
    "topics_upsert": "Remember: create or add to a topic",
    "topics_link": "Link two topics",
    "memory_sleep": "Sleep: compact the conversation",
    "memory_wake": "Wake: resume plan and recalled topics",
    "skills_search": "Search skills",
    "skills_run": "Run a skill",
    "memory_forget": "Forget: delete a topic, a message or what a phrase matches",
    "facts_correct": "Correct one fact (the old one kept as history)",
    "facts_retract": "Retract one fact (kept as history)",
    "topics_history": "A topic's fact versions and events",
}


def _context(s: Services, ctx: ToolContext, p: ContextCreate) -> dict[str, Any]:
    return memory_context(s.context, ctx.namespace, p, ctx.now).model_dump(mode="json")


def _append(s: Services, ctx: ToolContext, p: MessagesCreate) -> dict[str, Any]:
    return append(s.conversation, ctx.namespace, p).model_dump(mode="json")


EXTRA_TOOLS = (
    Tool(
        "memory_context",
        "What the memory knows that bears on a message: call it with the user's message "
        "before answering. Returns context_text (Markdown, within `budget` tokens, each item "
        "cited back to its source messages), the items packed and why, and the skills that "
        "fit. Time phrases in the message ('last week', 'before you slept') are honoured.",
        ContextCreate,
        _context,
    ),
    Tool(
        "messages_append",
        "Append turns to the conversation (oldest first) so the memory learns from them; "
        "the sleep policy may compact the conversation into topics afterwards (see `sleeps`).",
        MessagesCreate,
        _append,
        writes=True,
    ),
)


def offered(name: str) -> bool:
    """Whether an outside agent may see and call the host tool ``name``."""
    return not name.startswith(NOT_OFFERED_PREFIX)


def memory_registry(c: Container) -> ToolRegistry:
    """The memory tools for outside agents, bound to the composition root ``c``: the context
    and append tools first, then the host tools (the container's registry) that are offered."""
    tools = {t.name: t for t in EXTRA_TOOLS}
    tools.update({name: t for name, t in c.tools.tools.items() if offered(name)})
    return ToolRegistry(c.services, tools)
