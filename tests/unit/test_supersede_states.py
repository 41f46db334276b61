"""States of a life superseded across the topics of a namespace (``supersede_states``), the
sleep that reads the topics holding a key through the store and writes the closing into the
old fact's topic in its own commit (versions guard it), and a context that answers a question
about a state with the current fact first and the past marked. Pure, on in-memory fakes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph.errors import VersionConflict
from graph.mapping import topic_props, update_props
from graph.models import Fact, Topic, TopicTime
from retrieval.context_result import ContextRequest
from sleepwake.policy import SleepPolicy
from sleepwake.supersede import SUPERSEDED, supersede_states
from tests.fakes.pipelines import Memory, wire
from text.claims import state_token

JAN = datetime(2026, 1, 12, 19, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 10, 19, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 15, 19, 0, tzinfo=UTC)
OCT = datetime(2026, 10, 20, 19, 0, tzinfo=UTC)


def topic(tid: str, *facts: tuple[str, datetime]) -> Topic:
    return Topic(
        topic_id=tid,
        namespace="unit",
        name=tid,
        one_liner=facts[0][0] if facts else "",
        time=TopicTime(first_seen_at=JAN, last_seen_at=JAN),
        facts=[Fact(text=t, at=at, source_message_ids=[f"{tid}-{i}"])
               for i, (t, at) in enumerate(facts)],
    )  # fmt: skip


def texts(t: Topic, current: bool = True) -> list[str]:
    return [f.text for f in t.facts if (f.invalid_at is None) == current]


def test_a_later_state_closes_the_earlier_fact_in_another_topic() -> None:
    podcast = topic("podcast", ("I live in Boston and I work as a nurse at Mass General.", JAN),
                    ("Try 99% Invisible.", JAN))  # fmt: skip
    move = topic("move", ("Big news: I moved to Denver last week!", MAR))
    changed = supersede_states([podcast, move])
    assert set(changed) == {"podcast"}
    closed = changed["podcast"].facts[0]
    denver = move.facts[0]
    assert closed.invalid_at == denver.starts_at and closed.superseded_by == denver.fact_id
    assert closed.invalid_reason == SUPERSEDED
    assert texts(changed["podcast"]) == ["Try 99% Invisible."]
    # the one-liner quoted the closed fact: it says what the topic holds now
    assert changed["podcast"].one_liner == "Try 99% Invisible."
    assert podcast.facts[0].invalid_at is None  # inputs are not mutated


def test_a_repeated_value_closes_nothing_and_every_holder_of_the_old_value_is_closed() -> None:
    a = topic("a", ("I live in Boston.", JAN))
    b = topic("b", ("I'm still based in Boston, love it.", JAN + timedelta(days=20)))
    assert supersede_states([a, b]) == {}
    c = topic("c", ("I moved to Denver.", MAR))
    changed = supersede_states([a, b, c])
    assert set(changed) == {"a", "b"}
    assert all(t.facts[0].superseded_by == c.facts[0].fact_id for t in changed.values())


def test_moving_back_is_a_new_current_fact() -> None:
    a = topic("a", ("I live in Boston.", JAN))
    b = topic("b", ("I moved to Denver.", MAR))
    c = topic("c", ("We moved back to Boston.", OCT))
    changed = supersede_states([a, b, c])
    assert set(changed) == {"a", "b"}
    assert changed["a"].facts[0].superseded_by == b.facts[0].fact_id  # Boston ended in March
    assert changed["b"].facts[0].superseded_by == c.facts[0].fact_id
    assert "c" not in changed


@pytest.mark.parametrize(
    "later",
    [
        "My sister moved to Denver.",  # another owner
        "Should I move to Denver?",  # a question
        "If I moved to Denver I would ski more.",  # a hypothetical
        "I might move to Denver next year.",  # a plan
        "Caroline: I moved to Denver.",  # another speaker
    ],
)
def test_other_owners_questions_and_hypotheticals_close_nothing(later: str) -> None:
    a = topic("a", ("I live in Boston.", JAN))
    assert supersede_states([a, topic("b", (later, MAR))]) == {}


def test_each_kind_is_its_own_key() -> None:
    a = topic("a", ("I work as a nurse at Mass General.", JAN))
    b = topic("b", ("I moved to Denver.", MAR))
    assert supersede_states([a, b]) == {}
    c = topic("c", ("I'm now a product manager at a health-tech startup.", MAR))
    assert set(supersede_states([a, c])) == {"a"}


def test_the_index_tokens_follow_the_facts() -> None:
    a = topic("a", ("I live in Boston.", JAN))
    key = ("", "self", "residence")
    assert topic_props(a)["state_keys"] == [state_token(key)]
    closed = supersede_states([a, topic("b", ("I moved to Denver.", MAR))])["a"]
    assert topic_props(closed)["state_keys"] == [state_token(key, past=True)]


# -- the sleep and the context on fakes -------------------------------------------------------

CHAT = {
    JAN: [
        ("user", "Hi! I'm trying to get back into a routine after the holidays."),
        ("assistant", "Welcome back! What kind of routine are you aiming for?"),
        ("user", "I live in Boston and I work as a nurse at Mass General."),
        ("assistant", "That sounds demanding."),
        ("user", "Also, you should try the podcast 99% Invisible, it's my commute favourite."),
    ],
    MAR: [
        ("user", "Big news: I moved to Denver last week! The mountains are unreal."),
        ("assistant", "Congratulations! How are you settling in?"),
        ("user", "And I changed careers too. I'm now a product manager at a health-tech startup."),
    ],
    JUN: [("user", "The weather has been amazing this week."), ("assistant", "Enjoy it!")],
}


def replay(m: Memory, months: list[datetime]) -> None:
    for at in months:
        m.say(at, *CHAT[at])
        m.sleeper.sleep(m.namespace, at + timedelta(hours=3))


def all_facts(m: Memory) -> list[tuple[str, Fact]]:
    ids = list(m.stores.graph.topics)
    return [(t.topic_id, f) for t in m.topics.get(m.namespace, ids) for f in t.facts]


def test_a_sleep_closes_the_old_fact_in_the_topic_it_was_filed_under() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN, MAR, JUN])
    facts = all_facts(m)
    boston = [(tid, f) for tid, f in facts if "I live in Boston" in f.text]
    denver = [(tid, f) for tid, f in facts if "moved to Denver" in f.text]
    assert boston and denver
    assert all(f.invalid_at is not None for _, f in boston)
    assert {f.superseded_by for _, f in boston} <= {f.fact_id for _, f in facts}
    assert all(f.invalid_at is None for _, f in denver)


def test_the_closing_is_refused_when_the_old_topic_changed_during_the_sleep() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN])
    m.say(MAR, *CHAT[MAR])
    store, held = m.stores.sleep, []
    read_states, read_topics = store.state_topics, store.get_topics

    def states(namespace: str, tokens: list[str], limit: int = 50) -> list[tuple[str, list[str]]]:
        found = read_states(namespace, tokens, limit)
        held.extend(tid for tid, _ in found)
        return found

    def racing(namespace: str, topic_ids: list[str]) -> list[Topic]:
        got = read_topics(namespace, topic_ids)
        for tid in set(topic_ids) & set(held):  # another writer bumps it after the sleep read it
            m.stores.graph.topics[tid].props["version"] += 1
        return got

    store.state_topics = states  # type: ignore[method-assign,assignment]
    store.get_topics = racing  # type: ignore[method-assign]
    with pytest.raises(VersionConflict):
        m.sleeper.sleep(m.namespace, MAR + timedelta(hours=3))
    assert held  # the old fact's topic was read through the state index
    assert all(f.invalid_at is None for _, f in all_facts(m))  # nothing half-written
    assert not [f for _, f in all_facts(m) if "Denver" in f.text]


def context(m: Memory, question: str) -> str:
    request = ContextRequest(namespace=m.namespace, message=question, now=JUN + timedelta(hours=5),
                             explicit=True, budget=1000)  # fmt: skip
    return m.context.build(request).context_text


def facts_shown(text: str) -> list[str]:
    return [line.lower() for line in text.splitlines() if line.startswith("- ")]


def test_a_question_about_now_leads_with_the_current_fact_and_marks_the_past() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN, MAR, JUN])
    shown = facts_shown(context(m, "Where do I live now?"))
    assert "moved to denver" in shown[0], shown
    boston = next(line for line in shown if "i live in boston" in line)
    assert "(until 3 mar 2026)" in boston  # a week before it was said in March
    job = facts_shown(context(m, "What is my job?"))
    assert "product manager" in job[0], job


def test_a_question_about_the_past_finds_the_old_fact() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN, MAR, JUN])
    shown = facts_shown(context(m, "Where did I live before?"))
    assert "i live in boston" in shown[0] and "(until " in shown[0], shown


def test_without_a_later_state_nothing_is_marked_past() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN])
    shown = facts_shown(context(m, "Where do I live now?"))
    assert "i live in boston" in shown[0] and "(until" not in shown[0], shown


def test_as_of_a_date_now_is_what_held_then() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN, MAR, JUN])
    request = ContextRequest(namespace=m.namespace, message="Where do I live now?",
                             now=JUN + timedelta(hours=5), as_of=JAN + timedelta(days=30),
                             explicit=True, budget=1000)  # fmt: skip
    shown = facts_shown(m.context.build(request).context_text)
    assert "i live in boston" in shown[0] and "(until" not in shown[0], shown
    assert not [line for line in shown if "denver" in line], shown  # not said yet


def test_a_corrected_mistake_is_not_shown_as_a_past_state() -> None:
    m = wire(SleepPolicy(tail_turns=0))
    replay(m, [JAN])
    tid, wrong = next((t, f) for t, f in all_facts(m) if "I live in Boston" in f.text)
    right = Fact(text="I live in Cambridge.", at=JAN + timedelta(days=1),
                 source_message_ids=wrong.source_message_ids)  # fmt: skip
    stored = m.topics.get(m.namespace, [tid])[0]
    facts = [
        f.model_copy(update={"invalid_at": right.at, "superseded_by": right.fact_id,
                             "invalid_reason": "corrected by the user"}) if f == wrong else f
        for f in stored.facts
    ] + [right]  # fmt: skip
    # as the user's correction writes it (service/facts.py), on the fake's node
    m.stores.graph.topics[tid].props.update(
        update_props(stored.model_copy(update={"facts": facts}))
    )
    shown = facts_shown(context(m, "Where do I live now?"))
    assert "i live in cambridge" in shown[0], shown
    assert not [line for line in shown if "(until" in line], shown
