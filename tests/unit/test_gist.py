"""A topic's gist (text/gist.py): what topic search embeds and indexes beside name and one-liner."""

from __future__ import annotations

from datetime import UTC, datetime

from graph.models import Fact, Topic, TopicTime
from sleepwake.candidates import Candidate
from text.gist import GIST_FACTS, VECTOR_FACTS, central_facts, gist, semantic_text, unspoken

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
FACTS = [
    "Melanie: Wow, that's great!",  # a reaction: says nothing of the subject
    "Melanie: I signed up for a pottery class last week.",
    "Caroline: The weather was lovely at the beach today.",  # an aside
    "Melanie: My pottery class meets on Tuesdays at the studio.",
    "Melanie: In class I made a pottery bowl for my kids.",
    "Melanie: The studio fires every bowl in its kiln.",
]


def test_central_facts_share_the_most_words_with_the_others_and_the_name() -> None:
    order = central_facts(FACTS, "pottery class")
    assert order[0] == FACTS[3]  # pottery, class, studio: said in three other facts
    assert set(order[-2:]) == {FACTS[0], FACTS[2]}  # the reaction and the aside come last
    # the speaker prefix is no content word: every fact of Melanie's would share it
    assert central_facts(["Melanie: a b", "Melanie: tea cups", "Ann: tea pots"])[0] != (
        "Melanie: a b"
    )
    assert central_facts(FACTS, limit=2) == central_facts(FACTS)[:2]
    assert central_facts([]) == []


def test_the_embedded_text_is_name_one_liner_and_the_central_facts() -> None:
    one_liner = FACTS[1]
    text = semantic_text("pottery class", one_liner, FACTS)
    # no speaker prefixes: both people are in every topic of their conversation
    assert text.startswith(f"pottery class: {unspoken(one_liner)} ") and "Melanie" not in text
    assert text.count("signed up") == 1  # the one-liner is not repeated
    central = [f for f in central_facts(FACTS, "pottery class") if f != one_liner]
    assert all(unspoken(f) in text for f in central[:VECTOR_FACTS])
    # a topic of more facts than the vector takes: the least central ones stay out (the
    # reaction and the aside, ranked last)
    notes = [f"Melanie: pottery class note {i} at the studio." for i in range(VECTOR_FACTS)]
    longer = semantic_text("pottery class", one_liner, [one_liner, *notes, FACTS[2], FACTS[0]])
    assert all(unspoken(f) in longer for f in notes)
    assert unspoken(FACTS[2]) not in longer and unspoken(FACTS[0]) not in longer
    assert semantic_text("pottery class", "", []) == "pottery class"
    full = gist("pottery class", one_liner, FACTS)
    assert unspoken(one_liner) not in full
    assert all(unspoken(f) in full for f in central[:GIST_FACTS]) and "Melanie" not in full


def test_a_topic_and_the_candidate_that_made_it_embed_the_same_text() -> None:
    cand = Candidate(key="pottery class", label="pottery class", summary=FACTS[1])
    for text in FACTS:
        cand.add_fact(Fact(text=text, at=T0, source_message_ids=["m1"]))
    topic = Topic(
        namespace="ns",
        name="pottery class",
        one_liner=cand.one_liner(),
        facts=cand.facts,
        time=TopicTime(first_seen_at=T0, last_seen_at=T0),
    )
    assert topic.semantic_text() == cand.semantic_text()
    # a superseded fact leaves what the topic is found by
    closed = [
        f.model_copy(update={"invalid_at": T0}) if f.text == FACTS[3] else f for f in topic.facts
    ]
    changed = topic.model_copy(update={"facts": closed})
    gone = unspoken(FACTS[3])
    assert gone not in changed.semantic_text() and gone not in changed.gist()
    assert gone in topic.gist()
