"""The §6 durability figures of `sheriff eval topics` (api/eval_durability.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from api.eval_durability import cross_session, durability_figures, session_of, stamped
from graph.models import Fact, Topic, TopicEvent, TopicTime

T0 = datetime(2023, 1, 1, tzinfo=UTC)


def _topic(tid: str, name: str, days: int, facts: list[list[str]]) -> Topic:
    return Topic(
        topic_id=tid,
        namespace="ns",
        name=name,
        facts=[Fact(text=f"fact {i}", source_message_ids=ids) for i, ids in enumerate(facts)],
        time=TopicTime(first_seen_at=T0, last_seen_at=T0 + timedelta(days=days)),
    )


def _event(tid: str, day: int) -> TopicEvent:
    return TopicEvent(
        namespace="ns", topic_id=tid, at=T0 + timedelta(days=day), delta_summary="x",
        source_message_ids=["m1"],
    )  # fmt: skip


def test_stamped_names() -> None:
    for name in ("Apr 2022 game", "Apr 2022 game 3", "game 2", "Oct 2022 game 2", "trip (2023-05)"):
        assert stamped(name), name
    for name in ("James's dogs", "game", "Samantha", "billing migration", "2022 World Cup"):
        assert not stamped(name), name


def test_session_of() -> None:
    assert session_of("D8:6") == "D8"
    assert session_of("m-123") is None


def test_cross_session_needs_one_topic_citing_two_sessions() -> None:
    qa = [
        {"category": 1, "evidence": ["D1:2", "D5:3"]},  # gathered by "dogs"
        {"category": 1, "evidence": ["D1:4", "D6:1"]},  # split over two topics
        {"category": 2, "evidence": ["D2:1"]},  # one session: not counted
        {"category": 5, "evidence": ["D1:2", "D5:3"]},  # adversarial: not counted
    ]
    external = {f"m{i}": ref for i, ref in enumerate(["D1:2", "D5:3", "D1:4", "D6:1"])}
    topics = [
        _topic("a", "dogs", 30, [["m0"], ["m1"]]),
        _topic("b", "job", 0, [["m2"]]),
        _topic("c", "trip", 0, [["m3"]]),
    ]
    assert cross_session(topics, external, qa) == (2, 1)


def test_figures() -> None:
    topics = [
        _topic("a", "dogs", 30, [["m0"], ["m1"], ["m2"]]),
        _topic("b", "Apr 2022 game", 0, [["m3"]]),
    ]
    events = {"a": [_event("a", 0), _event("a", 30)], "b": [_event("b", 0)]}
    got = durability_figures(topics, events, {}, [])
    assert got["multi_sleep_share"] == 0.5
    assert got["week_span_share"] == 0.5
    assert got["stamped_names"] == 1
    assert got["largest_topic_share"] == 0.75
    assert got["cross_session_questions"] == 0
