"""Personal requests on real retrieval results (issue #12, LongMemEval preference questions):
real Neo4j, real MiniLM, the production sleep.

Over four days a user mentions, in passing, how they like to spend their evenings and their
commute, among other subjects. A week later "Can you suggest some activities I can do in the
evening?" names none of it, scores low on consult confidence, and used to get an empty context;
it now consults memory and the context cites the turn where the user said how they wind down.
Small talk still gets nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from neo4j import Driver

from api.settings import Settings
from retrieval.classify import BANDS
from retrieval.config import ConsultConfig
from retrieval.context import ContextBuilder, ContextRequest, ContextResult
from retrieval.embedding import MiniLMEmbedder
from tests.fakes.context import SeparateReads
from tests.integration.test_context import DAY1, DAY1_TURNS, DAY2_TURNS, Stack, build

EVENINGS = (
    "I'm trying to sleep better. In the evening I prefer winding down by 9:30 pm with a paper "
    "book and chamomile tea, and I keep screens off after 9."
)
COMMUTE = (
    "I listen to true crime and history podcasts on my 40-minute commute by train; that's my "
    "favourite part of the day."
)
DAY3_TURNS = [
    ("user", EVENINGS),
    ("assistant", "A calm routine like that helps. Keep the room cool and dark as well."),
    ("user", "Thanks, I'll try it this week."),
    ("assistant", "Good luck!"),
]
DAY4_TURNS = [
    ("user", "The quarterly tax return is due on the 15th; the accountant needs the receipts."),
    ("assistant", "I'll remind you about the receipts."),
    ("user", COMMUTE),
    ("assistant", "History podcasts are a great way to use the time."),
]
NOW = DAY1 + timedelta(days=11)
ADVICE = "Can you suggest some activities I can do in the evening?"


@pytest.fixture
def stack(settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str) -> Stack:
    """Four days of conversation, each slept in the evening."""
    stack = build(settings, driver, embedder, namespace)
    for day, turns in enumerate([DAY1_TURNS, DAY2_TURNS, DAY3_TURNS, DAY4_TURNS]):
        at = DAY1 + timedelta(days=day)
        stack.say(at, turns)
        stack.sleep(at + timedelta(hours=10))
    return stack


def _cited(result: ContextResult, stack: Stack) -> set[str]:
    """The contents of the messages the context's items cite."""
    stored = stack.messages()
    ids = {sid for item in result.items for sid in item["provenance"]["source_ids"]}
    return {stored[i].content for i in ids if i in stored}


def _context(stack: Stack, message: str, now: datetime = NOW) -> ContextResult:
    return stack.context(message, now=now, session_id="s1")


def test_a_recommendation_request_gets_the_users_stated_preference(
    stack: Stack, settings: Settings
) -> None:
    result = _context(stack, ADVICE)
    assert result.request_class == "B"
    assert result.consult["personal_request"] == "personal_request: advice 'Can you suggest'"
    assert EVENINGS in _cited(result, stack), result.context_text
    # the score alone would not have reached the floor's band (nothing in memory names
    # "activities"): the floor raised it, and says so; the search was vague, so it went deep
    assert result.consult["confidence"] < settings.retrieval.consult.normal_from
    assert result.consult["band"] == settings.retrieval.consult.personal_floor
    assert result.consult["raised_by"] == result.consult["personal_request"]
    assert result.deep
    # without the floor (the policy before), the same memory is consulted at the score's own
    # band only: below the floor's
    before = settings.retrieval.model_copy(update={"consult": ConsultConfig(personal_floor="skip")})
    c = stack.container
    reads = SeparateReads(c.topics, c.messages, c.search.events)
    old = ContextBuilder(c.topics, c.messages, c.search, reads, tz="UTC", config=before)
    req = ContextRequest(namespace=stack.namespace, message=ADVICE, now=NOW)
    unfloored = old.build(req).consult
    assert BANDS.index(unfloored["band"]) < BANDS.index(settings.retrieval.consult.personal_floor)
    assert "raised_by" not in unfloored


def test_a_question_about_the_users_own_habit_gets_it(stack: Stack) -> None:
    result = _context(stack, "Any tips to make my commute to work more fun?")
    assert result.consult["personal_request"].startswith("personal_request: advice")
    assert COMMUTE in _cited(result, stack), result.context_text


def test_small_talk_still_gets_nothing(stack: Stack) -> None:
    for text in ("thanks!", "ok", "great, thank you"):
        result = _context(stack, text)
        assert result.request_class == "C" and not result.deep, text
        assert result.items == [] and result.context_text == "", text
        assert "personal_request" not in result.consult
