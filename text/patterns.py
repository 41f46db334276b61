"""A rule written as several regular expressions, any of which fires it. Pure.

Each pattern is tried on its own, so its anchors, look-arounds and overlapping matches stay as
written (one alternation would let an earlier branch hide a later one's match). Sleep's
constraint, open-loop and correction rules (``sleepwake/extract.py``) and the memory-reference
forms (``text/cues.py``) are such rules.

``longest_first`` is the other half: a list of literal words as one alternation, the longest
tried first (so "best friend" is not read as "best" and "social worker" not cut at "social").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator


def longest_first(words: Iterable[str]) -> str:
    """``words`` as a regex alternation of literals (escaped), longer words first: a
    leftmost-first regex engine then prefers the longest word that matches at a position."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


class AnyOf:
    """Case-insensitive patterns read as one rule."""

    def __init__(self, *patterns: str) -> None:
        self.patterns = tuple(re.compile(p, re.I) for p in patterns)

    def search(self, text: str) -> bool:
        """Whether any pattern matches somewhere in ``text``."""
        return any(p.search(text) for p in self.patterns)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Every match of every pattern, pattern by pattern (they may overlap)."""
        return (m for p in self.patterns for m in p.finditer(text))
