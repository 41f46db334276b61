"""MessageStore: the continuous conversation of a namespace, as ordered Message nodes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from neo4j.exceptions import ConstraintError

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store
from graph.errors import ValidationFailed
from graph.mapping import message_from_props, message_props, redact_message
from graph.models import Message
from graph.topics import MAX_FETCH, lucene_query


@dataclass(frozen=True)
class BufferStats:
    """The buffer as the sleep policy sees it: size, token estimate, newest message time."""

    messages: int
    tokens: int
    last_at: datetime | None


@dataclass(frozen=True)
class MessageHit:
    message: Message
    score: float
    topics: tuple[tuple[str, str], ...]  # (topic_id, name) the message is MENTIONED_IN


class MessageStore(Store):
    def append(self, namespace: str, messages: Sequence[Message]) -> list[Message]:
        """Append messages in order, in one transaction; returns them, as stored (redacted),
        with their ``seq``."""
        if not messages:
            return []
        if any(m.namespace != namespace for m in messages):
            raise ValidationFailed("every message must belong to the namespace it is appended to")
        messages = [redact_message(m, self.redactor) for m in messages]
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

    def buffer_stats(self, namespace: str) -> BufferStats:
        """Size, tokens and newest time of the buffer (one row, no message bodies)."""
        rows = self._run(query("buffer_stats"), {"namespace": namespace}, read=True)
        row = rows[0]
        last_at = row["last_at"]
        return BufferStats(
            int(row["messages"]), int(row["tokens"]), last_at.to_native() if last_at else None
        )

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

    def search_text(
        self,
        namespace: str,
        text: str,
        k: int = 50,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """Lexical search over the conversation (English analyzer over content and speaker),
        with the topics each hit is mentioned in. Over-fetches, then filters by namespace."""
        lucene = lucene_query(text, fuzzy=False)
        if not lucene:
            return []
        fetch = max(k * 8, 200)
        while True:
            records = self._run(
                query("search_messages_fulltext"),
                {
                    "query": lucene,
                    "fetch": fetch,
                    "k": k,
                    "namespace": namespace,
                    "since": ensure_utc(since, "since") if since else None,
                    "until": ensure_utc(until, "until") if until else None,
                },
                read=True,
            )
            if len(records) >= k or fetch >= MAX_FETCH:
                break
            fetch = min(fetch * 4, MAX_FETCH)
        return [
            MessageHit(
                message_from_props(r["m"]),
                float(r["score"]),
                tuple((t["topic_id"], t["name"]) for t in r["topics"]),
            )
            for r in records
        ]

    def mentions(
        self, namespace: str, topic_ids: Sequence[str], per_topic: int = 30
    ) -> dict[str, list[Message]]:
        """The messages each topic was mentioned in, newest first."""
        records = self._run(
            query("topic_mentions"),
            {"namespace": namespace, "topic_ids": list(topic_ids), "per_topic": per_topic},
            read=True,
        )
        out: dict[str, list[Message]] = {}
        for r in records:
            out.setdefault(r["topic_id"], []).append(message_from_props(r["m"]))
        return out

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
