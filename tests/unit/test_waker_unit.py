"""Wake (sleepwake/wake.py, spec §4.3) on the in-memory fakes with a fixed clock: a fresh wake
resumes the running task with its goal and next step, a stale one asks to confirm; the tail and
the skills come back from the packet; retrieval uses the message, the resume hint and the subject
hints, and goes deep (time window) on "before you slept".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from tests.fakes.pipelines import T0, Memory, wire

POLICY = SleepPolicy(tail_turns=4, fresh_window=timedelta(hours=2))
SLEPT = T0 + timedelta(hours=1)
WHERE = "ok, where were we?"

MID_TASK = [
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "The billing migration depends on the schema review."),
    ("user", "We're planning Mel's surprise party at the lake house with Anna."),
    ("user", "We're halfway through migrating the billing tables; next step is the invoices."),
    ("assistant", "Understood, the invoices are next."),
    ("user", "Let's pause here for today."),
    ("assistant", "Sure, talk later."),
]
DONE = [
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "We're planning Mel's surprise party at the lake house with Anna."),
    ("assistant", "Sounds lovely."),
    ("user", "ok"),
    ("assistant", "ok"),
    ("user", "bye"),
]


def slept(turns: list[tuple[str, str]] = MID_TASK) -> Memory:
    m = wire(POLICY)
    m.say(T0, *turns)
    m.sleeper.sleep(m.namespace, SLEPT)
    return m


@pytest.mark.parametrize(
    ("turns", "after", "action"),
    [
        (MID_TASK, timedelta(minutes=30), "resume"),
        (MID_TASK, timedelta(hours=2), "resume"),  # the fresh window is inclusive
        (MID_TASK, timedelta(hours=2, seconds=1), "confirm"),
        (MID_TASK, timedelta(days=2), "confirm"),
        (DONE, timedelta(minutes=30), "none"),  # nothing was running
    ],
    ids=["fresh", "at-window", "just-stale", "days-later", "no-task"],
)
def test_a_fresh_wake_resumes_a_running_task_and_a_stale_one_asks(
    turns: list[tuple[str, str]], after: timedelta, action: str
) -> None:
    m = slept(turns)
    woke = m.waker.wake(m.namespace, WHERE, SLEPT + after)
    assert woke.resume.action == action
    if action == "none":
        assert woke.resume.goal == "" and woke.resume.reason == "no task was in progress"
        return
    assert woke.resume.goal == "migrating the billing tables"
    assert woke.resume.next_step == "the invoices"
    assert woke.resume.slept_for_seconds == after.total_seconds()
    assert ("stale" in woke.resume.reason) is (action == "confirm")


def test_the_resume_hint_points_at_its_topic_and_leads_retrieval() -> None:
    m = slept()
    woke = m.waker.wake(m.namespace, WHERE, SLEPT + timedelta(minutes=30))
    assert woke.resume.topic_id is not None
    assert "billing" in m.topics.get_one(m.namespace, woke.resume.topic_id).name.lower()
    names = [t.name.lower() for t in woke.topics]
    assert any("billing" in n for n in names), names  # the message alone names nothing
    assert not woke.deep and woke.time_window is None


def test_woken_topics_are_whole_records_that_cite_their_messages() -> None:
    m = slept()
    woke = m.waker.wake(m.namespace, "the billing migration", SLEPT + timedelta(minutes=5))
    assert woke.topics
    stored = {msg.message_id for msg in m.stores.messages.tail(m.namespace, 100)}
    for topic in woke.topics:
        assert topic.source_message_ids and set(topic.source_message_ids) <= stored
        assert topic.first_seen_at <= topic.last_seen_at
    assert [t.score for t in woke.topics] == sorted((t.score for t in woke.topics), reverse=True)


def test_the_tail_comes_from_the_packet_and_without_one_from_the_log() -> None:
    m = slept()
    woke = m.waker.wake(m.namespace, WHERE, SLEPT + timedelta(minutes=5))
    assert woke.packet is not None
    assert [t.content for t in woke.conversation_tail] == [t for _, t in MID_TASK[-4:]]
    fresh = wire(POLICY)
    fresh.say(T0, *MID_TASK)
    unslept = fresh.waker.wake(fresh.namespace, WHERE, SLEPT)
    assert unslept.packet is None and unslept.resume.action == "none"
    assert [t.content for t in unslept.conversation_tail] == [t for _, t in MID_TASK[-4:]]
    assert unslept.skills == []


def test_before_you_slept_goes_deep_and_ends_at_the_sleep() -> None:
    m = slept()
    woke = m.waker.wake(
        m.namespace, "what were we doing before you slept?", SLEPT + timedelta(hours=3)
    )
    assert woke.deep
    assert woke.time_window == {
        "phrase": "before you slept",
        "kind": "before_sleep",
        "start": None,
        "end": SLEPT.isoformat(),
    }
    assert woke.topics


def test_the_newest_packet_wins() -> None:
    m = slept()
    later = T0 + timedelta(days=1)
    m.say(later, *DONE)
    m.sleeper.sleep(m.namespace, later + timedelta(hours=1))
    woke = m.waker.wake(m.namespace, WHERE, later + timedelta(hours=1, minutes=5))
    assert woke.packet is not None and woke.packet.slept_at == later + timedelta(hours=1)
    # the task statement was in the tail, so the newer sleep compacted it: still running,
    # and "fresh" is counted from the newer sleep
    assert (woke.resume.action, woke.resume.slept_for_seconds) == ("resume", 300.0)
    assert [t.content for t in woke.conversation_tail] == [t for _, t in DONE[-4:]]


def skill_call(skill: str) -> dict[str, Any]:
    return {"name": "skills_run", "arguments": {"skill_id": skill}}


@pytest.mark.parametrize(
    ("skills", "expected"),
    [
        ([], []),
        (["write_docs"], ["skill:write_docs"]),
        (["a", "b", "a"], ["skill:a", "skill:b"]),  # newest first, each once
        (["s1", "s2", "s3", "s4", "s5", "s6", "s7"], [f"skill:s{i}" for i in (7, 6, 5, 4, 3)]),
    ],
    ids=["none", "one", "repeated", "at-most-five"],
)
def test_wake_brings_back_the_recent_skills(skills: list[str], expected: list[str]) -> None:
    m = wire(POLICY)
    items = [
        IncomingMessage(role="assistant", content=f"running {s}", at=T0 + timedelta(minutes=i),
                        tool_calls=[skill_call(s)])
        for i, s in enumerate(skills)
    ]  # fmt: skip
    items.append(IncomingMessage(role="user", content="thanks", at=T0 + timedelta(minutes=30)))
    m.conversation.append(m.namespace, items, auto_sleep=False)
    m.sleeper.sleep(m.namespace, SLEPT)
    woke = m.waker.wake(m.namespace, WHERE, SLEPT + timedelta(minutes=5))
    # manifests now (issue #14); without a skill lookup wired in, each carries its id only
    assert [f"skill:{s['skill_id']}" for s in woke.skills] == expected
