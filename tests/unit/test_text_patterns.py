"""``text.patterns.AnyOf``: several patterns read as one rule."""

from __future__ import annotations

from text.patterns import AnyOf


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
