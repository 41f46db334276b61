"""Extraction of numbers with a short key and a unit ("a context window of 8k tokens" ->
context window = 8000 tokens), bounded windows either side of each number. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from sleepwake.extract_models import NumberMention
from text.english import MODIFIERS, STOPWORDS, UNITS, strip_possessive, time_spans, word_set
from text.patterns import longest_first
from text.spans import DisjointSpans

_CURRENCY = {"$": "USD", "\u20ac": "EUR", "\u00a3": "GBP"}
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9}
_UNIT_ALT = longest_first(UNITS)
_NUMBER = re.compile(
    r"(?<![\w.,/:#$\u20ac\u00a3-])(?P<cur>[$\u20ac\u00a3])?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(?P<frac>\d+))?"
    r"(?P<mult>(?-i:[kKMB])(?![\w])|bn(?![\w])|\s+(?:thousand|million|billion)\b)?"
    rf"(?:\s?(?P<unit>{_UNIT_ALT})(?![\w]))?",
    re.I,
)
_UNIT_KEYS = {
    **dict.fromkeys(("USD", "EUR", "GBP"), "cost"),
    **dict.fromkeys(
        ("ms", "seconds", "minutes", "hours", "days", "weeks", "months", "years"), "duration"
    ),
    **dict.fromkeys(("kg", "g", "mg", "lb", "oz"), "weight"),
    **dict.fromkeys(("km", "miles", "m", "cm", "ft"), "distance"),
    "%": "percentage",
}
_LABELS = word_set(
    """
    port version v room step page line issue pr ticket bug chapter level floor gate flight bus
    route build release phase sprint table row column item option number episode season gen
    generation python node postgres neo4j model gpt grade size
    """
)
_HEDGES = re.compile(
    r"(?<!\s)(?:\s++(?:about|around|roughly|approximately|approx|only|just|exactly|at\s+least|at\s+most|"
    r"up\s+to|under|over|nearly|almost|like|~))+\s*+$",
    re.I,
)
_LINK = re.compile(
    r"(?<!\s)(?:\s++(?:is|was|are|were|of|to|be|becomes?|equals?|costs?|weighs?|takes?|lasts?|hits?|"
    r"reached|reaches|set\s+to|now)|\s*+[=:~])\s*+$",
    re.I,
)
_TAIL_WORDS = re.compile(r"((?:[^\W_][\w'-]*+\s++){0,3}[^\W_][\w'-]*+)\s*+$")
_LABEL_BEFORE = re.compile(r"([^\W\d_][\w-]*+)\s*+#?\s*+$")
_AFTER_WORDS = re.compile(
    r"^\s*(?:(?:of|for|on)\s+)?(?:(?:the|my|our|your|a|an|his|her|their)\s+)?"
    r"([^\W_][\w'-]*(?:\s+[^\W_][\w'-]*)?)",
    re.I,
)


_KEY_WINDOW = 60  # characters either side of a number searched for its key


def _content_words(words: Iterable[str]) -> Iterator[str]:
    for word in words:
        low = strip_possessive(word).lower()
        if low in STOPWORDS or low in MODIFIERS or not any(c.isalpha() for c in low):
            return
        yield low


def _key_before(before: str) -> str | None:
    """ "the context window is [about] N" -> "context window"."""
    head = _HEDGES.sub("", before)
    link = _LINK.search(head)
    tail = _TAIL_WORDS.search(head[: link.start()]) if link else None
    if tail is None:
        return None
    words = list(_content_words(reversed(tail.group(1).split())))[:3]
    return " ".join(reversed(words)) or None


def _key_label(before: str) -> str | None:
    """ "port 7687", "PR 42", "Python 3" -> the label word."""
    m = _LABEL_BEFORE.search(before)
    if m is None:
        return None
    word = m.group(1)
    acronym = word.isupper() and len(word) >= 2
    return word.lower() if word.lower() in _LABELS or acronym else None


def _key_after(after: str) -> str | None:
    """ "N kg of flour" -> "flour", "N token context window" -> "context window"."""
    m = _AFTER_WORDS.match(after)
    if m is None:
        return None
    return " ".join(_content_words(m.group(1).split())) or None


def _number_value(m: re.Match[str]) -> float:
    value = float(m["num"].replace(",", "") + (f".{m['frac']}" if m["frac"] else ""))
    mult = (m["mult"] or "").strip().lower()
    return value * _MULTIPLIERS.get(mult[:1] if mult in ("k", "m", "b") else mult, 1.0)


def numbers_in(sentence: str) -> Iterator[NumberMention]:
    busy = DisjointSpans(time_spans(sentence))
    for m in _NUMBER.finditer(sentence):
        nxt = sentence[m.end() : m.end() + 2]
        if nxt[:1].isalnum() or re.match(r"[-/:.]\d", nxt):
            continue
        unit = _CURRENCY.get(m["cur"] or "") or UNITS.get((m["unit"] or "").lower())
        if unit is None and busy.overlaps(m.start(), m.end()):
            continue
        before = sentence[max(0, m.start() - _KEY_WINDOW) : m.start()]
        after = sentence[m.end() : m.end() + _KEY_WINDOW]
        key = _key_before(before) or _key_label(before) or _key_after(after)
        key = key or _UNIT_KEYS.get(unit or "", unit or "number")
        yield NumberMention(key=key, value=_number_value(m), unit=unit, text=sentence)
