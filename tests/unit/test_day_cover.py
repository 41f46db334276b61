"""A time window inside the full-text indexes (graph/fulltext.py): the UTC days, months and years
that cover a window and the tokens a message is indexed by; the months and days a topic's span is
indexed by and those a window asks for."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta, timezone

from graph.fulltext import (
    MAX_WINDOW_CLAUSES,
    day_cover,
    day_tokens,
    in_span,
    in_window,
    span_cover,
    span_tokens,
)


def _days(token: str) -> set[date]:
    """The UTC days a cover token stands for."""
    kind, digits = token[0], token[1:]
    year = int(digits[:4])
    if kind == "y":
        first, last = date(year, 1, 1), date(year, 12, 31)
    elif kind == "m":
        month = int(digits[4:6])
        first = date(year, month, 1)
        last = (date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)) - timedelta(1)
    else:
        first = last = date(year, int(digits[4:6]), int(digits[6:8]))
    return {first + timedelta(days=i) for i in range((last - first).days + 1)}


def _touched(since: datetime, until: datetime) -> set[date]:
    """The UTC days holding an instant of [since, until)."""
    first = since.astimezone(UTC).date()
    last = (until.astimezone(UTC) - timedelta(microseconds=1)).date()
    return {first + timedelta(days=i) for i in range((last - first).days + 1)}


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def test_a_message_is_indexed_by_its_utc_year_month_and_day() -> None:
    assert day_tokens(_utc(2026, 2, 23, 13, 5)) == "y2026 m202602 d20260223"
    # 23:30 on the 1st in New York is the 2nd in UTC
    new_york = timezone(timedelta(hours=-5))
    assert day_tokens(datetime(2026, 3, 1, 23, 30, tzinfo=new_york)) == "y2026 m202603 d20260302"
    assert day_tokens(_utc(987, 1, 2)) == "y0987 m098701 d09870102"


def test_yesterday_is_one_day_and_the_window_end_is_left_out() -> None:
    assert day_cover(_utc(2026, 3, 1), _utc(2026, 3, 2)) == ["d20260301"]
    assert day_cover(_utc(2026, 3, 1, 9), _utc(2026, 3, 1, 10)) == ["d20260301"]
    # a day in another time zone touches two UTC days
    tokyo = timezone(timedelta(hours=9))
    assert day_cover(datetime(2026, 3, 1, tzinfo=tokyo), datetime(2026, 3, 2, tzinfo=tokyo)) == [
        "d20260228",
        "d20260301",
    ]


def test_whole_months_and_years_are_one_token_each() -> None:
    assert day_cover(_utc(2024, 2, 1), _utc(2024, 3, 1)) == ["m202402"]  # a leap February
    assert day_cover(_utc(2024, 1, 30), _utc(2024, 3, 2)) == [
        "d20240130", "d20240131", "m202402", "d20240301",
    ]  # fmt: skip
    assert day_cover(_utc(2023, 12, 31, 12), _utc(2026, 1, 1)) == [
        "d20231231", "y2024", "y2025",
    ]  # fmt: skip
    assert day_cover(_utc(2025, 11, 1), _utc(2026, 1, 1)) == ["m202511", "m202512"]


def test_an_empty_window_has_no_cover() -> None:
    assert day_cover(_utc(2026, 3, 2), _utc(2026, 3, 2)) == []
    assert day_cover(_utc(2026, 3, 2), _utc(2026, 3, 1)) == []


def test_random_windows_are_covered_exactly_by_their_days_in_few_tokens() -> None:
    rng = random.Random(7)
    base = _utc(2019, 1, 1)
    for _ in range(2000):
        since = base + timedelta(minutes=rng.randrange(0, 8 * 365 * 24 * 60))
        span = rng.choice([60, 24 * 60, 7 * 24 * 60, 40 * 24 * 60, 800 * 24 * 60])
        until = since + timedelta(minutes=rng.randrange(1, span + 1))
        cover = day_cover(since, until)
        days = [_days(t) for t in cover]
        assert set().union(*days) == _touched(since, until), (since, until, cover)
        assert sum(len(d) for d in days) == len(set().union(*days))  # no day twice
        assert len(cover) <= 31 + 11 + 8 + 11 + 31


def test_the_clause_is_added_only_for_a_closed_window_with_a_short_cover() -> None:
    q = "ns_token:nsa0^0 AND (lake)"
    assert in_window(q, _utc(2026, 3, 1, 12), _utc(2026, 3, 3)) == (
        f"at_days:(d20260301 d20260302)^0 AND {q}"
    )
    assert in_window(q, None, _utc(2026, 3, 3)) == q
    assert in_window(q, _utc(2026, 3, 1), None) == q
    assert in_window(q, _utc(2026, 3, 2), _utc(2026, 3, 2)) == q
    # 400 years is one token a year: too long a query, left to the filter after
    assert len(day_cover(_utc(1700, 1, 1), _utc(2200, 1, 1))) > MAX_WINDOW_CLAUSES
    assert in_window(q, _utc(1700, 1, 1), _utc(2200, 1, 1)) == q


def test_a_topics_span_tokens_match_a_window_exactly_when_they_share_a_utc_day() -> None:
    rng = random.Random(11)
    base = _utc(2023, 1, 1)
    for _ in range(3000):
        first = base + timedelta(minutes=rng.randrange(0, 3 * 365 * 24 * 60))
        length = rng.choice([0, 60, 3 * 24 * 60, 45 * 24 * 60, 500 * 24 * 60])
        last = first + timedelta(minutes=rng.randrange(0, length + 1))
        since = base + timedelta(minutes=rng.randrange(0, 3 * 365 * 24 * 60))
        span = rng.choice([60, 24 * 60, 7 * 24 * 60, 40 * 24 * 60, 400 * 24 * 60])
        until = since + timedelta(minutes=rng.randrange(1, span + 1))
        indexed = set(span_tokens(first, last).split())
        asked = span_cover(since, until)
        shared = _touched(first, last + timedelta(microseconds=1)) & _touched(since, until)
        assert bool(indexed & set(asked)) == bool(shared), (first, last, since, until)
        assert len(asked) <= 2 * 32 + 14


def test_span_tokens_of_one_day_and_of_months() -> None:
    assert span_tokens(_utc(2026, 2, 23, 9), _utc(2026, 2, 23, 18)) == "m202602 d20260223"
    assert span_tokens(_utc(2026, 1, 30), _utc(2026, 4, 1, 8)) == (
        "m202601 m202602 m202603 m202604 f202602 f202603 d20260130 d20260131 d20260401"
    )
    # a last seen before the first seen counts as the first (bad data never widens the span)
    assert span_tokens(_utc(2026, 2, 23), _utc(2026, 2, 1)) == "m202602 d20260223"
    assert span_cover(_utc(2026, 2, 27, 12), _utc(2026, 3, 2)) == [
        "f202602", "d20260227", "d20260228", "f202603", "d20260301",
    ]  # fmt: skip
    assert span_cover(_utc(2026, 2, 1), _utc(2026, 3, 1)) == ["m202602"]
    q = "ns_token:nsa0^0 AND (lake)"
    assert in_span(q, _utc(2026, 2, 1), _utc(2026, 3, 1)) == f"span_days:(m202602)^0 AND {q}"
    assert in_span(q, None, _utc(2026, 3, 1)) == q


def test_the_ends_of_the_calendar_are_covered_without_an_error() -> None:
    end = datetime(9999, 12, 31, 23, 59, tzinfo=UTC)
    assert day_cover(_utc(9999, 11, 30), end) == ["d99991130", "m999912"]
    assert span_cover(_utc(9999, 12, 30), end) == ["f999912", "d99991230", "d99991231"]
    assert span_tokens(_utc(9999, 11, 30), end).split()[:3] == ["m999911", "m999912", "d99991130"]
    # the whole calendar is too long a cover: the query is left to the filter after
    q = "ns_token:nsa0^0 AND (lake)"
    assert in_window(q, _utc(1, 1, 1), end) == q
    assert in_span(q, _utc(1, 1, 1), end) == q
