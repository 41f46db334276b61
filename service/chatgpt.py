"""Bring a ChatGPT history in: read the data export's ``conversations.json`` and ingest it.

The export is a list of conversations. Each has a ``mapping`` tree (node id -> ``{message,
parent, children}``) holding every branch the user ever made (an edited prompt or a regenerated
answer starts a sibling branch) and ``current_node``, the leaf of the branch the user last saw.
That branch is the conversation: it is read from ``current_node`` back to the root through
``parent`` (when ``current_node`` is missing, the leaf with the latest message is taken).

Per message: ``author.role`` (user, assistant, system, tool), ``create_time`` (Unix seconds;
missing -> the previous message's time), ``content.content_type`` and ``parts``. Text parts are
joined; an image, audio or file part becomes a short marker (``[image]``) beside the text; a
message with no text at all, hidden messages, empty system prompts and model reasoning
(``thoughts``, ``reasoning_recap``) are skipped and counted. Custom instructions
(``user_editable_context``) become one system message. Every message keeps its ChatGPT id as
``external_id`` (``chatgpt:<id>``), so importing the same export again adds nothing.

All conversations are merged and ordered by time, then appended through the same path as
``sheriff ingest`` (``Conversation.append``) with the production sleep policy, and a final
idle maintenance sleeps what the policy left in the buffer.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graph.clock import Clock
from graph.errors import ValidationFailed
from graph.messages import MessageStore
from graph.models import describe_errors
from graph.transfer import TransferStore
from graph.validation import Ident, MessageText, Time
from sleepwake.conversation import Conversation, IncomingMessage

MAX_CONTENT = 100_000
EXTERNAL_PREFIX = "chatgpt:"
BATCH = 100
_MARKERS = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[video]",
}
_SKIPPED_TYPES = {"thoughts", "reasoning_recap", "tether_browsing_display", "system_error"}
_ROLES = {"user", "assistant", "system", "tool"}


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Author(_Loose):
    role: str


class Content(_Loose):
    content_type: str
    parts: list[Any] | None = None
    text: str | None = None


class ChatMessage(_Loose):
    id: str | None = None
    author: Author
    create_time: float | None = None
    content: Content
    metadata: dict[str, Any] | None = None


class Node(_Loose):
    message: ChatMessage | None = None
    parent: str | None = None
    children: list[str] = Field(default_factory=list)


class ChatConversation(_Loose):
    title: str | None = None
    create_time: float | None = None
    mapping: dict[str, Node]
    current_node: str | None = None


@dataclass
class History:
    """The messages to ingest, in time order, and what was left out (reason -> count)."""

    conversations: int
    messages: list[IncomingMessage]
    skipped: Counter[str] = field(default_factory=Counter)


class ChatGPTReport(BaseModel):
    namespace: str
    dry_run: bool
    conversations: int
    messages_found: int
    appended: int
    already_present: int
    skipped: dict[str, int]
    first_at: datetime | None
    last_at: datetime | None
    sleeps: list[dict[str, Any]] = []


def read_history(data: bytes | str | list[Any]) -> History:
    """Parse a ``conversations.json`` (bytes, text or already-decoded JSON)."""
    raw = _decode(data)
    if not isinstance(raw, list):
        raise ValidationFailed("conversations: expected a JSON list of conversations")
    found: list[tuple[float, int, int, IncomingMessage]] = []
    skipped: Counter[str] = Counter()
    for index, item in enumerate(raw):
        try:
            conv = ChatConversation.model_validate(item)
        except ValidationError as exc:
            raise ValidationFailed(
                describe_errors(f"conversations[{index}]", exc).replace("invalid ", "", 1)
            ) from exc
        for position, message in enumerate(conversation_messages(conv, index, skipped)):
            assert message.at is not None
            found.append((message.at.timestamp(), index, position, message))
    found.sort(key=lambda row: row[:3])
    messages: list[IncomingMessage] = []
    seen: set[str | None] = set()
    for *_, message in found:  # a conversation exported twice: each message once
        if message.external_id in seen:
            skipped["duplicate"] += 1
            continue
        seen.add(message.external_id)
        messages.append(message)
    return History(len(raw), messages, skipped)


def conversation_messages(
    conv: ChatConversation, index: int, skipped: Counter[str]
) -> list[IncomingMessage]:
    """The messages of the branch ending at ``current_node``, oldest first."""
    out: list[IncomingMessage] = []
    last = _time(conv.create_time)
    for node_id in branch(conv, index):
        message = conv.mapping[node_id].message
        if message is None:
            continue
        at = max(_time(message.create_time) or last or _EPOCH, last or _EPOCH)
        last = at
        converted = to_incoming(message, node_id, at)
        if isinstance(converted, str):
            skipped[converted] += 1
        else:
            out.append(_checked(converted, f"conversations[{index}].mapping.{node_id}"))
    return out


def branch(conv: ChatConversation, index: int) -> list[str]:
    """Node ids from the root to ``current_node`` (or to the latest leaf when it is missing)."""
    if not conv.mapping:
        return []
    leaf = conv.current_node if conv.current_node in conv.mapping else _latest_leaf(conv)
    path: list[str] = []
    seen: set[str] = set()
    node: str | None = leaf
    while node is not None:
        if node in seen:
            raise ValidationFailed(f"conversations[{index}].mapping: the parent links form a loop")
        if node not in conv.mapping:
            raise ValidationFailed(
                f"conversations[{index}].mapping.{path[-1] if path else leaf}.parent: "
                f"names a node that is not in the mapping ({node})"
            )
        seen.add(node)
        path.append(node)
        node = conv.mapping[node].parent
    return path[::-1]


def to_incoming(message: ChatMessage, node_id: str, at: datetime) -> IncomingMessage | str:
    """One ChatGPT message as an ingest line, or the reason it is skipped."""
    role = message.author.role
    meta = message.metadata or {}
    kind = message.content.content_type
    if role not in _ROLES:
        return f"role {role}"
    if kind == "user_editable_context":
        text, role = _custom_instructions(message.content), "system"
    elif kind in _SKIPPED_TYPES:
        return f"content {kind}"
    elif meta.get("is_visually_hidden_from_conversation"):
        return "hidden"
    else:
        text = content_text(message.content)
    if not text.strip():
        return "empty system message" if role == "system" else "no text"
    if len(text) > MAX_CONTENT:
        text = text[: MAX_CONTENT - 6] + " [...]"
    return IncomingMessage(
        role=role,  # checked against _ROLES above
        content=text,
        at=at,
        external_id=(EXTERNAL_PREFIX + (message.id or node_id))[:200],
    )


class _Line(BaseModel):
    """What REST's ``POST /v1/messages`` would accept of one message (the same field types)."""

    role: Literal["user", "assistant", "system", "tool"]
    content: MessageText
    at: Time
    external_id: Ident


def _checked(message: IncomingMessage, where: str) -> IncomingMessage:
    """``message`` when REST would take it; else ``ValidationFailed`` naming the node."""
    try:
        _Line.model_validate(message.model_dump(include={"role", "content", "at", "external_id"}))
    except ValidationError as exc:
        raise ValidationFailed(describe_errors(where, exc).replace("invalid ", "", 1)) from exc
    return message


def content_text(content: Content) -> str:
    """The text of a message: its text parts joined, markers for media; empty when none."""
    if content.parts is None:
        return content.text or ""
    pieces: list[str] = []
    has_text = False
    for part in content.parts:
        if isinstance(part, str):
            if part.strip():
                pieces.append(part.strip())
                has_text = True
        elif isinstance(part, Mapping):
            if isinstance(part.get("text"), str) and part["text"].strip():  # audio transcripts
                pieces.append(part["text"].strip())
                has_text = True
            else:
                pieces.append(_MARKERS.get(str(part.get("content_type")), "[attachment]"))
    return "\n\n".join(pieces) if has_text else ""


def _custom_instructions(content: Content) -> str:
    extra = content.model_extra or {}
    about, how = extra.get("user_profile"), extra.get("user_instructions")
    parts = [f"About me: {about}" if about else "", f"How to respond: {how}" if how else ""]
    return "Custom instructions. " + " ".join(p for p in parts if p) if any(parts) else ""


@dataclass(eq=False)
class ChatGPTImporter:
    """Ingest a parsed history into a namespace through the conversation's sleep policy."""

    conversation: Conversation
    messages: MessageStore
    store: TransferStore
    clock: Clock

    def run(
        self,
        namespace: str,
        history: History,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ChatGPTReport:
        """Append what is new (by external id), in time order, running the sleep policy;
        ``progress(done, total)`` after each batch. Everything is validated before any write."""
        known = self._present(namespace, history.messages)
        todo = [m for m in history.messages if m.external_id not in known]
        self.conversation.validate(namespace, todo)
        self._check_after_tail(namespace, todo)
        report = ChatGPTReport(
            namespace=namespace, dry_run=dry_run, conversations=history.conversations,
            messages_found=len(history.messages), appended=0, already_present=len(known),
            skipped=dict(history.skipped),
            first_at=todo[0].at if todo else None, last_at=todo[-1].at if todo else None,
        )  # fmt: skip
        if dry_run:
            return report
        for start in range(0, len(todo), BATCH):
            result = self.conversation.append(namespace, todo[start : start + BATCH])
            report.appended += len(result.messages)
            report.sleeps += [s.model_dump(mode="json") for s in result.sleeps]
            if progress is not None:
                progress(min(start + BATCH, len(todo)), len(todo))
        final = self.conversation.maintain(namespace, self.clock.now()) if todo else None
        if final is not None:
            report.sleeps.append(final.model_dump(mode="json"))
        return report

    def _present(self, namespace: str, items: list[IncomingMessage]) -> set[str]:
        ids = [m.external_id for m in items if m.external_id]
        found: set[str] = set()
        for start in range(0, len(ids), 1000):
            stored = self.store.messages_by_external_id(namespace, ids[start : start + 1000])
            found.update(m.external_id for m in stored if m.external_id)
        return found

    def _check_after_tail(self, namespace: str, todo: list[IncomingMessage]) -> None:
        tail = self.messages.tail(namespace, 1)
        if todo and tail and todo[0].at is not None and todo[0].at < tail[-1].at:
            raise ValidationFailed(
                f"conversations: the history starts at {todo[0].at.isoformat()}, before this "
                f"namespace's latest message ({tail[-1].at.isoformat()}); messages are kept in "
                "time order, so import it into a new namespace"
            )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _time(value: float | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ValidationFailed(f"create_time: {value!r} is not a valid Unix time") from exc


def _latest_leaf(conv: ChatConversation) -> str:
    leaves = [nid for nid, node in conv.mapping.items() if not node.children]
    if not leaves:
        raise ValidationFailed("mapping: the conversation has no leaf node")

    def stamp(nid: str) -> float:
        message = conv.mapping[nid].message
        return message.create_time or 0.0 if message is not None else 0.0

    return max(leaves, key=stamp)


def _decode(data: bytes | str | list[Any]) -> Any:
    if isinstance(data, list):
        return data
    try:
        return json.loads(data)
    except RecursionError as exc:  # json's own guard: no conversation nests that deep
        raise ValidationFailed("conversations: the JSON nests too deep") from exc
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"body: not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise ValidationFailed(
            f"conversations: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
