"""The shared input rules (graph/validation.py) and that every surface uses them: the REST
schemas and the tool parameter models refuse the same input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from agent.tools import SkillsRun, TopicsLink, TopicsSearch, TopicsUpsert
from api.routers.agent import ChatCreate, ToolCallCreate
from api.schemas import ContextCreate, LinkCreate, MessageCreate, TopicCreate, TopicUpdate
from graph.models import Message, Topic, parse
from graph.validation import (
    MAX_JSON_DEPTH,
    MAX_JSON_NODES,
    Time,
    check_json_shape,
    check_time,
    json_shape,
    one_line,
    plain_json,
    strip_controls,
    text,
)

TIME = TypeAdapter(Time)
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def nested(depth: int) -> dict[str, Any]:
    """``{"a": {"a": ...}}`` ``depth`` levels deep, built without recursion."""
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth - 1):
        node["a"] = {}
        node = node["a"]
    return root


# -- time -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [
        "3000-01-01T00:00:00Z",
        "2999-12-31T23:00:00-05:00",  # 3000-01-01T04:00Z: the year is checked after conversion
        "1900-01-01T00:00:00+05:00",  # 1899-12-31T19:00Z
        "1899-12-31T23:00:00Z",
        "9999-12-31T23:59:59-05:00",  # leaves the calendar when converted: refused, not a 500
        "0001-01-01T00:00:00+05:00",
        "1700000000",  # a Unix number
        "2026-03-02T09:00:00",  # no zone
    ],
)
def test_time_outside_the_range_in_utc_is_refused(value: str) -> None:
    with pytest.raises(ValidationError):
        TIME.validate_python(value)


def test_time_inside_the_range_comes_back_in_utc() -> None:
    assert TIME.validate_python("1900-01-01T05:00:00+05:00") == datetime(1900, 1, 1, tzinfo=UTC)
    assert TIME.validate_python("2999-12-31T18:59:59-05:00").year == 2999
    assert TIME.validate_python("2026-03-02T10:00:00+01:00") == T0


def test_check_time_refuses_naive_and_overflowing_values() -> None:
    with pytest.raises(ValueError, match="timezone"):
        check_time(datetime(2026, 3, 2))
    with pytest.raises(ValueError, match="out of range"):
        check_time(datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))))


# -- JSON shape -------------------------------------------------------------------------------------
def test_json_shape_counts_depth_and_values() -> None:
    assert json_shape(1) == (0, 1)
    assert json_shape({}) == (1, 1)
    assert json_shape({"a": [1, 2]}) == (2, 4)


def test_depth_is_measured_without_recursion_even_far_past_the_limit() -> None:
    deep: list[Any] = []
    node = deep
    for _ in range(200_000):  # json.dumps or a recursive walk would hit the recursion limit
        node.append([])
        node = node[0]
    depth, _ = json_shape(deep)
    assert depth > MAX_JSON_DEPTH
    with pytest.raises(ValueError, match=f"deeper than {MAX_JSON_DEPTH}"):
        check_json_shape(deep)


def test_plain_json_limits() -> None:
    assert plain_json(nested(MAX_JSON_DEPTH)) == nested(MAX_JSON_DEPTH)
    with pytest.raises(ValueError, match="deeper"):
        plain_json(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(ValueError, match="more than"):
        plain_json({"a": list(range(MAX_JSON_NODES + 1))})
    with pytest.raises(ValueError, match="plain JSON"):
        plain_json({"a": float("nan")})


# -- text -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad", ["\x1b]0;pwned\x07", "a\x00b", "\u202eevil", "a\u2066b", "x\x9b2J", "a\nb", "a\tb"]
)
def test_one_line_fields_refuse_control_and_bidi_characters(bad: str) -> None:
    with pytest.raises(ValueError, match="control characters"):
        one_line(bad)


def test_multi_line_text_allows_layout_but_not_escapes() -> None:
    assert text("line one\n\tline two\r\n") == "line one\n\tline two\r\n"
    for bad in ("\x1b[2J", "\x00", "\u202e", "\x7f"):
        with pytest.raises(ValueError):
            text(bad)
    assert one_line("Zanzibar — merger (Q3) ✓ شراكة 合并") == "Zanzibar — merger (Q3) ✓ شراكة 合并"


def test_strip_controls_is_what_pipelines_use_for_names() -> None:
    assert strip_controls("\x1b]0;t\x07Zan\u202ezibar\x00 ") == "]0;tZanzibar"
    topic = parse(Topic, {"namespace": "n", "name": "Par\x1b[2Jty", "aliases": ["\u202eA"],
                          "time": {"first_seen_at": T0, "last_seen_at": T0}})  # fmt: skip
    assert (topic.name, topic.aliases) == ("Par[2Jty", ["A"])


# -- every surface refuses the same -------------------------------------------------------------
def refused(model: type[BaseModel], data: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return [".".join(str(p) for p in e["loc"]) for e in info.value.errors()]


def test_names_with_control_characters_are_refused_by_rest_and_tools() -> None:
    assert refused(TopicCreate, {"name": "\x1b]0;pwned\x07"}) == ["name"]
    assert refused(TopicCreate, {"name": "ok", "aliases": ["\u202eevil"]}) == ["aliases.0"]
    assert refused(TopicUpdate, {"version": 1, "name": "a\x00"}) == ["name"]
    assert refused(TopicsUpsert, {"name": "\x1b[2J"}) == ["name"]
    assert refused(TopicsUpsert, {"topic_id": "t", "aliases": ["a\u2066"]}) == ["aliases.0"]
    assert refused(TopicsUpsert, {"topic_id": "t", "facts": ["x\x1b[31m"]}) == ["facts.0"]


def test_link_weights_have_the_same_bounds_on_both_surfaces() -> None:
    for weight in (-10, 0, 101, float("nan"), float("inf")):
        assert refused(LinkCreate, {"to": "b", "weight": weight}) == ["weight"]
        body = {"from_topic_id": "a", "to_topic_id": "b", "type": "RELATES_TO"}
        assert refused(TopicsLink, {**body, "weight_delta": weight}) == ["weight_delta"]
    assert TopicsLink.model_validate({**body, "weight_delta": 100}).weight_delta == 100


def test_a_clock_in_year_9999_is_refused_by_rest_and_tools() -> None:
    now = "9999-01-01T00:00:00Z"
    assert refused(ContextCreate, {"message": "hi", "now": now}) == ["now"]
    assert refused(ToolCallCreate, {"arguments": {}, "now": now}) == ["now"]
    assert refused(ChatCreate, {"message": "hi", "now": now}) == ["now"]
    assert refused(MessageCreate, {"role": "user", "content": "x", "at": now}) == ["at"]


def test_deep_tool_calls_and_skill_args_are_refused() -> None:
    deep = nested(900)
    assert refused(MessageCreate, {"role": "tool", "content": "x", "tool_calls": [deep]}) == [
        "tool_calls.0"
    ]
    assert refused(SkillsRun, {"skill_id": "debug", "args": deep}) == ["args"]
    assert refused(ToolCallCreate, {"arguments": deep}) == ["arguments"]
    ok = MessageCreate.model_validate(
        {"role": "tool", "content": "x", "tool_calls": [nested(MAX_JSON_DEPTH)]}
    )
    assert len(ok.tool_calls) == 1
    with pytest.raises(ValidationError):  # the stored-message model holds the same limit
        Message(namespace="n", role="tool", content="x", at=T0, tool_calls=[deep])


def test_queries_and_phrases_refuse_lone_surrogates_on_the_tools_too() -> None:
    assert refused(TopicsSearch, {"query": "a\ud800"}) == ["query"]
    assert refused(TopicsSearch, {"query": "x", "time_window": "last\x1bweek"}) == ["time_window"]


def test_the_ingest_path_checks_times_in_utc_too() -> None:
    """``sheriff ingest`` and the agent loop reach the store without the REST schemas."""
    from graph.clock import FixedClock
    from graph.errors import ValidationFailed
    from sleepwake.conversation import Conversation, IncomingMessage
    from sleepwake.policy import SleepPolicy

    conversation = Conversation(None, None, FixedClock(T0), SleepPolicy())  # type: ignore[arg-type]
    for when in ("1900-01-01T00:00:00+05:00", "2999-12-31T23:00:00-05:00",
                 "9999-12-31T23:59:59-05:00"):  # fmt: skip
        item = IncomingMessage(role="user", content="x", at=datetime.fromisoformat(when))
        with pytest.raises(ValidationFailed, match="at"):
            conversation.to_message("n", item)
    ok = IncomingMessage(
        role="user", content="x", at=datetime.fromisoformat("2026-03-02T10:00+01:00")
    )
    assert conversation.to_message("n", ok).at == T0
