"""Ids a caller chooses: a built-in secret shape is refused (422), an operator's pattern is
redacted where the id is stored; refs, reasons and source ids are redacted like text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from graph.mapping import redact_event, redact_message, redact_topic, redact_wake_packet
from graph.models import Fact, Message, Topic, TopicEvent, TopicLinks, TopicTime, WakePacket
from graph.redaction import Redactor, compile_pattern
from graph.validation import Ident
from retrieval.context import ContextRequest
from service.memory import ContextService

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OPERATOR = Redactor([compile_pattern("employee_id", r"EMP-\d{6}")])
GITHUB = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"
EMPLOYEE = "EMP-" + "730915"


def test_an_id_with_a_built_in_secret_shape_is_refused() -> None:
    ident = TypeAdapter(Ident)
    assert ident.validate_python("  call-42 ") == "call-42"
    assert ident.validate_python("9f1c2e44-0b7e-4c55-8f0e-3f1f6c1d2a10") != ""  # a UUID is no key
    with pytest.raises(ValidationError, match="secret-shaped"):
        ident.validate_python(f"id-{GITHUB}")


def test_stores_redact_ids_that_match_an_operator_pattern() -> None:
    message = Message(namespace="ns", role="user", content="hi", at=NOW, external_id=EMPLOYEE)
    assert redact_message(message, OPERATOR).external_id == "[REDACTED:employee_id]"
    event = TopicEvent(namespace="ns", topic_id="t", at=NOW, delta_summary="x",
                       source_message_ids=[EMPLOYEE, "m-1"])  # fmt: skip
    assert redact_event(event, OPERATOR).source_message_ids == ["[REDACTED:employee_id]", "m-1"]


def test_refs_reasons_and_fact_sources_are_redacted() -> None:
    fact = Fact(text="x", at=NOW, invalid_at=NOW, invalid_reason=f"leaked {GITHUB}",
                source_message_ids=[EMPLOYEE])  # fmt: skip
    topic = Topic(namespace="ns", name="T", facts=[fact], time=TopicTime(first_seen_at=NOW,
                  last_seen_at=NOW), links=TopicLinks(skill_refs=[f"run-{GITHUB}"],
                  artifact_refs=["postgres://u:" + "S3cr3t-pw@db/app"]))  # fmt: skip
    stored = redact_topic(topic, OPERATOR)
    assert stored.facts[0].invalid_reason == "leaked [REDACTED:github_token]"
    assert stored.facts[0].source_message_ids == ["[REDACTED:employee_id]"]
    assert stored.links.skill_refs == ["run-[REDACTED:github_token]"]
    assert "S3cr3t" not in stored.links.artifact_refs[0]
    packet = WakePacket(namespace="ns", slept_at=NOW, recent_skill_refs=[f"s-{GITHUB}"])
    assert redact_wake_packet(packet, OPERATOR).recent_skill_refs == ["s-[REDACTED:github_token]"]


class _Builder:
    def __init__(self) -> None:
        self.requests: list[Any] = []

    def build(self, request: Any) -> Any:
        self.requests.append(request)
        return None


def test_a_session_id_matching_an_operator_pattern_is_keyed_redacted() -> None:
    builder = _Builder()
    service = ContextService(builder, OPERATOR)  # type: ignore[arg-type]
    for session_id in (f"desk {EMPLOYEE}", "plain"):
        req = ContextRequest(namespace="ns", message="hi", now=NOW, session_id=session_id)
        service.build(req)
    keys = [r.session_id for r in builder.requests]
    assert keys == ["ns/desk [REDACTED:employee_id]", "ns/plain"]
