"""The memory in the OpenAI Agents SDK (``openai-agents``): a ``Session`` backed by the
namespace's continuous conversation, and the memory tools as SDK function tools.

``SheriffSession`` implements the SDK's ``Session`` protocol (``agents.memory.Session``):

- ``add_items`` appends each input item as one message through ``Conversation.append``, the
  function behind ``POST /v1/messages``, so the sleep policy runs as for any other client and
  the memory learns from the run. Messages keep their role (``developer`` is stored as
  ``system`` with speaker ``developer``); a ``function_call`` becomes an assistant message
  whose ``tool_calls`` hold the call, a ``function_call_output`` a ``tool`` message. Reasoning
  and hosted-tool items are not stored: they are the model's working state, not conversation.
- ``get_items`` is the history from the tail of the conversation (``ConversationService.tail``),
  oldest first, turned back into input items; at most ``limit`` (or ``max_items``) of them.
  Older turns are what sleep compacts into topics: the ``memory_context`` and ``topics_*``
  tools reach them.
- The memory never deletes a message (forgetting is an explicit operation of its own), so
  ``pop_item`` and ``clear_session`` change what *this session object* returns: a popped
  message is hidden from its history, and a cleared session starts its history after the
  newest message. Sleep still learns from them.

:func:`memory_tools` wraps any :class:`agent.tools.ToolRegistry` (normally
``api.memory_tools.memory_registry``, the tool set MCP offers) as ``FunctionTool``s that call
the registry exactly as the house awake loop does: failures come back to the model as
``{"error": ...}`` it can read and recover from.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from agents import FunctionTool
from agents.memory import SessionSettings
from agents.tool_context import ToolContext as SdkToolContext

from agent.tools import ToolContext, ToolRegistry
from graph.clock import Clock
from graph.models import Message
from service.memory import ConversationService
from service.services import Services
from sleepwake.conversation import IncomingMessage

if TYPE_CHECKING:
    from agents.items import TResponseInputItem


log = logging.getLogger(__name__)

MAX_CONTENT = 100_000  # a stored message's content limit (graph.models.Message)
TRUNCATED = "\n[truncated]"
SESSION_COVERED = frozenset({"messages_append"})  # the Session appends the conversation itself
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})


class SheriffSession:
    """An Agents SDK session over one namespace's conversation (see the module docstring)."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        conversation: ConversationService,
        namespace: str,
        *,
        session_id: str | None = None,
        max_items: int = 200,
        auto_sleep: bool = True,
    ) -> None:
        self.conversation = conversation
        self.namespace = namespace
        self.session_id = session_id or namespace
        self.max_items = max_items
        self.auto_sleep = auto_sleep
        self._hidden: set[str] = set()  # popped message ids
        self._after_seq = -1  # cleared: history starts after this seq

    @classmethod
    def for_services(cls, s: Services, namespace: str, **kwargs: Any) -> SheriffSession:
        """A session over the application's conversation service."""
        return cls(s.conversation, namespace, **kwargs)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The latest ``limit`` items (default ``max_items``), oldest first."""
        visible = await asyncio.to_thread(self._visible, limit or self.max_items)
        return [message_to_item(m) for m in visible]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the conversational items, in order, as messages of the namespace."""
        incoming = [m for m in (item_to_message(i) for i in items) if m is not None]
        if not incoming:
            return
        append = partial(self.conversation.append, auto_sleep=self.auto_sleep)
        result = await asyncio.to_thread(append, self.namespace, incoming)
        self._hidden -= {m.message_id for m in result.messages}  # a popped item put back
        for summary in result.sleeps:
            log.info("session %s: the append started a sleep (%s)", self.session_id, summary)

    async def pop_item(self) -> TResponseInputItem | None:
        """The newest item, hidden from this session's history from now on."""
        visible = await asyncio.to_thread(self._visible, 1)
        if not visible:
            return None
        self._hidden.add(visible[-1].message_id)
        return message_to_item(visible[-1])

    async def clear_session(self) -> None:
        """Start this session's history after the newest message (nothing is deleted)."""
        newest = await asyncio.to_thread(self.conversation.tail, self.namespace, 1)
        if newest and newest[-1].seq is not None:
            self._after_seq = newest[-1].seq
        self._hidden.clear()

    def _visible(self, n: int) -> list[Message]:
        tail = self.conversation.tail(self.namespace, n + len(self._hidden))
        shown = [
            m
            for m in tail
            if m.message_id not in self._hidden and (m.seq is None or m.seq > self._after_seq)
        ]
        return shown[-n:] if n > 0 else []


def item_to_message(item: Any) -> IncomingMessage | None:
    """One SDK input item as a message to append, or None for items that are not
    conversation (reasoning, hosted tool calls)."""
    data: Mapping[str, Any] = (
        item.model_dump(exclude_unset=True) if hasattr(item, "model_dump") else item
    )
    kind = data.get("type") or ("message" if "role" in data else None)
    item_id = data.get("id")  # the model's id of an output item: cited back, idempotent
    external_id = item_id if isinstance(item_id, str) and 0 < len(item_id) <= 200 else None
    if kind == "message":
        role = str(data.get("role", "user"))
        speaker = "developer" if role == "developer" else None
        stored_role = "system" if role == "developer" else role
        if stored_role not in ("user", "assistant", "system"):
            return None
        return IncomingMessage(
            role=stored_role,
            content=_bounded(content_text(data.get("content"))),
            speaker=speaker,
            external_id=external_id,
        )
    if kind == "function_call":
        call = {k: data.get(k) for k in ("type", "call_id", "name", "arguments")}
        return IncomingMessage(
            role="assistant", content="", tool_calls=[call], external_id=external_id
        )
    if kind == "function_call_output":
        call = {"type": "function_call_output", "call_id": data.get("call_id")}
        return IncomingMessage(
            role="tool", content=_bounded(content_text(data.get("output"))), tool_calls=[call]
        )
    log.debug("session: item of type %r not stored", kind)
    return None


def message_to_item(m: Message) -> TResponseInputItem:
    """A stored message as an SDK input item (the inverse of :func:`item_to_message`)."""
    call = m.tool_calls[0] if m.tool_calls else {}
    if m.role == "assistant" and call.get("type") == "function_call" and not m.content:
        return {
            "type": "function_call",
            "call_id": str(call.get("call_id")),
            "name": str(call.get("name")),
            "arguments": str(call.get("arguments") or "{}"),
        }
    if m.role == "tool" and call.get("type") == "function_call_output":
        return {
            "type": "function_call_output",
            "call_id": str(call.get("call_id")),
            "output": m.content,
        }
    role = "developer" if m.role == "system" and m.speaker == "developer" else m.role
    if role == "tool":  # a tool turn written by another client: show it as assistant text
        role = "assistant"
    return {"role": role, "content": m.content}


def content_text(content: Any) -> str:
    """The text of a message content (a string or a list of parts; non-text parts named)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content if isinstance(content, Iterable) else [content]:
        p = part.model_dump() if hasattr(part, "model_dump") else part
        if not isinstance(p, Mapping):
            parts.append(str(p))
        elif p.get("type") in _TEXT_PARTS:
            parts.append(str(p.get("text", "")))
        elif p.get("type") == "refusal":
            parts.append(str(p.get("refusal", "")))
        else:
            parts.append(f"[{p.get('type', 'part')}]")
    return "\n".join(parts)


def memory_tools(
    registry: ToolRegistry,
    namespace: str,
    clock: Clock,
    *,
    names: Sequence[str] | None = None,
) -> list[FunctionTool]:
    """The registry's tools as Agents SDK function tools working in ``namespace``. ``names``
    picks some; by default all but those the session already covers (``messages_append``)."""
    chosen = (
        names if names is not None else [n for n in registry.names() if n not in SESSION_COVERED]
    )
    tools = []
    for name in chosen:
        spec = registry.get(name).spec()
        tools.append(
            FunctionTool(
                name=name,
                description=spec["description"],
                params_json_schema=spec["parameters"],
                on_invoke_tool=partial(_invoke, registry, name, namespace, clock),
                strict_json_schema=spec["strict"],
            )
        )
    return tools


async def _invoke(
    registry: ToolRegistry,
    name: str,
    namespace: str,
    clock: Clock,
    _ctx: SdkToolContext[Any],
    arguments: str,
) -> str:
    ctx = ToolContext(namespace=namespace, now=clock.now())
    call = await asyncio.to_thread(registry.call_for_model, name, arguments, ctx)
    return call.output_text()


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_CONTENT else text[: MAX_CONTENT - len(TRUNCATED)] + TRUNCATED
