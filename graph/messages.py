"""MessageStore: the continuous conversation of a namespace, as ordered Message nodes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from neo4j.exceptions import ConstraintError

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store
from graph.errors import ValidationFailed
from graph.mapping import message_from_props, message_props
from graph.models import Message


class MessageStore(Store):
    def append(self, namespace: str, messages: Sequence[Message]) -> list[Message]:
        """Append messages in order, in one transaction; returns them with their ``seq``."""
        if not messages:
            return []
        if any(m.namespace != namespace for m in messages):
            raise ValidationFailed("every message must belong to the namespace it is appended to")
        rows = []
        for m in messages:
            props = message_props(m)
            props.pop("seq", None)
            rows.append(props)
        try:
            records = self._run(query("append_messages"), {"namespace": namespace, "rows": rows})
        except ConstraintError as exc:
            raise ValidationFailed(
                f"a message with one of these ids already exists: {exc}"
            ) from exc
        seqs = {r["message_id"]: int(r["seq"]) for r in records}
        return [m.model_copy(update={"seq": seqs[m.message_id]}) for m in messages]

    def tail(self, namespace: str, n: int) -> list[Message]:
        """The last ``n`` messages, oldest first."""
        return self._read("tail_messages", namespace=namespace, n=max(0, n))

    def buffer(self, namespace: str, limit: int = 100_000) -> list[Message]:
        """Messages not yet compacted by a sleep, oldest first."""
        return self._read("buffer_messages", namespace=namespace, limit=limit)

    def in_range(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 10_000,
    ) -> list[Message]:
        """Messages with ``since <= at < until`` (either bound open when None), oldest first."""
        return self._read(
            "messages_in_range",
            namespace=namespace,
            since=ensure_utc(since, "since") if since else None,
            until=ensure_utc(until, "until") if until else None,
            limit=limit,
        )

    def get(self, namespace: str, message_ids: Sequence[str]) -> list[Message]:
        return self._read("get_messages", namespace=namespace, message_ids=list(message_ids))

    def mark_compacted(self, namespace: str, message_ids: Sequence[str], now: datetime) -> int:
        """Mark messages compacted (they leave the buffer, they are never deleted)."""
        records = self._run(
            query("mark_messages_compacted"),
            {"namespace": namespace, "message_ids": list(message_ids), "now": ensure_utc(now)},
        )
        return int(records[0]["marked"]) if records else 0

    def _read(self, name: str, **params: object) -> list[Message]:
        records = self._run(query(name), dict(params), read=True)
        return [message_from_props(r["m"]) for r in records]
