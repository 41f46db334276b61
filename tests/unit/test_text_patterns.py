"""``text.patterns``: several patterns read as one rule (``AnyOf``), literal words as one
alternation (``longest_first``)."""

from __future__ import annotations

import re

from text.patterns import AnyOf, longest_first


def test_any_pattern_fires_case_insensitively() -> None:
    rule = AnyOf(r"^remember\b", r"\blast\s+time\b")
    assert rule.search("Remember the lake?")
    assert rule.search("as we said LAST time")
    assert not rule.search("I remember the lake")  # the anchor holds per pattern


def test_finditer_keeps_each_patterns_matches_even_when_they_overlap() -> None:
    rule = AnyOf(r"\byou\s+said\b", r"\bsaid\s+it\b")
    found = [(m.start(), m.group(0)) for m in rule.finditer("you said it twice")]
    # one alternation would have consumed "said" in the first match and lost the second
    assert found == [(0, "you said"), (4, "said it")]


def test_longest_first_prefers_the_longer_word_at_a_position() -> None:
    words = ("best", "best friend", "friend")  # the short one first, as a caller may list them
    found = re.search(rf"my (?:{longest_first(words)})", "my best friend moved")
    assert found is not None and found.group(0) == "my best friend"


def test_longest_first_matches_words_literally() -> None:
    pattern = re.compile(rf"^(?:{longest_first(['a.m.', 'km/h'])})$")
    assert pattern.match("a.m.") and pattern.match("km/h")
    assert not pattern.match("axmx")  # the dots are not wildcards
