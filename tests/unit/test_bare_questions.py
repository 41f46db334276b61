"""Bare questions weigh less in a context (docs/retrieval.md, "Bare questions and headers"): a
sentence that only asks states nothing its speaker knows, so it gives way to the answers that
share the request's words as well as it does."""

from __future__ import annotations

from datetime import UTC, datetime

from retrieval.candidates import weigh_questions
from retrieval.config import DEFAULT
from retrieval.packer import Candidate, Snippet, pack
from retrieval.snippets import bare_question

AT = datetime(2023, 5, 8, 13, tzinfo=UTC)


def test_a_bare_question_only_asks() -> None:
    assert bare_question("What's been the best part of it?")
    assert bare_question("Anything fun over the weekend? What did you do?")
    assert not bare_question("Have you seen my new bike?")  # says the speaker has one
    assert not bare_question("I'm off to Paris, any tips?")
    assert not bare_question("We went camping. Have you been?")  # a statement in it
    assert not bare_question("I took the kids to the museum.")
    assert not bare_question("")


def _snip(mid: str, score: float, text: str, speaker: str) -> Snippet:
    return Snippet(mid, mid, AT, speaker, text, score, ["t"])


def test_weigh_questions_scales_the_bare_questions_alone() -> None:
    snips = [
        _snip("q", 1.0, "What activities do you do with your family?", "Bo"),
        _snip("a", 0.6, "We went camping with the kids in the forest.", "Ann"),
        _snip("i", 0.5, "Do you remember my sister's wedding?", "Ann"),
    ]
    weigh_questions(snips, 0.3)
    assert [round(s.score, 2) for s in snips] == [0.3, 0.6, 0.5]
    weigh_questions(snips, 1.0)  # 1: off
    assert [round(s.score, 2) for s in snips] == [0.3, 0.6, 0.5]


def test_within_a_budget_the_answers_come_before_the_questions_that_asked_them() -> None:
    """Bo's questions share more of the request's words than Ann's answers ("What
    activities does Ann do with her family?"); with room for three lines, the answers are
    packed once the questions weigh what they say."""
    topic = Candidate("t", "topic", "Ann's family", 1.0, "topic_match", "")

    def snippets() -> list[Snippet]:
        return [
            _snip("q1", 1.0, "What activities do you do with your family?", "Bo"),
            _snip("q2", 0.9, "Any fun family activities planned for the summer?", "Bo"),
            _snip("a1", 0.7, "We went camping with the kids in the forest.", "Ann"),
            _snip("a2", 0.6, "Yesterday I took the kids to the museum.", "Ann"),
        ]

    budget = 60
    weighed = snippets()
    weigh_questions(weighed, DEFAULT.context.question_weight)
    got = {s for i in pack([topic], weighed, budget).items for s in i.source_ids}
    flat = {s for i in pack([topic], snippets(), budget).items for s in i.source_ids}
    assert {"a1", "a2"} <= got, got
    assert not {"a1", "a2"} <= flat, flat  # the weight is what lets them in
