"""The inspector's own reads (``/ui``): a page of topics and a stretch of the conversation.

Both are plain reads scoped by the namespace in their ``WHERE`` (cypher/queries/page_topics.cypher,
messages_by_seq.cypher); everything else the inspector shows comes through the stores the REST
routes use.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from graph.clock import window_bounds
from graph.cypher import query
from graph.db import Store
from graph.mapping import message_from_props, topic_from_props
from graph.models import Message, Topic


@dataclass(frozen=True)
class TopicRow:
    """A topic as the inspector's list shows it, with how many events its sleeps wrote."""

    topic: Topic
    events: int


class InspectorStore(Store):
    """Paged topics and conversation stretches of one namespace (reads only)."""

    def topic_page(
        self,
        namespace: str,
        needle: str | None,
        since: datetime | None,
        until: datetime | None,
        skip: int,
        limit: int,
    ) -> list[TopicRow]:
        """At most ``limit`` live topics seen in ``[since, until)`` whose name or an alias
        contains ``needle`` (any case; None: all), last seen first, after the first ``skip``."""
        start, end = window_bounds(since, until)
        records = self._run(
            query("page_topics"),
            {
                "namespace": namespace,
                "needle": needle.lower() if needle else None,
                "since": start,
                "until": end,
                "skip": skip,
                "limit": limit,
            },
            read=True,
        )
        return [TopicRow(topic_from_props(r["t"]), int(r["events"])) for r in records]

    def messages_by_seq(self, namespace: str, lo: int, hi: int) -> list[Message]:
        """The messages with ``lo <= seq <= hi``, oldest first."""
        records = self._run(
            query("messages_by_seq"), {"namespace": namespace, "lo": lo, "hi": hi}, read=True
        )
        return [message_from_props(r["m"]) for r in records]
