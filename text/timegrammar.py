"""The grammar of time phrases: one set of word lists and one table of phrase patterns that
both readers of time use. Pure: no I/O, no dates.

- Detection (:meth:`TimeGrammar.spans`, behind ``text.english.time_spans``) says *where* a
  message talks about time. Sleep leaves those words out of names and facts; retrieval's
  triggers read them.
- Resolution (``text.timephrases.find_windows``) turns a phrase into a UTC window; each
  :class:`Phrase` it reads names its *family*, the handler in ``text.timewindows`` that
  computes the window.

A phrase is one :class:`Phrase` row in :data:`PHRASES`; its ``detect`` and ``family`` say
which reader takes it. A new phrase is one row (both readers see it when it has a family and
``detect`` stays true); a new word (a month, a count) is one edit to a word list below.

Patterns carry no outer word boundary: detection reads a phrase between non-word characters,
resolution also treats "/" as part of a word (so "5/8" inside "15/8/2020" is not a date).
Every pattern is linear in its input (docs/security.md, "Adversarial input").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from text.spans import Span, select_spans

__all__ = [
    "GRAMMAR",
    "MONTHS",
    "MONTH_ABBREVIATIONS",
    "MONTH_WORDS",
    "NUMBER_WORDS",
    "PARTS_OF_DAY",
    "PHRASES",
    "WEEKDAYS",
    "Phrase",
    "TimeGrammar",
]

# --- word lists ---------------------------------------------------------------------------

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
MONTH_ABBREVIATIONS = (
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sept",
    "sep",
    "oct",
    "nov",
    "dec",
)
NUMBER_WORDS = {
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
FUZZY_COUNTS = {"couple": (2, 3), "few": (2, 5), "several": (3, 8)}
# Parts of a day as local hours [first, last).
PARTS_OF_DAY = {"morning": (5, 12), "afternoon": (12, 18), "evening": (18, 24)}
# Calendar periods a phrase can name ("last week", "this weekend").
PERIODS = ("week", "weekend", "month", "year")
# Units a count can measure ("3 days ago", "the past two years").
UNITS = ("hour", "day", "week", "month", "year")
_SEASONS = ("summer", "winter", "spring", "fall", "autumn", "semester", "quarter", "season")


def _any(words: Iterable[str]) -> str:
    return "|".join(words)


# --- fragments ----------------------------------------------------------------------------

_COUNT_WORDS = _any(w for w in NUMBER_WORDS if len(w) > 2)  # one .. twelve
_SMALL_COUNTS = _any(w for w, n in NUMBER_WORDS.items() if 2 <= n <= 10)  # two .. ten
_VAGUE_COUNT = r"a\s+couple\s+of|a\s+couple|couple\s+of|a\s+few|few|several"
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
_DAY_PART = rf"(?:{_any(PARTS_OF_DAY)}|night)"
# detection: a month is capitalised (a lower-case "may", "march" is a verb too)
_MONTH_NAME = rf"(?-i:{_any(w.capitalize() for w in MONTHS + MONTH_ABBREVIATIONS)})"
_WEEKDAY_NAME = rf"(?:{_any(WEEKDAYS)})s?"
_PART = rf"(?:{_any((*PARTS_OF_DAY, 'night', *PERIODS, *_SEASONS))})"
_SPAN_UNIT = rf"(?:second|minute|{_any(UNITS)}|decade)s?"
_QUANTITY = rf"(?:\d+|an?|{_COUNT_WORDS}|{_VAGUE_COUNT})"
# resolution: any case, the handler decides whether a lower-case month word is a month
_NUM = rf"\d{{1,4}}|{_COUNT_WORDS}|{_VAGUE_COUNT}|an|a"
_UNIT = rf"(?P<unit>{_any(UNITS)})s?"
_WD = _any(WEEKDAYS)
MONTH_WORDS = _any(MONTHS + MONTH_ABBREVIATIONS)  # an alternation: any month name
_MON_DOT = rf"(?:{MONTH_WORDS})\b\.?"
_YOU = r"(?:you|we|i)"


@dataclass(frozen=True)
class Phrase:
    """One phrase pattern (case-insensitive, no outer word boundary).

    ``family`` names the resolution handler that turns a match into a window (``None``: the
    phrase is only detected); ``detect`` says whether detection reads it. Among resolution
    phrases, an earlier row wins a tie between overlapping matches of the same length."""

    pattern: str
    family: str | None = None
    detect: bool = True


_RESOLVED: tuple[Phrase, ...] = tuple(
    Phrase(pattern, family, detect=False)
    for family, pattern in (
        (
            "before_sleep",
            rf"before\s+(?:{_YOU}\s+(?:last\s+)?(?:slept|went\s+to\s+(?:sleep|bed)|fell\s+asleep)"
            r"|(?:your\s+|the\s+|last\s+)?sleep(?:ing)?)",
        ),
        (
            "after_sleep",
            rf"(?:since|after)\s+{_YOU}\s+(?:last\s+)?(?:slept|went\s+to\s+(?:sleep|bed))",
        ),
        (
            "since_wake",
            rf"(?:since|after)\s+(?:{_YOU}\s+)?(?:last\s+)?(?:woke|wake|waking|awoke)(?:\s+up)?",
        ),
        (
            "since_last_talk",
            rf"since\s+(?:{_YOU}\s+last\s+(?:talked|spoke|chatted)"
            rf"|(?:the\s+)?last\s+time(?:\s+{_YOU}\s+(?:talked|spoke|chatted))?"
            r"|our\s+last\s+(?:conversation|chat|session|talk))",
        ),
        ("day", r"today|yesterday|the\s+day\s+before\s+yesterday"),
        ("part_of_day", rf"(?P<which>this|yesterday)\s+(?P<part>{_any(PARTS_OF_DAY)})"),
        ("night", r"last\s+night|tonight"),
        ("period", rf"(?P<which>last|previous|this)\s+(?P<unit>{_any(PERIODS)})"),
        ("n_ago", rf"(?P<n>{_NUM})\s+{_UNIT}\s+ago"),
        (
            "past_n",
            r"(?:(?:in|over|during|within|for)\s+)?"
            rf"(?:(?:the\s+)?(?:last|past)\s+(?P<n>{_NUM})\s+|(?:the\s+(?:last|past)|past)\s+)"
            rf"{_UNIT}",
        ),
        ("vague", r"the\s+other\s+day|recently|lately"),
        ("weekday", rf"(?:(?P<mod>last|past|previous|this|next|on)\s+)?(?P<wd>{_WD})"),
        (
            "month",
            rf"(?:(?P<mod>in|during|last|this|next)\s+)?(?P<month>{MONTH_WORDS})"
            r"(?:\s+(?P<year>\d{4}))?",
        ),
        (
            "explicit_date",
            rf"(?:(?:on\s+)?(?:{_WD}),?\s+)?(?:on\s+)?(?P<date>\d{{4}}-\d{{1,2}}-\d{{1,2}}"
            r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"
            rf"|(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?{_MON_DOT}(?:,?\s+\d{{4}})?"
            rf"|{_MON_DOT}\s+(?:the\s+)?{_ORDINAL}(?:,?\s+\d{{4}})?)"
            r"(?:T\d{1,2}(?::\d{2}){0,2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?",  # ISO time: ignored
        ),
    )
)
_DETECTED: tuple[Phrase, ...] = tuple(
    Phrase(pattern)
    for pattern in (
        r"(?:the\s+)?day\s+(?:before|after)\s+(?:yesterday|tomorrow)",
        rf"(?:earlier|later)\s+(?:today|this\s+{_PART})",
        rf"(?:yesterday|today|tonight|tomorrow)(?:\s+{_DAY_PART})?",
        r"last\s+night",
        r"(?:(?:this|that)\s+(?:past|coming)|last|next|this|that|past|coming|every|"
        r"(?:the\s+)?(?:following|previous))\s+"
        rf"(?:{_PART}|{_WEEKDAY_NAME}|{_MONTH_NAME})",
        rf"(?:on\s+)?{_WEEKDAY_NAME}(?:\s+{_DAY_PART})?",
        rf"(?:on\s+)?(?:the\s+)?(?:{_ORDINAL}\s+(?:of\s+)?{_MONTH_NAME}"
        rf"|{_MONTH_NAME}\s+{_ORDINAL}(?!\d))(?:,?\s+\d{{4}})?",
        rf"(?:in|since|by|until|till|from|during|early|late|mid|back\s+in)[\s-]+{_MONTH_NAME}"
        rf"(?:\s+{_ORDINAL}(?!\d))?(?:,?\s+\d{{4}})?",
        rf"{_MONTH_NAME}\s+\d{{4}}",
        r"(?:in|since|by|until|till|from|during|around|before|after|back\s+in)\s+(?:the\s+)?"
        r"(?:early\s+|late\s+|mid[\s-]+)?(?:19|20)\d\d(?:'?s)?",
        r"the\s+'?\d0'?s",
        r"\d{4}-\d{2}-\d{2}",
        r"\d{1,2}/\d{1,2}/\d{2,4}",
        rf"{_QUANTITY}\s+{_SPAN_UNIT}\s+(?:ago|later|earlier|back)",
        rf"(?:in|within|for|after|over)\s+(?:the\s+(?:next|past|last|coming)\s+)?{_QUANTITY}\s+"
        rf"{_SPAN_UNIT}",
        rf"(?:the\s+)?(?:last|past|next|coming)\s+(?:few|couple(?:\s+of)?|\d+|{_SMALL_COUNTS})\s+"
        rf"{_SPAN_UNIT}",
        r"(?:at\s+)?\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)",
        r"at\s+\d{1,2}:\d{2}",
        r"the\s+other\s+day|recently|lately|a\s+while\s+(?:ago|back)|(?:long|ages)\s+ago|"
        r"these\s+days|nowadays|(?:over|on|during)\s+the\s+weekend",
    )
)
PHRASES: tuple[Phrase, ...] = _RESOLVED + _DETECTED


class TimeGrammar:
    """:data:`PHRASES` compiled for both readers. :data:`GRAMMAR` is the one in use; a test
    or an experiment builds another with :meth:`extended`."""

    def __init__(self, phrases: Iterable[Phrase]) -> None:
        self.phrases = tuple(phrases)
        self._detectors = tuple(
            re.compile(rf"(?<!\w)(?:{p.pattern})(?!\w)", re.IGNORECASE)
            for p in self.phrases
            if p.detect
        )
        self.resolvers = tuple(
            (p.family, re.compile(rf"(?<![\w/])(?:{p.pattern})(?![\w/])", re.IGNORECASE))
            for p in self.phrases
            if p.family is not None
        )
        # a sleep asks for the spans of each sentence many times over (phrases, numbers,
        # facts), and twenty expressions per sentence add up on answers of thousands of chars
        self._cached_spans = lru_cache(maxsize=4096)(self._find_spans)

    def extended(self, *phrases: Phrase) -> TimeGrammar:
        """This grammar with ``phrases`` added after its own."""
        return TimeGrammar((*self.phrases, *phrases))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The (start, end) offsets of the time phrases in ``text``, longest first, no
        overlaps, in text order."""
        return list(self._cached_spans(text))

    def resolver_matches(self, text: str) -> Iterator[tuple[int, str, Iterator[re.Match[str]]]]:
        """For each resolution phrase in priority order: (priority, family, its matches)."""
        for priority, (family, pattern) in enumerate(self.resolvers):
            yield priority, family, pattern.finditer(text)

    def _find_spans(self, text: str) -> tuple[tuple[int, int], ...]:
        candidates = [
            Span(0, m.start(), m.end(), m.group(0))
            for p in self._detectors
            for m in p.finditer(text)
        ]
        return tuple((s.start, s.end) for s in select_spans(candidates))


GRAMMAR = TimeGrammar(PHRASES)
