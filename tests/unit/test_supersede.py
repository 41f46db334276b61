"""Sleep's supersession: claims read from fact texts, chains closed in time order, typed numbers
replaced on their key, and the sleep's merge using both. Pure, no I/O."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest

from graph.mapping import topic_from_props, topic_props
from graph.models import Fact, Topic, TopicTime, TypedNumber, fact_id_for
from sleepwake import supersede as supersede_module
from sleepwake.candidates import Candidate
from sleepwake.normalise import merge_candidate
from sleepwake.supersede import (
    MAX_CLAIM_CHARS,
    SUPERSEDED,
    claim_of,
    supersede,
    supersede_numbers,
)

T0 = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


def fact(text: str, days: int, **extra: object) -> Fact:
    return Fact(text=text, at=T0 + timedelta(days=days), source_message_ids=[f"m{days}"], **extra)


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("My favourite colour is blue.", ("pref", "", "my", "color"), "blue"),
        ("Actually, my favorite color is green now.", ("pref", "", "my", "color"), "green"),
        ("Red is my favourite colour these days.", ("pref", "", "my", "color"), "red"),
        ("Caroline: my favorite book is Becoming.", ("pref", "caroline", "my", "book"),
         "becoming"),
        ("Our preferred airline is KLM.", ("pref", "", "our", "airline"), "klm"),
        ("My budget is 500 dollars.", ("qty", "", "my", "budget"), "500 usd"),
        ("Our rent is now $1,200.", ("qty", "", "our", "rent"), "1200 usd"),
    ],
)  # fmt: skip
def test_claims_are_read_from_statements(text: str, key: tuple[str, ...], value: str) -> None:
    claim = claim_of(text)
    assert claim is not None and claim.key == key and claim.value == value


@pytest.mark.parametrize(
    "text",
    [
        "Is my favourite colour blue?",
        "If my favourite colour is blue, paint it.",
        "What is my favourite colour",
        "I ran 5 km today.",
        "My dog is cute.",
        "The party is 5 days away.",  # only the speaker's own ("my", "our") quantities
        "",
    ],
)
def test_questions_conditionals_and_plain_statements_claim_nothing(text: str) -> None:
    assert claim_of(text) is None


def _backtracking_risks(items: Any, inside_unbounded: bool = False) -> list[str]:
    """The repetitions nested inside an unbounded one (``(a+)+``, ``(?:x{1,3})*``): the shape
    whose backtracking grows exponentially. Possessive repeats and atomic groups never
    backtrack into themselves, so nothing inside them counts."""
    risks: list[str] = []
    for op, av in items:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, body = av
            if inside_unbounded:
                risks.append(f"{{{low},{high}}} inside an unbounded repeat")
            risks += _backtracking_risks(body, inside_unbounded or high == sre.MAXREPEAT)
        elif op == sre.SUBPATTERN:
            risks += _backtracking_risks(av[3], inside_unbounded)
        elif op == sre.BRANCH:
            for branch in av[1]:
                risks += _backtracking_risks(branch, inside_unbounded)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            risks += _backtracking_risks(av[1], inside_unbounded)
    return risks


def _claim_patterns() -> list[re.Pattern[str]]:
    return [p for p in vars(supersede_module).values() if isinstance(p, re.Pattern)]


def test_claim_patterns_cannot_backtrack_catastrophically() -> None:
    """No repetition nests inside an unbounded one in any pattern claims are read with, so a
    pattern's work per start position is bounded by its own quantifiers; and a claim reads at
    most MAX_CLAIM_CHARS of a text. Together: bounded work on any text, whatever the host."""
    patterns = _claim_patterns()
    assert len(patterns) >= 5  # the module's patterns were found
    for pattern in patterns:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
        assert _backtracking_risks(parsed) == [], pattern.pattern
    # the check sees the shape it guards against
    assert _backtracking_risks(sre_parse.parse(r"^(?:a|ab)(?:[a-z]{1,3} ?)+$"))
    assert not _backtracking_risks(sre_parse.parse(r"^(?:[a-z]{1,3} ?)++$"))


def test_claims_read_a_bounded_prefix_of_adversarial_text() -> None:
    claim = "My favourite colour is blue."
    padding = "my favourite " + "a " * 5000
    assert claim_of(padding[:MAX_CLAIM_CHARS] + claim) is None  # past the prefix: not read
    assert claim_of(claim + padding) == claim_of(claim)
    for text in (
        "my favourite " + "a " * 5000,
        "my " * 10_000,
        "x is my favourite " + "ab " * 9000,
    ):
        assert claim_of(text) == claim_of(text[:MAX_CLAIM_CHARS])


def test_a_preference_changing_twice_forms_a_chain() -> None:
    facts = [fact("My favourite colour is blue.", 0), fact("Mel likes tea.", 1),
             fact("My favourite colour is green now.", 31), fact("My favourite colour is red.", 59)]  # fmt: skip
    out = supersede(facts)
    blue, tea, green, red = out
    assert (blue.superseded_by, blue.invalid_at) == (green.fact_id, green.at)
    assert (green.superseded_by, green.invalid_at) == (red.fact_id, red.at)
    assert blue.invalid_reason == SUPERSEDED
    assert tea.invalid_at is None and red.invalid_at is None
    assert facts[0].invalid_at is None  # the input is not mutated
    assert supersede(out) == out  # idempotent


def test_repeating_a_value_supersedes_nothing_and_speakers_are_apart() -> None:
    same = [fact("My favourite colour is blue.", 0), fact("my favourite colour is Blue", 3)]
    assert all(f.invalid_at is None for f in supersede(same))
    people = [
        fact("Ana: my favourite book is Dune.", 0),
        fact("Ben: my favourite book is Emma.", 1),
    ]
    assert all(f.invalid_at is None for f in supersede(people))


def test_only_fresh_claims_trigger_a_pass_and_closed_facts_stay_closed() -> None:
    old = [fact("My favourite colour is blue.", 0), fact("My favourite colour is green.", 5)]
    assert supersede(old, fresh=[fact("Nothing to see.", 9)]) == old  # no claim: no pass
    retracted = fact("My favourite colour is pink.", 1, invalid_at=T0 + timedelta(days=2))
    out = supersede([old[0], retracted, old[1]])
    assert out[1] == retracted and out[0].superseded_by == old[1].fact_id


def test_a_typed_number_is_superseded_on_its_key_and_unit() -> None:
    def number(key: str, value: float, days: int, unit: str | None = "USD",
               source: str = "user") -> TypedNumber:  # fmt: skip
        return TypedNumber(key=key, value=value, unit=unit, at=T0 + timedelta(days=days),
                           source=source)  # type: ignore[arg-type]  # fmt: skip

    numbers = [number("budget", 500, 0), number("budget", 650, 30), number("budget", 650, 40),
               number("budget", 20, 31, unit="EUR"), number("cost", 5, 1), number("cost", 9, 2),
               number("budget", 1, 50, source="assistant")]  # fmt: skip
    out = supersede_numbers(numbers)
    assert out[0].invalid_at == numbers[1].at  # 500 -> 650
    assert out[1].invalid_at is None and out[2].invalid_at is None  # 650 repeated
    assert out[3].invalid_at is None  # another unit is another key
    assert out[4].invalid_at is None and out[5].invalid_at is None  # "cost" only names a unit
    assert out[6].invalid_at is None  # the assistant's numbers are not the user's statement
    assert [n.valid_at(T0 + timedelta(days=10)) for n in out[:2]] == [True, False]


def _candidate(text: str, days: int) -> Candidate:
    at = T0 + timedelta(days=days)
    return Candidate(key="favourite colour", surfaces=Counter({"favourite colour": 1}),
                     user_surfaces=Counter({"favourite colour": 1}),
                     facts=[Fact(text=text, at=at, source_message_ids=[f"m{days}"])],
                     message_ids=[f"m{days}"], first_at=at, last_at=at)  # fmt: skip


def test_the_sleeps_merge_supersedes_and_the_one_liner_follows() -> None:
    topic = Topic(namespace="ns", name="favourite colour", one_liner="My favourite colour is blue.",
                  facts=[fact("My favourite colour is blue.", 0)],
                  time=TopicTime(first_seen_at=T0, last_seen_at=T0))  # fmt: skip
    topic, _ = merge_candidate(topic, _candidate("My favourite colour is green now.", 31))
    assert [f.invalid_at is None for f in topic.facts] == [False, True]
    assert topic.one_liner == "My favourite colour is green now."
    topic, _ = merge_candidate(topic, _candidate("My favourite colour is blue.", 60))
    assert [f.text for f in topic.current().facts] == ["My favourite colour is blue."]
    assert len(topic.facts) == 3  # said again after it was superseded: a new, current fact
    assert topic.one_liner == "My favourite colour is blue."
    assert [f.text for f in topic.as_of(T0 + timedelta(days=40)).facts] == [
        "My favourite colour is green now."]  # fmt: skip


def test_fact_ids_are_stable_and_old_records_without_them_read_the_same() -> None:
    f = fact("Mel likes tea.", 0)
    assert f.fact_id == fact_id_for("Mel likes tea.", f.at) == fact("Mel likes tea.", 0).fact_id
    assert f.fact_id != fact("Mel likes tea.", 1).fact_id
    topic = Topic(namespace="ns", name="Mel", facts=[f],
                  time=TopicTime(first_seen_at=T0, last_seen_at=T0))  # fmt: skip
    props = topic_props(topic)
    assert "invalid_at" not in props["facts_json"]  # nulls are not stored
    props["facts_json"] = props["facts_json"].replace(f',"fact_id":"{f.fact_id}"', "")
    assert "fact_id" not in props["facts_json"]  # what an old record looks like
    assert topic_from_props({**props, "version": 1}).facts == [f]
