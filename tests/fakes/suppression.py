"""In-memory fake of ``graph.suppression.SuppressionStore``: the session suppression state in
this process's memory, with the same pruning and expiry (the contract test,
tests/integration/test_suppression_store.py, holds both to the same turns)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.suppression import Injection, Retention, SessionState


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
