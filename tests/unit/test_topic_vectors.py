"""What a sleep embeds for topic vectors (sleepwake/sleep.py). A long changed topic's vector
(``blend``) is blended from its stored vector and the vectors of the candidates folded into it,
not its semantic text embedded again; its text is embedded when short or when no vector of the
sleep's model is stored (a migration mixes harmlessly). A long candidate's vector
(``candidate_vectors``) is its head's vector and its facts' turn vectors, weighted."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import numpy as np
import pytest

from graph.models import Fact
from retrieval.embedding import text_hash
from sleepwake.candidates import Candidate, SliceCandidates
from sleepwake.config import DEFAULT, SleepConfig, UtilityConfig
from sleepwake.policy import SleepPolicy
from sleepwake.topic_vectors import blend, candidate_vectors
from tests.fakes import HashEmbedder
from tests.fakes.pipelines import T0, Memory, wire
from text.gist import VECTOR_FACTS

DIM = 384
POLICY = SleepPolicy(tail_turns=4)
# the blend threshold the sleeps of ``party_twice`` are configured with (a fixture moves it)
sleep_module = SimpleNamespace(BLEND_CHARS=DEFAULT.utility.blend_chars)
PARTY = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday with Anna."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests for the surprise party. We still need to book the caterer."),
    ("user", "The surprise party needs a cake and the lake house needs cleaning."),
    *[("assistant", "ok")] * 4,
]
LATER = [
    ("user", "For the surprise party at the lake house we booked the caterer, Rosa's Kitchen."),
    *[("assistant", "ok")] * 4,
]
# a long answer makes the sleep one of a chat with an assistant (side_topics.with_assistant)
ANSWER = ("assistant", "Good. For the surprise party, plan the day around the caterer. " * 10)


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i] = 1.0
    return v


def candidate(facts: int) -> Candidate:
    cand = Candidate(key="party", label="party")
    cand.facts = [Fact(text=f"fact {i}", at=T0) for i in range(facts)]
    return cand


def test_blend_weighs_the_stored_vector_and_each_candidate_by_their_facts() -> None:
    got = np.asarray(blend(unit(0), 3, [(candidate(1), "", unit(1))]))
    want = np.asarray(unit(0)) * 3 + np.asarray(unit(1))
    assert got == pytest.approx(want / np.linalg.norm(want))
    assert float(np.linalg.norm(got)) == pytest.approx(1.0)


def test_blend_counts_at_most_a_semantic_texts_facts_and_at_least_one() -> None:
    cap = VECTOR_FACTS + 1
    many = np.asarray(blend(unit(0), 50, [(candidate(40), "", unit(1))]))
    assert many[0] == pytest.approx(many[1])  # both capped: equal weights
    none = np.asarray(blend(unit(0), 0, [(candidate(cap), "", unit(1))]))
    assert none[1] / none[0] == pytest.approx(cap)  # an empty topic still counts once


def test_blend_of_vectors_that_cancel_keeps_the_stored_one() -> None:
    opposite = [-x for x in unit(0)]
    assert blend(unit(0), 1, [(candidate(1), "", opposite)]) == unit(0)


def party_twice(chat: bool = True) -> tuple[Memory, str, list[float]]:
    """The party topic after one sleep (its id and stored vector), the later turns said (with
    a long answer when ``chat``)."""
    blend_chars = UtilityConfig(blend_chars=sleep_module.BLEND_CHARS)
    m = wire(config=SleepConfig(policy=POLICY, utility=blend_chars))
    m.say(T0, *PARTY)
    m.sleeper.sleep(m.namespace, T0 + timedelta(hours=1))
    (party,) = m.topics.find_by_alias(m.namespace, "surprise party")
    stored = m.stores.graph.topics[party.topic_id].embedding
    assert stored is not None
    later = T0 + timedelta(days=2)
    m.say(later, *LATER[:1], *([ANSWER] if chat else []), *LATER[1:])
    return m, party.topic_id, stored


@pytest.fixture
def blend_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every changed text counts as long (the test's topic is a few sentences)."""
    monkeypatch.setattr(sleep_module, "BLEND_CHARS", 0)


@pytest.mark.usefixtures("blend_all")
def test_a_long_changed_topic_is_blended_not_embedded_again() -> None:
    m, tid, before = party_twice()
    calls = len(m.embedder.calls)  # type: ignore[attr-defined]
    summary = m.sleeper.sleep(m.namespace, T0 + timedelta(days=2, hours=1))
    assert summary.topics_updated >= 1
    topic = m.topics.get_one(m.namespace, tid)
    assert any("Rosa's Kitchen" in f.text for f in topic.facts)
    embedded = [t for batch in m.embedder.calls[calls:] for t in batch]  # type: ignore[attr-defined]
    assert topic.semantic_text() not in embedded
    after = m.stores.graph.topics[tid].embedding
    assert after is not None and after != before
    assert float(np.linalg.norm(after)) == pytest.approx(1.0)
    # the vector moved towards the new turn, and stands for the topic's new text
    new = np.asarray(m.embedder.vector(LATER[0][1]))  # type: ignore[attr-defined]
    assert float(np.asarray(after) @ new) > float(np.asarray(before) @ new)
    assert topic.embedding is not None
    assert topic.embedding.hash == text_hash(topic.semantic_text())


@pytest.mark.parametrize(
    ("chat", "long"), [(True, False), (False, True)], ids=["short text", "not a chat"]
)
def test_a_short_or_not_chat_changed_topic_has_its_text_embedded(
    chat: bool, long: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the threshold set so that the topic's text is over it (not a chat) or under it
    monkeypatch.setattr(sleep_module, "BLEND_CHARS", 0 if long else 10_000)
    m, tid, _ = party_twice(chat)
    m.sleeper.sleep(m.namespace, T0 + timedelta(days=2, hours=1))
    topic = m.topics.get_one(m.namespace, tid)
    assert any("Rosa's Kitchen" in f.text for f in topic.facts)
    assert (len(topic.semantic_text()) > sleep_module.BLEND_CHARS) is long
    want = m.embedder.vector(topic.semantic_text())  # type: ignore[attr-defined]
    assert m.stores.graph.topics[tid].embedding == pytest.approx(want)


@pytest.mark.usefixtures("blend_all")
@pytest.mark.parametrize("model", [None, "another/model"], ids=["unknown", "other"])
def test_a_topic_without_a_vector_of_this_model_has_its_text_embedded(model: str | None) -> None:
    m, tid, _ = party_twice()
    m.stores.graph.topics[tid].props["embedding_model"] = model  # e.g. imported, or a new model
    calls = len(m.embedder.calls)  # type: ignore[attr-defined]
    m.sleeper.sleep(m.namespace, T0 + timedelta(days=2, hours=1))
    topic = m.topics.get_one(m.namespace, tid)
    embedded = [t for batch in m.embedder.calls[calls:] for t in batch]  # type: ignore[attr-defined]
    assert topic.semantic_text() in embedded
    want = m.embedder.vector(topic.semantic_text())  # type: ignore[attr-defined]
    assert m.stores.graph.topics[tid].embedding == pytest.approx(want)
    assert topic.embedding is not None and topic.embedding.model == m.embedder.model_name


# -- candidates: a long candidate's vector composed from its head and its facts' turns ----------
def long_candidate(turns: int = 6) -> Candidate:
    """A candidate of ``turns`` facts of ~250 characters each, fact i from message m<i>."""
    cand = Candidate(key="billing migration", label="billing migration")
    for i in range(turns):
        body = f"Step {i} of the billing migration moves the invoices table {i}. " * 4
        cand.add_fact(Fact(text=body.strip(), at=T0, source_message_ids=[f"m{i}"]))
    return cand


def slice_of(*cands: Candidate, turn_vectors: dict[str, list[float]]) -> SliceCandidates:
    return SliceCandidates(list(cands), [], None, {}, {}, turn_vectors)


def test_a_long_candidate_embeds_its_head_and_takes_its_facts_turn_vectors() -> None:
    cand = long_candidate()
    assert len(cand.semantic_text()) > sleep_module.BLEND_CHARS
    turns = {f"m{i}": unit(i) for i in range(6)}
    embedder = HashEmbedder()
    (got,) = candidate_vectors(embedder, slice_of(cand, turn_vectors=turns))
    head, facts = cand.semantic_parts()
    assert embedder.calls == [[head]]  # the head only, not the ~1,500-character text
    want = np.asarray(embedder.vector(head)) * len(head)
    for fact in facts:
        want += np.asarray(turns[fact.source_message_ids[0]]) * len(fact.text)
    assert got == pytest.approx(list(want / np.linalg.norm(want)))


def test_a_short_candidate_or_one_with_a_turn_unembedded_has_its_text_embedded() -> None:
    short, unknown = long_candidate(turns=2), long_candidate()
    assert len(short.semantic_text()) <= sleep_module.BLEND_CHARS
    turns = {f"m{i}": unit(i) for i in range(5)}  # m5 (a fact of ``unknown``) was not embedded
    embedder = HashEmbedder()
    got = candidate_vectors(embedder, slice_of(short, unknown, short, turn_vectors=turns))
    assert embedder.calls == [[short.semantic_text(), unknown.semantic_text()]]  # once each
    assert got[0] == got[2] == pytest.approx(embedder.vector(short.semantic_text()))
    assert got[1] == pytest.approx(embedder.vector(unknown.semantic_text()))


def test_outside_a_chat_a_long_candidate_has_its_text_embedded() -> None:
    cand = long_candidate()
    embedder = HashEmbedder()
    turns = {f"m{i}": unit(i) for i in range(6)}
    (got,) = candidate_vectors(embedder, slice_of(cand, turn_vectors=turns), compose=False)
    assert embedder.calls == [[cand.semantic_text()]]
    assert got == pytest.approx(embedder.vector(cand.semantic_text()))
