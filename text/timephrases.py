"""Resolve natural-language time phrases in a user message into UTC windows.

Pure module: no I/O, no Neo4j. Given a message, the current instant ``now``, the user's
IANA timezone and (optionally) what the agent knows about its own sleep, it returns
half-open ``[start, end)`` windows in UTC that retrieval can use to filter memories.

Why hand-written regexes and not only ``dateparser``: dateparser turns a phrase into a
single *instant*, never into a *window* ("last week" is seven days, "this morning" is
05:00-12:00 local), it knows nothing about the agent's sleep or previous session, and its
``search_dates`` fires on ordinary words ("may", "second", "now", "march", "sat"). So the
relative phrases are matched here with explicit patterns, and dateparser is used only to
read the day out of substrings that already look like dates (a digit plus a month name,
an ISO date, or a three-part numeric date).

Windows are computed on the local wall clock of ``tz`` and then converted to UTC, so
"yesterday" in New York is the New York calendar day, whatever the UTC date is. Durations
such as "the last 7 days" are exact (``now - 7 days``), not wall-clock.

When several phrases overlap, the longest wins ("the day before yesterday" beats
"yesterday"). A phrase directly preceded by "since"/"after"/"before"/"until" is turned
into an open-ended window ("since Monday" = [Monday 00:00, now)).

Phrases (case-insensitive, whole words): today, yesterday, the day before yesterday;
this/yesterday morning|afternoon|evening, last night, tonight; last/this week|weekend|
month|year ("last week" rolling or calendar); "N hours|days|weeks|months|years ago" (N in
digits, one..twelve, a/an, a couple of, a few, several); "in the last / past N units";
the other day, recently, lately; weekday names (bare/on/last = most recent before today,
this = this calendar week, next = the coming one); month names with in/during/last/this/
next or a year; explicit dates read by dateparser; before you slept, since/after you
woke, since/after you slept, since we last talked / since last time.

Known limits: English only; numeric dates follow dateparser's English order (05/08 is
May 8); the time of day in an ISO timestamp is ignored (its date is read as a local
date); a capitalised "May"/"March" followed by a number ("May 2 people join?") is read as
a date.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from graph.clock import ensure_utc
from graph.errors import ValidationFailed
from text.spans import DisjointSpans
from text.timegrammar import GRAMMAR, MONTHS, WEEKDAYS, TimeGrammar
from text.timewindows import (
    HANDLERS,
    Bounds,
    Context,
    Handler,
    SleepHistory,
    TimeWindow,
    WeekMode,
)

__all__ = [
    "MONTHS",
    "WEEKDAYS",
    "SleepHistory",
    "TimeWindow",
    "WeekMode",
    "find_windows",
    "most_specific",
    "resolve",
]

_MAX_TEXT = 20_000  # characters scanned; longer messages are truncated, never rejected
_MAX_DATE_CANDIDATES = 20  # dateparser calls per message

_OPENERS = re.compile(r"\b(since|after|before|until|till)\s+$", re.IGNORECASE)
_NAMED_BY_PHRASE = {"day", "part_of_day", "night", "period", "vague"}
_SLEEP_KINDS = {"before_sleep", "after_sleep", "since_wake", "since_last_talk"}
_KIND_ALIASES = {"the_day_before_yesterday": "day_before_yesterday", "lately": "recently"}


@dataclass(frozen=True)
class _Found:
    """A matched phrase and its window, before overlaps are resolved."""

    first: int
    last: int
    priority: int
    window: TimeWindow


# --- public API ---------------------------------------------------------------------------


def find_windows(
    text: str,
    now: datetime,
    tz: str = "UTC",
    sleep: SleepHistory | None = None,
    week_mode: WeekMode = "rolling",
    *,
    grammar: TimeGrammar = GRAMMAR,
) -> list[TimeWindow]:
    """Every time phrase in ``text`` as a UTC window, in the order they appear.

    ``now`` must be timezone-aware and ``tz`` a valid IANA zone name, otherwise
    :class:`ValidationFailed`; any text (including none) is accepted and yields ``[]``
    when it holds no recognised phrase. ``week_mode`` decides whether "last week" means
    the last seven days ("rolling") or the previous Monday-Sunday ("calendar").
    ``grammar`` is the table of phrases read (``text.timegrammar``).
    """
    ctx = _context(now, tz, sleep, week_mode)
    if not isinstance(text, str) or not text.strip():
        return []
    text = text[:_MAX_TEXT]
    chosen = _without_overlaps(_candidates(text, ctx, grammar))
    return [_with_opener(text, found, ctx) for found in chosen]


def resolve(
    text: str,
    now: datetime,
    tz: str = "UTC",
    sleep: SleepHistory | None = None,
    week_mode: WeekMode = "rolling",
    *,
    past_only: bool = False,
) -> TimeWindow | None:
    """The single most specific window in ``text``, or ``None`` when it has no time phrase
    (:func:`most_specific` of :func:`find_windows`). Arguments as :func:`find_windows`;
    ``past_only`` leaves out the windows still ahead of ``now`` (:meth:`TimeWindow.ahead`).
    """
    windows = find_windows(text, now, tz, sleep, week_mode)
    if past_only:
        windows = [w for w in windows if not w.ahead(now)]
    return most_specific(windows)


def most_specific(windows: Sequence[TimeWindow]) -> TimeWindow | None:
    """The most specific of ``windows`` (as :func:`find_windows` found them, in text order),
    or ``None`` when there is none.

    Most specific = shortest; open-ended windows count as infinitely long. Ties go to an
    explicit date, then to the phrase that comes first.
    """
    if not windows:
        return None
    ranked = sorted(
        enumerate(windows),
        key=lambda item: (_width(item[1]), item[1].kind != "explicit_date", item[0]),
    )
    return ranked[0][1]


# --- internals ----------------------------------------------------------------------------


def _context(now: datetime, tz: str, sleep: SleepHistory | None, week_mode: WeekMode) -> Context:
    """Validate the arguments (not the text) and bundle them for the handlers."""
    if not isinstance(now, datetime):
        raise ValidationFailed(f"now must be a datetime (got {type(now).__name__})")
    utc_now = ensure_utc(now, "now")
    if not isinstance(tz, str) or not tz:
        raise ValidationFailed(f"tz must be an IANA timezone name (got {tz!r})")
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError) as exc:
        raise ValidationFailed(f"unknown timezone {tz!r}") from exc
    if week_mode not in ("rolling", "calendar"):
        raise ValidationFailed(f"week_mode must be 'rolling' or 'calendar' (got {week_mode!r})")
    history = sleep or SleepHistory()
    history = SleepHistory(
        *(
            None if value is None else ensure_utc(value, name)
            for name, value in vars(history).items()
        )
    )
    try:
        local = utc_now.astimezone(zone)
    except OverflowError as exc:
        raise ValidationFailed(f"now {utc_now.isoformat()} is out of range in {tz}") from exc
    return Context(utc_now, local, zone, tz, history, week_mode)


def _candidates(text: str, ctx: Context, grammar: TimeGrammar) -> list[_Found]:
    """Every phrase any resolution pattern recognises, with its window (possibly overlapping)."""
    found: list[_Found] = []
    for priority, family, matches in grammar.resolver_matches(text):
        handler = HANDLERS.get(family)
        if handler is None:
            raise ValueError(f"time phrase family {family!r} has no handler (text.timewindows)")
        for number, match in enumerate(matches):
            if family == "explicit_date" and number >= _MAX_DATE_CANDIDATES:
                break
            window = _window(family, match, handler, ctx)
            if window is not None:
                found.append(_Found(match.start(), match.end(), priority, window))
    return found


def _window(family: str, match: re.Match[str], handler: Handler, ctx: Context) -> TimeWindow | None:
    """Run one handler; calendar overflow or an inverted window means no window."""
    try:
        span = handler(match, ctx)
    except (ValueError, OverflowError):
        return None  # e.g. "9999 years ago", "0001-01-01" east of Greenwich
    if span is None or (span[0] is not None and span[1] is not None and span[0] > span[1]):
        return None
    return TimeWindow(span[0], span[1], match.group(0), _kind(family, match.group(0)))


def _kind(family: str, phrase: str) -> str:
    """Phrase families with fixed wording are named after the phrase: 'last_week', ..."""
    if family not in _NAMED_BY_PHRASE:
        return family
    name = "_".join(phrase.lower().split()).replace("previous_", "last_")
    return _KIND_ALIASES.get(name, name)


def _without_overlaps(found: list[_Found]) -> list[_Found]:
    """Keep the longest phrase where matches overlap; return them in text order."""
    kept: list[_Found] = []
    taken = DisjointSpans()  # O(k log k): a text can hold thousands of phrases
    for item in sorted(found, key=lambda f: (f.first - f.last, f.priority, f.first)):
        if not taken.overlaps(item.first, item.last):
            taken.add(item.first, item.last)
            kept.append(item)
    return sorted(kept, key=lambda f: f.first)


def _with_opener(text: str, found: _Found, ctx: Context) -> TimeWindow:
    """'since X' / 'after X' / 'before X' / 'until X' turn X into an open-ended window."""
    window = found.window
    opener = _OPENERS.search(text, max(0, found.first - 24), found.first)
    if opener is None or window.kind in _SLEEP_KINDS:
        return window
    word = {"till": "until"}.get(opener.group(1).lower(), opener.group(1).lower())
    bound = window.start if word in ("since", "before") else window.end
    if bound is None:
        return window
    span: Bounds = (bound, ctx.now) if word in ("since", "after") else (None, bound)
    if span[1] is not None and bound > span[1]:
        return window  # "since next Monday": keep the plain day
    phrase = text[opener.start() : found.last]
    return TimeWindow(span[0], span[1], phrase, f"{word}_{window.kind}")


def _width(window: TimeWindow) -> float:
    if window.start is None or window.end is None:
        return float("inf")
    return (window.end - window.start).total_seconds()
