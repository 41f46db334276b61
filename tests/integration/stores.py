"""Store methods only tests call, kept out of product code."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graph.clock import ensure_utc
from graph.cypher import query
from graph.messages import MessageStore


class CompactingMessageStore(MessageStore):
    """``MessageStore`` that can mark messages compacted one call at a time (a sleep does it
    inside its commit, ``graph.sleep``), as the in-memory fake does."""

    def mark_compacted(self, namespace: str, message_ids: Sequence[str], now: datetime) -> int:
        """Mark messages compacted (they leave the buffer, they are never deleted)."""
        records = self._run(
            query("mark_messages_compacted"),
            {"namespace": namespace, "message_ids": list(message_ids), "now": ensure_utc(now)},
        )
        return int(records[0]["marked"]) if records else 0
