"""The states of a life a statement claims (``text.claims``): many wordings of where someone
lives, their job, employer, manager, partner, car and school; nothing for questions,
hypotheticals, plans, denials and the past tense; another owner for "my sister". And the
questions about a state. Pure."""

from __future__ import annotations

import re
import time

import pytest

from text.claims import (
    MAX_TEXT_CHARS,
    StateClaim,
    state_claims,
    state_question,
    state_token,
    state_tokens,
)

SELF = ("", "self")


def claims(text: str) -> dict[tuple[str, str, str], str]:
    return {c.key: c.value for c in state_claims(text)}


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("I live in Boston.", "residence", "boston"),
        ("We live in New York City now.", "residence", "new york city"),
        ("Big news: I moved to Denver last week!", "residence", "denver"),
        ("I just relocated to Austin for the job.", "residence", "austin"),
        ("I've moved to Lisbon.", "residence", "lisbon"),
        ("We moved back to Boston in October.", "residence", "boston"),
        ("I'm based in Berlin these days.", "residence", "berlin"),
        ("I'm based out of San Francisco.", "residence", "san francisco"),
        ("I'm living in Stratford upon Avon.", "residence", "stratford upon avon"),
        ("Our new place is in Brooklyn, it's tiny.", "residence", "brooklyn"),
        ("I work as a nurse at Mass General.", "role", "nurse"),
        ("I'm now a product manager at a health-tech startup.", "role", "product manager"),
        ("I'm a registered nurse.", "role", "registered nurse"),
        ("It paid off now that I'm an assistant manager.", "role", "assistant manager"),
        ("I started a new job as a data analyst at Spotify.", "role", "data analyst"),
        ("I got promoted to senior engineer!", "role", "senior engineer"),
        ("I joined Acme Corp as a designer.", "role", "designer"),
        ("I work at Mass General.", "employer", "mass general"),
        ("I work for the city council.", "employer", "city council"),
        ("I left Google for Stripe.", "employer", "stripe"),
        ("I'm now a product manager at a health-tech startup.", "employer", "health-tech startup"),
        ("My new manager is Priya.", "manager", "priya"),
        ("I report to Tom Hardy.", "manager", "tom hardy"),
        ("My wife is Anna.", "partner", "anna"),
        ("I'm engaged to Sam!", "partner", "sam"),
        ("I drive a Honda Civic.", "car", "honda civic"),
        ("My car is a Tesla Model 3.", "car", "tesla model 3"),
        ("I'm studying at MIT.", "school", "mit"),
        ("I go to Boston University.", "school", "boston university"),
    ],
)  # fmt: skip
def test_a_state_is_read_whatever_the_wording(text: str, kind: str, value: str) -> None:
    assert claims(text).get((*SELF, kind)) == value, state_claims(text)


def test_one_statement_claims_every_state_it_states() -> None:
    said = claims("I live in Boston and I work as a nurse at Mass General.")
    assert said == {
        (*SELF, "residence"): "boston",
        (*SELF, "role"): "nurse",
        (*SELF, "employer"): "mass general",
    }


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live now?",
        "Should I move to Denver?",
        "If I moved to Denver I would ski more.",
        "When I moved to Boston in 2010 it was cold.",
        "I might move to Denver.",
        "I'm thinking about moving to Denver.",
        "I'm planning to move to Denver next year.",
        "I'm moving to Denver next month.",
        "I want to work as a nurse at Mass General.",
        "I don't live in Boston anymore.",
        "I no longer work at Mass General.",
        "I never worked as a nurse.",
        "I lived in Boston for years.",
        "I used to live in Boston.",
        "Before I moved to Denver, I was in Boston.",
        "I'm a big fan of nurses.",
        "I'm a huge fan of that team.",
        "I go to Paris every summer.",
        "I work for a living.",
        "I live in a small apartment.",
        "My friend who lives in Denver visited.",
        "Maybe I'll move to Lisbon.",
        "I'd love to live in Paris.",
        "You moved to Denver, right.",
        "He lives in Boston.",
    ],
)
def test_questions_hypotheticals_plans_denials_and_the_past_claim_nothing(text: str) -> None:
    assert state_claims(text) == [], state_claims(text)


def test_another_owner_is_another_key() -> None:
    mine = claims("I moved to Denver last week.")
    sister = claims("My sister moved to Denver last week.")
    assert mine == {(*SELF, "residence"): "denver"}
    assert sister == {("", "sister", "residence"): "denver"}
    assert claims("Our son lives in Leeds.") == {("", "son", "residence"): "leeds"}


def test_a_named_speaker_owns_their_statements() -> None:
    assert claims("Caroline: I moved to Boston.") == {("caroline", "self", "residence"): "boston"}
    # a label before a colon is not a speaker
    assert claims("Update: I moved to Boston.") == {(*SELF, "residence"): "boston"}


def test_the_first_value_of_a_key_in_a_statement_wins() -> None:
    said = state_claims("I live in Boston. I live in Denver.")
    assert said == [StateClaim((*SELF, "residence"), "boston")]


@pytest.mark.parametrize(
    ("question", "speaker", "kind", "past"),
    [
        ("Where do I live now?", "", "residence", False),
        ("Where do I currently live?", "", "residence", False),
        ("Where did I live before?", "", "residence", True),
        ("Where did I live in January?", "", "residence", True),
        ("Where did I used to live?", "", "residence", True),
        ("Where does Caroline live?", "caroline", "residence", False),
        ("What is my job?", "", "role", False),
        ("What was my previous job?", "", "role", True),
        ("What do I do for a living?", "", "role", False),
        ("Where do I work?", "", "employer", False),
        ("Who is my manager?", "", "manager", False),
        ("Who is my partner?", "", "partner", False),
        ("What car do I drive?", "", "car", False),
        ("Where do I go to school?", "", "school", False),
    ],
)  # fmt: skip
def test_questions_about_a_state(question: str, speaker: str, kind: str, past: bool) -> None:
    ask = state_question(question)
    assert ask is not None
    assert (ask.speaker, ask.owner, ask.kind, ask.past) == (speaker, "self", kind, past)


@pytest.mark.parametrize(
    "question", ["What is the weather like?", "What podcast did I recommend?", "I live here."]
)
def test_other_questions_ask_about_no_state(question: str) -> None:
    assert state_question(question) is None


def test_tokens_name_the_key_not_the_value_now_and_once() -> None:
    key = (*SELF, "residence")
    now, once = state_token(key), state_token(key, past=True)
    assert re.fullmatch(r"s[0-9a-f]{20}", now) and re.fullmatch(r"p[0-9a-f]{20}", once)
    assert state_token(("", "sister", "residence")) != now
    tokens = state_tokens(["I moved to Denver.", "I love hiking."], ["I live in Boston."])
    assert tokens == sorted({now, once})
    assert state_tokens(["I love hiking."]) == []


def test_patterns_take_linear_time_on_hostile_text() -> None:
    hostile = [
        "I live in " + "Aa " * 2000,
        "I'm a " + "big " * 3000 + "nurse",
        "I work at the " + "x " * 3000,
        "My sister " * 500 + "moved to Denver",
        "I " + "just " * 3000 + "moved to Denver",
    ]
    for text in hostile:
        started = time.perf_counter()
        state_claims(text)
        state_claims(text * 4)
        assert time.perf_counter() - started < 0.5, text[:40]
    assert len(state_claims("I live in Boston. " * 1000)) == 1  # capped at MAX_TEXT_CHARS
    assert MAX_TEXT_CHARS < 10_000
