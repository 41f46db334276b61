"""The time a query names itself ("What did Audrey eat on October 24, 2023?") in topic search:
a preference for topics with something said then, never a filter (retrieval/search.py
``TopicSearch.said_in_window``, service/topics.py ``TopicService.search``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from retrieval.search import SearchResult, TopicSearch
from service.topics import TopicService
from service.windows import WindowResolver
from tests.fakes import FakeStores
from tests.unit.test_topic_search_unit import NOW, NS, Lookup, axis, ids, make
from text.timephrases import TimeWindow

LAST_WEEK = TimeWindow(NOW - timedelta(days=7), NOW, "last week", "relative")


def fact(text: str, days_ago: float, **extra: Any) -> dict[str, Any]:
    return {"text": text, "at": NOW - timedelta(days=days_ago), "source_message_ids": ["m"],
            **extra}  # fmt: skip


def stores(**retracted: Any) -> FakeStores:
    """Two dinner topics seen over the whole month: the nearer one had nothing said last week
    (``retracted``: the other's fact of last week, say ``invalid_at``, is no longer true)."""
    fake = FakeStores()
    old = make("plans", "Dinner plans", "Where to eat", 1, facts=[fact("We booked Luigi's", 20)])
    new = make("recipes", "Dinner recipes", "What to cook", 1,
               facts=[fact("I cooked a risotto", 3, **retracted)])  # fmt: skip
    for t in (old, new):
        t.time.first_seen_at = NOW - timedelta(days=25)
    fake.topics.create([old, new], [axis(1, 0, 0), axis(0.8, 0.6, 0)], NOW - timedelta(days=25))
    return fake


def engine(fake: FakeStores) -> TopicSearch:
    return TopicSearch(fake.topics, fake.events, Lookup({"dinner": axis(1, 0, 0)}))


def test_a_topic_with_a_fact_said_in_the_named_time_ranks_first_and_nothing_is_dropped() -> None:
    fake = stores()
    assert ids(engine(fake).run(NS, "dinner", NOW, k=4).hits) == ["plans", "recipes"]
    named = engine(fake).run(NS, "dinner", NOW, k=4, named=LAST_WEEK)
    assert ids(named.hits) == ["recipes", "plans"]
    assert named.hits[0].components["said_in_window_boost"] == 2.0
    assert "said_in_window_boost" not in named.hits[1].components
    assert all(h.components["time_window_boost"] == 1.0 for h in named.hits)


def test_an_open_named_time_or_a_retracted_fact_boosts_nothing() -> None:
    fake = stores()
    before = TimeWindow(None, NOW - timedelta(days=10), "before the 20th", "before_explicit_date")
    assert ids(engine(fake).run(NS, "dinner", NOW, k=4, named=before).hits)[0] == "plans"
    assert engine(fake).said_in_window(_pool(fake, LAST_WEEK), ["plans", "recipes"]) == {"recipes"}
    fake = stores(invalid_at=NOW - timedelta(days=1))
    assert engine(fake).said_in_window(_pool(fake, LAST_WEEK), ["plans", "recipes"]) == set()


def test_a_topic_without_facts_counts_by_when_it_was_seen() -> None:
    fake = FakeStores()
    fake.topics.create([make("office", "Office party", "The Christmas party", 20),
                        make("garden", "Garden party", "Ana's birthday", 3)],
                       [axis(0.8, 0.6, 0), axis(1, 0, 0)], NOW - timedelta(days=30))  # fmt: skip
    earlier = TimeWindow(NOW - timedelta(days=25), NOW - timedelta(days=15), "then", "month")
    assert engine(fake).said_in_window(_pool(fake, earlier), ["office", "garden"]) == {"office"}
    party = TopicSearch(fake.topics, fake.events, Lookup({"party": axis(1, 0, 0)}))
    assert ids(party.run(NS, "party", NOW, k=2).hits) == ["garden", "office"]
    assert ids(party.run(NS, "party", NOW, k=2, named=earlier).hits) == ["office", "garden"]


def _pool(fake: FakeStores, named: TimeWindow) -> Any:
    pool = engine(fake).pool(NS, "dinner", NOW, 4, None, axis(1, 0, 0))
    pool.named = named
    return pool


class Recorder:
    """A searcher that records how the service called it."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def run(self, namespace: str, text: str, now: datetime, **kw: Any) -> SearchResult:
        self.calls.append(kw)
        return SearchResult([])


def test_the_service_passes_the_querys_own_date_as_named_and_a_requested_window_as_window() -> None:
    fake = stores()
    recorder = Recorder()
    windows = WindowResolver(fake.sleep)
    service = TopicService(fake.topics, fake.events, recorder, None, windows, None)  # type: ignore[arg-type]
    now = datetime(2023, 11, 24, tzinfo=UTC)
    found = service.search(NS, "What did Audrey eat on October 24, 2023?", now, 8, None)
    call = recorder.calls[-1]
    assert call["window"] is None
    assert call["named"].start == datetime(2023, 10, 24, tzinfo=UTC)
    assert found.window == call["named"]
    service.search(NS, "What did Audrey eat?", now, 8, LAST_WEEK)
    assert recorder.calls[-1]["window"] == LAST_WEEK and recorder.calls[-1]["named"] is None
