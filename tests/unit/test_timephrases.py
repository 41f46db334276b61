"""Time-phrase resolution: fixed clock, exact UTC windows, several timezones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.errors import ValidationFailed
from text.timephrases import SleepHistory, TimeWindow, find_windows, resolve


def z(text: str) -> datetime:
    """A UTC instant from 'YYYY-MM-DDTHH:MM' (or a bare date)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


NOW = z("2026-11-18T15:30")  # a Wednesday; 10:30 in New York (EST), 16:30 in Berlin (CET)
NOW_LATE = z("2026-11-19T03:30")  # Wed 22:30 in New York, Thu 04:30 in Berlin
NOW_DST = z("2026-11-02T15:00")  # Monday after New York left DST (Nov 1 has 25 hours)
SLEEP = SleepHistory(
    slept_at=z("2026-11-18T03:00"),
    woke_at=z("2026-11-18T07:00"),
    previous_session_end=z("2026-11-17T22:00"),
)

# (message, expected kind, expected UTC start, expected UTC end); None = open side.
UTC_ROWS: list[tuple[str, str, str | None, str | None]] = [
    ("what did we do today?", "today", "2026-11-18", "2026-11-19"),
    ("yesterday", "yesterday", "2026-11-17", "2026-11-18"),
    ("the day before yesterday", "day_before_yesterday", "2026-11-16", "2026-11-17"),
    ("this morning", "this_morning", "2026-11-18T05:00", "2026-11-18T12:00"),
    ("yesterday afternoon", "yesterday_afternoon", "2026-11-17T12:00", "2026-11-17T18:00"),
    ("last night", "last_night", "2026-11-17T18:00", "2026-11-18T06:00"),
    ("tonight", "tonight", "2026-11-18T18:00", "2026-11-19T06:00"),
    ("this evening", "this_evening", "2026-11-18T18:00", "2026-11-19T00:00"),
    ("last week", "last_week", "2026-11-11T15:30", "2026-11-18T15:30"),
    ("this week", "this_week", "2026-11-16", "2026-11-18T15:30"),
    ("last weekend", "last_weekend", "2026-11-14", "2026-11-16"),
    ("last month", "last_month", "2026-10-01", "2026-11-01"),
    ("this month", "this_month", "2026-11-01", "2026-11-18T15:30"),
    ("last year", "last_year", "2025-01-01", "2026-01-01"),
    ("3 days ago", "n_ago", "2026-11-15", "2026-11-16"),
    ("three days ago", "n_ago", "2026-11-15", "2026-11-16"),
    ("a week ago", "n_ago", "2026-11-08", "2026-11-15"),
    ("a couple of days ago", "n_ago", "2026-11-15", "2026-11-17"),
    ("a few days ago", "n_ago", "2026-11-13", "2026-11-17"),
    ("two months ago", "n_ago", "2026-09-03", "2026-10-04"),
    ("5 hours ago", "n_ago", "2026-11-18T09:30", "2026-11-18T11:30"),
    ("in the last 3 days", "past_n", "2026-11-15T15:30", "2026-11-18T15:30"),
    ("past 10 days", "past_n", "2026-11-08T15:30", "2026-11-18T15:30"),
    ("over the last two weeks", "past_n", "2026-11-04T15:30", "2026-11-18T15:30"),
    ("in the last 24 hours", "past_n", "2026-11-17T15:30", "2026-11-18T15:30"),
    ("in the past few days", "past_n", "2026-11-13T15:30", "2026-11-18T15:30"),
    ("in the last month", "past_n", "2026-10-18T15:30", "2026-11-18T15:30"),
    ("the other day", "the_other_day", "2026-11-11T15:30", "2026-11-17T15:30"),
    ("recently", "recently", "2026-11-04T15:30", "2026-11-18T15:30"),
    ("what have you been up to lately", "recently", "2026-11-04T15:30", "2026-11-18T15:30"),
    ("last Tuesday", "weekday", "2026-11-17", "2026-11-18"),
    ("on Monday", "weekday", "2026-11-16", "2026-11-17"),
    ("Friday", "weekday", "2026-11-13", "2026-11-14"),
    ("Wednesday", "weekday", "2026-11-11", "2026-11-12"),  # today is Wednesday: the previous one
    ("this Wednesday", "weekday", "2026-11-18", "2026-11-19"),
    ("in March", "month", "2026-03-01", "2026-04-01"),
    ("last March", "month", "2026-03-01", "2026-04-01"),
    ("in December", "month", "2025-12-01", "2026-01-01"),
    ("last November", "month", "2025-11-01", "2025-12-01"),
    ("March 2023", "month", "2023-03-01", "2023-04-01"),
    ("May 8", "explicit_date", "2026-05-08", "2026-05-09"),
    ("2023-05-08", "explicit_date", "2023-05-08", "2023-05-09"),
    ("8 May, 2023", "explicit_date", "2023-05-08", "2023-05-09"),
    ("what did I say on 05/08/2023?", "explicit_date", "2023-05-08", "2023-05-09"),
    ("the 8th of May", "explicit_date", "2026-05-08", "2026-05-09"),
    ("November 20", "explicit_date", "2025-11-20", "2025-11-21"),  # past preferred
    ("since Monday", "since_weekday", "2026-11-16", "2026-11-18T15:30"),
    ("before yesterday", "before_yesterday", None, "2026-11-17"),
    ("before you slept", "before_sleep", None, "2026-11-18T03:00"),
    ("before sleep", "before_sleep", None, "2026-11-18T03:00"),
    ("before you went to sleep", "before_sleep", None, "2026-11-18T03:00"),
    ("since you woke up", "since_wake", "2026-11-18T07:00", "2026-11-18T15:30"),
    ("after you woke", "since_wake", "2026-11-18T07:00", "2026-11-18T15:30"),
    ("since we last talked", "since_last_talk", "2026-11-17T22:00", "2026-11-18T15:30"),
    ("since last time", "since_last_talk", "2026-11-17T22:00", "2026-11-18T15:30"),
]

# (timezone, now, message, expected UTC start, expected UTC end): local-day boundaries.
ZONED_ROWS: list[tuple[str, datetime, str, str, str]] = [
    ("America/New_York", NOW, "today", "2026-11-18T05:00", "2026-11-19T05:00"),
    ("America/New_York", NOW, "yesterday", "2026-11-17T05:00", "2026-11-18T05:00"),
    ("America/New_York", NOW, "this morning", "2026-11-18T10:00", "2026-11-18T17:00"),
    ("America/New_York", NOW, "last night", "2026-11-17T23:00", "2026-11-18T11:00"),
    ("America/New_York", NOW, "on Monday", "2026-11-16T05:00", "2026-11-17T05:00"),
    # October is EDT (UTC-4); November 1 00:00 is still EDT.
    ("America/New_York", NOW, "last month", "2026-10-01T04:00", "2026-11-01T04:00"),
    # March 2023 starts in EST and ends in EDT.
    ("America/New_York", NOW, "March 2023", "2023-03-01T05:00", "2023-04-01T04:00"),
    ("America/New_York", NOW, "May 8", "2026-05-08T04:00", "2026-05-09T04:00"),
    # It is already the 19th in UTC, but still Wednesday the 18th in New York.
    ("America/New_York", NOW_LATE, "today", "2026-11-18T05:00", "2026-11-19T05:00"),
    # The day New York left DST lasted 25 hours.
    ("America/New_York", NOW_DST, "yesterday", "2026-11-01T04:00", "2026-11-02T05:00"),
    ("Europe/Berlin", NOW, "today", "2026-11-17T23:00", "2026-11-18T23:00"),
    ("Europe/Berlin", NOW_LATE, "today", "2026-11-18T23:00", "2026-11-19T23:00"),
    ("Europe/Berlin", NOW_LATE, "yesterday", "2026-11-17T23:00", "2026-11-18T23:00"),
    ("Europe/Berlin", NOW_LATE, "Wednesday", "2026-11-17T23:00", "2026-11-18T23:00"),
    # 04:30 local: "tonight" is the night that is still going on.
    ("Europe/Berlin", NOW_LATE, "tonight", "2026-11-18T17:00", "2026-11-19T05:00"),
    ("Europe/Berlin", NOW_LATE, "2023-05-08", "2023-05-07T22:00", "2023-05-08T22:00"),
]

NO_PHRASE = [
    "",
    "   ",
    "I like the number seven",
    "may I ask something",
    "May I ask something?",
    "let's march on",
    "this may help",
    "those 2 may help",
    "I sat in the sun for a second just now",
    "version 1.2.3 is out",
    "Mondays are hard",
    "see you next week",
    "the 5th element",
]


def _z_or_none(text: str | None) -> datetime | None:
    return None if text is None else z(text)


@pytest.mark.parametrize(("text", "kind", "start", "end"), UTC_ROWS)
def test_phrase_families_in_utc(text: str, kind: str, start: str | None, end: str | None) -> None:
    window = resolve(text, NOW, "UTC", SLEEP)
    assert window is not None, text
    assert (window.kind, window.start, window.end) == (kind, _z_or_none(start), _z_or_none(end))
    assert window.phrase.lower() in text.lower()


@pytest.mark.parametrize(("tz", "now", "text", "start", "end"), ZONED_ROWS)
def test_local_day_boundaries(tz: str, now: datetime, text: str, start: str, end: str) -> None:
    window = resolve(text, now, tz)
    assert window is not None
    assert (window.start, window.end) == (z(start), z(end))


@pytest.mark.parametrize(
    ("tz", "start", "end"),
    [
        ("UTC", "2026-11-09", "2026-11-16"),
        ("America/New_York", "2026-11-09T05:00", "2026-11-16T05:00"),
        ("Europe/Berlin", "2026-11-08T23:00", "2026-11-15T23:00"),
    ],
)
def test_last_week_calendar_mode_is_previous_monday_to_sunday(
    tz: str, start: str, end: str
) -> None:
    window = resolve("what happened last week?", NOW, tz, week_mode="calendar")
    assert window is not None
    assert (window.kind, window.start, window.end) == ("last_week", z(start), z(end))


@pytest.mark.parametrize("text", NO_PHRASE)
def test_sentences_without_time_phrase_give_no_window(text: str) -> None:
    assert find_windows(text, NOW, "UTC", SLEEP) == []
    assert resolve(text, NOW, "UTC", SLEEP) is None


@pytest.mark.parametrize(
    "text", ["before you slept", "since you woke up", "since we last talked", "after you woke"]
)
def test_sleep_phrases_without_history_give_no_window(text: str) -> None:
    assert resolve(text, NOW) is None
    assert resolve(text, NOW, sleep=SleepHistory()) is None


def test_longest_phrase_wins_and_windows_keep_text_order() -> None:
    windows = find_windows("last week, especially the day before yesterday", NOW)
    assert [w.kind for w in windows] == ["last_week", "day_before_yesterday"]
    assert [w.phrase for w in windows] == ["last week", "the day before yesterday"]


def test_resolve_prefers_the_most_specific_window() -> None:
    window = resolve("recently, and I think on Monday, before you slept", NOW, sleep=SLEEP)
    assert window is not None
    assert window.kind == "weekday"


def test_explicit_date_beats_a_weekday_of_equal_width() -> None:
    window = resolve("we met Sunday and again on May 8", NOW)
    assert window is not None
    assert (window.kind, window.start) == ("explicit_date", z("2026-05-08"))


def test_phrase_keeps_original_spelling() -> None:
    window = resolve("What about LAST Tuesday?", NOW)
    assert window is not None
    assert window.phrase == "LAST Tuesday"


def test_window_is_half_open() -> None:
    window = TimeWindow(z("2026-11-17"), z("2026-11-18"), "yesterday", "yesterday")
    assert window.contains(z("2026-11-17"))
    assert window.contains(z("2026-11-17T23:59"))
    assert not window.contains(z("2026-11-18"))
    open_start = TimeWindow(None, z("2026-11-18"), "before you slept", "before_sleep")
    assert open_start.contains(z("1990-01-01"))
    assert not open_start.contains(z("2026-11-18"))


def test_window_refuses_naive_and_inverted_bounds() -> None:
    with pytest.raises(ValidationFailed):
        TimeWindow(datetime(2026, 11, 17), None, "x", "x")
    with pytest.raises(ValidationFailed):
        TimeWindow(z("2026-11-18"), z("2026-11-17"), "x", "x")


@pytest.mark.parametrize(
    ("now", "tz", "week_mode"),
    [
        (datetime(2026, 11, 18, 15, 30), "UTC", "rolling"),  # naive on purpose
        (NOW, "Mars/Olympus_Mons", "rolling"),
        (NOW, "", "rolling"),
        (NOW, "../../etc/passwd", "rolling"),
        (NOW, "UTC", "fortnightly"),
    ],
)
def test_bad_arguments_raise_validation_failed(now: datetime, tz: str, week_mode: str) -> None:
    with pytest.raises(ValidationFailed):
        find_windows("yesterday", now, tz, week_mode=week_mode)  # type: ignore[arg-type]


def test_out_of_range_dates_are_ignored_not_raised() -> None:
    assert find_windows("9999 years ago, 9999-12-31, 0001-01-01", NOW, "Asia/Tokyo") == []


def test_non_utc_now_is_accepted() -> None:
    local_now = NOW.astimezone(datetime.fromisoformat("2026-01-01T00:00+09:00").tzinfo)
    assert resolve("yesterday", local_now) == resolve("yesterday", NOW)


_FRAGMENTS = [
    "today",
    "yesterday",
    "last",
    "this",
    "next",
    "week",
    "month",
    "year",
    "ago",
    "days",
    "a few",
    "couple of",
    "since",
    "before",
    "after",
    "until",
    "you slept",
    "woke up",
    "Monday",
    "May",
    "march",
    "8",
    "2023",
    "05/08/2023",
    "9999",
    "0",
    "the",
    "of",
    "in",
    "past",
    ",",
]
_TEXTS = st.one_of(st.text(), st.lists(st.sampled_from(_FRAGMENTS), max_size=12).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    now=st.datetimes(
        min_value=datetime(1900, 1, 1),  # naive bounds, UTC attached below
        max_value=datetime(2200, 1, 1),
        timezones=st.just(UTC),
    ),
    tz=st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Pacific/Kiritimati"]),
    week_mode=st.sampled_from(["rolling", "calendar"]),
)
def test_resolve_never_raises_on_any_text(
    text: str, now: datetime, tz: str, week_mode: str
) -> None:
    windows = find_windows(text, now, tz, SLEEP, week_mode)  # type: ignore[arg-type]
    for window in windows:
        if window.start is not None and window.end is not None:
            assert window.start <= window.end
        assert window.phrase and window.phrase in text
    best = resolve(text, now, tz, SLEEP, week_mode)  # type: ignore[arg-type]
    assert (best is None) == (windows == [])


def test_rolling_windows_end_now() -> None:
    for text in ["last week", "in the last 3 days", "recently", "since Monday"]:
        window = resolve(text, NOW)
        assert window is not None
        assert window.end == NOW
        assert window.start is not None and window.start <= NOW - timedelta(days=2)


def test_a_weekday_someone_owns_is_a_habit_not_a_day() -> None:
    """ "my Sunday group rides" are every Sunday's: a window of last Sunday would hide all
    but one of them (a LongMemEval question came back with an empty context)."""
    asked = "My bike seems to be performing better during my Sunday group rides. Why?"
    assert resolve(asked, NOW) is None
    assert resolve("Their Friday standup ran long.", NOW) is None
    assert resolve("I rode on Sunday.", NOW) == TimeWindow(
        z("2026-11-15T00:00"), z("2026-11-16T00:00"), "on Sunday", "weekday"
    )
    assert resolve("my last Sunday ride", NOW) is not None  # "last" names the day


def test_every_weekday_and_weekday_mornings_are_habits_not_days() -> None:
    """ "What time do I wake up on Saturday mornings?" (a LongMemEval knowledge-update
    question) asks about every Saturday: a window of last Saturday hid both answers."""
    assert resolve("What time do I wake up on Saturday mornings?", NOW) is None
    assert resolve("I jog every Saturday.", NOW) is None
    assert resolve("We have band practice on Tuesday evenings.", NOW) is None
    assert resolve("What did we do on Sunday morning?", NOW) == TimeWindow(
        z("2026-11-15T00:00"), z("2026-11-16T00:00"), "on Sunday", "weekday"
    )  # one morning: that day
    assert resolve("last Sunday evenings were fun", NOW) is not None  # "last" names the day


def test_resolve_past_only_leaves_out_windows_still_ahead() -> None:
    monday = datetime(2026, 3, 2, 12, tzinfo=UTC)
    text = "Last week you said the roof repair happens this weekend."
    assert resolve(text, monday).phrase == "this weekend"  # the shorter window wins
    past = resolve(text, monday, past_only=True)
    assert past is not None and past.phrase == "Last week"
    assert resolve("What's the plan for this weekend?", monday, past_only=True) is None
    saturday = monday + timedelta(days=5, hours=1)
    begun = resolve("What's the plan for this weekend?", saturday, past_only=True)
    assert begun is not None and begun.contains(saturday) and not begun.ahead(saturday)
    assert TimeWindow(None, monday, "before you slept", "before_sleep").ahead(monday) is False
