"""Time phrases to windows: the handler of each phrase family of the grammar
(``text.timegrammar``), the calendar arithmetic they share, and the window they produce. Pure:
no I/O, no Neo4j. ``text.timephrases`` finds the phrases and calls :data:`HANDLERS`.

Windows are computed on the local wall clock of the user's zone and then converted to UTC.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

import dateparser

from graph.clock import ensure_utc
from graph.errors import ValidationFailed
from text.timegrammar import (
    FUZZY_COUNTS,
    MONTH_WORDS,
    MONTHS,
    NUMBER_WORDS,
    PARTS_OF_DAY,
    WEEKDAYS,
)

__all__ = ["HANDLERS", "Bounds", "Context", "Handler", "SleepHistory", "TimeWindow", "WeekMode"]

WeekMode = Literal["rolling", "calendar"]

_MAX_DATE_CHARS = 64  # what dateparser may see: a date, with its whitespace runs collapsed
_AMBIGUOUS_MONTHS = ("may", "march", "mar")  # also ordinary English words
# Half-width, in days, of the window around "N <unit> ago".
_AGO_SPREAD_DAYS = {"day": 0, "week": 3, "month": 15, "year": 182}
_MONTH_WORD = re.compile(rf"\b(?:{MONTH_WORDS})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b\d{4}\b")


@dataclass(frozen=True)
class SleepHistory:
    """What the agent knows about its own sleep and the previous session (all UTC)."""

    slept_at: datetime | None = None
    woke_at: datetime | None = None
    previous_session_end: datetime | None = None


@dataclass(frozen=True)
class TimeWindow:
    """A half-open UTC window ``[start, end)``; ``None`` means open on that side."""

    start: datetime | None
    end: datetime | None
    phrase: str
    kind: str

    def __post_init__(self) -> None:
        if self.start is not None:
            object.__setattr__(self, "start", ensure_utc(self.start, "start"))
        if self.end is not None:
            object.__setattr__(self, "end", ensure_utc(self.end, "end"))
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValidationFailed(f"window start {self.start} is after end {self.end}")

    def as_dict(self) -> dict[str, str | None]:
        """JSON-ready form: phrase, kind and ISO-8601 bounds (None = open)."""
        return {
            "phrase": self.phrase,
            "kind": self.kind,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
        }

    def contains(self, when: datetime) -> bool:
        """True when ``when`` (timezone-aware) falls inside ``[start, end)``."""
        when = ensure_utc(when, "when")
        if self.start is not None and when < self.start:
            return False
        return self.end is None or when < self.end

    def ahead(self, now: datetime) -> bool:
        """True when the window starts at or after ``now``: nothing in memory can have been said
        in it ("this weekend" said on a Monday, "tomorrow", "next month" name a plan's time)."""
        return self.start is not None and self.start >= ensure_utc(now, "now")


@dataclass(frozen=True)
class Context:
    """Everything a phrase handler needs to turn a match into a window."""

    now: datetime  # UTC
    local: datetime  # now on the user's wall clock
    zone: ZoneInfo
    tz: str
    sleep: SleepHistory
    week_mode: WeekMode

    @property
    def today(self) -> date:
        return self.local.date()

    def at(self, day: date, hour: int = 0) -> datetime:
        """Local ``day`` at ``hour``:00, expressed in UTC."""
        return datetime.combine(day, time(hour), tzinfo=self.zone).astimezone(UTC)

    def day(self, day: date, days: int = 1) -> tuple[datetime, datetime]:
        """The local calendar day(s) starting at ``day``, in UTC."""
        return self.at(day), self.at(day + timedelta(days=days))


Bounds = tuple[datetime | None, datetime | None]
Handler = Callable[["re.Match[str]", Context], Bounds | None]


# --- small calendar helpers -------------------------------------------------------------


def _shift_months(day: date, months: int) -> date:
    """``day`` moved by whole months, clamping the day-of-month (Mar 31 - 1 month = Feb 28)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    first_next = date(year + (month + 1) // 12, (month + 1) % 12 + 1, 1)
    return date(year, month + 1, min(day.day, (first_next - timedelta(days=1)).day))


def _month_span(ctx: Context, year: int, month: int) -> Bounds:
    first = date(year, month, 1)
    return ctx.at(first), ctx.at(_shift_months(first, 1))


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _count(word: str) -> tuple[int, int]:
    """A quantity word or number as a (low, high) range of counts."""
    word = " ".join(word.lower().split())
    for fuzzy, bounds in FUZZY_COUNTS.items():
        if fuzzy in word:
            return bounds
    value = int(word) if word.isdigit() else NUMBER_WORDS[word]
    return value, value


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    for index, full in enumerate(MONTHS):
        if full.startswith(name[:3]):
            return index + 1
    raise ValueError(name)  # unreachable: the regex only admits month names


# --- handlers: one per phrase family ------------------------------------------------------


def _fixed_day(match: re.Match[str], ctx: Context) -> Bounds:
    text = " ".join(match.group(0).lower().split())
    offset = {"today": 0, "yesterday": 1}.get(text, 2)  # else "the day before yesterday"
    return ctx.day(ctx.today - timedelta(days=offset))


def _part_of_day(match: re.Match[str], ctx: Context) -> Bounds:
    base = ctx.today - timedelta(days=1 if match.group("which").lower() == "yesterday" else 0)
    first, last = PARTS_OF_DAY[match.group("part").lower()]
    return ctx.at(base, first), ctx.at(base + timedelta(days=last // 24), last % 24)


def _night(match: re.Match[str], ctx: Context) -> Bounds:
    """'last night' = 18:00 yesterday to 06:00 today; 'tonight' = the coming/current night."""
    evening = ctx.today - timedelta(days=1)
    if match.group(0).lower() == "tonight" and ctx.local.hour >= 6:
        evening = ctx.today
    return ctx.at(evening, 18), ctx.at(evening + timedelta(days=1), 6)


def _calendar_period(match: re.Match[str], ctx: Context) -> Bounds:
    which, unit = match.group("which").lower(), match.group("unit").lower()
    last = which in ("last", "previous")
    if unit == "week":
        if last and ctx.week_mode == "rolling":
            return ctx.now - timedelta(days=7), ctx.now
        monday = _monday(ctx.today)
        return (ctx.day(monday - timedelta(days=7), 7)) if last else (ctx.at(monday), ctx.now)
    if unit == "weekend":
        saturday = _monday(ctx.today) + timedelta(days=-2 if last else 5)
        return ctx.day(saturday, 2)
    if unit == "month":
        first = ctx.today.replace(day=1)
        return (
            (ctx.at(_shift_months(first, -1)), ctx.at(first)) if last else (ctx.at(first), ctx.now)
        )
    jan1 = ctx.today.replace(month=1, day=1)
    return (
        (ctx.at(jan1.replace(year=jan1.year - 1)), ctx.at(jan1))
        if last
        else (ctx.at(jan1), ctx.now)
    )


def _step(ctx: Context, unit: str, count: int) -> date:
    """Local date ``count`` units before today."""
    if unit in ("month", "year"):
        return _shift_months(ctx.today, -count * (12 if unit == "year" else 1))
    return ctx.today - timedelta(days=count * (7 if unit == "week" else 1))


def _ago(match: re.Match[str], ctx: Context) -> Bounds:
    """'N units ago': the local day(s) around that point, widened for vague counts."""
    low, high = _count(match.group("n"))
    unit = match.group("unit").lower()
    if unit == "hour":
        return ctx.now - timedelta(hours=high + 1), ctx.now - timedelta(hours=max(low - 1, 0))
    spread = timedelta(days=_AGO_SPREAD_DAYS[unit])
    start = _step(ctx, unit, high) - spread
    end = min(_step(ctx, unit, low) + spread + timedelta(days=1), ctx.today + timedelta(days=1))
    return ctx.at(start), ctx.at(end)


def _past(match: re.Match[str], ctx: Context) -> Bounds:
    """'in the last N units' / 'past N units': exactly [now - N units, now)."""
    _, high = _count(match.group("n") or "1")
    unit = match.group("unit").lower()
    if unit == "hour":
        return ctx.now - timedelta(hours=high), ctx.now
    if unit in ("month", "year"):
        months = high * (12 if unit == "year" else 1)
        local = ctx.local.replace(tzinfo=None)
        start = datetime.combine(_shift_months(local.date(), -months), local.time(), ctx.zone)
        return start.astimezone(UTC), ctx.now
    return ctx.now - timedelta(days=high * (7 if unit == "week" else 1)), ctx.now


def _vague(match: re.Match[str], ctx: Context) -> Bounds:
    if "other" in match.group(0).lower():  # "the other day"
        return ctx.now - timedelta(days=7), ctx.now - timedelta(days=1)
    return ctx.now - timedelta(days=14), ctx.now  # "recently" / "lately"


# "my Sunday group rides", "our Friday standup": a weekday owned like this names a recurring
# thing, not a day (a window of last Sunday would hide every ride but one)
_OWNED = re.compile(r"\b(?:my|our|your|his|her|their)\s+$", re.I)
# "every Saturday", "on Saturday mornings": a habit as well ("What time do I wake up on Saturday
# mornings?" asks about every Saturday, not the last one)
_EVERY = re.compile(r"\b(?:every|each)\s+$", re.I)
_PART_OF_DAYS = re.compile(r"\s{1,3}(?:mornings|afternoons|evenings|nights)\b", re.I)


def _weekday(match: re.Match[str], ctx: Context) -> Bounds | None:
    """A named weekday: the most recent past one; 'this X' = this calendar week; 'next X';
    none for a habit: a weekday owned by someone ("my Sunday rides"), "every Sunday", "on
    Sunday mornings"."""
    target = WEEKDAYS.index(match.group("wd").lower())
    modifier = (match.group("mod") or "").lower()
    before = max(0, match.start() - 8)
    if not modifier and _OWNED.search(match.string, before, match.start()):
        return None
    if modifier in {"", "on"} and (
        _EVERY.search(match.string, before, match.start())
        or _PART_OF_DAYS.match(match.string, match.end())
    ):
        return None
    if modifier == "this":
        return ctx.day(_monday(ctx.today) + timedelta(days=target))
    if modifier == "next":
        return ctx.day(ctx.today + timedelta(days=(target - ctx.today.weekday() - 1) % 7 + 1))
    return ctx.day(ctx.today - timedelta(days=(ctx.today.weekday() - target - 1) % 7 + 1))


def _month(match: re.Match[str], ctx: Context) -> Bounds | None:
    """A named month: with a year, that month; else the most recent (or this/next) one."""
    name, year_text = match.group("month"), match.group("year")
    modifier = (match.group("mod") or "").lower()
    if year_text is None and not modifier:
        return None  # a bare month word is too often something else ("march on", "may I")
    lower_case_word = name.lower() in _AMBIGUOUS_MONTHS and not name[0].isupper()
    if lower_case_word and not (year_text or modifier in ("in", "during", "last")):
        return None  # "this may help", "next march": the English words, not months
    month = _month_number(name)
    if year_text is not None:
        return _month_span(ctx, int(year_text), month)
    year = ctx.today.year
    if modifier == "next":
        year += 1 if month <= ctx.today.month else 0
    elif modifier == "last":
        year -= 1 if month >= ctx.today.month else 0
    elif modifier != "this" and month > ctx.today.month:
        year -= 1
    return _month_span(ctx, year, month)


def _explicit_date(match: re.Match[str], ctx: Context) -> Bounds | None:
    """A substring that looks like a date, read by dateparser: that local day."""
    text = match.group("date")
    month = _MONTH_WORD.search(text)
    ambiguous = month is not None and month.group(0).lower() in _AMBIGUOUS_MONTHS
    if ambiguous and month is not None and month.group(0).islower() and not _YEAR.search(text):
        return None  # "those 2 may help": lower-case modal verb, not May 2
    # "5" + 20,000 spaces + "May" is a date to the pattern; dateparser gets "5 May" only
    text = " ".join(text.split())
    if len(text) > _MAX_DATE_CHARS:
        return None
    parsed = _dateparse(re.sub(r"^the\s+", "", text, flags=re.IGNORECASE), ctx)
    return None if parsed is None else ctx.day(parsed)


def _dateparse(text: str, ctx: Context) -> date | None:
    settings: dict[str, Any] = {
        "RETURN_AS_TIMEZONE_AWARE": True,
        "PREFER_DATES_FROM": "past",
        "RELATIVE_BASE": ctx.local.replace(tzinfo=None),
        "TIMEZONE": ctx.tz,
    }
    try:
        parsed = dateparser.parse(text, languages=["en"], settings=settings)
    except (ValueError, OverflowError, TypeError, KeyError, AttributeError):
        return None
    return parsed.date() if isinstance(parsed, datetime) else None


def _sleep_handler(field: str, to_now: bool) -> Handler:
    """Window bounded by a moment from the sleep history; no window when it is unknown."""

    def handler(match: re.Match[str], ctx: Context) -> Bounds | None:
        moment: datetime | None = getattr(ctx.sleep, field)
        if moment is None:
            return None
        return (moment, ctx.now) if to_now else (None, moment)

    return handler


HANDLERS: dict[str, Handler] = {
    "before_sleep": _sleep_handler("slept_at", to_now=False),
    "after_sleep": _sleep_handler("slept_at", to_now=True),
    "since_wake": _sleep_handler("woke_at", to_now=True),
    "since_last_talk": _sleep_handler("previous_session_end", to_now=True),
    "day": _fixed_day,
    "part_of_day": _part_of_day,
    "night": _night,
    "period": _calendar_period,
    "n_ago": _ago,
    "past_n": _past,
    "vague": _vague,
    "weekday": _weekday,
    "month": _month,
    "explicit_date": _explicit_date,
}
