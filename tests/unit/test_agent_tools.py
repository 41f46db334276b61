"""Tool schemas the Responses API accepts, argument validation, and the reasoning-effort dial."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agent.policy import ModelPolicy
from agent.registry import build_registry
from agent.tools import ToolContext, ToolNotFound
from graph.errors import ValidationFailed
from graph.strict_schema import tool_parameters

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _registry() -> Any:
    return build_registry(None)  # type: ignore[arg-type]  # schemas need no dependencies


def _objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found += _objects(value)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value)
    return found


def test_every_tool_has_an_accepted_name_and_a_schema() -> None:
    specs = _registry().specs()
    assert len(specs) == 16  # 12 host tools + 4 memory-control tools (agent/tools_memory.py)
    for spec in specs:
        assert NAME.match(spec["name"]), spec["name"]
        assert spec["type"] == "function" and spec["description"]
        assert spec["parameters"]["type"] == "object"


def test_strict_schemas_require_every_property_and_forbid_extras() -> None:
    specs = {s["name"]: s for s in _registry().specs()}
    strict = {n for n, s in specs.items() if s["strict"]}
    # skills_run takes a skill's free-form args object, which strict mode cannot express
    assert set(specs) - strict == {"skills_run"}
    for name in strict:
        for obj in _objects(specs[name]["parameters"]):
            assert obj["additionalProperties"] is False, name
            assert set(obj["required"]) == set(obj["properties"]), name
        text = repr(specs[name]["parameters"])
        assert "'default'" not in text and "'title'" not in text and "maxLength" not in text


def test_optional_parameters_become_nullable_in_strict_mode() -> None:
    params = {s["name"]: s for s in _registry().specs()}["topics_search"]["parameters"]
    window = params["properties"]["time_window"]
    assert {"type": "null"} in window["anyOf"]
    assert params["properties"]["query"] == {"type": "string", "description": "what to look for"}


def test_a_model_with_a_non_null_default_is_not_strict() -> None:
    class WithDefault(BaseModel):
        k: int = Field(default=5)

    schema, strict = tool_parameters(WithDefault)
    assert strict is False and schema["properties"]["k"]["default"] == 5


def test_a_property_named_like_a_keyword_survives() -> None:
    class Odd(BaseModel):
        title: str
        default: str | None = None

    schema, strict = tool_parameters(Odd)
    assert strict and set(schema["properties"]) == {"title", "default"}


def test_a_schema_is_worked_out_once_and_every_caller_gets_its_own_copy() -> None:
    # the cached schema is the one generated afresh, and changing a copy changes no other
    from graph import strict_schema

    s = strict_schema
    for spec in _registry().specs():
        model = _registry().get(spec["name"]).params
        raw = model.model_json_schema()
        made = (
            (s._strictify(s._without(raw, s._DROP)), True)
            if s._strict_possible(model, raw)
            else (s._without(raw, {"title"}), False)
        )
        assert tool_parameters(model) == made == (spec["parameters"], spec["strict"])
    first, _ = tool_parameters(WithLists)
    first["properties"]["tags"]["items"]["type"] = "changed"
    first["required"].append("x")
    again, _ = tool_parameters(WithLists)
    assert again["properties"]["tags"]["items"]["type"] == "string" and "x" not in again["required"]


class WithLists(BaseModel):
    tags: list[str]
    note: str | None = None


def test_arguments_are_validated_before_any_handler_runs() -> None:
    reg = _registry()
    with pytest.raises(ToolNotFound, match="topics_serch"):
        reg.parse_args("topics_serch", {})
    with pytest.raises(ValidationFailed, match="not JSON"):
        reg.parse_args("topics_search", "{query:")
    with pytest.raises(ValidationFailed, match=r"k: Input should be less than or equal to 25"):
        reg.parse_args("topics_search", {"query": "x", "k": 99})
    with pytest.raises(ValidationFailed, match="namespace: Extra inputs"):
        reg.parse_args("topics_search", {"query": "x", "namespace": "someone-else"})
    assert reg.parse_args("topics_search", '{"query": "party", "k": null}').k is None


def test_a_failing_call_becomes_an_error_output_for_the_model() -> None:
    from datetime import UTC, datetime

    call = _registry().call_for_model(
        "topics_link",
        {"from_topic_id": "a", "to_topic_id": "b", "type": "LOVES"},
        ToolContext(namespace="ns", now=datetime(2026, 1, 1, tzinfo=UTC)),
    )
    assert not call.ok and "type" in (call.error or "")
    assert call.output_text().startswith('{"error": "ValidationFailed')
    assert len(call.args_hash) == 12


@pytest.mark.parametrize(
    ("text", "effort"),
    [
        ("refactor the billing module into services", "high"),
        ("we need to migrate the invoices table", "high"),
        ("fix the typo in the README", "low"),
        ("quick rename of foo to bar", "low"),
        ("rename things while we refactor the parser", "high"),
        ("what did we decide about the party?", "medium"),
    ],
)
def test_the_reasoning_effort_dial(text: str, effort: str) -> None:
    assert ModelPolicy().effort_for(text) == effort


def test_sleep_compaction_always_gets_high_effort() -> None:
    assert ModelPolicy().effort_for("tiny", kind="sleep_compaction") == "high"


def test_an_mcp_input_schema_is_inlined_once_and_every_caller_gets_its_own_copy() -> None:
    from api.mcp_server import input_schema

    class Window(BaseModel):
        since: str | None = None

    class WithRef(BaseModel):
        window: Window
        tags: list[str]

    first = input_schema(WithRef)
    assert "$defs" not in first and first["properties"]["window"]["properties"]["since"]
    assert "title" not in first
    first["properties"]["tags"]["items"]["type"] = "changed"
    assert input_schema(WithRef)["properties"]["tags"]["items"]["type"] == "string"
