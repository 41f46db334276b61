"""``/v1/messages``: append to the conversation (the sleep policy runs) and read it by time."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from api.deadline import exempt_from_deadline
from api.deps import ConversationDep, NamespaceDep, NowDep, WindowsDep
from api.routers.common import errors
from api.schemas import MessageList, MessagePublic, MessagesAppended, MessagesCreate, WindowQuery
from api.windows import public
from service.memory import ConversationService
from sleepwake.conversation import IncomingMessage

router = APIRouter(prefix="/messages", tags=["messages"])


@router.post("", status_code=201, responses=errors(409))
def append_messages(
    body: MessagesCreate, conversation: ConversationDep, ns: NamespaceDep, request: Request
) -> MessagesAppended:
    """Append messages in time order. Unless ``auto_sleep`` is false the production sleep
    policy runs between them: a full buffer or a long silence queues a sleep for the sleep
    workers (``sleep_due``; inline sleep mode runs it here, ``sleeps``). The messages are
    found by the next context request at once, before any sleep. All messages are
    validated before any is written. Idempotent by ``external_id``: a retried batch stores
    nothing twice and returns the stored messages (``duplicates`` counts them); the same id on
    a different message, or a message older than the conversation's newest, is a 409 naming
    the field, and nothing is written."""
    if any(m.external_id is None for m in body.messages):  # a repeat would store them twice
        exempt_from_deadline(request)
    return append(conversation, ns, body)


def append(conversation: ConversationService, ns: str, body: MessagesCreate) -> MessagesAppended:
    """Append ``body.messages`` to namespace ``ns`` (REST and the MCP tool)."""
    items = [IncomingMessage.model_validate(m.model_dump()) for m in body.messages]
    result = conversation.append(ns, items, auto_sleep=body.auto_sleep, where="body.messages")
    return MessagesAppended(
        appended=len(result.messages) - result.duplicates,
        duplicates=result.duplicates,
        messages=[MessagePublic.model_validate(m) for m in result.messages],
        sleeps=[s.model_dump(mode="json") for s in result.sleeps],
        sleep_due=result.sleep_due,
    )


@router.get("")
def list_messages(
    q: Annotated[WindowQuery, Query()],
    conversation: ConversationDep,
    windows: WindowsDep,
    ns: NamespaceDep,
    now: NowDep,
) -> MessageList:
    """Messages in a window (``window=last week`` or ``from``/``to``), oldest first; with no
    window, the conversation from its start. At most ``limit``; ``truncated`` says if more."""
    window = windows.request(ns, q.window, q.from_, q.to, q.now or now)
    page = conversation.in_window(ns, window, q.limit)
    return MessageList(
        time_window=public(window),
        messages=[MessagePublic.model_validate(m) for m in page.messages],
        truncated=page.truncated,
    )
