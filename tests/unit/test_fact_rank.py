"""A topic's facts as a signal of topic search (retrieval/fact_rank.py), on the in-memory fakes:
the best fact's meaning (its passage's cosine) and words (BM25 over the candidates' facts), and
topic search ranking the topic that holds the answering fact first. Vectors and cosines are
chosen by hand."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graph.models import Fact, Topic, parse
from retrieval.config import SearchConfig
from retrieval.fact_rank import fact_signals
from retrieval.scoring import final_score
from retrieval.search import TopicSearch
from tests.fakes import FakeStores
from tests.unit.test_topic_search_unit import NOW, NS, Lookup, axis

AT = NOW - timedelta(days=3)


def fact(text: str, message_id: str, closed: bool = False) -> Fact:
    return Fact(
        text=text, at=AT, source_message_ids=[message_id],
        invalid_at=AT + timedelta(hours=1) if closed else None,
    )  # fmt: skip


def topic(key: str, name: str, one_liner: str, facts: list[Fact]) -> Topic:
    data = {"topic_id": key, "namespace": NS, "name": name, "one_liner": one_liner,
            "time": {"first_seen_at": AT, "last_seen_at": AT}, "facts": facts}  # fmt: skip
    return parse(Topic, data)


def filler(key: str, n: int) -> list[Fact]:
    return [
        fact(f"Caroline: We talked about the weather on day {i}.", f"{key}{i}") for i in range(n)
    ]


def test_the_best_fact_decides_by_its_words() -> None:
    """A 21-fact topic whose one fact names the question's rarer word scores 1; a topic sharing
    only a common word scores less; one without facts 0."""
    big = topic("big", "Caroline", "her life", [*filler("b", 20), fact(
        "Caroline: I researched adoption agencies last week.", "m1")])  # fmt: skip
    other = topic("oth", "agencies talk", "talk", [fact("Melanie: The week was long.", "m2")])
    empty = topic("none", "empty", "nothing", [])
    words = ["caroline", "research"]
    signals = fact_signals([big, other, empty], words, {}, share=0.0)
    assert signals["big"] == pytest.approx(1.0)
    assert signals["oth"] == 0.0
    assert signals["none"] == 0.0


def test_the_best_fact_decides_by_its_passage_cosine() -> None:
    """With meaning only, the topic whose fact's message is nearest wins; a fact whose message
    no passage search returned counts as the lowest found."""
    a = topic("a", "A", "a", [fact("Caroline: one.", "ma"), fact("Caroline: two.", "mx")])
    b = topic("b", "B", "b", [fact("Caroline: three.", "mb")])
    signals = fact_signals([a, b], [], {"ma": 0.7, "mb": 0.5}, share=1.0)
    assert signals == {"a": pytest.approx(1.0), "b": pytest.approx(0.0)}
    signals = fact_signals([a, b], [], {"ma": 0.5, "mb": 0.7}, share=1.0)
    assert signals == {"a": pytest.approx(0.0), "b": pytest.approx(1.0)}


def test_a_superseded_fact_is_no_signal() -> None:
    old = topic("old", "home", "where I live", [fact("I live in Boston.", "m1", closed=True)])
    new = topic("new", "move", "the move", [fact("I moved to Denver.", "m2")])
    signals = fact_signals([old, new], ["boston"], {}, share=0.0)
    assert signals["old"] == 0.0


def test_a_fact_said_by_the_named_participant_counts_more() -> None:
    """Two facts as near the question: the one said by the participant it names wins."""
    mel = topic("mel", "M", "m", [fact("Melanie: I researched pottery glazes.", "m1")])
    car = topic("car", "C", "c", [fact("Caroline: I researched pottery glazes.", "m2")])
    signals = fact_signals([mel, car], ["research"], {}, 0.0, frozenset({"caroline"}), 0.25)
    assert signals == {"mel": pytest.approx(1.0), "car": pytest.approx(1.25)}


def test_the_fact_signal_is_added_beside_the_utility_scaled_relevance() -> None:
    """score = (relevance x (1 + utility boost) x recency + fact_weight x fact) x window: a
    much-used topic's utility does not multiply the evidence of another topic's fact."""
    used = topic("used", "Caroline", "c", [])
    used.stats.utility_score = 20.0  # boost 0.5
    cfg = SearchConfig(fact_weight=2.0)
    plain = final_score(0.6, used, NOW, False, cfg)
    with_fact = final_score(0.6, used, NOW, False, cfg, fact=0.5)
    assert plain["score"] == pytest.approx(0.6 * 1.5)
    assert with_fact["score"] == pytest.approx(0.6 * 1.5 + 2.0 * 0.5)
    assert with_fact["fact_signal"] == 0.5
    windowed = final_score(0.6, used, NOW, True, cfg, fact=0.5)
    assert windowed["score"] == pytest.approx((0.6 * 1.5 + 1.0) * cfg.window_boost)


def _engine(weight: float, calls: list[list[str]]) -> TopicSearch:
    """Two topics: "painting", whose name and vector match the question, and "Caroline" (21
    facts, vector elsewhere), whose one fact answers it; the passages' cosines favour that
    fact's message."""
    fake = FakeStores()
    painting = topic("painting", "research painting", "Melanie paints a lake", [
        fact("Melanie: I painted a lake sunrise.", "p1")])  # fmt: skip
    person = topic("caroline", "Caroline", "what Caroline says", [*filler("c", 20), fact(
        "Caroline: I researched adoption agencies for months.", "answer")])  # fmt: skip
    fake.topics.create([painting, person], [axis(1, 0, 0), axis(0, 1, 0)], NOW)

    def passages(ns: str, ids: list[str], vector: list[float], k: int) -> dict[str, float]:
        calls.append(list(ids))
        return {"answer": 0.62, "p1": 0.40, "c0": 0.35}

    cfg = SearchConfig(fact_weight=weight)
    table = {"What did research?": axis(0.9, 0.3, 0)}
    return TopicSearch(fake.topics, fake.events, Lookup(table), cfg, passages=passages)


def test_topic_search_puts_the_topic_holding_the_answering_fact_first() -> None:
    calls: list[list[str]] = []
    off = _engine(0.0, calls).run(NS, "What did research?", NOW, k=2).hits
    assert off[0].topic.topic_id == "painting"
    assert calls == []  # off: no read
    on = _engine(2.0, calls).run(NS, "What did research?", NOW, k=2).hits
    assert on[0].topic.topic_id == "caroline"
    assert sorted(calls[0]) == ["caroline", "painting"]  # the candidates' passages, nothing else
