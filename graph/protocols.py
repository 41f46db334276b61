"""What the pipelines need of the stores, as structural types (``typing.Protocol``).

``Conversation``, ``Sleeper``, ``Waker``, ``TopicSearch`` and ``ContextBuilder`` take these
instead of the Neo4j classes, so a test can hand them the in-memory fakes of ``tests/fakes/``.
Each protocol lists only the methods the pipelines call, with the concrete store's signature;
the stores in ``graph/`` satisfy them without naming them (mypy checks that wherever a concrete
store is passed, e.g. in ``api/container.py``), and ``tests/integration/test_store_contracts.py``
runs one table of operations against both the real store and its fake.

Pure at run time: the record types the methods return live beside their stores and are imported
for type checking only, so importing this module imports no driver.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from graph.models import EdgeType, Message, Topic, TopicEvent, WakeCheck, WakePacket, WakeState

if TYPE_CHECKING:
    from graph.append_plan import AppendState, BufferStats
    from graph.context import ContextStart, ContextTexts, ContextTopics, TextSearch, Within
    from graph.messages import MessageHit
    from graph.passages import BackfillStep, MessagePassages, PendingMessage
    from graph.sleep import PoolHit, SleepCommit, SleepReads
    from graph.sleep_queue import Claim, SleepRun
    from graph.suppression import Retention, SessionState, SessionTurn
    from graph.topics import Neighbour, ScoredTopic, TextRank, TopicBrief


class PassageStoreProtocol(Protocol):
    """The passages of messages with their vectors (``graph.passages.PassageStore``)."""

    def pending(self, namespace: str | None, limit: int) -> list[PendingMessage]: ...

    def backfill(self, namespace: str | None, limit: int) -> BackfillStep | None: ...

    def write(self, messages: Sequence[MessagePassages]) -> int: ...

    def search(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]: ...

    def search_within(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]: ...

    def search_spoken(
        self,
        namespace: str,
        speakers: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]: ...


class MessageStoreProtocol(Protocol):
    """The conversation log of a namespace (``graph.messages.MessageStore``)."""

    def append(
        self,
        namespace: str,
        messages: Sequence[Message],
        *,
        server_time: Collection[str] = (),
        where: str = "messages",
    ) -> list[Message]:
        """Append in order, in one transaction; every message asked for is returned (a repeat
        as the one stored), carrying its ``seq``. Idempotent by ``external_id`` and in time
        order: the one append rule, ``graph.append_plan.plan_append``."""
        ...

    def by_external_id(self, namespace: str, external_ids: Sequence[str]) -> dict[str, Message]:
        """The stored messages carrying these external ids."""
        ...

    def newest_at(self, namespace: str) -> datetime | None:
        """The time of the latest stored message."""
        ...

    def tail(self, namespace: str, n: int) -> list[Message]:
        """The last ``n`` messages (compacted or not), oldest first."""
        ...

    def in_range(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 10_000,
    ) -> list[Message]:
        """Messages with ``since <= at < until`` (either bound open when None), oldest first."""
        ...

    def buffer(self, namespace: str, limit: int = 100_000) -> list[Message]:
        """Messages not yet compacted by a sleep, oldest first."""
        ...

    def speakers_named(self, namespace: str, names: Sequence[str]) -> set[str]:
        """The phrases (lower-cased) that name a speaker of one of the namespace's messages."""
        ...

    def buffer_stats(self, namespace: str) -> BufferStats:
        """Size, token estimate and newest time of the buffer."""
        ...

    def append_state(
        self, namespace: str, external_ids: Sequence[str], tail_turns: int
    ) -> AppendState:
        """``by_external_id``, ``newest_at``, ``buffer_stats`` and ``tail`` in one read."""
        ...

    def get(self, namespace: str, message_ids: Sequence[str]) -> list[Message]:
        """Messages by id within the namespace, oldest first."""
        ...

    def source_ids(self, namespace: str, message_ids: Sequence[str]) -> dict[str, str]:
        """message id -> external id (else the message id) for the ids in the namespace."""
        ...

    def search_text(
        self,
        namespace: str,
        text: str,
        k: int = 50,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """Lexical hits over content and speaker, best first, with the topics they feed."""
        ...


class TopicStoreProtocol(Protocol):
    """Topic reads and searches, and the use mark (``graph.topics.TopicStore``)."""

    def get(self, namespace: str, topic_ids: Sequence[str]) -> list[Topic]:
        """Whole topics by id, in the order asked; unknown ids are left out."""
        ...

    def state_topics(
        self, namespace: str, tokens: Sequence[str], limit: int = 50
    ) -> list[tuple[str, list[str]]]:
        """(topic_id, state tokens) of the live topics holding any of the state ``tokens``."""
        ...

    def summaries(
        self, namespace: str, topic_ids: Sequence[str], full_ids: Sequence[str] = ()
    ) -> list[tuple[Topic, list[str]]]:
        """Topics without their heavy lists (those in ``full_ids`` whole, without related ids),
        with the message ids of the one-liner."""
        ...

    def cited_summaries(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str] = (),
        brief_ids: Sequence[str] = (),
    ) -> tuple[list[tuple[Topic | TopicBrief, list[str]]], dict[str, str]]:
        """``summaries`` and, in the same read, message id -> the id to cite it by (external id,
        else message id) for the one-liners' sources and every message a topic of
        ``full_ids`` is mentioned in (ids not in the namespace are left out); the topics of
        ``brief_ids`` not in ``full_ids`` come as a ``TopicBrief``."""
        ...

    def known_names(self, namespace: str, names: Sequence[str]) -> set[str]:
        """The phrases (lower-cased) that are a live topic's name or alias."""
        ...

    def mark_used(self, namespace: str, topic_ids: Sequence[str], now: datetime) -> int:
        """Record that the topics reached a context the model saw."""
        ...

    def search_text(
        self,
        namespace: str,
        text: str,
        k: int = 10,
        since: datetime | None = None,
        until: datetime | None = None,
        fuzzy: bool = True,
        light: bool = False,
    ) -> list[ScoredTopic]:
        """Full-text hits over name, aliases and one-liner, best first."""
        ...

    def search_vector(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int = 10,
        since: datetime | None = None,
        until: datetime | None = None,
        overfetch: int = 5,
        light: bool = False,
    ) -> list[ScoredTopic]:
        """Nearest topics by embedding, score (1 + cosine) / 2, best first."""
        ...

    def search_vector_reading(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int = 10,
        since: datetime | None = None,
        until: datetime | None = None,
        overfetch: int = 5,
        light: bool = False,
        topic_ids: Sequence[str] = (),
    ) -> tuple[list[ScoredTopic], list[Topic]]:
        """``search_vector``'s hits and, in the same read, the topics of ``topic_ids`` that
        are not among them (with the same ``light``; unknown ids left out)."""
        ...

    def ranked_topics(
        self,
        namespace: str,
        ranks: Sequence[TextRank],
        light: bool = False,
        read: Sequence[Topic] = (),
        partial: bool = False,
    ) -> list[ScoredTopic]:
        """A full-text ranking's hits in its order: the topics already ``read`` as they are,
        the others read by id (unknown ids left out); with ``partial``, a rank's own partial
        topic instead of a read (its hit marked ``partial``)."""
        ...

    def neighbours(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        types: Sequence[EdgeType | str] = tuple(EdgeType),
        limit_per_seed: int = 10,
        light: bool = False,
    ) -> list[Neighbour]:
        """1-hop neighbours over the given edge types, strongest edge first per seed."""
        ...


class EventStoreProtocol(Protocol):
    """Topic events by time (``graph.events.EventStore``)."""

    def in_window(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 1000,
    ) -> list[TopicEvent]:
        """Events with ``since <= at < until`` (either bound open), oldest first."""
        ...

    def topic_ids_in_window(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 1000,
    ) -> set[str]:
        """Ids of the topics with an event at ``since <= at < until``, at most ``limit``."""
        ...


class ContextStoreProtocol(Protocol):
    """The reads a memory context makes before it searches, in one round trip, and its writes
    after packing, in one transaction (``graph.context.ContextStore``)."""

    def start(
        self,
        namespace: str,
        tail_turns: int,
        names: Sequence[str],
        people: Sequence[str] | None = None,
        session: tuple[str, datetime] | None = None,
    ) -> ContextStart:
        """The last ``tail_turns`` messages (oldest first), the sleep history, which of
        ``names`` are a live topic's name or alias and which of ``people`` (default
        ``names``) name a message's speaker
        (lower-cased), as ``MessageStore.tail``, ``WindowResolver.history``,
        ``TopicStore.known_names`` and ``MessageStore.speakers_named`` give them; with
        ``session`` (its id and now), the suppression session's state as
        ``SuppressionStore.load`` gives it (``ContextStart.session``)."""
        ...

    def search_texts(
        self,
        namespace: str,
        evidence: TextSearch,
        topics: TextSearch,
        window: TextSearch | None = None,
        read_topics: bool = True,
    ) -> ContextTexts:
        """The conversation's messages matching ``evidence`` (as ``MessageStore.search_text``
        finds them) and the topics matching ``topics`` (as ``TopicStore.search_text`` with
        ``fuzzy=False, light=True``); with a ``window``, the messages matching it and the
        topics with an event in the topic search's window (``EventStore.topic_ids_in_window``,
        at most 1,000). In one round trip where it can. Without ``read_topics`` it may leave
        the topics unread and give their ranking (``ContextTexts.topic_ranks``)."""
        ...

    def read_topics(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        full_ids: Sequence[str],
        brief_ids: Sequence[str],
        within: Within,
    ) -> ContextTopics:
        """``TopicStore.cited_summaries`` of the topics and ``PassageStore.search_within``'s
        hits for ``within``, in one round trip where it can; the topics the hits' messages are
        mentioned in that are not among ``topic_ids`` come besides, as briefs."""
        ...

    @property
    def suppression(self) -> SuppressionStoreProtocol:
        """The session suppression state ``finish`` counts turns in."""
        ...

    def finish(
        self, namespace: str, used: Sequence[str], now: datetime, turn: SessionTurn | None
    ) -> None:
        """The writes after packing: the topics ``used`` marked used (``TopicStore.mark_used``)
        and, with a session ``turn``, the turn counted with ``used`` as its injections
        (``suppression.record``). A failure of the turn is logged, never raised (the use mark
        is still written); a failure of the use mark is raised."""
        ...


class SleepStoreProtocol(Protocol):
    """The graph side of a sleep: lease, match pool, one atomic commit, wake packets
    (``graph.sleep.SleepStore``)."""

    def acquire_lease(
        self, namespace: str, holder: str, now: datetime, expires_at: datetime
    ) -> None:
        """Take the namespace's sleep lease or raise ``AlreadyRunning``."""
        ...

    def release_lease(self, namespace: str, holder: str) -> None:
        """Give the lease back (a no-op for anyone but its holder)."""
        ...

    def renew_lease(self, namespace: str, holder: str, expires_at: datetime) -> bool:
        """Heartbeat: extend ``holder``'s lease; False when it holds it no more."""
        ...

    def match_pool(
        self, namespace: str, rows: list[dict[str, Any]], k: int = 5, overfetch: int = 4
    ) -> list[PoolHit]:
        """Per candidate row: its nearest topics plus the topics it names exactly."""
        ...

    def sleep_reads(
        self, namespace: str, rows: list[dict[str, Any]], k: int = 5, top: int = 20
    ) -> SleepReads:
        """``match_pool`` of ``rows`` and the ``top`` ``top_topic_scores``, in one read."""
        ...

    def get_topics(self, namespace: str, topic_ids: list[str]) -> list[Topic]:
        """Whole topics by id (the ones a sleep will rewrite)."""
        ...

    def state_topics(
        self, namespace: str, tokens: Sequence[str], limit: int = 50
    ) -> list[tuple[str, list[str]]]:
        """(topic_id, state tokens) of the live topics holding any of the state ``tokens``."""
        ...

    def theme_names(self, namespace: str, prefixes: Sequence[str], limit: int = 500) -> list[str]:
        """Lower-cased names and aliases of live topics starting with one of ``prefixes`` or
        naming a member of such a theme ("toby (andrew's dog)")."""
        ...

    def topic_vectors(self, namespace: str, topic_ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of some topics, by id (a topic without one is left out)."""
        ...

    def top_topic_scores(
        self, namespace: str, limit: int = 20
    ) -> list[tuple[str, float, datetime]]:
        """(topic_id, utility_score, last_seen_at) of the most useful live topics."""
        ...

    def wake_packets(self, namespace: str, limit: int = 2) -> list[WakePacket]:
        """The newest wake packets first."""
        ...

    def claim_wake(self, namespace: str, now: datetime, check: WakeCheck) -> WakeState | None:
        """Record a wake at ``now`` when one is due (one caller wins); None when not due."""
        ...

    def release_wake(self, namespace: str, state: WakeState) -> None:
        """Undo the claim ``state`` (its turn failed), unless a later wake replaced it."""
        ...

    def wake_state(self, namespace: str) -> WakeState | None:
        """When the namespace last woke; None before its first wake."""
        ...

    def commit(self, plan: SleepCommit) -> None:
        """Write the whole sleep, all or nothing."""
        ...


class SuppressionStoreProtocol(Protocol):
    """The session suppression state every API worker shares (``graph.suppression.
    SuppressionStore``; the in-memory fake ``tests.fakes.suppression.LocalSuppression``)."""

    def load(self, namespace: str, session_id: str, now: datetime) -> SessionState:
        """The session's state at ``now`` (empty when unknown or expired)."""
        ...

    def record(
        self,
        namespace: str,
        session_id: str,
        record_ids: Sequence[str],
        now: datetime,
        confidence: float,
        fingerprint: str,
        retention: Retention,
    ) -> int:
        """Count one turn and store ``record_ids`` as injected at it; the new turn."""
        ...

    def forget(self, namespace: str, record_ids: Sequence[str], *, whole: bool = False) -> int:
        """Drop records from the namespace's sessions (all its sessions when ``whole``)."""
        ...


class SleepQueueProtocol(Protocol):
    """Background sleeps: due marks, worker claims, run records
    (``graph.sleep_queue.SleepQueueStore``)."""

    def mark_due(
        self, namespace: str, now: datetime, reason: str, wall: datetime, run_id: str
    ) -> str:
        """Queue a sleep dated ``now``; the id its next attempt will be recorded as."""
        ...

    def claim(
        self,
        holder: str,
        wall: datetime,
        expires_at: datetime,
        run_id: str,
        namespace: str | None = None,
    ) -> Claim | None:
        """The longest-waiting due namespace with a free lease, now held by ``holder``."""
        ...

    def finish(
        self, claim: Claim, retry_at: datetime | None = None, reset_attempts: bool = False
    ) -> bool:
        """Give the lease back, done or to be retried from ``retry_at``."""
        ...

    def start_run(self, run: SleepRun) -> None:
        """Record a run as started (runs a dead worker left running become abandoned)."""
        ...

    def finish_run(self, run: SleepRun) -> None:
        """Record how a run ended."""
        ...

    def list_runs(
        self, namespace: str, limit: int = 50, before: SleepRun | None = None
    ) -> list[SleepRun]:
        """Runs of ``namespace``, newest first, after the page ending with ``before``."""
        ...

    def get_run(self, namespace: str, run_id: str) -> SleepRun | None:
        """One run by id."""
        ...
