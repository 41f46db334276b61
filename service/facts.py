"""Correct or retract one fact without rewriting its topic, read a topic as of a date, and its
history.

Facts are never edited in place. A correction appends the new statement and closes the old one
(``invalid_at`` = when the new one became true, ``superseded_by`` = its id); a retraction closes
the fact with no successor. Both record a ``TopicEvent`` (the timeline shows them beside sleeps)
and count as a correction in the topic's stats (spec §8.3: +5 utility). A fact already closed
cannot be closed again (409 naming what closed it), so two people correcting the same fact do
not silently fork its history. Writes are read-modify-write on the topic's version, retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from graph.clock import Clock
from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.events import EventStore
from graph.models import Fact, Topic, TopicEvent
from graph.topics import TopicStore
from retrieval.embedding import Embedder
from service.scrub import fallback_one_liner
from service.topics import record_change, reembedded
from sleepwake.config import DEFAULT as SLEEP_DEFAULT
from sleepwake.redact import redact

CORRECTED = "corrected by the user"
RETRACTED = "retracted by the user"


class FactChange(BaseModel):
    """The outcome of a correction or retraction."""

    topic_id: str
    version: int
    closed: Fact
    replacement: Fact | None


class HistoryEntry(BaseModel):
    at: datetime
    kind: Literal["event", "fact_added", "fact_closed"]
    summary: str
    fact_id: str | None = None
    event_id: str | None = None
    source_message_ids: list[str] = []


class TopicHistory(BaseModel):
    """Every version of a topic's facts and every event, oldest first."""

    topic_id: str
    name: str
    version: int
    facts: list[Fact]
    chains: list[list[str]]  # fact ids, each chain oldest first: a statement and its successors
    events: list[TopicEvent]
    timeline: list[HistoryEntry]


@dataclass(eq=False)
class FactService:
    topics: TopicStore
    events: EventStore
    embedder: Embedder
    clock: Clock

    def view(
        self, namespace: str, topic_id: str, as_of: datetime | None = None, history: bool = False
    ) -> Topic:
        """The topic with its currently valid facts, or as it stood ``as_of``; ``history``
        keeps every fact (closed ones included)."""
        return visible(self.topics.get_one(namespace, topic_id), as_of, history)

    def correct(
        self,
        namespace: str,
        topic_id: str,
        fact_id: str,
        text: str,
        *,
        at: datetime | None = None,
        valid_from: datetime | None = None,
        reason: str | None = None,
        source_message_ids: Sequence[str] = (),
    ) -> FactChange:
        """Replace fact ``fact_id`` by ``text``: the old fact is closed when the new one
        becomes true (``valid_from``, default ``at``, default now)."""
        said = at or self.clock.now()
        new_text = redact(text.strip())
        replacement = Fact(
            text=new_text,
            at=said,
            valid_from=valid_from,
            source_message_ids=list(source_message_ids),
        )
        closed_at = replacement.starts_at or said
        done = self._close(namespace, topic_id, fact_id, closed_at, replacement,
                           reason or CORRECTED)  # fmt: skip
        old = done.closed
        self._record(namespace, topic_id, said, f"fact corrected by the user: '{old.text[:300]}' "
                     f"-> '{new_text[:300]}'", source_message_ids)  # fmt: skip
        return done

    def retract(
        self,
        namespace: str,
        topic_id: str,
        fact_id: str,
        *,
        at: datetime | None = None,
        reason: str | None = None,
        source_message_ids: Sequence[str] = (),
    ) -> FactChange:
        """Close fact ``fact_id`` with no successor: it stopped being true ``at`` (now)."""
        when = at or self.clock.now()
        done = self._close(namespace, topic_id, fact_id, when, None, reason or RETRACTED)
        self._record(namespace, topic_id, when,
                     f"fact retracted by the user: '{done.closed.text[:300]}'",
                     source_message_ids)  # fmt: skip
        return done

    def history(self, namespace: str, topic_id: str) -> TopicHistory:
        """Every fact version, the chains they form, and the topic's events, merged in time."""
        topic = self.topics.get_one(namespace, topic_id)
        events = self.events.for_topics(namespace, [topic_id])
        return TopicHistory(
            topic_id=topic.topic_id,
            name=topic.name,
            version=topic.version,
            facts=topic.facts,
            chains=chains(topic.facts),
            events=events,
            timeline=timeline(topic.facts, events),
        )

    # -- internals --------------------------------------------------------------------------------
    def _close(
        self,
        namespace: str,
        topic_id: str,
        fact_id: str,
        when: datetime,
        replacement: Fact | None,
        reason: str,
    ) -> FactChange:
        closed: list[Fact] = []
        why = redact(reason)[:300]  # the answer shows it as stored (the store redacts it too)

        def change(topic: Topic) -> tuple[Topic, list[float] | None]:
            updated, old = close_fact(topic, fact_id, when, replacement, why)
            closed[:] = [old]
            return reembedded(self.embedder, [(updated, topic)])[0]

        topic = self.topics.merge(namespace, topic_id, change, self.clock.now())
        return FactChange(
            topic_id=topic_id, version=topic.version, closed=closed[0], replacement=replacement
        )

    def _record(
        self, namespace: str, topic_id: str, at: datetime, summary: str, sources: Sequence[str]
    ) -> None:
        record_change(self.events, namespace, topic_id, at, summary, sources)


def close_fact(
    topic: Topic, fact_id: str, when: datetime, replacement: Fact | None, reason: str
) -> tuple[Topic, Fact]:
    """``topic`` with fact ``fact_id`` closed at ``when`` (and ``replacement`` appended).
    Pure; raises ``NotFound`` / ``VersionConflict`` / ``ValidationFailed``."""
    matching = [f for f in topic.facts if f.fact_id == fact_id]
    if not matching:
        raise NotFound(f"fact {fact_id} not found in topic {topic.topic_id}")
    old = matching[0]
    if old.invalid_at is not None:
        by = f"superseded by {old.superseded_by}" if old.superseded_by else "retracted"
        raise VersionConflict(
            f"fact {fact_id} was already closed at {old.invalid_at.isoformat()} ({by})"
            + (f"; correct {old.superseded_by} instead" if old.superseded_by else "")
        )
    if old.starts_at is not None and when < old.starts_at:
        raise ValidationFailed(
            f"valid_from: {when.isoformat()} is before fact {fact_id} became true "
            f"({old.starts_at.isoformat()})"
        )
    if replacement is not None and replacement.text == old.text:
        raise ValidationFailed("text: the correction says the same as the fact it corrects")
    shut = old.model_copy(
        update={
            "invalid_at": when,
            "superseded_by": replacement.fact_id if replacement else None,
            "invalid_reason": reason,
        }
    )
    facts = [shut if f.fact_id == fact_id else f for f in topic.facts]
    if replacement is not None:
        facts.append(replacement)
    one_liner = topic.one_liner
    if one_liner and old.text[:300] == one_liner:
        one_liner = replacement.text[:300] if replacement else fallback_one_liner(facts)
    stats = topic.stats.model_copy(
        update={
            "correction_count": topic.stats.correction_count + 1,
            "utility_score": topic.stats.utility_score + SLEEP_DEFAULT.utility.corrected,
        }
    )
    return topic.model_copy(update={"facts": facts, "one_liner": one_liner, "stats": stats}), shut


def visible(topic: Topic, as_of: datetime | None, history: bool = False) -> Topic:
    """What a reader sees by default: every fact with ``history``; those valid ``as_of``; else
    the currently valid ones (not closed, whatever the clock says)."""
    return topic if history else topic.view(as_of)


def chains(facts: Sequence[Fact]) -> list[list[str]]:
    """Fact ids grouped into supersession chains (each oldest first)."""
    by_id = {f.fact_id: f for f in facts}
    successors = {f.superseded_by for f in facts if f.superseded_by in by_id}
    out = []
    for fact in facts:
        if fact.fact_id in successors:
            continue  # starts no chain: something it supersedes does
        chain, seen = [fact.fact_id], {fact.fact_id}
        nxt = fact.superseded_by
        while nxt in by_id and nxt not in seen:
            chain.append(nxt)
            seen.add(nxt)
            nxt = by_id[nxt].superseded_by
        out.append(chain)
    return out


def timeline(facts: Sequence[Fact], events: Sequence[TopicEvent]) -> list[HistoryEntry]:
    """Facts added and closed, and events, oldest first."""
    entries = [
        HistoryEntry(at=e.at, kind="event", summary=e.delta_summary, event_id=e.event_id,
                     source_message_ids=e.source_message_ids)
        for e in events
    ]  # fmt: skip
    for f in facts:
        if f.starts_at is not None:
            entries.append(
                HistoryEntry(at=f.starts_at, kind="fact_added", summary=f.text,
                             fact_id=f.fact_id, source_message_ids=f.source_message_ids)
            )  # fmt: skip
        if f.invalid_at is not None:
            why = f.invalid_reason or "closed"
            entries.append(
                HistoryEntry(at=f.invalid_at, kind="fact_closed", summary=f"{why}: {f.text}",
                             fact_id=f.fact_id)
            )  # fmt: skip
    return sorted(entries, key=lambda e: (e.at, e.kind != "fact_closed"))
