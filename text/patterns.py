"""A rule written as several regular expressions, any of which fires it. Pure.

Each pattern is tried on its own, so its anchors, look-arounds and overlapping matches stay as
written (one alternation would let an earlier branch hide a later one's match). Sleep's
constraint, open-loop and correction rules (``sleepwake/extract.py``) and the memory-reference
forms (``text/cues.py``) are such rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


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
