"""Over-fetch, grow, fall back to an exact scan: the one loop behind every filtered index search.

Neo4j 5.26 cannot filter inside a vector index, and the full-text indexes filter by namespace
but not by time window, so a search asks the index for more rows than it needs, filters them,
and asks again with a larger ``fetch`` while it is short. Four stores wrote that loop by hand
with slightly different stop rules; :func:`overfetch` is the loop, and the stores only say how
to fetch one page (and, where there is one, how to score the namespace exactly instead).

Stop rules, in order:
0. the page says it holds every row of the namespace the filters accept (``Page.complete``):
   done, complete;
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
# A namespace with at most this many nodes of a label (topics, passages, skills) is scored
# exactly in Cypher and never asks the shared vector index (its query counts the namespace
# first, a seek of its namespace index stopping one past this): the exact top k, reading only
# its own nodes, so no neighbour changes its answer or its cost. Larger namespaces keep the
# over-fetched index. Set from the crossover measured by benchmarks/bench_neighbourhood.py
# --crossover (docs/performance.md, "Vector search confined before ranking").
EXACT_VECTOR_MAX = 2000


@dataclass(frozen=True)
class Page(Generic[T]):
    """One index call: ``raw`` rows came out of the index, ``hits`` passed the filters;
    ``complete``: the query read every row of the namespace the filters accept (a small
    namespace read whole, ``MESSAGE_EXACT_MAX``), whatever ``raw`` says."""

    raw: int
    hits: Sequence[T]
    complete: bool = False


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
        if got.complete or len(got.hits) >= need or got.raw < fetch:
            return Fetched(list(got.hits), "index", got.complete or got.raw < fetch, rounds)
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

    @property
    def next_fetch(self) -> int:
        """The ``fetch`` of the page ``overfetch`` asks for after a short first page (0: it
        asks for none)."""
        first = self.first_fetch
        if self.plan.grow == 1 or first >= self.plan.limit:
            return 0
        return min(first * self.plan.grow, self.plan.limit)


def seeded(
    page: Callable[[int], Page[T]],
    first: Page[T] | None,
    fetch: int,
    then: tuple[int, Page[T]] | None = None,
) -> Callable[[int], Page[T]]:
    """``page``, except that its first call for ``fetch`` rows answers ``first`` (read
    beforehand with the same parameters), so ``overfetch`` continues exactly as if it had
    fetched it itself; ``first`` None: ``page`` unchanged. ``then``: the next page, read
    beforehand too (its ``fetch`` and the page), answered when it is asked for."""
    pending = {} if first is None else {fetch: first}
    if then is not None:
        pending.setdefault(then[0], then[1])
    if not pending:
        return page

    def call(n: int) -> Page[T]:
        if n in pending:
            return pending.pop(n)
        return page(n)

    return call
