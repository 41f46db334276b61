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
    """The exported form of one topic: its durable content with dates and provenance."""
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
    """YAML of the topics that fit, tiered hot/warm/cold with 60/30/10% of the budget."""
    tiers: dict[str, list[Topic]] = {"hot": [], "warm": [], "cold": []}
    for t in topics:
        tiers[bucket(t.time.last_seen_at, t.stats.utility_score, now)].append(t)
    doc: dict[str, Any] = {"exported_at": now.isoformat(), "budget_tokens": budget_tokens}
    carry = 0
    for tier, share in SHARES.items():
        allowance = int(budget_tokens * share) + carry
        ranked = sorted(
            tiers[tier], key=lambda t: (-t.stats.utility_score, -t.time.last_seen_at.timestamp())
        )
        chosen, used = [], 0
        for t in ranked:
            cost = estimate_tokens(yaml.safe_dump([topic_entry(t)], sort_keys=False))
            if used + cost <= allowance:
                chosen.append(topic_entry(t))
                used += cost
        doc[tier] = chosen
        carry = allowance - used
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
