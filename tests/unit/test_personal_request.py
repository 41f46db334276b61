"""Personal requests (issue #12, LongMemEval preference questions): a request for advice, a
recommendation or suggestions, or a question about the user's own life, consults memory even
when its consult confidence is low, and goes deep when the light search finds nothing clear.
Small talk and impersonal requests do not. A question for the current value ("most recent",
"currently") puts the newest statement first. Pure: no I/O."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from api.settings import Settings
from retrieval.classify import ConsultSignals, RequestClass, classify, consult
from retrieval.config import DEFAULT, ConsultConfig
from retrieval.intent import latest_cue, personal_cue
from retrieval.packer import Snippet, prefer_newest
from retrieval.triggers import (
    RetrievalSignals,
    TriggerContext,
    after_search,
    fired,
    personal_request,
)

NOW = datetime(2026, 3, 11, 12, tzinfo=UTC)
VAGUE = TriggerContext(now=NOW, signals=RetrievalSignals(0.31, 0.30, 1.2))
CLEAR = TriggerContext(now=NOW, signals=RetrievalSignals(0.71, 0.52, 2.0))
LOW = ConsultSignals(lexical=0.2, semantic=0.3)  # 0.06 + 0.075 + scope 0.10: skip


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the six preference questions of the LongMemEval dev sample
        ("Can you suggest some activities that I can do in the evening?", "advice"),
        ("My kitchen's becoming a bit of a mess again. Any tips for keeping it clean?", "advice"),
        ("I was thinking of trying a new coffee creamer recipe. Any recommendations?", "advice"),
        ("Can you suggest some activities I can do during my commute to work?", "advice"),
        ("I’m a bit anxious about getting around Tokyo. Do you have any helpful tips?", "advice"),
        (
            "I noticed my bike seems to be performing even better during my Sunday group rides. "
            "Could there be a reason for this?",
            "about the user's own life",
        ),
        ("What should I cook for dinner tonight?", "advice"),
        ("Help me pick a present for my sister.", "advice"),
        ("Recommend a podcast for the train.", "advice"),
        ("What time do I usually wake up on Saturdays?", "about the user's own life"),
    ],
)
def test_advice_and_questions_about_the_users_life_are_personal(text: str, kind: str) -> None:
    cue = personal_cue(text)
    assert cue is not None and cue.startswith(f"personal_request: {kind} '")


@pytest.mark.parametrize(
    "text",
    [
        "thanks!",
        "ok",
        "great, thank you",
        "good morning",
        "What is the capital of France?",  # a question, but not about the user
        "Can you write a poem about the sea?",
        "I think so.",  # the first person, but no question
        "Any news on billing? I owe Sam 300 euros for it.",  # "I" only in an aside after it
        "The tips of the leaves turned brown.",  # "tips", but nobody asks for any
    ],
)
def test_small_talk_and_impersonal_messages_are_not_personal(text: str) -> None:
    assert personal_cue(text) is None


def test_a_personal_request_goes_deep_only_when_the_light_search_is_vague() -> None:
    text = "Any tips for keeping my kitchen clean?"
    pending = TriggerContext(now=NOW, search_pending=True)
    assert personal_request(text, pending) is None  # waits for the light search's signals
    assert personal_request(text, CLEAR) is None  # a clear topic: the light search serves it
    reason = personal_request(text, VAGUE)
    assert reason is not None
    assert reason.startswith("personal_request: advice 'Any tips'")
    assert "no clear topic" in reason and "best_cosine 0.310" in reason
    between = TriggerContext(now=NOW, signals=RetrievalSignals(0.50, 0.40, 1.2))
    assert after_search(text, between) == personal_request(text, between)
    low = after_search(text, VAGUE)  # the vaguest searches are named by low confidence
    assert low is not None and low.startswith("low_confidence")
    assert fired(text, pending) == []  # nothing before the search
    assert personal_request("thanks!", VAGUE) is None


def test_small_talk_stays_class_c() -> None:
    for text in ("thanks!", "ok", "great, thank you"):
        assert classify(text, []) is RequestClass.NONE
    assert classify("Any tips for keeping my kitchen clean?", []) is RequestClass.IMPLICIT


def test_the_floor_raises_a_low_band_and_says_why() -> None:
    assert consult(LOW).band == "skip"
    raised = consult(LOW, DEFAULT.consult, "normal", "personal_request: advice 'Any tips'")
    assert raised.band == "normal"
    assert raised.raised_by == "personal_request: advice 'Any tips'"
    assert raised.confidence == consult(LOW).confidence  # the score itself is not changed
    high = ConsultSignals(lexical=1.0, semantic=1.0, same_task=1.0, provenance=1.0)
    assert consult(high, DEFAULT.consult, "consult", "why").band == "related"  # never lowered
    assert consult(high, DEFAULT.consult, "consult", "why").raised_by == ""
    assert consult(LOW, DEFAULT.consult, "skip", "why").band == "skip"  # "skip": no floor


def test_the_floor_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT.consult.personal_floor == "normal"
    monkeypatch.setenv("SHERIFF_RETRIEVAL__CONSULT__PERSONAL_FLOOR", "consult")
    assert Settings().retrieval.consult.personal_floor == "consult"
    with pytest.raises(ValidationError, match="personal_floor"):
        ConsultConfig(personal_floor="always")  # type: ignore[arg-type]


# -- a question for the current value: the newest statement leads ---------------------------------
def _snip(mid: str, day: int, score: float) -> Snippet:
    at = datetime(2023, 5, day, 12, tzinfo=UTC)
    return Snippet(mid, mid, at, "", f"text {mid}", score, ["t1"])


def test_a_question_for_the_current_value_is_recognised() -> None:
    assert latest_cue("Where did I go on my most recent family trip?") == "latest: 'most recent'"
    assert latest_cue("Where do I currently keep my old sneakers?") == "latest: 'currently'"
    assert latest_cue("Where did I go on my family trip?") is None
    assert latest_cue("I still keep them under the bed.") is None  # a statement asks nothing


def test_the_newest_statement_outranks_the_one_it_updated() -> None:
    """Hawaii (26 May) scored a little higher than Paris (28 May) for "most recent family
    trip"; with the gain the newer one leads, and an unrelated old line keeps its place."""
    hawaii, paris, other = _snip("hawaii", 26, 1.0), _snip("paris", 28, 0.9), _snip("x", 1, 0.3)
    ranked = prefer_newest([hawaii, paris, other], gain=DEFAULT.context.latest_gain)
    assert [s.message_id for s in sorted(ranked, key=lambda s: -s.score)] == [
        "paris",
        "hawaii",
        "x",
    ]
    assert other.score == 0.3  # the oldest: newness 0
    assert paris.score == pytest.approx(0.9 * 1.5)
    lone = _snip("only", 3, 0.7)
    assert prefer_newest([lone], 0.5)[0].score == 0.7  # nothing to compare with
