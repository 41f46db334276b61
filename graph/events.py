"""EventStore: TopicEvent nodes, one per topic update by a sleep (spec §6.3)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from neo4j import Record

from graph.clock import window_bounds
from graph.cypher import query
from graph.db import Store
from graph.errors import NotFound, ValidationFailed
from graph.mapping import event_from_props, event_props, redact_event
from graph.models import TopicEvent
from graph.topics import check_vector


class EventStore(Store):
    def record(
        self,
        namespace: str,
        events: Sequence[TopicEvent],
        vectors: Sequence[Sequence[float] | None] | None = None,
    ) -> list[str]:
        """Write events (idempotent on ``event_id``); every event's topic must exist."""
        if not events:
            return []
        vecs = list(vectors) if vectors is not None else [None] * len(events)
        if len(vecs) != len(events):
            raise ValidationFailed("one vector (or None) is needed per event")
        if any(e.namespace != namespace for e in events):
            raise ValidationFailed("every event must belong to the namespace it is written to")
        rows = [
            {
                "props": event_props(redact_event(e, self.redactor)),
                "embedding": check_vector(v) if v is not None else None,
            }
            for e, v in zip(events, vecs, strict=True)
        ]
        records = self._run(query("create_events"), {"namespace": namespace, "rows": rows})
        written = [r["event_id"] for r in records]
        if len(written) != len(events):
            missing = {e.topic_id for e in events} - {
                e.topic_id for e in events if e.event_id in written
            }
            raise NotFound(f"events refer to topics missing from {namespace}: {sorted(missing)}")
        return written

    def for_topics(self, namespace: str, topic_ids: Sequence[str]) -> list[TopicEvent]:
        records = self._run(
            query("topic_events"), {"namespace": namespace, "topic_ids": list(topic_ids)}, read=True
        )
        return [event_from_props(r["e"]) for r in records]

    def topic_ids_in_window(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 1000,
    ) -> set[str]:
        """Ids of the topics with an event at ``since <= at < until`` (either bound open), at
        most ``limit``: what deep retrieval's window boost needs, without reading the events."""
        records = self._in_window("event_topic_ids_in_window", namespace, since, until, limit)
        return set(records[0]["topic_ids"])

    def in_window(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 1000,
    ) -> list[TopicEvent]:
        records = self._in_window("events_in_window", namespace, since, until, limit)
        return [event_from_props(r["e"]) for r in records]

    def _in_window(
        self, name: str, namespace: str, since: datetime | None, until: datetime | None, limit: int
    ) -> list[Record]:
        """The records of read ``name`` over the window (``since`` and ``until`` either open)."""
        start, end = window_bounds(since, until)
        params = {"namespace": namespace, "since": start, "until": end, "limit": limit}
        return self._run(query(name), params, read=True)
