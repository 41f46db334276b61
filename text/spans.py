"""Non-overlapping text spans, for "longest match wins" selection over many matches. Pure.

Text rules (time phrases, noun phrases) collect every match and keep the best ones that do not
overlap. Checking each candidate against every kept span is quadratic in the number of matches,
which an adversarial text makes large ("today " x 5,000); :class:`DisjointSpans` keeps the kept
spans sorted, so a check is two neighbour comparisons and selection is O(k log k).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["DisjointSpans", "Span", "select_spans"]


class DisjointSpans:
    """Pairwise non-overlapping half-open ``[start, end)`` spans, kept sorted by start."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in sorted(spans):
            self._starts.append(start)
            self._ends.append(end)

    def __len__(self) -> int:
        return len(self._starts)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` overlaps a kept span, i.e. ``start < e and s < end`` for
        some kept ``[s, e)``. Only the neighbours can: the kept spans are disjoint and sorted."""
        i = bisect_right(self._starts, start)
        before = i > 0 and self._ends[i - 1] > start
        after = i < len(self._starts) and self._starts[i] < end
        return before or after

    def add(self, start: int, end: int) -> None:
        """Keep ``[start, end)``; the caller has checked that it overlaps nothing kept."""
        i = bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


class Span(NamedTuple):
    """A candidate match: its priority (higher wins), offsets and surface text."""

    priority: int
    start: int
    end: int
    surface: str


def select_spans(spans: Iterable[Span]) -> list[Span]:
    """Best non-overlapping spans: higher priority first, then longer, then earlier."""
    chosen: list[Span] = []
    taken = DisjointSpans()
    for span in sorted(spans, key=lambda s: (-s.priority, s.start - s.end, s.start)):
        if not taken.overlaps(span.start, span.end):
            taken.add(span.start, span.end)
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)
