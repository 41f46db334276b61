"""In-memory ``EventStoreProtocol``: topic events as ``graph.events.EventStore``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from graph.clock import ensure_utc
from graph.errors import NotFound, ValidationFailed
from graph.models import TopicEvent
from graph.topics import check_vector
from tests.fakes.graph import FakeGraph


def put_event(graph: FakeGraph, event: TopicEvent, vector: Sequence[float] | None) -> bool:
    """Write one event if its topic exists in its namespace (an existing id is kept as it
    was, as ``MERGE ... ON CREATE`` does); False when the topic is missing."""
    if not graph.topic_nodes(event.namespace, [event.topic_id]):
        return False
    if event.event_id not in graph.events:
        graph.events[event.event_id] = (event.model_copy(), list(vector) if vector else None)
    return True


class FakeEventStore:
    """Events of every namespace in one ``FakeGraph``."""

    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph if graph is not None else FakeGraph()

    def record(
        self,
        namespace: str,
        events: Sequence[TopicEvent],
        vectors: Sequence[Sequence[float] | None] | None = None,
    ) -> list[str]:
        """Write events (idempotent on ``event_id``); those of existing topics are written
        even when another's topic is missing, which then raises ``NotFound``."""
        if not events:
            return []
        vecs = list(vectors) if vectors is not None else [None] * len(events)
        if len(vecs) != len(events):
            raise ValidationFailed("one vector (or None) is needed per event")
        if any(e.namespace != namespace for e in events):
            raise ValidationFailed("every event must belong to the namespace it is written to")
        checked = [check_vector(v) if v is not None else None for v in vecs]
        with self.graph.transaction():
            written = [
                e.event_id
                for e, v in zip(events, checked, strict=True)
                if put_event(self.graph, e, v)
            ]
        if len(written) != len(events):
            missing = {e.topic_id for e in events if e.event_id not in written}
            raise NotFound(f"events refer to topics missing from {namespace}: {sorted(missing)}")
        return written

    def for_topics(self, namespace: str, topic_ids: Sequence[str]) -> list[TopicEvent]:
        """Events of some topics, oldest first."""
        wanted = set(topic_ids)
        return self._sorted(namespace, lambda e: e.topic_id in wanted)

    def topics_in_window(
        self, namespace: str, since: datetime | None, until: datetime | None, limit: int = 10_000
    ) -> set[str]:
        """Ids of the topics with an event in ``since <= at < until`` (either bound open)."""
        ids = dict.fromkeys(e.topic_id for e in self.in_window(namespace, since, until, 10**9))
        return set(list(ids)[:limit])

    def in_window(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 1000,
    ) -> list[TopicEvent]:
        """Events with ``since <= at < until`` (either bound open), oldest first."""
        s = ensure_utc(since, "since") if since else None
        u = ensure_utc(until, "until") if until else None
        inside = self._sorted(
            namespace, lambda e: (s is None or e.at >= s) and (u is None or e.at < u)
        )
        return inside[:limit]

    def _sorted(self, namespace: str, keep: Callable[[TopicEvent], bool]) -> list[TopicEvent]:
        with self.graph.lock:
            mine = [e for e, _ in self.graph.events.values() if e.namespace == namespace]
        return [e.model_copy() for e in sorted(mine, key=lambda e: e.at) if keep(e)]
