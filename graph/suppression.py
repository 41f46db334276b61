"""SuppressionStore: the session suppression cache (``retrieval/suppression.py``) in Neo4j.

One small ``:SuppressionSession`` node per (namespace, session id) holds the session's turn
counter and, per record injected into its context, the turn, time, consult confidence and task
fingerprint of the injection (parallel list properties). Every API worker reads and writes the
same node, so whichever worker serves a session's next request gives the same answer; the turn
counter goes up atomically (the turn's query takes the node's write lock before it reads).

Bounded: a turn drops the entries that can never block again (both cool-downs over) and keeps
at most ``Retention.max_entries``; a session idle past ``Retention.ttl`` expires (reads ignore
it, the next turn starts it afresh, and each session's first turn deletes a few expired sessions
of its namespace, in a transaction of its own: ``sweep``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store, iso
from graph.mapping import iso_time

SWEEP = 20  # expired sessions of the namespace deleted per turn at most


@dataclass(frozen=True)
class Injection:
    """A record injected into a session's context: when, and under what confidence and task."""

    turn: int
    at: datetime
    confidence: float
    fingerprint: str


@dataclass(frozen=True)
class SessionState:
    """A session's turn counter and its injections by record id (empty for a new session)."""

    turn: int = 0
    injections: dict[str, Injection] = field(default_factory=dict)


@dataclass(frozen=True)
class Retention:
    """How long suppression state is kept: an entry while fewer than ``cool_turns`` turns or
    less than ``cool_time`` have passed (whichever ends later), a session ``ttl`` after its
    last turn, at most ``max_entries`` entries per session (the newest)."""

    cool_turns: int
    cool_time: timedelta
    ttl: timedelta
    max_entries: int

    def live(self, entry: Injection, turn: int, now: datetime) -> bool:
        """Whether ``entry`` can still block at ``turn`` / ``now``."""
        return turn - entry.turn < self.cool_turns or entry.at > now - self.cool_time


@dataclass(frozen=True)
class SessionTurn:
    """One turn of a session to count: its id, the consult confidence and task fingerprint the
    records injected at it carry, and how long the state is kept."""

    session_id: str
    confidence: float
    fingerprint: str
    retention: Retention


def turn_params(
    namespace: str, turn: SessionTurn, record_ids: Sequence[str], now: datetime
) -> dict[str, Any]:
    """The parameters of ``record_suppression_turn.cypher`` for ``turn`` injecting
    ``record_ids`` (each once, the newest ``max_entries``) at ``now``."""
    now, keep = ensure_utc(now), turn.retention
    return {
        "namespace": namespace, "session_id": turn.session_id,
        "record_ids": list(dict.fromkeys(record_ids))[-keep.max_entries :], "now": iso(now),
        "confidence": turn.confidence, "fingerprint": turn.fingerprint,
        "cool_turns": keep.cool_turns, "cooled_before": iso(now - keep.cool_time),
        "expires_at": iso(now + keep.ttl), "max_entries": keep.max_entries,
    }  # fmt: skip


def state_from_row(row: Mapping[str, Any] | None) -> SessionState:
    """A session's state as ``get_suppression_session.cypher`` returns it (None: no session,
    or it expired: a new, empty one); ``read_context_start.cypher`` returns the same map."""
    if row is None:
        return SessionState()
    parts = zip(
        row["record_ids"], row["turns"], row["ats"], row["confidences"], row["fingerprints"],
        strict=True,
    )  # fmt: skip
    return SessionState(
        int(row["turn"]),
        {rid: Injection(int(t), iso_time(at), float(c), fp) for rid, t, at, c, fp in parts},
    )


class SuppressionStore(Store):
    def load(self, namespace: str, session_id: str, now: datetime) -> SessionState:
        """The session's state at ``now`` (a new, empty one when unknown or expired)."""
        rows = self._run(
            query("get_suppression_session"),
            {"namespace": namespace, "session_id": session_id, "now": iso(ensure_utc(now))},
            read=True,
        )
        return state_from_row(rows[0] if rows else None)

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
        """Count one turn of the session and store ``record_ids`` as injected at it; returns
        the session's new turn."""
        turn = SessionTurn(session_id, confidence, fingerprint, retention)
        rows = self._run(
            query("record_suppression_turn"), turn_params(namespace, turn, record_ids, now)
        )
        if rows[0]["turn"] == 1:  # a new session: as many idle ones go
            self.sweep(namespace, now)
        return int(rows[0]["turn"])

    def sweep(self, namespace: str, now: datetime) -> int:
        """Delete up to ``SWEEP`` sessions of the namespace idle past their expiry at ``now``
        (in session id order: two sweeps never deadlock); returns how many went."""
        params = {"namespace": namespace, "now": iso(ensure_utc(now)), "sweep": SWEEP}
        rows = self._run(query("sweep_suppression_sessions"), params, once=True)
        return int(rows[0]["swept"]) if rows else 0

    def forget(self, namespace: str, record_ids: Sequence[str], *, whole: bool = False) -> int:
        """Drop ``record_ids`` from every session of the namespace (every session when the
        namespace was forgotten ``whole``); returns the sessions changed or deleted."""
        if whole:
            rows = self._run(query("delete_suppression_sessions"), {"namespace": namespace})
        elif record_ids:
            params = {"namespace": namespace, "record_ids": list(record_ids)}
            rows = self._run(query("forget_suppressed_records"), params)
        else:
            return 0
        return int(rows[0]["sessions"]) if rows else 0
