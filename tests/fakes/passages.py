"""An in-memory passage store: the pending messages and what was written (no search)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graph.messages import MessageHit
from graph.passages import BackfillStep, MessagePassages, PendingMessage


class FakePassages:
    """The passage store's writes and pending list, in memory."""

    def __init__(
        self, pending: list[PendingMessage], old: list[PendingMessage] | None = None
    ) -> None:
        self.left = list(pending)
        self.written: list[MessagePassages] = []
        # messages stored before passages existed, not pending: the backfill marks them
        self.old = list(old or [])

    def backfill(self, namespace: str | None, limit: int) -> BackfillStep | None:
        mine = [m for m in self.old if namespace in (None, m.namespace)]
        if not mine:
            return None
        batch = [m for m in mine if m.namespace == mine[0].namespace][:limit]
        self.old = [m for m in self.old if m not in batch]
        self.left += batch
        finished = not any(m.namespace == batch[0].namespace for m in self.old)
        return BackfillStep(batch[0].namespace, len(batch), len(batch), finished)

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

    def search_within(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        return []

    def search_spoken(
        self,
        namespace: str,
        speakers: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        return []
