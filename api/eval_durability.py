"""Do topics last? The durability figures of docs EVALUATION.md §6, beside the shape of §4.

Pure: the caller reads the live topics, their events and the messages' external ids (LoCoMo's
"D<session>:<turn>") and passes them in.

- multi-sleep share: topics with TopicEvents at two or more different times (two sleeps touched
  them) over live topics;
- week-span share: topics whose last_seen - first_seen exceeds 7 days;
- cross-session consolidation: over questions of categories 1-4 whose evidence turns lie in two
  or more sessions, the share for which ONE live topic's facts cite evidence turns of at least two
  of those sessions;
- stamped names: names carrying a month-and-year stamp or a trailing running number;
- largest topic: the biggest topic's facts over all facts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from api.eval_locomo import normalise_evidence
from graph.models import Topic, TopicEvent

_MONTHS = (
    "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|"
    "july|august|september|october|november|december"
)
# "Apr 2022 game", "game (May 2023)", "2022-04 game", "game 3", "game #2"
_STAMP = re.compile(
    rf"\b(?:{_MONTHS})\.?\s+(?:\d{{1,2}},?\s+)?\d{{4}}\b|\b\d{{4}}-\d{{2}}\b|(?:\s|#)\d{{1,3}}\s*$",
    re.IGNORECASE,
)
WEEK = timedelta(days=7)


def stamped(name: str) -> bool:
    """Whether a topic name carries a date stamp or a trailing running number."""
    return bool(_STAMP.search(name.strip()))


def session_of(ref: str) -> str | None:
    """'D8:6' -> 'D8' (the session of a LoCoMo turn); None for anything else."""
    m = re.fullmatch(r"(D\d+):\d+", ref)
    return m.group(1) if m else None


def durability_figures(
    topics: Sequence[Topic],
    events: Mapping[str, Sequence[TopicEvent]],
    external: Mapping[str, str],
    qa: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The §6 figures over live ``topics`` (``events`` by topic id)."""
    n = max(len(topics), 1)
    multi = sum(1 for t in topics if len({e.at for e in events.get(t.topic_id, ())}) >= 2)
    span = sum(1 for t in topics if t.time.last_seen_at - t.time.first_seen_at > WEEK)
    facts = [len(t.facts) for t in topics]
    asked, gathered = cross_session(topics, external, qa)
    return {
        "multi_sleep_share": round(multi / n, 3),
        "week_span_share": round(span / n, 3),
        "cross_session_questions": asked,
        "cross_session_gathered": gathered,
        "cross_session_consolidation": round(gathered / asked, 3) if asked else 0.0,
        "stamped_names": sum(1 for t in topics if stamped(t.name)),
        "largest_topic_share": round(max(facts, default=0) / max(sum(facts), 1), 3),
    }


def cross_session(
    topics: Sequence[Topic], external: Mapping[str, str], qa: Sequence[Mapping[str, Any]]
) -> tuple[int, int]:
    """(questions whose evidence spans 2+ sessions, those gathered by one topic)."""
    cited = [{external.get(m, m) for f in t.facts for m in f.source_message_ids} for t in topics]
    asked = gathered = 0
    for item in qa:
        if int(item.get("category", 0)) not in (1, 2, 3, 4):
            continue
        evidence = set(normalise_evidence(item.get("evidence", [])))
        sessions = {s for s in map(session_of, evidence) if s}
        if len(sessions) < 2:
            continue
        asked += 1
        for refs in cited:
            hit = {session_of(r) for r in evidence & refs}
            if len(hit) >= 2:
                gathered += 1
                break
    return asked, gathered
