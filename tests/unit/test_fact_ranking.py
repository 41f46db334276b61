"""Facts ranked for the question within a topic (issue #12 item 4, retrieval/facts.py): relevance
to the query first, then recency, wherever a topic's facts reach a context (fact snippets in light
and deep packing, the L2 full record, the wake packet)."""

from __future__ import annotations

from datetime import timedelta

from graph.models import Fact, Topic, TopicTime
from retrieval.context import ContextRequest
from retrieval.facts import rank_facts
from retrieval.intent import asks_decision
from retrieval.snippets import terms
from tests.fakes.pipelines import T0, Memory, wire

OLD = T0 - timedelta(days=400)
QUESTION = "when is the pottery class now?"
RECENT = "Mel: The pottery class moved to Thursday evenings."


def _fact(text: str, at_days: float, source: str) -> Fact:
    return Fact(text=text, at=OLD + timedelta(days=at_days), source_message_ids=[source])


def test_more_relevant_first_then_newer_then_later() -> None:
    q = terms(QUESTION)
    old_same = _fact("Mel: first pottery class was fun.", 1, "m1")
    irrelevant_new = _fact("Mel: bought new running shoes.", 300, "m2")
    half = _fact("Mel: the pottery kiln broke.", 200, "m3")
    new_same = _fact("Mel: pottery class is on Mondays.", 100, "m4")
    undated = Fact(text="Mel: pottery class notes.", source_message_ids=["m5"])
    ranked = rank_facts([old_same, irrelevant_new, half, new_same, undated], q)
    assert [f.source_message_ids[0] for f in ranked] == ["m4", "m1", "m5", "m3", "m2"]
    assert rank_facts([old_same, new_same], q, limit=1) == [new_same]
    assert rank_facts([old_same], q, limit=0) == []
    # no query terms at all: newest first
    assert rank_facts([old_same, half, new_same], frozenset()) == [half, new_same, old_same]


def _large_topic(m: Memory) -> Topic:
    """A topic talked about for a year: 60 old notes on the class, 40 old unrelated facts, then
    one recent statement that answers the question. Its messages are not in the message store,
    so only the topic's facts can bring them into the context."""
    facts = [_fact(f"Mel: pottery class session {i} notes.", i, f"old-{i}") for i in range(60)]
    facts += [_fact(f"Mel: glaze number {i} was blue.", 60 + i, f"glaze-{i}") for i in range(40)]
    facts.append(Fact(text=RECENT, at=T0 - timedelta(days=2), source_message_ids=["recent"]))
    topic = Topic(
        namespace=m.namespace,
        name="pottery class",
        one_liner="Mel's weekly pottery class",
        facts=facts,
        time=TopicTime(first_seen_at=OLD, last_seen_at=T0 - timedelta(days=2)),
    )
    m.topics.create([topic], m.embedder.embed([topic.one_liner]), T0)
    return topic


def test_a_large_topic_packs_its_relevant_recent_fact_before_its_old_ones() -> None:
    m = wire()
    topic = _large_topic(m)
    ctx = m.context.build(
        ContextRequest(namespace=m.namespace, message=QUESTION, now=T0, budget=1000, explicit=True)
    )
    item = next(i for i in ctx.items if i["record_id"] == topic.topic_id)
    lines = item["durable_summary"].splitlines()
    assert "moved to Thursday evenings" in lines[1], lines  # first line under the title
    assert item["provenance"]["source_ids"][0] == "recent"
    assert not any("glaze" in line for line in lines)  # shares no term with the question


def test_the_full_record_keeps_the_relevant_facts_not_just_the_newest() -> None:
    m = wire()
    topic = _large_topic(m)
    ctx = m.context.build(
        ContextRequest(
            namespace=m.namespace,
            message=QUESTION,
            now=T0,
            budget=4000,
            explicit=True,
            full_records=True,
        )
    )
    l2 = next(i for i in ctx.items if i["layer"] == "L2" and i["record_id"] == topic.topic_id)
    text = l2["durable_summary"]
    assert text.splitlines()[1].endswith(RECENT)  # the answer first
    assert "pottery class session 59 notes" in text  # then the newest relevant notes
    assert "glaze" not in text  # the 40 newer unrelated facts no longer crowd out the notes
    assert "session 0 notes" not in text  # 20 facts: the oldest notes are the ones left out


def test_a_question_about_a_decision_ranks_the_stated_choice_first() -> None:
    """ "We chose Postgres over MongoDB" answers "what did we decide about the database?"
    without sharing a word with it; an ordinary question keeps the plain ranking."""
    question = "What did we decide about the database for billing?"
    assert asks_decision(question) and not asks_decision("How is the billing database doing?")
    q = terms(question)
    disk = _fact("The billing database runs on Postgres 16 with a 50 GB disk.", 3, "m1")
    chose = _fact("We chose Postgres over MongoDB because we need joins.", 1, "m2")
    compared = _fact("For the billing service we compared Postgres and MongoDB.", 2, "m3")
    facts = [compared, chose, disk]
    assert rank_facts(facts, q, decision=True)[0] is chose
    assert rank_facts(facts, q)[0] is disk and rank_facts(facts, q)[-1] is chose
