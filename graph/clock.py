"""Injected time. Every time-dependent function takes a ``Clock`` or an explicit ``now``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from graph.errors import ValidationFailed

# Bounds for an open end of a time window in Cypher: "t.at >= $since AND t.at < $until" with
# both given lets the planner seek a (namespace, time) range index; "$since IS NULL OR ..."
# does not (it scanned every row of the label, or of the namespace).
BEFORE_ALL = datetime(1970, 1, 1, tzinfo=UTC)
AFTER_ALL = datetime(9999, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""
        ...


class SystemClock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A controllable clock for replays and tests."""

    def __init__(self, start: datetime) -> None:
        self._now = ensure_utc(start)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = ensure_utc(when)

    def advance(self, delta: timedelta) -> datetime:
        self._now = self._now + delta
        return self._now


def ensure_utc(value: datetime, field: str = "timestamp") -> datetime:
    """Return ``value`` in UTC; refuse naive datetimes instead of guessing their zone."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValidationFailed(f"{field} must be timezone-aware (got naive {value.isoformat()})")
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # 9999-12-31T23:00-05:00 has no UTC time
        raise ValidationFailed(f"{field} is out of range in UTC: {value.isoformat()}") from exc


def window_bounds(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
    """A time window's bounds as Cypher reads them: both in UTC, an open side the end of time
    (``BEFORE_ALL`` / ``AFTER_ALL``)."""
    return (
        ensure_utc(since, "since") if since else BEFORE_ALL,
        ensure_utc(until, "until") if until else AFTER_ALL,
    )
