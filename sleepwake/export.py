"""`sheriff memory export`: the memory as a YAML file within a token budget (seed 004).

Hot topics get 60% of the budget, warm 30%, cold 10%; within a tier, topics go by utility then
recency, and a topic is written whole or not at all. Unused budget of a tier passes to the next.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import yaml

from graph.models import Topic
from sleepwake.policy import estimate_tokens
from sleepwake.tiers import bucket

SHARES = {"hot": 0.6, "warm": 0.3, "cold": 0.1}


def topic_entry(topic: Topic) -> dict[str, Any]:
    """The exported form of one topic: its durable content with dates and provenance (the
    facts and numbers valid now; superseded ones are history, in the JSON Lines export)."""
    topic = topic.current()
    return {
        "topic_id": topic.topic_id,
        "name": topic.name,
        "one_liner": topic.one_liner,
        "first_seen_at": topic.time.first_seen_at.isoformat(),
        "last_seen_at": topic.time.last_seen_at.isoformat(),
        "aliases": topic.aliases,
        "facts": [
            {
                "text": f.text,
                "at": f.at.isoformat() if f.at else None,
                "sources": f.source_message_ids,
            }
            for f in topic.facts
        ],
        "numbers": [
            {"key": n.key, "value": n.value, "unit": n.unit, "at": n.at.isoformat()}
            for n in topic.numbers
        ],
        "open_loops": [o.text for o in topic.open_loops],
        "notable_events": [
            {"at": e.at.isoformat(), "event": e.event} for e in topic.time.notable_events
        ],
        "utility_score": round(topic.stats.utility_score, 3),
    }


def export_memory(topics: list[Topic], budget_tokens: int, now: datetime) -> str:
    """YAML of the topics that fit: hot/warm/cold get 60/30/10% of the budget first, then
    whatever is left goes to the best remaining topics of any tier. The whole file, header
    included, stays within ``budget_tokens``."""
    tiers: dict[str, list[Topic]] = {"hot": [], "warm": [], "cold": []}
    for t in topics:
        tiers[bucket(t.time.last_seen_at, t.stats.utility_score, now)].append(t)
    doc: dict[str, Any] = {"exported_at": now.isoformat(), "budget_tokens": budget_tokens}
    doc.update({tier: [] for tier in SHARES})
    budget = budget_tokens - estimate_tokens(_dump(doc))
    costs = {t.topic_id: estimate_tokens(_dump({"x": [topic_entry(t)]})) for t in topics}
    ranked = {
        tier: sorted(ts, key=lambda t: (-t.stats.utility_score, -t.time.last_seen_at.timestamp()))
        for tier, ts in tiers.items()
    }
    chosen: set[str] = set()
    carry = 0
    for tier, share in SHARES.items():
        allowance = int(budget * share) + carry
        used = _fill(doc[tier], ranked[tier], costs, allowance, chosen)
        carry = allowance - used
    for tier in SHARES:  # second pass: leftover budget to the best remaining topics
        carry -= _fill(doc[tier], ranked[tier], costs, carry, chosen)
    order = {t.topic_id: i for tier in ranked.values() for i, t in enumerate(tier)}
    for tier in SHARES:  # within a tier, best first whichever pass added them
        doc[tier].sort(key=lambda entry: order[entry["topic_id"]])
    return _dump(doc)


def _fill(
    out: list[dict[str, Any]],
    ranked: list[Topic],
    costs: dict[str, int],
    allowance: int,
    chosen: set[str],
) -> int:
    used = 0
    for t in ranked:
        if t.topic_id not in chosen and used + costs[t.topic_id] <= allowance:
            out.append(topic_entry(t))
            chosen.add(t.topic_id)
            used += costs[t.topic_id]
    return used


def _dump(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
