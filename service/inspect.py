"""What the web inspector (``/ui``) reads beyond the other services: a page of topics and a
message in its conversation. Every read is scoped to the namespace it is given; the inspector's
other pages call the services the REST routes call (topics, facts, forget, context, sleep)."""

from __future__ import annotations

from dataclasses import dataclass

from graph.errors import NotFound, ValidationFailed
from graph.inspector import InspectorStore, TopicRow
from graph.messages import MessageStore
from graph.models import Message
from text.timephrases import TimeWindow

MAX_PAGE = 100
MAX_SKIP = 1_000_000
MAX_NEEDLE = 200
MAX_AROUND = 20


@dataclass(frozen=True)
class TopicPage:
    """One page of topics; ``has_more`` says whether a next page exists."""

    rows: list[TopicRow]
    skip: int
    limit: int
    has_more: bool


@dataclass(frozen=True)
class MessageInContext:
    """One message and its neighbours in the conversation (oldest first, itself included)."""

    message: Message
    around: list[Message]


@dataclass(eq=False)
class InspectService:
    """Paged topic lists and message look-ups for the inspector, one namespace at a time."""

    store: InspectorStore
    messages: MessageStore

    def topic_page(
        self,
        namespace: str,
        needle: str | None,
        window: TimeWindow | None,
        skip: int = 0,
        limit: int = 50,
    ) -> TopicPage:
        """Live topics seen in ``window`` whose name or alias contains ``needle``, last seen
        first: ``limit`` of them after the first ``skip``. Bad bounds are ``ValidationFailed``."""
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(f"limit must be between 1 and {MAX_PAGE}")
        if not 0 <= skip <= MAX_SKIP:
            raise ValidationFailed(f"skip must be between 0 and {MAX_SKIP}")
        needle = (needle or "").strip() or None
        if needle is not None and len(needle) > MAX_NEEDLE:
            raise ValidationFailed(f"search: at most {MAX_NEEDLE} characters")
        since, until = (window.start, window.end) if window else (None, None)
        rows = self.store.topic_page(namespace, needle, since, until, skip, limit + 1)
        return TopicPage(rows[:limit], skip, limit, has_more=len(rows) > limit)

    def message(self, namespace: str, message_id: str, around: int = 3) -> MessageInContext:
        """The message with this id (or, failing that, this external id) and ``around``
        messages either side of it; ``NotFound`` when the namespace holds no such message."""
        if not 0 <= around <= MAX_AROUND:
            raise ValidationFailed(f"around must be between 0 and {MAX_AROUND}")
        found = self.messages.get(namespace, [message_id])
        message = found[0] if found else None
        if message is None:
            message = self.messages.by_external_id(namespace, [message_id]).get(message_id)
        if message is None:
            raise NotFound(f"message {message_id} not found")
        if message.seq is None:
            return MessageInContext(message, [message])
        stretch = self.messages_by_seq(namespace, message.seq - around, message.seq + around)
        return MessageInContext(message, stretch or [message])

    def messages_by_seq(self, namespace: str, lo: int, hi: int) -> list[Message]:
        return self.store.messages_by_seq(namespace, lo, hi)
