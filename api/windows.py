"""Time windows in responses (the resolving is ``service.windows.WindowResolver``'s)."""

from __future__ import annotations

from api.schemas import WindowPublic
from text.timephrases import TimeWindow


def public(window: TimeWindow | None) -> WindowPublic | None:
    if window is None:
        return None
    return WindowPublic(phrase=window.phrase, kind=window.kind, start=window.start, end=window.end)
