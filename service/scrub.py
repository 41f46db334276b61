"""What is left of a topic, an event or a wake packet once some messages, facts or topics are
forgotten. Pure: the forget service loads, these decide, the store writes.

The rule for provenance: an item (fact, number, open loop, notable event) that came *only* from
forgotten messages is deleted, because its text quotes them; an item with other sources keeps
those. A topic left with no item at all, having lost some, is deleted too (its name and
one-liner came from the forgotten messages). A fact that a deleted fact had superseded is
reopened, then supersession is recomputed, so the history reads as if the forgotten statement
had never been made.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from graph.models import (
    Fact,
    InProgress,
    NotableEvent,
    OpenLoop,
    Topic,
    TopicEvent,
    TypedNumber,
    WakePacket,
)
from sleepwake.candidates import normalise_key
from sleepwake.supersede import supersede

WITHHELD = "details removed: they quoted forgotten messages"
_Sourced = TypeVar("_Sourced", Fact, OpenLoop, TypedNumber, NotableEvent)


@dataclass
class Removal:
    """What to take out of one topic."""

    message_ids: set[str] = field(default_factory=set)  # forgotten messages
    fact_ids: set[str] = field(default_factory=set)  # facts forgotten by id
    loop_texts: set[str] = field(default_factory=set)  # open loops forgotten by text
    aliases: set[str] = field(default_factory=set)  # aliases forgotten (lower-cased)
    clear_one_liner: bool = False


@dataclass
class Scrubbed:
    """The outcome for one topic: the new topic (None = delete it) and the texts removed."""

    topic: Topic | None
    removed_texts: list[str] = field(default_factory=list)
    changed: bool = False


def scrub_topic(topic: Topic, removal: Removal) -> Scrubbed:
    """``topic`` without what ``removal`` names and what came only from forgotten messages."""
    gone = removal.message_ids
    removed: list[str] = []
    facts = [f for f in _keep(topic.facts, gone, removed) if f.fact_id not in removal.fact_ids]
    removed += [f.text for f in topic.facts if f.fact_id in removal.fact_ids]
    loops = [o for o in _keep(topic.open_loops, gone, removed) if o.text not in removal.loop_texts]
    removed += [o.text for o in topic.open_loops if o.text in removal.loop_texts]
    numbers = _keep(topic.numbers, gone, [])
    events = _keep(topic.time.notable_events, gone, removed)
    aliases = [a for a in topic.aliases if a.lower() not in removal.aliases]
    changed = removal.clear_one_liner or (facts, loops, numbers, events, aliases) != (
        topic.facts, topic.open_loops, topic.numbers, topic.time.notable_events, topic.aliases,
    )  # fmt: skip
    if not changed:
        return Scrubbed(topic)
    if not (facts or loops or numbers or events):
        return Scrubbed(None, removed, True)
    facts = reopen(facts, {f.fact_id for f in topic.facts} - {f.fact_id for f in facts})
    one_liner = topic.one_liner
    if (
        removal.clear_one_liner
        or one_liner in removed
        or one_liner[:300] in {t[:300] for t in removed}
    ):
        one_liner = fallback_one_liner(facts)
    time = topic.time.model_copy(update={"notable_events": events})
    updated = topic.with_items(facts, loops, numbers, aliases, one_liner=one_liner, time=time)
    return Scrubbed(updated, removed, True)


def reopen(facts: list[Fact], deleted_ids: set[str]) -> list[Fact]:
    """Reopen facts that a deleted fact had superseded, then recompute supersession."""
    if not deleted_ids or not any(f.superseded_by in deleted_ids for f in facts):
        return facts
    opened = [
        f.model_copy(update={"invalid_at": None, "superseded_by": None, "invalid_reason": None})
        if f.superseded_by in deleted_ids
        else f
        for f in facts
    ]
    return supersede(opened)


def fallback_one_liner(facts: Iterable[Fact]) -> str:
    """The first informative current fact (as a sleep picks a one-liner), else empty (the
    topic's name then stands for it)."""
    current = [f for f in facts if f.invalid_at is None]
    for fact in current:
        if len(fact.text) >= 25:
            return fact.text[:300]
    return current[0].text[:300] if current else ""


def scrub_event(
    event: TopicEvent, gone: Collection[str], removed_texts: Collection[str]
) -> TopicEvent | None:
    """The event without forgotten sources (None: it came only from them, delete it); a
    summary that quotes removed text is withheld."""
    sources = [m for m in event.source_message_ids if m not in gone]
    if event.source_message_ids and not sources:
        return None
    summary = event.delta_summary
    if quotes(summary, removed_texts):
        head = summary.split(";", 1)[0] if "mentioned in" in summary else "updated"
        summary = f"{head}; {WITHHELD}"[:2000]
    if sources == event.source_message_ids and summary == event.delta_summary:
        return event
    return event.model_copy(update={"source_message_ids": sources, "delta_summary": summary})


def quotes(text: str, removed_texts: Collection[str]) -> bool:
    """Does ``text`` contain (a 200-character prefix of) any removed text?"""
    low = text.lower()
    return any(t and t[:200].lower() in low for t in removed_texts)


def scrub_packet(
    packet: WakePacket,
    topic_ids: Collection[str],
    messages: dict[str, str],
    topic_names: Collection[str],
) -> WakePacket | None:
    """The packet without forgotten topics and messages (``messages``: id -> content;
    ``topic_names``: their names and aliases as ``normalise_key`` keys); None when nothing in
    it changes."""
    tail = [t for t in packet.conversation_tail if t.message_id not in messages]
    tops = [t for t in packet.top_topic_ids if t not in topic_ids]
    hints = [h for h in (_without(h, topic_names) for h in packet.active_subject_hints) if h]
    progress = packet.in_progress
    goal = progress.resume_hint.partition("; next step: ")[0].strip().lower()
    if progress.topic_id in topic_ids or (
        goal and any(goal in content.lower() for content in messages.values())
    ):
        progress = InProgress()
    if (tail, tops, hints, progress) == (
        packet.conversation_tail, packet.top_topic_ids, packet.active_subject_hints,
        packet.in_progress,
    ):  # fmt: skip
        return None
    return packet.model_copy(
        update={
            "conversation_tail": tail,
            "top_topic_ids": tops,
            "active_subject_hints": hints,
            "in_progress": progress,
        }
    )


def _without(label: str, names: Collection[str]) -> str:
    """A subject label ("kitchen, rosa, caterer": topic keys) without forgotten topics."""
    return ", ".join(p for p in label.split(", ") if normalise_key(p) not in names)


def _keep(items: list[_Sourced], gone: set[str], removed: list[str]) -> list[_Sourced]:
    """Items minus forgotten sources; an item left with none is dropped (its text recorded)."""
    out: list[_Sourced] = []
    for item in items:
        if not gone or not gone.intersection(item.source_message_ids):
            out.append(item)
            continue
        left = [m for m in item.source_message_ids if m not in gone]
        if left:
            out.append(item.model_copy(update={"source_message_ids": left}))
        else:
            removed.append(_text(item))
    return out


def _text(item: Fact | OpenLoop | TypedNumber | NotableEvent) -> str:
    if isinstance(item, NotableEvent):
        return item.event
    if isinstance(item, TypedNumber):
        return item.key
    return item.text
