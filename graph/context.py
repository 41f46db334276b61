"""ContextStore: the reads a memory context makes before it searches, in one round trip, and
its writes after packing, in one transaction.

Every user message goes through ``retrieval.context.ContextBuilder``; before its topic search it
needs the conversation's last turns (for triggers), the namespace's sleep and wake times (for
"since you woke", "before you slept") and which phrases of the message name a known topic (a
reintroduced entity). Four stores hold them (messages, wake state, wake packets, topics); asked
one by one they cost four round trips per message, so this store reads them in one query
(``read_context_start.cypher``), with the same answers as ``MessageStore.tail``,
``SleepStore.wake_state`` / ``wake_packets``, ``TopicStore.known_names`` and
``MessageStore.speakers_named``. After packing it writes twice, the topics it showed marked used
and the session's suppression turn counted; each was its own write transaction (a commit and a
log flush each), ``finish`` makes them one.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j import Driver

from graph.clock import ensure_utc, window_bounds
from graph.cypher import query
from graph.db import Store, iso
from graph.events import EventStore
from graph.fulltext import name_query, wanted_names
from graph.mapping import as_datetime, message_from_props
from graph.messages import MessageHit, MessageStore
from graph.models import Message, TailTurn, Topic, WakePacket
from graph.overfetch import Page, PagedQuery
from graph.passages import SCOPED_PER_TOPIC, message_hits
from graph.redaction import Redactor
from graph.skill_vectors import STAMP_CAP, SkillStamp
from graph.suppression import (
    SessionState,
    SessionTurn,
    SuppressionStore,
    state_from_row,
    turn_params,
)
from graph.topic_search import check_vector
from graph.topics import (
    ScoredTopic,
    TextRank,
    TopicBrief,
    TopicStore,
    summaries_of,
    text_need,
)
from text.timephrases import SleepHistory

log = logging.getLogger(__name__)

EVENT_TOPICS = 1000  # topics with an event in a window read at most (EventStore's limit)


@functools.cache
def finish_query() -> str:
    """``mark_topics_used`` and ``record_suppression_turn`` as one query (each a subquery, as
    its own file reads it; their parameters do not clash, ``namespace`` and ``now`` are the
    same): a context's writes in one transaction of one query, RUN and COMMIT, where a
    transaction of two queries waits for each (docs/performance.md, eleventh pass)."""
    mark, turn = query("mark_topics_used"), query("record_suppression_turn")
    return (
        "// finish_context: mark_topics_used and record_suppression_turn, one transaction\n"
        f"CALL () {{\n{mark}\n}}\nCALL () {{\n{turn}\n}}\nRETURN marked, turn\n"
    )


@dataclass(frozen=True)
class ContextStart:
    """The last turns (oldest first), the sleep history, the known names (lower-cased): the
    phrases naming a live topic, and those naming a participant of the conversation."""

    tail: list[Message] = field(default_factory=list)
    history: SleepHistory = field(default_factory=SleepHistory)
    known: set[str] = field(default_factory=set)
    speakers: set[str] = field(default_factory=set)
    # the routing skills' stamp (None: not read, or too many skills to cache): skill routing
    # ranks from the skill store's cached vectors when they were read under the same stamp
    skills: SkillStamp | None = None
    # the suppression session's state, made when asked (None: not read; the caller loads it
    # from its SuppressionStore when it needs it)
    session: Callable[[], SessionState] | None = None
    # per known name, the live topics so named that the session's state holds an entry for
    # (live or not: the caller judges the cool-down); None: not read with the start
    held: dict[str, set[str]] | None = None


@dataclass(frozen=True)
class TextSearch:
    """One full-text search of a context: its text, how many hits it keeps and its window
    (``since <= at < until``; None: open)."""

    text: str
    k: int
    since: datetime | None = None
    until: datetime | None = None


@dataclass
class ContextTexts:
    """What ``ContextStore.search_texts`` found: the evidence, the topics' full-text hits,
    and with a window the window's own evidence and the topics with an event in it. Asked not
    to read the topics, ``topics`` is empty and ``topic_ranks`` holds their ranking (the
    topic search reads them with its vector query, ``TopicStore.search_vector_reading``)."""

    evidence: list[MessageHit]
    topics: list[ScoredTopic]
    windowed: list[MessageHit] = field(default_factory=list)
    event_topic_ids: set[str] = field(default_factory=set)
    topic_ranks: list[TextRank] | None = None


def sleep_history(packet: WakePacket | None, woke_at: datetime | None) -> SleepHistory:
    """The sleep history of the namespace's newest wake packet and last wake: when it slept,
    woke, and the last turn before it slept (``service.windows.WindowResolver.history``)."""
    if packet is None:
        return SleepHistory(woke_at=woke_at)
    last_turn = packet.conversation_tail[-1].at if packet.conversation_tail else None
    return SleepHistory(slept_at=packet.slept_at, woke_at=woke_at, previous_session_end=last_turn)


@dataclass(frozen=True)
class Within:
    """A search of the passages of the messages ``topic_ids`` cite, nearest ``vector`` (the
    best ``k``, said before ``until``): ``PassageStore.search_within``'s arguments."""

    topic_ids: Sequence[str]
    vector: Sequence[float]
    k: int
    until: datetime | None = None


@dataclass
class ContextTopics:
    """``ContextStore.read_topics``: the topics read (``TopicStore.cited_summaries``'s
    ``found`` and ``cited``) and the passages found within the best topics (``hits``,
    ``PassageStore.search_within``'s)."""

    found: list[tuple[Topic | TopicBrief, list[str]]]
    cited: dict[str, str]
    hits: list[MessageHit] = field(default_factory=list)


class ContextStore(Store):
    """The reads of a context request that span stores, one query each, and its writes, one
    transaction. With ``skills_namespace`` (the namespace whose skills route every context)
    the first read also returns that namespace's skill stamp."""

    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        *,
        redactor: Redactor | None = None,
        skills_namespace: str | None = None,
        messages: MessageStore | None = None,
        topics: TopicStore | None = None,
    ) -> None:
        super().__init__(driver, database, redactor=redactor)
        self.skills_namespace = skills_namespace
        self._messages, self._topics = messages, topics

    @property
    def suppression(self) -> SuppressionStore:
        """The suppression store ``finish`` counts session turns in (the same Neo4j nodes)."""
        return SuppressionStore(self._driver, self._db)

    def start(
        self,
        namespace: str,
        tail_turns: int,
        names: Sequence[str],
        people: Sequence[str] | None = None,
        session: tuple[str, datetime] | None = None,
    ) -> ContextStart:
        """The last ``tail_turns`` messages, the sleep history, which of ``names`` are a live
        topic's name or alias and which of ``people`` (default ``names``) name a message's
        speaker, and with ``session`` (its id and now) the suppression session's state as
        ``SuppressionStore.load`` gives it, in one round trip."""
        wanted = wanted_names(names)
        params = {
            "namespace": namespace,
            "n": max(0, tail_turns),
            "names": wanted,
            "people": wanted if people is None else wanted_names(people),
            "lucene": name_query(namespace, wanted),
            "skills_namespace": self.skills_namespace,
            "skills_cap": STAMP_CAP,
            "session_id": session[0] if session else None,
            "now": iso(ensure_utc(session[1])) if session else None,
        }
        row = self._run(query("read_context_start"), params, read=True)[0]
        state: Callable[[], SessionState] | None = None
        held: dict[str, set[str]] | None = None
        if session is not None:
            found = row["session"]
            # parsed only when needed, and once (the triggers and the policy may both ask)
            state = functools.cache(functools.partial(state_from_row, found))
            held = {}
            for h in row["held"]:
                held.setdefault(h["name"], set()).add(h["topic_id"])
        tail = [message_from_props(m) for m in reversed(row["tail"])]
        woke_at = as_datetime(row["woke_at"])
        slept_at = as_datetime(row["slept_at"])
        known, speakers = set(row["known"]), set(row["speakers"])
        skills = self._stamp(row["skills_stamp"])
        if slept_at is None:
            history = SleepHistory(woke_at=woke_at)
            return ContextStart(tail, history, known, speakers, skills, state, held)
        turns = json.loads(row["conversation_tail_json"] or "[]")
        last = TailTurn.model_validate(turns[-1]).at if turns else None
        history = SleepHistory(slept_at=slept_at, woke_at=woke_at, previous_session_end=last)
        return ContextStart(tail, history, known, speakers, skills, state, held)

    def search_texts(
        self,
        namespace: str,
        evidence: TextSearch,
        topics: TextSearch,
        window: TextSearch | None = None,
        read_topics: bool = True,
    ) -> ContextTexts:
        """The conversation's messages matching ``evidence`` (``MessageStore.search_text``)
        and the topics matching ``topics`` (``TopicStore.search_text`` with exact words and
        light topics, as the topic search asks); with a ``window`` (a deep search's), the
        messages matching it and the topics with an event in the topic search's window
        (``EventStore.topic_ids_in_window``). Every first page comes in one round trip
        (``search_context_texts``, ``search_context_texts_windowed``); a search that must grow
        past its first page, and the topics' read by id, run as the stores run them, so the
        answers are theirs. Without ``read_topics`` the topics are ranked, not read
        (``ContextTexts.topic_ranks``, ``TopicStore.text_ranking``)."""
        message_store, topic_store = self._stores()
        said = message_store.text_query(
            namespace, evidence.text, evidence.k, evidence.since, evidence.until
        )
        named = topic_store.text_query(
            namespace, topics.text, topics.k, topics.since, topics.until, fuzzy=False
        )
        within = None
        if window is not None:
            within = message_store.text_query(
                namespace, window.text, window.k, window.since, window.until
            )
        if said is None or named is None or (window is not None and within is None):
            # a text without words
            return self._one_by_one(namespace, evidence, topics, window, read_topics)
        params = _both(said, named)
        if within is not None:
            params |= _prefixed("window", within) | _event_window(topics)
            params |= {
                "topic_need": text_need(named, topics.k),
                "topic_next": named.next_fetch,
                "window_next": within.next_fetch,
            }
        file = "search_context_texts" if within is None else "search_context_texts_windowed"
        row = self._run(query(file), params, read=True)[0]
        ranks = topic_store.text_ranking(
            namespace, topics.text, topics.k, named, fuzzy=False, first=_page(row, "topic"),
            then=_page(row, "topic_next") if within is not None else None,
        )  # fmt: skip
        # the window's messages ranked with the whole conversation's statistics too: a message
        # scores the same in both lists (the context weighs them together)
        said_pool = message_store.text_pool(said, _page(row, "message"))
        out = ContextTexts(
            message_store.hits_of(said, said_pool, evidence.k),
            topic_store.ranked_topics(namespace, ranks, light=True) if read_topics else [],
            topic_ranks=None if read_topics else ranks,
        )
        if window is not None and within is not None:
            out.windowed = message_store.text_hits(
                within, window.k, _page(row, "window"), _page(row, "window_next"), said_pool
            )
            out.event_topic_ids = set(row["event_topic_ids"])
        return out

    def read_topics(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str],
        brief_ids: Sequence[str],
        within: Within,
    ) -> ContextTopics:
        """``TopicStore.cited_summaries`` of the topics and ``PassageStore.search_within``'s
        hits for ``within``, in one round trip (``read_context_topics.cypher``), with the same
        answers as the two; the topics the hits' messages are mentioned in that are not among
        ``topic_ids`` are read besides, as briefs, after those asked (the caller fuses the hits
        into its evidence and picks its briefs then: ``retrieval.topic_reads``)."""
        if not within.topic_ids or within.k <= 0:
            found, cited = self._stores()[1].cited_summaries(
                namespace, topic_ids, full_ids, brief_ids
            )
            return ContextTopics(found, cited)
        until = within.until
        params = {
            "namespace": namespace, "topic_ids": list(topic_ids), "full_ids": list(full_ids),
            "brief_ids": list(brief_ids), "cite": True, "scoped_ids": list(within.topic_ids),
            "vector": check_vector(within.vector), "k": within.k, "per_topic": SCOPED_PER_TOPIC,
            "until": iso(ensure_utc(until, "until")) if until else None,
        }  # fmt: skip
        row = self._run(query("read_context_topics"), params, read=True)[0]
        found, cited = summaries_of(row["topics"])
        return ContextTopics(found, cited, message_hits(row["hits"]))

    def _one_by_one(
        self,
        namespace: str,
        evidence: TextSearch,
        topics: TextSearch,
        window: TextSearch | None,
        read_topics: bool = True,
    ) -> ContextTexts:
        """``search_texts`` one store call each (a text with no word to search for); the
        topics ranked and left unread without ``read_topics``, as ``search_texts`` leaves
        them."""
        message_store, topic_store = self._stores()
        e, t = evidence, topics
        named = topic_store.text_query(namespace, t.text, t.k, t.since, t.until, fuzzy=False)
        ranks = [] if named is None else topic_store.text_ranking(
            namespace, t.text, t.k, named, fuzzy=False
        )  # fmt: skip
        out = ContextTexts(
            message_store.search_text(namespace, e.text, e.k, e.since, e.until),
            topic_store.ranked_topics(namespace, ranks, light=True) if read_topics else [],
            topic_ranks=None if read_topics else ranks,
        )
        if window is not None:
            w = window
            out.windowed = message_store.search_text(namespace, w.text, w.k, w.since, w.until)
            out.event_topic_ids = self._events().topic_ids_in_window(
                namespace, topics.since, topics.until, EVENT_TOPICS
            )
        return out

    def _events(self) -> EventStore:
        """The event store ``search_texts`` asks when it reads one store at a time."""
        return EventStore(self._driver, self._db)

    def _stores(self) -> tuple[MessageStore, TopicStore]:
        """The message and topic stores whose queries ``search_texts`` runs (this driver's
        when none were given)."""
        if self._messages is None or self._topics is None:
            self._messages = self._messages or MessageStore(self._driver, self._db)
            self._topics = self._topics or TopicStore(self._driver, self._db)
        return self._messages, self._topics

    def _stamp(self, entries: list[str] | None) -> SkillStamp | None:
        if self.skills_namespace is None or entries is None or len(entries) > STAMP_CAP:
            return None
        return SkillStamp(self.skills_namespace, tuple(entries))

    def finish(
        self, namespace: str, used: Sequence[str], now: datetime, turn: SessionTurn | None
    ) -> None:
        """The writes of one context request in one transaction: the topics ``used`` (packed
        into the context) marked used, as ``TopicStore.mark_used``, and ``turn`` counted with
        ``used`` as its injections, as ``SuppressionStore.record`` (no turn: no session). It
        locks the used topics in id order, then the session's node, and nothing else, so two
        requests never deadlock on it (a transient refusal is retried: ``graph.db.Retry``); a
        session's first turn then sweeps the namespace's idle sessions in a write of its own."""
        steps: list[tuple[str, dict[str, Any]]] = []
        if used:
            marked = {"namespace": namespace, "topic_ids": list(used), "now": iso(ensure_utc(now))}
            steps.append((query("mark_topics_used"), marked))
        if turn is not None:
            steps.append(
                (query("record_suppression_turn"), turn_params(namespace, turn, used, now))
            )
        # each an auto-commit transaction (one round trip, graph.db.write_query)
        if len(steps) < 2:  # one query (or none): its own transaction
            answers = [self._run(text, params, once=True) for text, params in steps]
            if turn is not None and answers:
                self._sweep_after(namespace, answers[0], now)
            return
        try:  # both in one query: one transaction, all or nothing
            rows = self._run(finish_query(), {**steps[0][1], **steps[1][1]}, once=True)
        except Exception as exc:  # the suppression turn is never fatal (retrieval/context.py)
            log.warning("suppression state not recorded: %s", exc)
            self._run(*steps[0], once=True)  # the use mark alone: its failure is the request's
            return
        self._sweep_after(namespace, rows, now)

    def _sweep_after(self, namespace: str, rows: list[Any], now: datetime) -> None:
        """After a session's first turn (``rows``: the turn's answer), its namespace's idle
        sessions swept (``SuppressionStore.sweep``); never fatal to the request."""
        if not rows or rows[0]["turn"] != 1:
            return
        try:
            self.suppression.sweep(namespace, now)
        except Exception as exc:  # idle sessions are swept again at the next new session
            log.warning("idle suppression sessions not swept: %s", exc)


def _both(messages: PagedQuery, topics: PagedQuery) -> dict[str, Any]:
    """``search_context_texts``' parameters: each search's own, prefixed, at its first fetch."""
    t = topics.params
    return {
        "namespace": messages.params["namespace"],
        "exact_max": messages.params["exact_max"],
        **_prefixed("message", messages),
        "topic_query": t["query"],
        "topic_fetch": topics.first_fetch,
        "topic_since": t["since"],
        "topic_until": t["until"],
    }


def _prefixed(prefix: str, search: PagedQuery) -> dict[str, Any]:
    """A message search's parameters (``search_messages_fulltext``) under ``prefix``."""
    p = search.params
    return {
        f"{prefix}_query": p["query"],
        f"{prefix}_fetch": search.first_fetch,
        f"{prefix}_k": p["k"],
        f"{prefix}_since": p["since"],
        f"{prefix}_until": p["until"],
    }


def _event_window(topics: TextSearch) -> dict[str, Any]:
    """The event read's window: the topic search's, both bounds given (the ends of time for an
    open side, as ``EventStore.topic_ids_in_window`` gives them)."""
    since, until = window_bounds(topics.since, topics.until)
    return {"event_since": since, "event_until": until, "event_limit": EVENT_TOPICS}


def _page(row: Any, prefix: str) -> Page[Any] | None:
    """One search's page from a ``search_context_texts`` row (None: not read)."""
    if row[f"{prefix}_raw"] is None:
        return None
    complete = bool(row.get(f"{prefix}_complete", False))  # a message search's small namespace
    return Page(int(row[f"{prefix}_raw"]), row[f"{prefix}_hits"], complete)
