"""An in-memory passage store: the pending messages and what was written (no search)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graph.messages import MessageHit
from graph.passages import MessagePassages, PendingMessage


class FakePassages:
    """The passage store's writes and pending list, in memory."""

    def __init__(self, pending: list[PendingMessage]) -> None:
        self.left = list(pending)
        self.written: list[MessagePassages] = []

    def pending(self, namespace: str | None, limit: int) -> list[PendingMessage]:
        return [m for m in self.left if namespace in (None, m.namespace)][:limit]

    def write(self, messages: Sequence[MessagePassages]) -> int:
        done = {m.message_id for m in messages}
        self.left = [m for m in self.left if m.message_id not in done]
        self.written += messages
        return len(messages)

    def search(
        self, namespace: str, vector: Sequence[float], k: int, until: datetime | None = None
    ) -> list[MessageHit]:
        return []
