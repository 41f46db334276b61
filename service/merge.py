"""Merging an imported topic into the stored one with the same id. Pure.

Nothing stored is lost and nothing is duplicated: facts are united by ``fact_id`` (a fact the
file knows as closed, stored as still open, takes the file's closure: a correction made in the
other copy), numbers by (key, value, unit, time), open loops and aliases by text, notable events
by (event, time); the time span widens to cover both. ``None`` means the file added nothing.
"""

from __future__ import annotations

from graph.models import Fact, Topic


def merge_topic(stored: Topic, incoming: Topic) -> Topic | None:
    """``stored`` with what ``incoming`` adds, or None when it adds nothing."""
    facts = _facts(stored.facts, incoming.facts)
    numbers = list(stored.numbers) + [
        n for n in incoming.numbers
        if (n.key, n.value, n.unit, n.at) not in {(m.key, m.value, m.unit, m.at)
                                                   for m in stored.numbers}
    ]  # fmt: skip
    loops = list(stored.open_loops) + [
        o for o in incoming.open_loops if o.text not in {x.text for x in stored.open_loops}
    ]
    known = {a.lower() for a in [stored.name, *stored.aliases]}
    aliases = list(stored.aliases) + [a for a in incoming.aliases if a.lower() not in known]
    seen = {(e.event, e.at) for e in stored.time.notable_events}
    events = list(stored.time.notable_events) + [
        e for e in incoming.time.notable_events if (e.event, e.at) not in seen
    ]
    time = stored.time.model_copy(
        update={
            "first_seen_at": min(stored.time.first_seen_at, incoming.time.first_seen_at),
            "last_seen_at": max(stored.time.last_seen_at, incoming.time.last_seen_at),
            "notable_events": sorted(events, key=lambda e: e.at),
        }
    )
    merged = stored.with_items(facts, loops, numbers, aliases, time=time)
    same = (facts, numbers, loops, aliases, time) == (
        stored.facts, stored.numbers, stored.open_loops, stored.aliases, stored.time,
    )  # fmt: skip
    return None if same else merged


def _facts(stored: list[Fact], incoming: list[Fact]) -> list[Fact]:
    by_id = {f.fact_id: f for f in incoming}
    out = []
    for fact in stored:
        other = by_id.get(fact.fact_id)
        if fact.invalid_at is None and other is not None and other.invalid_at is not None:
            fact = fact.model_copy(
                update={
                    "invalid_at": other.invalid_at,
                    "superseded_by": other.superseded_by,
                    "invalid_reason": other.invalid_reason,
                }
            )
        out.append(fact)
    known = {f.fact_id for f in stored}
    return out + [f for f in incoming if f.fact_id not in known]
