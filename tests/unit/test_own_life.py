"""Whose words answer (LongMemEval multi-session questions): a question about the user's own life
("How much did I spend on workshops?") is answered by what the user said; an assistant's reply
echoes the same words ("Great that you keep attending workshops!") and matched as well, so its
snippets count ``assistant_weight`` of their score. A question that names the assistant ("you
recommended") or a past chat keeps the assistant's words at full weight. Pure: no I/O."""

from __future__ import annotations

from datetime import timedelta

import pytest

from retrieval.context import ContextRequest, ContextResult
from retrieval.intent import own_life_cue
from tests.fakes.pipelines import T0, Memory, wire

STATED = "I paid 120 dollars for a pottery workshop in March, money well spent."
ECHO = "Spending money on workshops is great, it pays off."
TURNS = [
    ("user", STATED),
    ("assistant", ECHO),
    ("user", "ok, thanks"),
]


@pytest.mark.parametrize(
    "text",
    [
        "How much total money did I spend on attending workshops in the last four months?",
        "How many different cuisines have I learned to cook or tried out in the past few months?",
        "Where do I currently keep my old sneakers?",
        "My kitchen's becoming a bit of a mess again. Any tips for keeping it clean?",
    ],
)
def test_a_first_person_question_asks_about_the_users_own_life(text: str) -> None:
    cue = own_life_cue(text)
    assert cue is not None and cue.startswith("own life: '")


@pytest.mark.parametrize(
    "text",
    [
        # the assistant's words may be the answer: it is named, or a past chat is
        "Can you remind me of the name of the romantic Italian restaurant in Rome you recommended?",
        "I was looking back at our previous chat and I wanted to confirm, how many times did the "
        "Chiefs play the Jaguars at Arrowhead Stadium?",
        "I’m a bit anxious about getting around Tokyo. Do you have any helpful tips?",
        "Do you remember what I said about the caterer?",
        # not about the user, or not a question
        "When did Caroline go to the LGBTQ support group?",
        "I spent 120 dollars on a pottery class.",
    ],
)
def test_a_question_naming_the_assistant_or_no_one_is_not_about_the_users_own_life(
    text: str,
) -> None:
    assert own_life_cue(text) is None


def told() -> Memory:
    m = wire()
    m.say(T0, *TURNS)
    return m


def context(m: Memory, message: str, budget: int) -> ContextResult:
    at = T0 + timedelta(days=1)
    return m.context.build(
        ContextRequest(namespace=m.namespace, message=message, now=at, budget=budget, explicit=True)
    )


def cited_text(result: ContextResult) -> str:
    return "\n".join(i["durable_summary"] for i in result.items)


def test_the_users_own_statement_outranks_the_assistants_echo_of_the_question() -> None:
    m = told()
    wide = context(m, "How much money did I spend on workshops?", 400)
    # both are evidence; the echo shares more words of the question than the statement
    assert "pottery workshop" in cited_text(wide) and "pays off" in cited_text(wide)
    # room for one line: the user's statement
    narrow = context(m, "How much money did I spend on workshops?", 35)
    assert "pottery workshop" in cited_text(narrow)
    assert "pays off" not in cited_text(narrow)


def test_a_question_naming_the_assistant_keeps_its_words_first() -> None:
    m = told()
    narrow = context(m, "What did you say about spending money on workshops?", 35)
    assert "pays off" in cited_text(narrow)


def test_with_the_weight_at_one_the_echo_wins_as_before() -> None:
    from retrieval.config import ContextConfig, RetrievalConfig

    m = told()
    m.context.config = RetrievalConfig(context=ContextConfig(assistant_weight=1.0))
    m.context.cfg = m.context.config.context
    narrow = context(m, "How much money did I spend on workshops?", 35)
    assert "pays off" in cited_text(narrow)
