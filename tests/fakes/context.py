"""In-memory fake of ``graph.context.ContextStore``: the reads before a context's search, from
the fake stores of the same graph (the real store reads the same nodes in one query), and the
writes after packing (the real store makes them one transaction)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graph.context import ContextStart, ContextTexts, TextSearch, sleep_history
from graph.models import Topic
from graph.suppression import SessionTurn
from graph.topics import TextRank, partial_topic
from retrieval.suppression import LocalSuppression
from tests.fakes.events import FakeEventStore
from tests.fakes.graph import FakeGraph
from tests.fakes.messages import FakeMessageStore
from tests.fakes.sleep import FakeSleepStore
from tests.fakes.topics import FakeTopicStore


class FakeContextStore:
    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph or FakeGraph()
        self.messages = FakeMessageStore(self.graph)
        self.topics = FakeTopicStore(self.graph)
        self.sleep = FakeSleepStore(self.graph)
        self.events = FakeEventStore(self.graph)
        self.suppression = LocalSuppression()

    def start(
        self,
        namespace: str,
        tail_turns: int,
        names: Sequence[str],
        people: Sequence[str] | None = None,
        session: tuple[str, datetime] | None = None,
    ) -> ContextStart:
        """The last ``tail_turns`` messages, the sleep history, the known names and with
        ``session`` the suppression session's state (read when asked, as the real store
        parses it when asked)."""
        state = self.sleep.wake_state(namespace)
        packets = self.sleep.wake_packets(namespace, limit=1)
        loaded = None
        if session is not None:
            now_state = self.suppression.load(namespace, session[0], session[1])
            loaded = lambda: now_state  # noqa: E731  the state at the start, as the real read
        return ContextStart(
            self.messages.tail(namespace, tail_turns),
            sleep_history(packets[0] if packets else None, state.woke_at if state else None),
            self.topics.known_names(namespace, names),
            self.messages.speakers_named(namespace, names if people is None else people),
            session=loaded,
        )

    def search_texts(
        self,
        namespace: str,
        evidence: TextSearch,
        topics: TextSearch,
        window: TextSearch | None = None,
        read_topics: bool = True,
    ) -> ContextTexts:
        """The messages matching ``evidence`` and the topics matching ``topics`` (with a
        ``window``, its messages and the topics with an event in the topics' window), as the
        fake stores find them; without ``read_topics``, the topics' ranking instead."""
        e, t = evidence, topics
        found = self.topics.search_text(
            namespace, t.text, t.k, t.since, t.until, fuzzy=False, light=True
        )
        out = ContextTexts(
            self.messages.search_text(namespace, e.text, e.k, e.since, e.until),
            found if read_topics else [],
            topic_ranks=None
            if read_topics
            else [
                TextRank(h.topic.topic_id, h.score, h.content_score, _partial(namespace, h.topic))
                for h in found
            ],
        )
        if window is not None:
            w = window
            out.windowed = self.messages.search_text(namespace, w.text, w.k, w.since, w.until)
            out.event_topic_ids = self.events.topic_ids_in_window(namespace, t.since, t.until)
        return out

    def finish(
        self, namespace: str, used: Sequence[str], now: datetime, turn: SessionTurn | None
    ) -> None:
        """The topics ``used`` marked used and the session's ``turn`` counted."""
        self.topics.mark_used(namespace, used, now)
        if turn is not None:
            self.suppression.record(
                namespace, turn.session_id, used, now, turn.confidence, turn.fingerprint,
                turn.retention,
            )  # fmt: skip


def _partial(namespace: str, topic: Topic) -> Topic | None:
    """The topic as the real full-text row gives it to ``partial_topic``."""
    row = {
        "topic_id": topic.topic_id, "name": topic.name, "one_liner": topic.one_liner,
        "utility_score": topic.stats.utility_score,
        "first_seen_at": topic.time.first_seen_at.isoformat(),
        "last_seen_at": topic.time.last_seen_at.isoformat(),
    }  # fmt: skip
    return partial_topic(namespace, row)
