"""Session suppression cache (seed 003): a record injected into the context is not injected again
for 5 turns or 15 minutes, whichever ends later, unless the consult confidence rose by at least
0.15 or the task fingerprint changed. It never applies to explicit search.

The state lives in a store every API worker shares (``graph.suppression.SuppressionStore``, in
Neo4j), so the answer does not depend on which worker serves a session's next request;
``LocalSuppression`` is the same behaviour in one process's memory, bounded (tests, a builder
without Neo4j). ``SuppressionCache`` is the pure decision over one session's state. If the store
is unavailable retrieval continues without suppression.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from graph.suppression import Injection, Retention, SessionState
from retrieval.config import SuppressionConfig
from retrieval.snippets import terms


def task_fingerprint(message: str, active_task: str = "") -> str:
    """A coarse fingerprint of the line of work: the main terms of the request and task."""
    words = sorted(terms(f"{message} {active_task}"))[:12]
    return hashlib.sha1(" ".join(words).encode(), usedforsecurity=False).hexdigest()[:12]


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


@dataclass
class _Session:
    turn: int
    entries: dict[str, Injection]
    expires_at: datetime


class LocalSuppression:
    """The suppression store in this process's memory (what ``SuppressionStore`` keeps in
    Neo4j, with the same pruning and expiry), at most ``max_sessions`` sessions (least recently
    used dropped). Right only when one process serves every request of a session."""

    def __init__(self, max_sessions: int = 10_000) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[tuple[str, str], _Session] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, namespace: str, session_id: str, now: datetime) -> SessionState:
        """The session's state at ``now`` (empty when unknown or expired)."""
        with self._lock:
            found = self._sessions.get((namespace, session_id))
            if found is None or found.expires_at < now:
                return SessionState()
            return SessionState(found.turn, dict(found.entries))

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
        key = (namespace, session_id)
        with self._lock:
            found = self._sessions.get(key)
            fresh = found is None or found.expires_at < now
            turn = 1 if found is None or fresh else found.turn + 1
            old = {} if found is None or fresh else found.entries
            ids = list(dict.fromkeys(record_ids))[-retention.max_entries :]
            live = [
                (rid, e)
                for rid, e in old.items()
                if rid not in ids and retention.live(e, turn, now)
            ]
            live = live[max(0, len(live) - (retention.max_entries - len(ids))) :]
            entries = dict(live) | {
                rid: Injection(turn, now, confidence, fingerprint) for rid in ids
            }
            self._sessions[key] = _Session(turn, entries, now + retention.ttl)
            self._sessions.move_to_end(key)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
            return turn

    def forget(self, namespace: str, record_ids: Sequence[str], *, whole: bool = False) -> int:
        """Drop records from the namespace's sessions (all its sessions when ``whole``)."""
        ids, changed = set(record_ids), 0
        with self._lock:
            for key in [k for k in self._sessions if k[0] == namespace]:
                session = self._sessions[key]
                if whole:
                    del self._sessions[key]
                elif ids & session.entries.keys():
                    session.entries = {r: e for r, e in session.entries.items() if r not in ids}
                else:
                    continue
                changed += 1
        return changed
