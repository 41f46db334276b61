"""Over-fetch, grow, fall back to an exact scan: the one loop behind every filtered index search.

Neo4j 5.26 cannot filter inside a vector index, and the full-text indexes filter by namespace
but not by time window, so a search asks the index for more rows than it needs, filters them,
and asks again with a larger ``fetch`` while it is short. Four stores wrote that loop by hand
with slightly different stop rules; :func:`overfetch` is the loop, and the stores only say how
to fetch one page (and, where there is one, how to score the namespace exactly instead).

Stop rules, in order:
1. the filters kept ``need`` rows: done;
2. the index returned fewer rows than asked (``raw < fetch``): it has nothing more, done;
3. ``fetch`` reached ``plan.limit`` (or the plan does not grow): run ``exact`` when given (an
   exact scan of the namespace cannot miss), else return what was kept;
4. otherwise ``fetch *= plan.grow`` and ask again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MAX_FETCH = 10_000


@dataclass(frozen=True)
class Page(Generic[T]):
    """One index call: ``raw`` rows came out of the index, ``hits`` passed the filters."""

    raw: int
    hits: Sequence[T]


@dataclass(frozen=True)
class Plan:
    """How to over-fetch: the first ``fetch``, the growth factor per round (1 = one round
    only) and the largest ``fetch`` ever asked for."""

    first: int
    grow: int = 4
    limit: int = MAX_FETCH

    def __post_init__(self) -> None:
        if self.first < 1 or self.grow < 1 or self.limit < 1:
            raise ValueError("first, grow and limit must be positive")


@dataclass(frozen=True)
class Fetched(Generic[T]):
    """The rows found; ``source`` is "index" or "scan"; ``complete`` is true when every row
    the filters accept was seen (the index ran dry or the exact scan ran)."""

    hits: list[T]
    source: str
    complete: bool
    rounds: int


def overfetch(
    need: int,
    plan: Plan,
    page: Callable[[int], Page[T]],
    exact: Callable[[], Sequence[T]] | None = None,
) -> Fetched[T]:
    """Call ``page(fetch)`` with a growing ``fetch`` until ``need`` rows passed the filters or
    the index ran dry; past ``plan.limit`` use ``exact()`` if given (see the module doc)."""
    fetch = min(plan.first, plan.limit)
    rounds = 0
    while True:
        got = page(fetch)
        rounds += 1
        if len(got.hits) >= need or got.raw < fetch:
            return Fetched(list(got.hits), "index", got.raw < fetch, rounds)
        if fetch >= plan.limit or plan.grow == 1:
            break
        fetch = min(fetch * plan.grow, plan.limit)
    if exact is not None:
        return Fetched(list(exact()), "scan", True, rounds)
    return Fetched(list(got.hits), "index", False, rounds)


@dataclass(frozen=True)
class PagedQuery:
    """One over-fetched search, ready to run: its query file's parameters (``$fetch`` aside)
    and its plan. A caller that reads the first page in a query of its own (several searches
    in one round trip, ``graph/context.py``) passes that page to the store with ``seeded``."""

    params: dict[str, Any]
    plan: Plan

    @property
    def first_fetch(self) -> int:
        """The ``fetch`` of the first page ``overfetch`` asks for."""
        return min(self.plan.first, self.plan.limit)


def seeded(
    page: Callable[[int], Page[T]], first: Page[T] | None, fetch: int
) -> Callable[[int], Page[T]]:
    """``page``, except that its first call for ``fetch`` rows answers ``first`` (read
    beforehand with the same parameters), so ``overfetch`` continues exactly as if it had
    fetched it itself; ``first`` None: ``page`` unchanged."""
    if first is None:
        return page
    pending = [first]

    def call(n: int) -> Page[T]:
        if pending and n == fetch:
            return pending.pop()
        return page(n)

    return call
