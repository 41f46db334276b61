"""Agents SDK input items <-> stored messages (no I/O): what SheriffSession writes and reads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.agents_sdk import MAX_CONTENT, content_text, item_to_message, message_to_item
from graph.models import Message

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def stored(item: dict[str, Any]) -> Message:
    incoming = item_to_message(item)
    assert incoming is not None
    return Message(namespace="ns", at=AT, **incoming.model_dump(exclude={"at"}))


@pytest.mark.parametrize(
    ("item", "back"),
    [
        ({"role": "user", "content": "hi"}, {"role": "user", "content": "hi"}),
        ({"type": "message", "role": "system", "content": "rules"},
         {"role": "system", "content": "rules"}),
        ({"role": "developer", "content": "be brief"}, {"role": "developer", "content": "be brief"}),
        ({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "a", "annotations": []},
                      {"type": "output_text", "text": "b", "annotations": []}]},
         {"role": "assistant", "content": "a\nb"}),
        ({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "topics_get",
          "arguments": '{"topic_ids": ["t"]}', "status": "completed"},
         {"type": "function_call", "call_id": "c1", "name": "topics_get",
          "arguments": '{"topic_ids": ["t"]}'}),
        ({"type": "function_call_output", "call_id": "c1", "output": '{"ok": true}'},
         {"type": "function_call_output", "call_id": "c1", "output": '{"ok": true}'}),
    ],
)  # fmt: skip
def test_items_round_trip(item: dict[str, Any], back: dict[str, Any]) -> None:
    assert message_to_item(stored(item)) == back


def test_model_output_ids_become_external_ids() -> None:
    call = {"type": "function_call", "id": "fc_9", "call_id": "c9", "name": "x", "arguments": "{}"}
    assert stored(call).external_id == "fc_9" and stored(call).role == "assistant"
    assert stored({"role": "user", "content": "hi"}).external_id is None


def test_items_that_are_not_conversation_are_not_stored() -> None:
    assert item_to_message({"type": "reasoning", "id": "rs_1", "summary": []}) is None
    assert item_to_message({"type": "web_search_call", "id": "ws_1", "status": "done"}) is None
    assert item_to_message({"role": "tool", "content": "not an SDK role"}) is None


def test_non_text_parts_are_named_and_long_content_is_bounded() -> None:
    parts = [{"type": "input_text", "text": "look"}, {"type": "input_image", "image_url": "x"},
             {"type": "refusal", "refusal": "no"}]  # fmt: skip
    assert content_text(parts) == "look\n[input_image]\nno"
    long = stored({"role": "user", "content": "x" * (MAX_CONTENT + 10)})
    assert len(long.content) == MAX_CONTENT and long.content.endswith("[truncated]")


def test_a_tool_message_from_another_client_reads_as_assistant_text() -> None:
    message = Message(namespace="ns", at=AT, role="tool", content="42")
    assert message_to_item(message) == {"role": "assistant", "content": "42"}
