"""Lines that say nothing of their speaker weigh less in a context (docs/retrieval.md, "Lines
that say nothing of their speaker"): a sentence that only asks, or a remark about the one
spoken to, gives way to the answers and the news that share the request's words as well as it
does."""

from __future__ import annotations

from datetime import UTC, datetime

from retrieval.candidates import weigh_remarks
from retrieval.config import DEFAULT
from retrieval.packer import Candidate, Snippet, pack
from retrieval.snippets import about_listener, bare_question

AT = datetime(2023, 5, 8, 13, tzinfo=UTC)


def test_a_bare_question_only_asks() -> None:
    assert bare_question("What's been the best part of it?")
    assert bare_question("Anything fun over the weekend? What did you do?")
    assert not bare_question("Have you seen my new bike?")  # says the speaker has one
    assert not bare_question("I'm off to Paris, any tips?")
    assert not bare_question("We went camping. Have you been?")  # a statement in it
    assert not bare_question("I took the kids to the museum.")
    assert not bare_question("")


def test_a_remark_about_the_listener_speaks_of_you_and_not_of_oneself() -> None:
    assert about_listener("It must feel great to be recognized for your gaming skills.")
    assert about_listener("Sounds like you and the kids had a blast.")
    assert not about_listener("I'm so proud of you!")  # the speaker's own feeling
    assert not about_listener("How was your trip?")  # a question: ``bare_question``'s
    assert not about_listener("We adopted another puppy called Pixie.")
    assert not about_listener("The caterer wants a deposit by Thursday.")


def _snip(mid: str, score: float, text: str, speaker: str) -> Snippet:
    return Snippet(mid, mid, AT, speaker, text, score, ["t"])


def test_weigh_remarks_scales_the_bare_questions_and_the_remarks_about_the_listener() -> None:
    snips = [
        _snip("q", 1.0, "What activities do you do with your family?", "Bo"),
        _snip("a", 0.6, "We went camping with the kids in the forest.", "Ann"),
        _snip("i", 0.5, "Do you remember my sister's wedding?", "Ann"),
        _snip("r", 0.8, "Sounds like you and the kids had a blast.", "Bo"),
    ]
    weigh_remarks(snips, 0.3, 0.5)
    assert [round(s.score, 2) for s in snips] == [0.3, 0.6, 0.5, 0.4]
    weigh_remarks(snips, 1.0, 1.0)  # 1: off
    assert [round(s.score, 2) for s in snips] == [0.3, 0.6, 0.5, 0.4]
    weigh_remarks(snips, 0.5)  # no listener weight (a chat with an assistant): questions only
    assert [round(s.score, 2) for s in snips] == [0.15, 0.6, 0.5, 0.4]


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
    weigh_remarks(weighed, DEFAULT.context.question_weight, DEFAULT.context.listener_weight)
    got = {s for i in pack([topic], weighed, budget).items for s in i.source_ids}
    flat = {s for i in pack([topic], snippets(), budget).items for s in i.source_ids}
    assert {"a1", "a2"} <= got, got
    assert not {"a1", "a2"} <= flat, flat  # the weight is what lets them in
