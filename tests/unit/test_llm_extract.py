"""Validation of the LLM extractor's answers (no I/O)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from graph.models import Message
from sleepwake.candidates import build_candidates
from sleepwake.extract import extract
from sleepwake.llm_extract import ExtractionRefused, answer_schema, parse_answer
from sleepwake.turn_facts import turn_fact

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


def _msg(mid: str, content: str, role: str = "user") -> Message:
    return Message(message_id=mid, namespace="ns", role=role, content=content, at=AT)  # type: ignore[arg-type]


def _facts(mid: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": mid, "topics": [], "facts": [], "decisions": [], "constraints": [],
        "open_loops": [], "numbers": [], "dependencies": [], "is_correction": False,
        "in_progress": None,
    }  # fmt: skip
    return base | over


def test_a_valid_answer_maps_onto_extractions() -> None:
    chunk = [_msg("m1", "We picked Postgres over Mongo. Budget is 300 dollars.")]
    answer = {"messages": [_facts(
        "m1", topics=["Postgres", "Postgres", " "],
        facts=[{"topic": "Postgres", "text": "We picked Postgres over Mongo."}],
        decisions=[{"text": "We picked Postgres over Mongo.", "chosen": "Postgres",
                    "rejected": ["Mongo"], "reason": None}],
        numbers=[{"key": "Budget", "value": 300, "unit": "dollars", "text": "Budget is 300"}],
        is_correction=True,
    )]}  # fmt: skip
    got = parse_answer(json.dumps(answer), chunk)["m1"]
    assert got.entities == ["Postgres"]
    assert got.decisions[0].rejected == ["Mongo"]
    assert got.numbers[0].key == "budget" and got.numbers[0].value == 300
    assert got.is_correction
    assert got.sentences == ["We picked Postgres over Mongo."]  # the model's facts, checked


def test_a_correction_is_only_taken_from_the_user() -> None:
    chunk = [_msg("m1", "Sorry, I was wrong.", role="assistant")]
    got = parse_answer(json.dumps({"messages": [_facts("m1", is_correction=True)]}), chunk)
    assert got["m1"].is_correction is False


def test_secrets_in_an_answer_are_redacted() -> None:
    chunk = [_msg("m1", "the token is in the vault")]
    answer = {"messages": [_facts("m1", constraints=[f"always use {SECRET}"])]}
    got = parse_answer(json.dumps(answer), chunk)["m1"]
    assert SECRET not in json.dumps(got.model_dump())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "Invalid JSON"),
        (json.dumps({"messages": [{"id": "m1"}]}), "messages.0.topics"),
        (json.dumps({"messages": [_facts("m1", mood="happy")]}), "Extra inputs"),
        (json.dumps({"messages": [_facts("m9")]}), "not sent"),
        (json.dumps({"messages": [_facts("m1", numbers=[{"key": "x", "value": "lots",
                                                          "unit": None, "text": ""}])]}),
         "value"),
    ],
)  # fmt: skip
def test_unusable_answers_are_refused_with_the_reason(text: str, why: str) -> None:
    with pytest.raises(ExtractionRefused, match=why):
        parse_answer(text, [_msg("m1", "hello there")])


def test_the_answer_schema_is_strict() -> None:
    schema = answer_schema()
    item = schema["$defs"]["_MessageFacts"]
    assert item["additionalProperties"] is False
    assert set(item["required"]) == set(item["properties"])


def test_only_specific_grounded_topics_are_kept() -> None:
    text = (
        "On Tues I finally joined the pottery class at the community center. People there "
        "are lovely and Mel says the LGBTQ support group meets after it. I must've been nervous."
    )
    chunk = [_msg("m1", text)]
    named = ["pottery class", "LGBTQ support group", "Mel", "Tues", "Tuesday", "People",
             "lovely", "must've", "she", "life", "quantum chromodynamics", "last Tuesday"]  # fmt: skip
    got = parse_answer(json.dumps({"messages": [_facts("m1", topics=named)]}), chunk)["m1"]
    # at most three, in the model's order; "Mel" is a name as written but comes fourth
    assert got.entities == ["pottery class", "LGBTQ support group", "Mel"]
    for bad in ("Tues", "Tuesday", "People", "lovely", "must've", "she", "life", "last Tuesday"):
        answer = json.dumps({"messages": [_facts("m1", topics=[bad])]})
        assert parse_answer(answer, chunk)["m1"].entities == [], bad
    invented = _facts("m1", topics=["quantum chromodynamics"])
    assert parse_answer(json.dumps({"messages": [invented]}), chunk)["m1"].entities == []


def test_facts_are_at_most_two_grounded_statements_with_dates_resolved() -> None:
    said = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)
    text = (
        "Hey! How are you? I adopted a rescue dog named Biscuit yesterday. He is three years "
        "old. We walk him twice a day. Thanks so much!"
    )
    chunk = [Message(message_id="m1", namespace="ns", role="user", content=text, at=said)]
    facts = [
        {"topic": "rescue dog", "text": "How are you?"},  # a question
        {"topic": "rescue dog", "text": "Thanks so much!"},  # filler
        {"topic": "rescue dog", "text": "The user won the lottery in Paris last spring."},
        {"topic": "rescue dog", "text": "I adopted a rescue dog named Biscuit yesterday."},
        {"topic": "rescue dog", "text": "Biscuit is three years old."},
        {"topic": "rescue dog", "text": "We walk him twice a day."},  # a third fact: dropped
    ]
    answer = {"messages": [_facts("m1", topics=["rescue dog"], facts=facts)]}
    got = parse_answer(json.dumps(answer), chunk)["m1"]
    assert got.sentences == [  # in the model's words: the date goes beside them, not in them
        "I adopted a rescue dog named Biscuit yesterday.",
        "Biscuit is three years old.",
    ]
    assert got.entities == ["rescue dog"]
    # the fact made of it is dated as the deterministic path dates its facts (valid_from)
    cands = build_candidates(chunk, "UTC", {"m1": got}).candidates
    dated = {f.text: f.valid_from for c in cands for f in c.facts}
    assert dated == {
        "I adopted a rescue dog named Biscuit yesterday.": datetime(2023, 5, 7, tzinfo=UTC),
        "Biscuit is three years old.": None,
    }
    words = extract("I adopted a rescue dog named Biscuit yesterday.")
    assert turn_fact(chunk[0], words, "UTC").valid_from == datetime(2023, 5, 7, tzinfo=UTC)  # type: ignore[union-attr]


def test_only_real_open_items_are_open_loops() -> None:
    text = (
        "It's just great, you know? I still need to book the venue for the workshop. "
        "Can you find me a cheaper caterer than Bella's?"
    )
    chunk = [_msg("m1", text)]
    loops = [
        "It's just great, you know?",
        "I still need to book the venue for the workshop.",
        "Can you find me a cheaper caterer than Bella's?",
        "Remember to feed the neighbour's cat.",  # not said
    ]
    got = parse_answer(json.dumps({"messages": [_facts("m1", open_loops=loops)]}), chunk)["m1"]
    assert got.open_loops == [
        "I still need to book the venue for the workshop.",
        "Can you find me a cheaper caterer than Bella's?",
    ]
