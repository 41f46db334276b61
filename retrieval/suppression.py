"""Session suppression cache (seed 003): a record injected into the context is not injected again
for 5 turns or 15 minutes, whichever ends later, unless the consult confidence rose by at least
0.15 or the task fingerprint changed. It never applies to explicit search.

The state lives in a store every API worker shares (``graph.suppression.SuppressionStore``, in
Neo4j), so the answer does not depend on which worker serves a session's next request; the
context builder is given it by the composition root (``ContextStore.suppression``).
``SuppressionCache`` is the pure decision over one session's state. If the store is unavailable
retrieval continues without suppression.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from graph.suppression import Injection, Retention, SessionState
from retrieval.config import SuppressionConfig


def retention(cfg: SuppressionConfig) -> Retention:
    """How long the state of ``cfg``'s suppression must be kept."""
    ttl = timedelta(hours=cfg.session_ttl_hours)
    return Retention(cfg.cool_turns, cfg.cool_time, max(ttl, cfg.cool_time), cfg.max_entries)


@dataclass
class SuppressionCache:
    """One session's suppression state and the decision over it."""

    entries: dict[str, Injection] = field(default_factory=dict)
    turn: int = 0
    cfg: SuppressionConfig = field(default_factory=SuppressionConfig)

    @classmethod
    def of(cls, state: SessionState, cfg: SuppressionConfig) -> SuppressionCache:
        """The cache over a stored session state."""
        return cls(dict(state.injections), state.turn, cfg)

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

    def holds(self, record_id: str, now: datetime) -> bool:
        """Whether ``record_id`` was injected into the session within the cool-down (fewer
        than ``cool_turns`` turns or less than ``cool_time`` ago), whatever the task: the
        agent still has it in front of it (the re-introduced-entity trigger asks)."""
        entry = self.entries.get(record_id)
        if entry is None:
            return False
        return self.turn - entry.turn < self.cfg.cool_turns or now - entry.at < self.cfg.cool_time

    def record(self, record_id: str, now: datetime, confidence: float, fingerprint: str) -> None:
        self.entries[record_id] = Injection(self.turn, now, confidence, fingerprint)
