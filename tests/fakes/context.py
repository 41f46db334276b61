"""In-memory fake of ``graph.context.ContextStore``: the reads before a context's search, from
the fake stores of the same graph (the real store reads the same nodes in one query), and the
writes after packing (the real store makes them one transaction)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graph.context import (
    ContextStart,
    ContextTexts,
    ContextTopics,
    TextSearch,
    Within,
    sleep_history,
)
from graph.models import Topic
from graph.protocols import (
    EventStoreProtocol,
    MessageStoreProtocol,
    PassageStoreProtocol,
    SuppressionStoreProtocol,
    TopicStoreProtocol,
)
from graph.suppression import SessionTurn
from graph.topics import TextRank, partial_topic
from tests.fakes.events import FakeEventStore
from tests.fakes.graph import FakeGraph
from tests.fakes.messages import FakeMessageStore
from tests.fakes.sleep import FakeSleepStore
from tests.fakes.suppression import LocalSuppression
from tests.fakes.topics import FakeTopicStore
from text.timephrases import SleepHistory

log = logging.getLogger(__name__)


class FakeContextStore:
    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph or FakeGraph()
        self.messages = FakeMessageStore(self.graph)
        self.topics = FakeTopicStore(self.graph)
        self.sleep = FakeSleepStore(self.graph)
        self.events = FakeEventStore(self.graph)
        self.suppression = LocalSuppression()
        self.passages: PassageStoreProtocol | None = None  # none searched unless given

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
            _window_texts(out, namespace, self.messages, self.events, t, window)
        return out

    def read_topics(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str],
        brief_ids: Sequence[str],
        within: Within,
    ) -> ContextTopics:
        """The passages within the topics, then the topics (``read_apart``)."""
        return read_apart(
            self.topics, self.passages, namespace, topic_ids, full_ids, brief_ids, within
        )

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


class SeparateReads:
    """A ``ContextStore`` made of the separate stores: the reads before the search and the
    writes after packing one round trip each (what ``graph/context.py`` does in one), for a
    builder over stores with no ``ContextStore`` of their own (real stores in a test)."""

    def __init__(
        self,
        topics: TopicStoreProtocol,
        messages: MessageStoreProtocol,
        events: EventStoreProtocol,
        sleep_history: Any = None,
        suppression: SuppressionStoreProtocol | None = None,
        passages: PassageStoreProtocol | None = None,
    ) -> None:
        """``sleep_history``: callable(namespace) -> SleepHistory (None: no sleeps);
        ``suppression``: this process's (``LocalSuppression``) unless given; ``passages``:
        the store ``read_topics`` searches within topics (None: no passages)."""
        self.topics, self.messages, self.sleep_history = topics, messages, sleep_history
        self.suppression = suppression if suppression is not None else LocalSuppression()
        self.events, self.passages = events, passages

    def start(
        self,
        namespace: str,
        tail_turns: int,
        names: Sequence[str],
        people: Sequence[str] | None = None,
        session: tuple[str, datetime] | None = None,
    ) -> ContextStart:
        """As ``ContextStore.start``, a store at a time; the session is left to the builder's
        suppression store (``ContextStart.session`` None)."""
        history = self.sleep_history(namespace) if self.sleep_history else SleepHistory()
        return ContextStart(
            self.messages.tail(namespace, tail_turns),
            history,
            self.topics.known_names(namespace, names),
            self.messages.speakers_named(namespace, names if people is None else people),
        )

    def search_texts(
        self,
        namespace: str,
        evidence: TextSearch,
        topics: TextSearch,
        window: TextSearch | None = None,
        read_topics: bool = True,
    ) -> ContextTexts:
        """The evidence, the topics' full-text candidates (and with a ``window``, its own
        evidence and event topics), one round trip each (the topics read whatever
        ``read_topics`` says: ``TopicStore.search_text`` reads them)."""
        e, t = evidence, topics
        out = ContextTexts(
            self.messages.search_text(namespace, e.text, e.k, e.since, e.until),
            self.topics.search_text(
                namespace, t.text, t.k, t.since, t.until, fuzzy=False, light=True
            ),
        )
        if window is not None:
            _window_texts(out, namespace, self.messages, self.events, t, window)
        return out

    def read_topics(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str],
        brief_ids: Sequence[str],
        within: Within,
    ) -> ContextTopics:
        """The passages within the topics, then the topics (``read_apart``)."""
        return read_apart(
            self.topics, self.passages, namespace, topic_ids, full_ids, brief_ids, within
        )

    def finish(
        self, namespace: str, used: Sequence[str], now: datetime, turn: SessionTurn | None
    ) -> None:
        """The use mark (its failure is the request's), then the session's turn (never fatal:
        the context is answered all the same)."""
        self.topics.mark_used(namespace, used, now)
        if turn is None:
            return
        try:
            self.suppression.record(
                namespace, turn.session_id, used, now, turn.confidence, turn.fingerprint,
                turn.retention,
            )  # fmt: skip
        except Exception as exc:
            log.warning("suppression state not recorded: %s", exc)


def read_apart(
    topics: TopicStoreProtocol,
    passages: PassageStoreProtocol | None,
    namespace: str,
    topic_ids: Sequence[str],
    full_ids: Sequence[str],
    brief_ids: Sequence[str],
    within: Within,
) -> ContextTopics:
    """``ContextStore.read_topics`` a store at a time, as the context read them before it was
    one query: the passages within the topics (``PassageStore.search_within``; none without
    a passage store), then the topics (``TopicStore.cited_summaries``), the topics the
    passages' messages are mentioned in that were not asked for added as briefs."""
    hits = (
        passages.search_within(namespace, within.topic_ids, within.vector, within.k, within.until)
        if passages is not None
        else []
    )
    asked = set(topic_ids)
    reached = list(dict.fromkeys(t for h in hits for t, _ in h.topics if t not in asked))
    found, cited = topics.cited_summaries(
        namespace, [*topic_ids, *reached], full_ids, [*brief_ids, *reached]
    )
    return ContextTopics(found, cited, hits)


def _window_texts(
    out: ContextTexts,
    namespace: str,
    messages: MessageStoreProtocol,
    events: EventStoreProtocol,
    topics: TextSearch,
    window: TextSearch,
) -> None:
    """A window's own evidence, and the topics with an event in the topics' window, in ``out``."""
    w = window
    out.windowed = messages.search_text(namespace, w.text, w.k, w.since, w.until)
    out.event_topic_ids = events.topic_ids_in_window(namespace, topics.since, topics.until)


def _partial(namespace: str, topic: Topic) -> Topic | None:
    """The topic as the real full-text row gives it to ``partial_topic``."""
    row = {
        "topic_id": topic.topic_id, "name": topic.name, "one_liner": topic.one_liner,
        "utility_score": topic.stats.utility_score,
        "first_seen_at": topic.time.first_seen_at.isoformat(),
        "last_seen_at": topic.time.last_seen_at.isoformat(),
    }  # fmt: skip
    return partial_topic(namespace, row)
