"""Pieces of code that serve several places: each does the one job the places shared."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from api.inspector.web import _environment
from api.schemas import SearchHitPublic
from graph.clock import FixedClock
from graph.models import Fact, OpenLoop, Topic, TopicStats, TopicTime, TypedNumber
from service.facts import FactService
from sleepwake.wake import WokenTopic

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LATER = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)


def _topic() -> Topic:
    return Topic(
        namespace="ns1",
        name="Lake trip",
        one_liner="Mel and Caroline plan a trip to the lake.",
        facts=[Fact(text="The trip is in June.", at=NOW, source_message_ids=["m1"])],
        open_loops=[OpenLoop(text="book the cabin", at=NOW, source_message_ids=["m1"])],
        numbers=[TypedNumber(key="guests", value=4, at=NOW, source_message_ids=["m1"])],
        aliases=["the lake"],
        time=TopicTime(first_seen_at=NOW, last_seen_at=LATER),
        stats=TopicStats(touch_count=3),
        version=2,
    )


def test_with_items_replaces_the_items_and_the_fields_given_and_keeps_the_rest() -> None:
    topic = _topic()
    fact = Fact(text="The cabin is booked.", at=LATER, source_message_ids=["m2"])
    time = topic.time.model_copy(update={"last_seen_at": LATER})
    out = topic.with_items([fact], [], topic.numbers, ["cabin"], one_liner="Booked.", time=time)
    assert out.facts == [fact] and out.open_loops == [] and out.aliases == ["cabin"]
    assert out.numbers == topic.numbers and out.one_liner == "Booked." and out.time == time
    assert (out.topic_id, out.name, out.version, out.stats) == (
        topic.topic_id, topic.name, topic.version, topic.stats,
    )  # fmt: skip
    assert topic.facts[0].text == "The trip is in June."  # the original is not changed
    assert topic.aliases == ["the lake"] and topic.one_liner.startswith("Mel")


def test_a_search_hit_and_a_woken_topic_summarise_a_topic_alike() -> None:
    topic = _topic()
    hit = SearchHitPublic.of(topic, 0.7, components={"text": 0.7}, sources=["text"], reason="r")
    woken = WokenTopic.of(topic, 0.4, reason="recent", source_message_ids=["m1"])
    shared = ["topic_id", "name", "one_liner", "first_seen_at", "last_seen_at", "score"]
    assert list(SearchHitPublic.model_fields) == [*shared, "components", "sources", "reason"]
    assert list(WokenTopic.model_fields) == [*shared, "reason", "source_message_ids"]
    for summary, score in ((hit, 0.7), (woken, 0.4)):
        assert (summary.topic_id, summary.name, summary.one_liner) == (
            topic.topic_id, "Lake trip", topic.one_liner,
        )  # fmt: skip
        assert (summary.first_seen_at, summary.last_seen_at, summary.score) == (NOW, LATER, score)
    assert (hit.components, hit.sources, hit.reason) == ({"text": 0.7}, ["text"], "r")
    assert (woken.reason, woken.source_message_ids) == ("recent", ["m1"])


def test_the_topics_list_and_the_timeline_show_the_same_window_filter() -> None:
    env = _environment()
    window = SimpleNamespace(phrase="last week", start=NOW, end=LATER)
    pager = SimpleNamespace(previous=None, next=None)
    field = 'name="window" value="last &lt;i&gt;week&lt;/i&gt;" placeholder="time: last week'
    shown = "Window “last week”: 2026-03-02 09:00 to 2026-03-09 09:00 (UTC)"
    for page in ("topics.html", "timeline.html"):
        ctx = {"window": "last <i>week</i>", "q": "", "rows": [], "groups": [], "pager": pager}
        with_window = env.get_template(page).render(resolved=window, **ctx)
        assert with_window.count(field) == 1 and with_window.count(shown) == 1, page
        assert "Window “" not in env.get_template(page).render(resolved=None, **ctx)


def test_services_made_dataclasses_still_compare_by_identity() -> None:
    parts = (None, None, None, FixedClock(NOW))
    one, two = FactService(*parts), FactService(*parts)  # type: ignore[arg-type]
    assert one != two and one == one and len({one, two}) == 2
