"""One time-window resolver for every surface: a phrase ("last week", "before you slept"), an
explicit ``from``/``to`` range, or the phrase inside free text, resolved against the namespace's
own sleep history and the configured timezone."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from graph.context import sleep_history
from graph.errors import ValidationFailed
from graph.models import WakePacket, WakeState
from text.timephrases import SleepHistory, TimeWindow, resolve

EXAMPLES = "'last week', 'yesterday', 'in March', 'before you slept', '2026-03-02'"


class WakePackets(Protocol):
    def wake_packets(self, namespace: str, limit: int = 2) -> list[WakePacket]: ...

    def wake_state(self, namespace: str) -> WakeState | None: ...


class WindowResolver:
    """Time windows of one deployment (its timezone), per namespace (its sleeps)."""

    def __init__(self, packets: WakePackets, tz: str = "UTC") -> None:
        self.packets = packets
        self.tz = tz

    def history(self, namespace: str) -> SleepHistory:
        """Sleep and wake times for "before you slept", "since you woke" and "since we last
        talked"."""
        state = self.packets.wake_state(namespace)
        found = self.packets.wake_packets(namespace, limit=1)
        return sleep_history(found[0] if found else None, state.woke_at if state else None)

    def request(
        self,
        namespace: str,
        phrase: str | None,
        start: datetime | None,
        end: datetime | None,
        now: datetime,
    ) -> TimeWindow | None:
        """The window a request asks for (a phrase or a range, never both), or None."""
        if phrase is not None and (start is not None or end is not None):
            raise ValidationFailed("give either 'window' (a phrase) or 'from'/'to', not both")
        if phrase is not None:
            return self.phrase(namespace, phrase, now)
        if start is None and end is None:
            return None
        return TimeWindow(start, end, phrase=_range_phrase(start, end), kind="explicit_range")

    def phrase(
        self, namespace: str, phrase: str, now: datetime, field: str = "window"
    ) -> TimeWindow:
        """Resolve a phrase that must name a time; ``ValidationFailed`` naming ``field`` if not."""
        window = resolve(phrase, now, self.tz, self.history(namespace))
        if window is None:
            raise ValidationFailed(
                f"{field}: {phrase!r} is not a time phrase I understand (try {EXAMPLES})"
            )
        return window

    def in_text(self, namespace: str, text: str, now: datetime) -> TimeWindow | None:
        """The time phrase inside free text ("what did we decide last week"), if any."""
        return resolve(text, now, self.tz, self.history(namespace))


def _range_phrase(start: datetime | None, end: datetime | None) -> str:
    return f"{start.isoformat() if start else '...'} to {end.isoformat() if end else '...'}"
