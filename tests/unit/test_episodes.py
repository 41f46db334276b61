"""Topic formation's pure parts: episodes, phrase ranking, fact selection, date notes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from graph.models import Message
from sleepwake.candidates import Candidate, build_candidates
from sleepwake.episodes import (
    PhraseStats,
    eligible,
    form_topics,
    happened_at,
    phrase_score,
    segment,
    select_sentences,
    turn_fact,
)
from sleepwake.extract import extract
from tests.fakes import HashEmbedder

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _cluster(direction: int, n: int, dims: int = 8) -> list[np.ndarray]:
    base = np.zeros(dims)
    base[direction] = 1.0
    return [base + 0.05 * np.eye(dims)[(direction + 1 + i) % dims] for i in range(n)]


def test_segment_cuts_where_the_subject_changes() -> None:
    vectors = np.asarray(_cluster(0, 6) + _cluster(3, 6))
    assert segment(vectors, min_turns=3) == [(0, 6), (6, 12)]


def test_segment_keeps_a_minimum_length_and_splits_long_runs() -> None:
    vectors = np.asarray(_cluster(0, 2) + _cluster(3, 30))
    spans = segment(vectors, min_turns=4, max_turns=10)
    assert all(end - start >= 4 for start, end in spans)
    assert all(end - start <= 10 for start, end in spans)
    assert spans[0][0] == 0 and spans[-1][1] == 32


def test_a_pause_always_cuts_and_shared_words_hold_turns_together() -> None:
    vectors = np.asarray(_cluster(0, 8))
    pauses = [i == 3 for i in range(7)]
    assert segment(vectors, pauses, min_turns=2) == [(0, 4), (4, 8)]
    apart = np.asarray(_cluster(0, 4) + _cluster(3, 4))
    assert segment(apart, min_turns=2) == [(0, 4), (4, 8)]
    drift = np.asarray(_cluster(0, 4) + [v + 3 * np.eye(8)[3] for v in _cluster(0, 4)])
    assert segment(drift, min_turns=2) == [(0, 4), (4, 8)]
    linked = [0, 0, 0, 2, 0, 0, 0]  # turns 3 and 4 share words: a mild drift is no new subject
    assert segment(drift, min_turns=2, links=linked) == [(0, 8)]


def _stats(key: str, **kw: object) -> PhraseStats:
    base: dict[str, object] = dict(
        key=key, turns=1, words=len(key.split()), named=False, event=False, spread=0.0, slice_turns=1,
        structural=False,
    )  # fmt: skip
    base.update(kw)
    return PhraseStats(**base)  # type: ignore[arg-type]


def test_specific_repeated_phrases_outrank_names_and_generic_words() -> None:
    support = phrase_score(_stats("support group", turns=3), centrality=0.5)
    name = phrase_score(_stats("caroline", named=True, turns=3), centrality=0.6)
    generic = phrase_score(_stats("life", spread=0.9), centrality=0.5)
    assert support > name and support > generic


def test_contractions_and_time_words_never_name_a_topic() -> None:
    def cand(surface: str) -> Candidate:
        c = Candidate(key=surface.lower())
        c.surfaces[surface] += 1
        return c

    assert eligible(cand("pottery class"))
    assert not eligible(cand("must've"))
    assert not eligible(cand("last week"))
    assert not eligible(cand("ok"))


def test_facts_are_statements_one_or_two_sentences_never_questions() -> None:
    sentences = [
        "Hey!",
        "What happened that was so awesome?",
        "I signed up for a pottery class last week.",
        "It was nice.",
        "We are going to Tahoe on the 20th with the kids.",
    ]
    chosen = select_sentences(sentences)
    assert chosen == [sentences[2], sentences[4]]
    assert select_sentences(["How are you?", "What about you?"]) == []


def test_relative_dates_are_resolved_beside_the_fact() -> None:
    assert happened_at("I went to the support group yesterday.", T0, "UTC") == datetime(
        2023, 5, 7, tzinfo=UTC
    )
    assert happened_at("I went to the support group.", T0, "UTC") is None
    assert happened_at("We are going camping next month.", T0, "UTC") is None  # a plan
    message = Message(
        message_id="m1", namespace="ns", role="user", content="x", at=T0, speaker="Caroline"
    )
    fact = turn_fact(message, extract("I went to a LGBTQ support group yesterday."), "UTC")
    assert fact is not None
    assert fact.text == "Caroline: I went to a LGBTQ support group yesterday."
    assert fact.valid_from == datetime(2023, 5, 7, tzinfo=UTC) and fact.at == T0


def _messages(turns: list[tuple[str, str]], start: datetime = T0) -> list[Message]:
    return [
        Message(
            message_id=f"m{i}", namespace="ns", role=role, content=text,  # type: ignore[arg-type]
            at=start + timedelta(seconds=30 * i), seq=i,
        )
        for i, (role, text) in enumerate(turns)
    ]  # fmt: skip


def test_a_long_assistant_answer_makes_a_handful_of_topics() -> None:
    paragraph = (
        "Sourdough bread needs a lively starter, strong flour, water and salt. Feed the starter "
        "the night before, mix the dough, rest it, then fold it every half hour for two hours. "
        "Shape the loaf, proof it in a basket in the fridge overnight and bake it in a hot "
        "Dutch oven with the lid on for twenty minutes, then without the lid until it is dark. "
    )
    answer = paragraph * 12  # ~4,000 characters, dozens of noun phrases
    turns = [("user", "How do I bake sourdough bread at home?"), ("assistant", answer)]
    messages = _messages(turns)
    phrases = build_candidates(messages)
    assert len(phrases.candidates) >= 8
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    assert 1 <= len(topics.candidates) <= 3
    assert sum(len(c.facts) for c in topics.candidates) <= 2  # one per turn at most
