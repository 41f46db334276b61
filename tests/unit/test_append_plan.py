"""How an append is decided (graph/append_plan.plan_append, no I/O): idempotent by external_id,
in time order, server-stamped times moved forward instead of refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph.append_plan import plan_append
from graph.errors import Conflict
from graph.models import Message

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def msg(minute: int, xid: str | None = None, content: str = "hi") -> Message:
    at = T0 + timedelta(minutes=minute)
    return Message(namespace="n", role="user", content=content, at=at, external_id=xid)


def test_stored_external_ids_are_not_written_again() -> None:
    stored = msg(0, "ext-1")
    retry = [msg(0, "ext-1"), msg(1, "ext-2")]
    plan = plan_append(retry, {"ext-1": stored}, newest=T0)
    assert [m.external_id for m in plan.new] == ["ext-2"]
    assert plan.slots == [stored, 0]


def test_a_retried_batch_writes_nothing() -> None:
    stored = {x: msg(i, x) for i, x in enumerate(["a", "b"])}
    plan = plan_append([msg(0, "a"), msg(1, "b")], stored, newest=T0 + timedelta(minutes=1))
    assert plan.new == [] and plan.slots == [stored["a"], stored["b"]]


def test_an_id_repeated_inside_the_batch_is_written_once() -> None:
    plan = plan_append([msg(0, "x"), msg(1, "y"), msg(2, "x")], {}, newest=None)
    assert [m.external_id for m in plan.new] == ["x", "y"] and plan.slots == [0, 1, 0]


def test_an_older_message_than_the_newest_stored_is_a_conflict() -> None:
    with pytest.raises(Conflict, match="older than the newest message"):
        plan_append([msg(0)], {}, newest=T0 + timedelta(hours=1))
    with pytest.raises(Conflict, match="not in time order"):
        plan_append([msg(5), msg(1)], {}, newest=None)


def test_server_stamped_times_move_forward_instead() -> None:
    late = msg(0)
    newest = T0 + timedelta(seconds=1)
    plan = plan_append([late, msg(2)], {}, newest, server_time={late.message_id})
    assert [m.at for m in plan.new] == [newest, T0 + timedelta(minutes=2)]


def test_equal_times_are_in_order() -> None:
    plan = plan_append([msg(0), msg(0)], {}, newest=T0)
    assert len(plan.new) == 2


def test_an_external_id_on_a_different_message_is_a_conflict_naming_its_field() -> None:
    stored = msg(0, "ext-1", "the first text")
    with pytest.raises(Conflict, match="already names a different message") as stored_clash:
        plan_append([msg(1, "ext-1", "another text")], {"ext-1": stored}, newest=T0)
    assert stored_clash.value.field == "messages.0.external_id"
    with pytest.raises(Conflict) as batch_clash:
        plan_append([msg(0, "x", "one"), msg(1, "x", "two")], {}, newest=None, where="body.items")
    assert batch_clash.value.field == "body.items.1.external_id"


def test_a_repeat_is_checked_before_the_time_order() -> None:
    """The first error of a batch with both is the repeated id (as the conversation said)."""
    late = msg(0)
    clash = msg(5, "x", "other")
    with pytest.raises(Conflict) as caught:
        plan_append([late, clash], {"x": msg(3, "x")}, newest=T0 + timedelta(hours=1))
    assert caught.value.field == "messages.1.external_id"
