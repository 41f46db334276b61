"""The one over-fetch / grow / exact-scan loop (graph/overfetch.py), against a fake index: a
list of rows where only some pass the filters, as an index shared by many namespaces."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from graph.overfetch import Page, PagedQuery, Plan, overfetch, seeded


@dataclass
class FakeIndex:
    """Rows best first; ``mine`` says which pass the filters. Records every fetch asked."""

    rows: list[str]
    mine: set[str]
    asked: list[int] = field(default_factory=list)
    scans: int = 0

    def page(self, fetch: int) -> Page[str]:
        self.asked.append(fetch)
        got = self.rows[:fetch]
        return Page(len(got), [r for r in got if r in self.mine])

    def exact(self) -> list[str]:
        self.scans += 1
        return [r for r in self.rows if r in self.mine]


def crowded(noise: int, mine_at: list[int]) -> FakeIndex:
    """``noise`` rows of another namespace with our rows at the given positions."""
    rows = [f"other-{i}" for i in range(noise)]
    for n, pos in enumerate(mine_at):
        rows.insert(pos, f"mine-{n}")
    return FakeIndex(rows, {r for r in rows if r.startswith("mine")})


def test_enough_hits_in_the_first_page_stop_at_once() -> None:
    index = crowded(100, [0, 1, 2])
    found = overfetch(2, Plan(first=10), index.page, index.exact)
    assert (found.hits, found.source, found.rounds) == (["mine-0", "mine-1", "mine-2"], "index", 1)
    assert index.asked == [10] and index.scans == 0


def test_a_short_page_grows_until_the_filters_keep_enough() -> None:
    index = crowded(1000, [5, 300, 700])
    found = overfetch(3, Plan(first=10, grow=4, limit=10_000), index.page)
    assert index.asked == [10, 40, 160, 640, 2560]
    assert found.hits == ["mine-0", "mine-1", "mine-2"] and found.complete


def test_an_exhausted_index_stops_without_growing_further() -> None:
    index = crowded(20, [3])
    found = overfetch(5, Plan(first=10), index.page, index.exact)
    assert index.asked == [10, 40] and found.hits == ["mine-0"]
    assert found.complete and found.source == "index" and index.scans == 0


def test_past_the_limit_the_exact_scan_answers() -> None:
    index = crowded(5000, [4500])
    found = overfetch(1, Plan(first=10, grow=4, limit=1000), index.page, index.exact)
    assert index.asked == [10, 40, 160, 640, 1000]
    assert (found.hits, found.source, found.complete, index.scans) == (["mine-0"], "scan", True, 1)


def test_a_single_round_plan_goes_straight_to_the_scan() -> None:
    index = crowded(500, [450])
    found = overfetch(1, Plan(first=50, grow=1), index.page, index.exact)
    assert index.asked == [50] and found.source == "scan" and found.hits == ["mine-0"]


def test_without_a_scan_what_was_kept_is_returned_as_incomplete() -> None:
    index = crowded(5000, [1, 4800])
    found = overfetch(2, Plan(first=10, limit=100), index.page)
    assert found.hits == ["mine-0"] and not found.complete and found.source == "index"


def test_a_page_that_read_the_whole_namespace_is_complete_however_full() -> None:
    # a small namespace read whole (graph/messages.py MESSAGE_EXACT_MAX): more rows than the
    # pool and than the fetch asked for, and still every one of them, ranked as a whole
    whole = [f"mine-{i}" for i in range(450)]
    asked: list[int] = []

    def page(fetch: int) -> Page[str]:
        asked.append(fetch)
        return Page(len(whole), whole, complete=True)

    found = overfetch(400, Plan(first=400), page)
    assert asked == [400] and found.hits == whole and found.complete
    truncated = overfetch(400, Plan(first=400), lambda n: Page(n, whole[:n]))
    assert len(truncated.hits) == 400 and not truncated.complete


def test_a_plan_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Plan(first=0)
    with pytest.raises(ValueError):
        Plan(first=10, grow=0)


@pytest.mark.parametrize("mine_at", [[0, 1, 2], [5, 30, 90], [150]])
def test_a_first_page_read_beforehand_continues_as_if_fetched_here(mine_at: list[int]) -> None:
    """A page read in a query of its own (``graph/context.py``) seeds the loop: the same hits,
    and only the pages after the first are asked for (none when the first sufficed)."""
    search = PagedQuery({}, Plan(first=8, limit=200))
    alone, ahead = crowded(100, mine_at), crowded(100, mine_at)
    expected = overfetch(3, search.plan, alone.page)
    first = ahead.page(search.first_fetch)
    ahead.asked.clear()
    got = overfetch(3, search.plan, seeded(ahead.page, first, search.first_fetch))
    assert got == expected
    assert ahead.asked == alone.asked[1:]


def test_no_first_page_leaves_the_page_function_as_it_is() -> None:
    index = crowded(10, [0])
    assert seeded(index.page, None, 8) == index.page
