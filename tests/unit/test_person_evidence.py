"""A question about a person (docs/retrieval.md, "A question about a person"), on the fakes:
what the participants a question names said is searched by meaning on its own
(``PassageStore.search_spoken``) and weighed above what the others said (``speaker_weight``),
so "What instruments does Ann play?" gets Ann's sentences of two sessions, not her friend's
questions about instruments. Which passage MiniLM finds nearest is the integration tests' job
(tests/integration/test_person_context.py)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest

from graph.errors import Neo4jUnavailable
from graph.messages import MessageHit
from retrieval.candidates import speaker_weight
from retrieval.config import ContextConfig, RetrievalConfig
from retrieval.context import ContextBuilder, ContextRequest, ContextResult
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from tests.fakes.passages import FakePassages
from tests.fakes.pipelines import T0, Memory, wire

NOW = T0 + timedelta(days=30)
QUESTION = "What instruments does Ann play?"
CELLO = "Lately I practise the cello every evening after work."  # no word of the question
FIRST = [
    ("Ann", "I play the violin in a community orchestra."),
    ("Bo", "Which instruments did you play as a kid?"),
    ("Bo", "I play guitar in a band on Fridays."),
    ("Bo", "Do you play any other instruments these days?"),
]
SECOND = [
    ("Bo", "Our band played three songs with new instruments last night."),
    ("Ann", CELLO),
    ("Bo", "Instruments are expensive; I play a borrowed guitar."),
]


def test_a_named_speakers_sentences_weigh_more_whatever_the_case() -> None:
    assert speaker_weight("Ann", {"ann"}, 0.5) == 1.5
    assert speaker_weight(" ANN ", {"ann"}, 0.5) == 1.5
    assert speaker_weight("Bo", {"ann"}, 0.5) == 1.0
    assert speaker_weight("Ann", set(), 0.5) == 1.0  # a question naming nobody: as it was
    assert speaker_weight("", {"ann"}, 0.5) == 1.0  # an unnamed assistant's reply


class SpokenPassages(FakePassages):
    """Passages found by meaning: the messages of the speakers asked for that are held in
    ``answers`` (what MiniLM would find nearest), with the speakers each search asked."""

    def __init__(self, memory: Memory, answers: Sequence[str], fail: bool = False) -> None:
        super().__init__([])
        self.memory, self.answers, self.fail = memory, list(answers), fail
        self.asked: list[list[str]] = []

    def search_spoken(
        self,
        namespace: str,
        speakers: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        self.asked.append(list(speakers))
        if self.fail:
            raise Neo4jUnavailable("passages down")
        said = self.memory.stores.messages.tail(namespace, 1000)
        return [
            MessageHit(m, 0.8, (), (m.content,))
            for m in said
            if m.content in self.answers and (m.speaker or "").lower() in speakers
        ][:k]


def _conversation() -> Memory:
    """Two sessions a week apart, each slept: Ann says what she plays once in each, in other
    words; Bo asks about instruments and talks of his own."""
    m = wire(SleepPolicy(tail_turns=2))
    for week, turns in enumerate([FIRST, SECOND]):
        at = T0 + timedelta(days=7 * week)
        items = [
            IncomingMessage.model_validate(
                {"role": "user", "speaker": who, "content": text, "at": at + timedelta(minutes=i)}
            )
            for i, (who, text) in enumerate(turns)
        ]
        m.conversation.append(m.namespace, items)
        m.sleeper.sleep(m.namespace, at + timedelta(hours=2))
    return m


def _builder(m: Memory, passages: FakePassages, **context: float) -> ContextBuilder:
    s = m.stores
    config = RetrievalConfig(context=ContextConfig(**context))  # type: ignore[arg-type]
    return ContextBuilder(
        s.topics, s.messages, m.search, s.context, config=config, passages=passages
    )


def _build(builder: ContextBuilder, m: Memory, message: str, budget: int = 1000) -> ContextResult:
    req = ContextRequest(namespace=m.namespace, message=message, now=NOW, budget=budget)
    return builder.build(req)


def _sources(result: ContextResult) -> set[str]:
    return {s for i in result.items for s in i["provenance"]["source_ids"]}


def _ids(m: Memory) -> dict[str, str]:
    return {x.content: x.message_id for x in m.stores.messages.tail(m.namespace, 100)}


def test_what_the_named_person_said_in_other_words_reaches_the_context() -> None:
    """The messages found by words are few here (two), as in a conversation of hundreds of
    turns where the speaker's name alone matches all of theirs: the cello, which shares no
    word with the question, comes only through the search of what Ann said."""
    m = _conversation()
    few = {"light_evidence": 2, "deep_evidence": 2}
    passages = SpokenPassages(m, [CELLO])
    got = _build(_builder(m, passages, **few), m, QUESTION)
    assert passages.asked == [["ann"]]  # the participant the question names, no one else
    ids = _ids(m)
    assert {ids[CELLO], ids[FIRST[0][1]]} <= _sources(got), got.context_text
    off = SpokenPassages(m, [CELLO])  # the search turned off: the cello is not found by words
    without = _build(_builder(m, off, spoken_evidence=0, **few), m, QUESTION)
    assert off.asked == [] and ids[CELLO] not in _sources(without), without.context_text


def test_a_question_naming_no_participant_searches_no_ones_words() -> None:
    m = _conversation()
    passages = SpokenPassages(m, [CELLO])
    _build(_builder(m, passages), m, "Which instruments cost the most?")
    assert passages.asked == []


def test_within_a_small_budget_the_named_persons_sentences_come_first() -> None:
    """Bo's questions share more of the question's words than Ann's answers; with room for
    two lines, the weight of the person asked about keeps her two sentences in."""
    m = _conversation()
    ids = _ids(m)
    ann = {ids[FIRST[0][1]], ids[CELLO]}
    weighed = _build(_builder(m, SpokenPassages(m, [CELLO])), m, QUESTION, budget=60)
    flat = _build(_builder(m, SpokenPassages(m, [CELLO]), speaker_gain=0), m, QUESTION, budget=60)
    assert ann <= _sources(weighed), weighed.context_text
    assert not ann <= _sources(flat), flat.context_text  # the weight is what keeps them


def test_the_spoken_search_failing_leaves_the_context_built(
    caplog: pytest.LogCaptureFixture,
) -> None:
    m = _conversation()
    with caplog.at_level(logging.WARNING, logger="retrieval.gather"):
        got = _build(_builder(m, SpokenPassages(m, [CELLO], fail=True)), m, QUESTION)
    assert "evidence spoken by the named unavailable" in caplog.text
    assert _ids(m)[FIRST[0][1]] in _sources(got)  # found by its words, as before


def test_as_of_bounds_what_the_named_person_said() -> None:
    m = _conversation()
    seen: list[datetime | None] = []

    class Until(SpokenPassages):
        def search_spoken(
            self,
            namespace: str,
            speakers: Sequence[str],
            vector: Sequence[float],
            k: int,
            until: datetime | None = None,
        ) -> list[MessageHit]:
            seen.append(until)
            return []

    builder = _builder(m, Until(m, []))
    when = T0 + timedelta(days=3)
    builder.build(ContextRequest(namespace=m.namespace, message=QUESTION, now=NOW, as_of=when))
    assert seen == [when + timedelta(microseconds=1)]
