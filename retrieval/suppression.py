"""Session suppression cache (seed 003): a record injected into the context is not injected again
for 5 turns or 15 minutes, whichever ends later, unless the consult confidence rose by at least
0.15 or the task fingerprint changed. It never applies to explicit search. In-process per session;
if it is unavailable retrieval continues without it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.config import SuppressionConfig
from retrieval.snippets import terms


def task_fingerprint(message: str, active_task: str = "") -> str:
    """A coarse fingerprint of the line of work: the main terms of the request and task."""
    words = sorted(terms(f"{message} {active_task}"))[:12]
    return hashlib.sha1(" ".join(words).encode(), usedforsecurity=False).hexdigest()[:12]


@dataclass
class _Entry:
    turn: int
    at: datetime
    confidence: float
    fingerprint: str


@dataclass
class SuppressionCache:
    entries: dict[str, _Entry] = field(default_factory=dict)
    turn: int = 0
    cfg: SuppressionConfig = field(default_factory=SuppressionConfig)

    def next_turn(self) -> int:
        self.turn += 1
        return self.turn

    def blocked(
        self, record_id: str, now: datetime, confidence: float, fingerprint: str, explicit: bool
    ) -> str | None:
        """Why ``record_id`` must not be injected now, or None when it may be."""
        if explicit:
            return None
        entry = self.entries.get(record_id)
        if entry is None or entry.fingerprint != fingerprint:
            return None
        if confidence >= entry.confidence + self.cfg.rise:
            return None
        turns_ago, age = self.turn - entry.turn, now - entry.at
        if turns_ago < self.cfg.cool_turns or age < self.cfg.cool_time:
            return f"suppressed: injected {turns_ago} turn(s) / {int(age.total_seconds() // 60)} min ago"
        return None

    def record(self, record_id: str, now: datetime, confidence: float, fingerprint: str) -> None:
        self.entries[record_id] = _Entry(self.turn, now, confidence, fingerprint)
