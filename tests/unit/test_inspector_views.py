"""The inspector's view models (api/inspector/views.py) and its session tokens (session.py):
pure functions, no I/O."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from api.inspector.session import (
    Session,
    csrf_token,
    new_session,
    parse_session,
    same_token,
)
from api.inspector.views import (
    GRAPH_RADIUS,
    GRAPH_SIZE,
    Neighbour,
    Pager,
    fact_state,
    fact_views,
    neighbourhood,
    sleep_groups,
    step_rows,
    trace_rows,
)
from graph.models import Fact, TopicEvent

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
KEY = "shc_" + "a" * 43


def _fact(text: str, at: datetime, **more: object) -> Fact:
    return Fact.model_validate({"text": text, "at": at, "source_message_ids": ["m1"], **more})


def test_a_fact_closed_by_a_successor_is_superseded_and_one_closed_alone_is_retracted() -> None:
    said = NOW - timedelta(days=5)
    closed = NOW - timedelta(days=1)
    assert fact_state(_fact("a", said), NOW) == "current"
    assert fact_state(_fact("b", said, invalid_at=closed, superseded_by="f-x"), NOW) == "superseded"
    assert fact_state(_fact("c", said, invalid_at=closed), NOW) == "retracted"
    assert fact_state(_fact("d", said, invalid_at=NOW + timedelta(days=1)), NOW) == "current"
    assert fact_state(_fact("e", said, valid_from=NOW + timedelta(days=2)), NOW) == "future"


def test_fact_views_put_current_facts_first_newest_first_and_mark_past_ones() -> None:
    facts = [
        _fact("old current", NOW - timedelta(days=9)),
        _fact("retracted", NOW - timedelta(days=1), invalid_at=NOW - timedelta(hours=1)),
        _fact("new current", NOW - timedelta(days=2)),
    ]
    views = fact_views(facts, NOW)
    assert [v.text for v in views] == ["new current", "old current", "retracted"]
    assert [v.past for v in views] == [False, False, True]
    assert views[0].source_message_ids == ["m1"]


def _event(topic_id: str, at: datetime) -> TopicEvent:
    return TopicEvent(
        namespace="ns", topic_id=topic_id, at=at, delta_summary="changed",
        source_message_ids=["m1"],
    )  # fmt: skip


def test_events_are_grouped_under_the_first_sleep_at_or_after_their_date() -> None:
    first, second = NOW - timedelta(days=3), NOW - timedelta(days=1)
    events = [
        _event("t1", first - timedelta(hours=2)),
        _event("t2", first - timedelta(hours=1)),
        _event("t1", first + timedelta(hours=1)),  # after the first sleep: the second one's
        _event("t3", second + timedelta(hours=1)),  # after every sleep (an API write)
    ]
    groups = sleep_groups(events, {"t1": "party"}, [second, first])
    assert [g.at for g in groups] == [None, second, first]
    assert [name for _, name in groups[2].events] == ["party", "t2"]  # a forgotten topic: its id
    assert groups[2].topics == 2 and groups[1].topics == 1
    assert [g.at for g in sleep_groups(events[:1], {}, [])] == [None]  # no sleep recorded


def test_the_neighbourhood_puts_the_topic_in_the_middle_and_each_neighbour_once_on_a_circle() -> (
    None
):
    near = [
        Neighbour("b", "bike", "RELATES_TO", 2.0, True),
        Neighbour("c", "caterer", "DEPENDS_ON", 1.0, False),
        Neighbour("b", "bike", "NEXT", 0.5, False),  # a second edge to the same topic
        Neighbour("a", "self loop", "RELATES_TO", 1.0, True),  # the topic itself: not drawn
    ]
    nodes, edges = neighbourhood("a", "party", near)
    assert [n.topic_id for n in nodes] == ["a", "b", "c"]
    centre = GRAPH_SIZE / 2
    assert (nodes[0].x, nodes[0].y, nodes[0].center) == (centre, centre, True)
    for n in nodes[1:]:
        assert math.isclose(math.dist((n.x, n.y), (centre, centre)), GRAPH_RADIUS, abs_tol=0.2)
    assert [(e.type, e.outgoing) for e in edges] == [
        ("RELATES_TO", True), ("DEPENDS_ON", False), ("NEXT", False),
    ]  # fmt: skip
    assert edges[0].width == 4.0 and edges[1].width == 2.5  # the strongest edge is the widest
    assert (edges[0].x2, edges[0].y2) == (nodes[1].x, nodes[1].y)


def test_a_long_name_is_shortened_on_the_graph() -> None:
    nodes, _ = neighbourhood("a", "x" * 60, [])
    assert len(nodes[0].label) == 24 and nodes[0].label.endswith("…")


def test_trace_rows_list_included_candidates_first_with_their_largest_score_parts_first() -> None:
    trace = [
        {"record_id": "t2", "title": "bike", "score": 0.9, "components": {"cosine": 0.2,
         "recency": 0.0, "text": -0.5}, "reason": "vector", "decision": "excluded",
         "why": "over budget"},
        {"record_id": "t1", "title": "party", "score": 0.4, "components": {"cosine": 0.3},
         "reason": "text", "decision": "included", "layer": "L1"},
    ]  # fmt: skip
    rows = trace_rows(trace)
    assert [r.record_id for r in rows] == ["t1", "t2"]
    assert rows[1].parts == [("text", -0.5), ("cosine", 0.2)]  # zero parts left out
    assert rows[1].why == "over budget" and rows[0].layer == "L1"


def test_step_rows_list_the_longest_step_first_each_followed_by_its_parts() -> None:
    rows = step_rows({"commit": 60.0, "commit.events": 5.0, "commit.tx": 50.0,
                      "extract": 30.0, "slice": 10.0})  # fmt: skip
    assert [(r.step, r.part) for r in rows] == [
        ("commit", False), ("commit.tx", True), ("commit.events", True),
        ("extract", False), ("slice", False),
    ]  # fmt: skip
    assert [round(r.share, 2) for r in rows] == [0.6, 0.5, 0.05, 0.3, 0.1]
    assert step_rows({}) == []
    assert [r.step for r in step_rows({"x.y": 1.0})] == ["x.y"]  # a part without its step


def test_the_pager_links_only_the_pages_that_exist() -> None:
    assert (Pager(0, 50, True).previous, Pager(0, 50, True).next) == (None, 50)
    assert (Pager(50, 50, False).previous, Pager(50, 50, False).next) == (0, None)
    assert Pager(20, 50, False).previous == 0 and Pager(100, 50, True).first == 101


def test_a_session_cookie_round_trips_and_each_sign_in_has_its_own_csrf_token() -> None:
    one, two = new_session(KEY), new_session(KEY)
    assert parse_session(one.cookie) == one
    assert one.csrf != two.csrf  # a new nonce each sign-in
    assert one.csrf == csrf_token(KEY, one.nonce)
    assert csrf_token("shc_" + "b" * 43, one.nonce) != one.csrf  # needs the key


def test_malformed_session_cookies_are_no_session() -> None:
    for value in [None, "", KEY, f"{KEY}.", ".abcdefghijklmnopqrstu", f"{KEY}.short",
                  f"{KEY}." + "n" * 400]:  # fmt: skip
        assert parse_session(value) is None, value
    assert parse_session(f"{KEY}." + "n" * 20) == Session(KEY, "n" * 20)


def test_tokens_match_only_when_both_are_given_and_equal() -> None:
    assert same_token("abc", "abc")
    assert not same_token("abc", "abd")
    assert not same_token("abc", None) and not same_token(None, None) and not same_token("", "")
