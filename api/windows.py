"""Time windows from request parameters: a phrase ("last week", "before you slept") or an
explicit ``from``/``to`` range, never both. Phrases are resolved against the namespace's own
sleep history and the configured timezone."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from api.schemas import WindowPublic
from graph.errors import ValidationFailed
from retrieval.timephrases import TimeWindow, resolve

if TYPE_CHECKING:
    from api.container import Container

EXAMPLES = "'last week', 'yesterday', 'in March', 'before you slept', '2026-03-02'"


def request_window(
    c: Container,
    namespace: str,
    phrase: str | None,
    start: datetime | None,
    end: datetime | None,
    now: datetime,
) -> TimeWindow | None:
    """The window a request asks for, or None when it asks for none."""
    if phrase is not None and (start is not None or end is not None):
        raise ValidationFailed("give either 'window' (a phrase) or 'from'/'to', not both")
    if phrase is not None:
        return phrase_window(c, namespace, phrase, now)
    if start is None and end is None:
        return None
    return TimeWindow(start, end, phrase=_range_phrase(start, end), kind="explicit_range")


def phrase_window(c: Container, namespace: str, phrase: str, now: datetime) -> TimeWindow:
    """Resolve a phrase that must name a time; refused (422) when it does not."""
    window = resolve(phrase, now, c.settings.timezone, c.sleep_history(namespace))
    if window is None:
        raise ValidationFailed(
            f"window: {phrase!r} is not a time phrase I understand (try {EXAMPLES})"
        )
    return window


def query_window(c: Container, namespace: str, text: str, now: datetime) -> TimeWindow | None:
    """The time phrase inside free text ("what did we decide last week"), if any."""
    return resolve(text, now, c.settings.timezone, c.sleep_history(namespace))


def public(window: TimeWindow | None) -> WindowPublic | None:
    if window is None:
        return None
    return WindowPublic(phrase=window.phrase, kind=window.kind, start=window.start, end=window.end)


def _range_phrase(start: datetime | None, end: datetime | None) -> str:
    return f"{start.isoformat() if start else '...'} to {end.isoformat() if end else '...'}"
