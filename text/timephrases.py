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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dateparser

from graph.clock import ensure_utc
from graph.errors import ValidationFailed
from text.spans import DisjointSpans

WeekMode = Literal["rolling", "calendar"]

_MAX_TEXT = 20_000  # characters scanned; longer messages are truncated, never rejected
_MAX_DATE_CANDIDATES = 20  # dateparser calls per message
_MAX_DATE_CHARS = 64  # what dateparser may see: a date, with its whitespace runs collapsed

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_ABBR = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
_AMBIGUOUS_MONTHS = ("may", "march", "mar")  # also ordinary English words
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a": 1,
    "an": 1,
}
# Vague quantities: (smallest, largest) count they may stand for.
_FUZZY = {"couple": (2, 3), "few": (2, 5), "several": (3, 8)}
# Half-width, in days, of the window around "N <unit> ago".
_AGO_SPREAD_DAYS = {"day": 0, "week": 3, "month": 15, "year": 182}


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
class _Ctx:
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


_Span = tuple[datetime | None, datetime | None]
_Handler = Callable[["re.Match[str]", _Ctx], _Span | None]


# --- small calendar helpers -------------------------------------------------------------


def _shift_months(day: date, months: int) -> date:
    """``day`` moved by whole months, clamping the day-of-month (Mar 31 - 1 month = Feb 28)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    first_next = date(year + (month + 1) // 12, (month + 1) % 12 + 1, 1)
    return date(year, month + 1, min(day.day, (first_next - timedelta(days=1)).day))


def _month_span(ctx: _Ctx, year: int, month: int) -> _Span:
    first = date(year, month, 1)
    return ctx.at(first), ctx.at(_shift_months(first, 1))


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _count(word: str) -> tuple[int, int]:
    """A quantity word or number as a (low, high) range of counts."""
    word = " ".join(word.lower().split())
    for fuzzy, bounds in _FUZZY.items():
        if fuzzy in word:
            return bounds
    value = int(word) if word.isdigit() else _NUMBER_WORDS[word]
    return value, value


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    for index, full in enumerate(MONTHS):
        if full.startswith(name[:3]):
            return index + 1
    raise ValueError(name)  # unreachable: the regex only admits month names


# --- handlers: one per phrase family ------------------------------------------------------


def _fixed_day(match: re.Match[str], ctx: _Ctx) -> _Span:
    text = " ".join(match.group(0).lower().split())
    offset = {"today": 0, "yesterday": 1}.get(text, 2)  # else "the day before yesterday"
    return ctx.day(ctx.today - timedelta(days=offset))


_PARTS_OF_DAY = {"morning": (5, 12), "afternoon": (12, 18), "evening": (18, 24)}


def _part_of_day(match: re.Match[str], ctx: _Ctx) -> _Span:
    base = ctx.today - timedelta(days=1 if match.group("which").lower() == "yesterday" else 0)
    first, last = _PARTS_OF_DAY[match.group("part").lower()]
    return ctx.at(base, first), ctx.at(base + timedelta(days=last // 24), last % 24)


def _night(match: re.Match[str], ctx: _Ctx) -> _Span:
    """'last night' = 18:00 yesterday to 06:00 today; 'tonight' = the coming/current night."""
    evening = ctx.today - timedelta(days=1)
    if match.group(0).lower() == "tonight" and ctx.local.hour >= 6:
        evening = ctx.today
    return ctx.at(evening, 18), ctx.at(evening + timedelta(days=1), 6)


def _calendar_period(match: re.Match[str], ctx: _Ctx) -> _Span:
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


def _step(ctx: _Ctx, unit: str, count: int) -> date:
    """Local date ``count`` units before today."""
    if unit in ("month", "year"):
        return _shift_months(ctx.today, -count * (12 if unit == "year" else 1))
    return ctx.today - timedelta(days=count * (7 if unit == "week" else 1))


def _ago(match: re.Match[str], ctx: _Ctx) -> _Span:
    """'N units ago': the local day(s) around that point, widened for vague counts."""
    low, high = _count(match.group("n"))
    unit = match.group("unit").lower()
    if unit == "hour":
        return ctx.now - timedelta(hours=high + 1), ctx.now - timedelta(hours=max(low - 1, 0))
    spread = timedelta(days=_AGO_SPREAD_DAYS[unit])
    start = _step(ctx, unit, high) - spread
    end = min(_step(ctx, unit, low) + spread + timedelta(days=1), ctx.today + timedelta(days=1))
    return ctx.at(start), ctx.at(end)


def _past(match: re.Match[str], ctx: _Ctx) -> _Span:
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


def _vague(match: re.Match[str], ctx: _Ctx) -> _Span:
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


def _weekday(match: re.Match[str], ctx: _Ctx) -> _Span | None:
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


def _month(match: re.Match[str], ctx: _Ctx) -> _Span | None:
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


def _explicit_date(match: re.Match[str], ctx: _Ctx) -> _Span | None:
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


def _dateparse(text: str, ctx: _Ctx) -> date | None:
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


def _sleep_handler(field: str, to_now: bool) -> _Handler:
    """Window bounded by a moment from the sleep history; no window when it is unknown."""

    def handler(match: re.Match[str], ctx: _Ctx) -> _Span | None:
        moment: datetime | None = getattr(ctx.sleep, field)
        if moment is None:
            return None
        return (moment, ctx.now) if to_now else (None, moment)

    return handler


# --- patterns -----------------------------------------------------------------------------

_NUM = (
    r"\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|a\s+couple\s+of|a\s+couple|couple\s+of|a\s+few|few|several|an|a"
)
_UNIT = r"(?P<unit>hour|day|week|month|year)s?"
_WD = "|".join(WEEKDAYS)
_MON = "|".join(MONTHS + _MONTH_ABBR)
_MON_DOT = rf"(?:{_MON})\b\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YOU = r"(?:you|we|i)"

_PATTERNS: list[tuple[str, str, _Handler]] = [
    (
        "before_sleep",
        rf"before\s+(?:{_YOU}\s+(?:last\s+)?(?:slept|went\s+to\s+(?:sleep|bed)|fell\s+asleep)"
        r"|(?:your\s+|the\s+|last\s+)?sleep(?:ing)?)",
        _sleep_handler("slept_at", to_now=False),
    ),
    (
        "after_sleep",
        rf"(?:since|after)\s+{_YOU}\s+(?:last\s+)?(?:slept|went\s+to\s+(?:sleep|bed))",
        _sleep_handler("slept_at", to_now=True),
    ),
    (
        "since_wake",
        rf"(?:since|after)\s+(?:{_YOU}\s+)?(?:last\s+)?(?:woke|wake|waking|awoke)(?:\s+up)?",
        _sleep_handler("woke_at", to_now=True),
    ),
    (
        "since_last_talk",
        rf"since\s+(?:{_YOU}\s+last\s+(?:talked|spoke|chatted)"
        rf"|(?:the\s+)?last\s+time(?:\s+{_YOU}\s+(?:talked|spoke|chatted))?"
        r"|our\s+last\s+(?:conversation|chat|session|talk))",
        _sleep_handler("previous_session_end", to_now=True),
    ),
    ("day", r"today|yesterday|the\s+day\s+before\s+yesterday", _fixed_day),
    (
        "part_of_day",
        r"(?P<which>this|yesterday)\s+(?P<part>morning|afternoon|evening)",
        _part_of_day,
    ),
    ("night", r"last\s+night|tonight", _night),
    (
        "period",
        r"(?P<which>last|previous|this)\s+(?P<unit>week|weekend|month|year)",
        _calendar_period,
    ),
    ("n_ago", rf"(?P<n>{_NUM})\s+{_UNIT}\s+ago", _ago),
    (
        "past_n",
        r"(?:(?:in|over|during|within|for)\s+)?"
        rf"(?:(?:the\s+)?(?:last|past)\s+(?P<n>{_NUM})\s+|(?:the\s+(?:last|past)|past)\s+){_UNIT}",
        _past,
    ),
    ("vague", r"the\s+other\s+day|recently|lately", _vague),
    (
        "weekday",
        rf"(?:(?P<mod>last|past|previous|this|next|on)\s+)?(?P<wd>{_WD})",
        _weekday,
    ),
    (
        "month",
        rf"(?:(?P<mod>in|during|last|this|next)\s+)?(?P<month>{_MON})(?:\s+(?P<year>\d{{4}}))?",
        _month,
    ),
    (
        "explicit_date",
        rf"(?:(?:on\s+)?(?:{_WD}),?\s+)?(?:on\s+)?(?P<date>\d{{4}}-\d{{1,2}}-\d{{1,2}}"
        r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"
        rf"|(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MON_DOT}(?:,?\s+\d{{4}})?"
        rf"|{_MON_DOT}\s+(?:the\s+)?{_DAY}(?:,?\s+\d{{4}})?)"
        r"(?:T\d{1,2}(?::\d{2}){0,2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?",  # ISO time: ignored
        _explicit_date,
    ),
]
_MONTH_WORD = re.compile(rf"\b(?:{_MON})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b\d{4}\b")
_COMPILED = [
    (kind, re.compile(rf"(?<![\w/])(?:{pattern})(?![\w/])", re.IGNORECASE), handler)
    for kind, pattern, handler in _PATTERNS
]
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
) -> list[TimeWindow]:
    """Every time phrase in ``text`` as a UTC window, in the order they appear.

    ``now`` must be timezone-aware and ``tz`` a valid IANA zone name, otherwise
    :class:`ValidationFailed`; any text (including none) is accepted and yields ``[]``
    when it holds no recognised phrase. ``week_mode`` decides whether "last week" means
    the last seven days ("rolling") or the previous Monday-Sunday ("calendar").
    """
    ctx = _context(now, tz, sleep, week_mode)
    if not isinstance(text, str) or not text.strip():
        return []
    text = text[:_MAX_TEXT]
    chosen = _without_overlaps(_candidates(text, ctx))
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
    """The single most specific window in ``text``, or ``None`` when it has no time phrase.

    Most specific = shortest; open-ended windows count as infinitely long. Ties go to an
    explicit date, then to the phrase that comes first. Arguments as :func:`find_windows`;
    ``past_only`` leaves out the windows still ahead of ``now`` (:meth:`TimeWindow.ahead`).
    """
    windows = find_windows(text, now, tz, sleep, week_mode)
    if past_only:
        windows = [w for w in windows if not w.ahead(now)]
    if not windows:
        return None
    ranked = sorted(
        enumerate(windows),
        key=lambda item: (_width(item[1]), item[1].kind != "explicit_date", item[0]),
    )
    return ranked[0][1]


# --- internals ----------------------------------------------------------------------------


def _context(now: datetime, tz: str, sleep: SleepHistory | None, week_mode: WeekMode) -> _Ctx:
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
    return _Ctx(utc_now, local, zone, tz, history, week_mode)


def _candidates(text: str, ctx: _Ctx) -> list[_Found]:
    """Every phrase any pattern recognises, with its window (possibly overlapping)."""
    found: list[_Found] = []
    for priority, (family, pattern, handler) in enumerate(_COMPILED):
        for number, match in enumerate(pattern.finditer(text)):
            if family == "explicit_date" and number >= _MAX_DATE_CANDIDATES:
                break
            window = _window(family, match, handler, ctx)
            if window is not None:
                found.append(_Found(match.start(), match.end(), priority, window))
    return found


def _window(family: str, match: re.Match[str], handler: _Handler, ctx: _Ctx) -> TimeWindow | None:
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


def _with_opener(text: str, found: _Found, ctx: _Ctx) -> TimeWindow:
    """'since X' / 'after X' / 'before X' / 'until X' turn X into an open-ended window."""
    window = found.window
    opener = _OPENERS.search(text, max(0, found.first - 24), found.first)
    if opener is None or window.kind in _SLEEP_KINDS:
        return window
    word = {"till": "until"}.get(opener.group(1).lower(), opener.group(1).lower())
    bound = window.start if word in ("since", "before") else window.end
    if bound is None:
        return window
    span: _Span = (bound, ctx.now) if word in ("since", "after") else (None, bound)
    if span[1] is not None and bound > span[1]:
        return window  # "since next Monday": keep the plain day
    phrase = text[opener.start() : found.last]
    return TimeWindow(span[0], span[1], phrase, f"{word}_{window.kind}")


def _width(window: TimeWindow) -> float:
    if window.start is None or window.end is None:
        return float("inf")
    return (window.end - window.start).total_seconds()
