"""A remark about the listener weighs less in a question naming a participant (docs/retrieval.md,
"Lines that say nothing of their speaker"), on the fakes: Bo's praise of Ann's playing shares
more of the question's words than Ann's own line, and gives way to it; a question naming no one
(a chat with an assistant asks so) is packed as before."""

from __future__ import annotations

from datetime import timedelta

from retrieval.config import ContextConfig, RetrievalConfig
from retrieval.context import ContextBuilder, ContextRequest, ContextResult
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from tests.fakes.pipelines import T0, Memory, wire

NOW = T0 + timedelta(days=30)
ANN = "On Sundays I practise the violin with friends from work."
PRAISE = "You play so well, the orchestra must be proud of how you play the violin and the viola."
TURNS = [("Ann", ANN), ("Bo", PRAISE), ("Bo", "The weather turned cold this week.")]


def _memory() -> Memory:
    m = wire(SleepPolicy(tail_turns=2))
    items = [
        IncomingMessage.model_validate(
            {"role": "user", "speaker": who, "content": text, "at": T0 + timedelta(minutes=i)}
        )
        for i, (who, text) in enumerate(TURNS)
    ]
    m.conversation.append(m.namespace, items)
    m.sleeper.sleep(m.namespace, T0 + timedelta(hours=2))
    return m


def _build(
    m: Memory, message: str, budget: int, explicit: bool = False, **context: float
) -> ContextResult:
    s = m.stores
    config = RetrievalConfig(context=ContextConfig(speaker_gain=0, **context))  # type: ignore[arg-type]
    builder = ContextBuilder(s.topics, s.messages, m.search, s.context, config=config)
    return builder.build(
        ContextRequest(
            namespace=m.namespace, message=message, now=NOW, budget=budget, explicit=explicit
        )
    )


def _lines(result: ContextResult) -> list[str]:
    return [line for line in result.context_text.splitlines() if line.startswith("- ")]


def test_a_remark_about_the_listener_gives_way_to_the_named_persons_words() -> None:
    m = _memory()
    question = "Which violin and viola does Ann play in the orchestra?"
    weighed = _lines(_build(m, question, 1000))
    flat = _lines(_build(m, question, 1000, listener_weight=1.0))
    assert ANN in weighed[0], weighed  # Ann's own line first
    assert PRAISE in flat[0], flat  # the praise shares more words: first without the weight


def test_a_question_naming_no_participant_is_packed_as_before() -> None:
    """Ann's line and the praise match it alike: weighing the praise would put Ann's first."""
    m = _memory()
    question = "Which violin and viola are practised on Sundays in the orchestra?"
    weighed = _build(m, question, 1000, explicit=True)  # an explicit search: always packed
    flat = _build(m, question, 1000, explicit=True, listener_weight=1.0)
    assert weighed.context_text == flat.context_text
    assert {ANN, PRAISE} <= {line.split(": ", 1)[1] for line in _lines(weighed)}
