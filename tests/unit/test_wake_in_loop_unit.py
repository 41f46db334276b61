"""The loop's wake on the in-memory fakes (sleepwake/wake.py ``wake_if_due``), the wake block and
its resume line (agent/wake_prompt.py), the offline model acting on it, and the failure kept for
the next turn's skill routing (agent/loop.py)."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from agent.loop import failure_of, last_failure
from agent.offline_model import offline_model
from agent.tools import ToolCall
from agent.wake_prompt import parse_plan, plan_line, wake_block
from graph.models import WakeCheck
from service.windows import WindowResolver
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from sleepwake.wake import ResumePlan, wake_reason
from tests.fakes.pipelines import T0, Memory, wire
from tests.fakes.sleep import FakeSleepStore

POLICY = SleepPolicy(tail_turns=4, fresh_window=timedelta(hours=2), wake_silence=timedelta(hours=3))
SLEPT = T0 + timedelta(hours=1)
MID_TASK = [
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "We're halfway through migrating the billing tables; next step is the invoices."),
    ("assistant", "Understood, the invoices are next."),
    ("user", "Let's pause here for today."),
    ("assistant", "Sure, talk later."),
    ("user", "bye"),
]


def slept() -> Memory:
    m = wire(POLICY)
    m.say(T0, *MID_TASK)
    m.sleeper.sleep(m.namespace, SLEPT)
    return m


def test_the_first_turn_after_a_sleep_wakes_and_the_next_does_not() -> None:
    m = slept()
    at = SLEPT + timedelta(minutes=20)
    woke = m.waker.wake_if_due(m.namespace, "ok, where were we?", at)
    assert woke is not None and woke.reason == "sleep" and woke.woke_at == at
    assert woke.resume.action == "resume" and woke.resume.next_step == "the invoices"
    assert woke.packet is not None and woke.top_topics
    assert {t.topic_id for t in woke.top_topics} <= set(woke.packet.top_topic_ids)
    assert m.waker.wake_if_due(m.namespace, "and then?", at + timedelta(minutes=1)) is None
    # "since you woke" now starts at the wake
    window = WindowResolver(m.stores.sleep).in_text(m.namespace, "since you woke", at)
    assert window is not None and window.start == at


def test_an_explicit_wake_counts_as_the_wake_of_that_sleep() -> None:
    m = slept()
    m.waker.wake(m.namespace, "hi", SLEPT + timedelta(minutes=5))
    assert m.waker.wake_if_due(m.namespace, "hi", SLEPT + timedelta(minutes=6)) is None
    unrecorded = slept()
    unrecorded.waker.wake(unrecorded.namespace, "hi", SLEPT, record=False)
    assert unrecorded.waker.wake_if_due(unrecorded.namespace, "hi", SLEPT) is not None


def test_a_silence_wakes_with_the_newest_task_of_the_tail_aged_from_its_turn() -> None:
    m = slept()
    m.waker.wake_if_due(m.namespace, "hi", SLEPT)
    said = SLEPT + timedelta(minutes=10)
    m.conversation.append(
        m.namespace,
        [IncomingMessage(role="user", at=said,
                         content="We're halfway through the invoice export; next step is the CSV.")],
        auto_sleep=False,
    )  # fmt: skip
    assert m.waker.wake_if_due(m.namespace, "hi", said + timedelta(hours=2)) is None
    woke = m.waker.wake_if_due(m.namespace, "hi", said + timedelta(hours=3))
    assert woke is not None and woke.reason == "silence"
    assert (woke.resume.action, woke.resume.goal) == ("confirm", "the invoice export")
    assert woke.conversation_tail[-1].content.startswith("We're halfway through the invoice")


def test_the_wake_block_carries_the_plan_loops_topics_and_skills() -> None:
    m = slept()
    at = SLEPT + timedelta(minutes=20)
    woke = m.waker.wake_if_due(m.namespace, "where were we?", at)
    assert woke is not None
    block = wake_block(woke, at)
    assert (
        block.splitlines()[0]
        == f"Wake (after a sleep; slept {SLEPT:%Y-%m-%d %H:%M} UTC, 0.3 h ago):"
    )
    assert parse_plan(block) == {
        "action": "resume",
        "goal": "migrating the billing tables",
        "next_step": "the invoices",
        "why": "continue from the next step",
    }
    assert "Top topics (by id):" in block
    assert all(t.topic_id in block for t in woke.top_topics[:5])


@pytest.mark.parametrize(
    ("plan", "reply"),
    [
        (ResumePlan(action="resume", goal="the export", next_step="the CSV"),
         "Resuming the export: next step is the CSV."),
        (ResumePlan(action="confirm", goal="the export", next_step="the CSV",
                    reason="stale: slept 30.0 h ago (fresh window 12.0 h); confirm the goal"),
         "Before I continue the export (next step was the CSV): stale: slept 30.0 h ago (fresh "
         "window 12.0 h). Shall I carry on, or do you want to re-plan?"),
    ],
    ids=["fresh", "stale"],
)  # fmt: skip
def test_the_offline_model_resumes_or_confirms_without_a_tool(plan: ResumePlan, reply: str) -> None:
    memory = {"role": "developer", "content": "Wake (after a sleep):\n" + plan_line(plan)}
    request = {"input": [memory, {"role": "user", "content": "ok, where were we?"}]}
    out = offline_model(request)
    assert out[0]["type"] == "message" and out[0]["content"][0]["text"] == reply
    asked = {"input": [memory, {"role": "user", "content": "what did we decide on the db?"}]}
    assert offline_model(asked)[0]["type"] == "function_call"  # a real question is searched


def test_no_plan_line_when_nothing_was_running() -> None:
    assert plan_line(ResumePlan(action="none")) == ""
    assert parse_plan("Memory (retrieved for this message):\n- a topic") is None


def _call(ok: bool, output: Any = None, error: str | None = None) -> ToolCall:
    return ToolCall(name="repo_run_tests", args_hash="h", ok=ok, duration_ms=1.0, output=output,
                    error=error)  # fmt: skip


TRACE = "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'x'"


@pytest.mark.parametrize(
    ("call", "kept"),
    [
        (_call(False, error="NotFound: no file missing.py"), "error: repo_run_tests failed"),
        (_call(True, {"ok": False, "output": "2 failed"}), "2 failed"),
        (_call(True, {"stdout": TRACE}), "KeyError: 'x'"),  # no ok: the text shows a traceback
        (_call(True, {"ok": True, "summary": TRACE}), None),  # the tool says it succeeded
        (_call(True, {"passed": 3}), None),
    ],
    ids=["refused", "ok-false", "traceback", "ok-true", "quiet"],
)
def test_a_failure_is_kept_for_the_next_turn(call: ToolCall, kept: str | None) -> None:
    found = failure_of(call)
    assert (found is None) if kept is None else (found is not None and kept in found)
    reply = SimpleNamespace(role="assistant", tool_calls=[{"name": "x", "failure": found}])
    user = SimpleNamespace(role="user", tool_calls=[])
    assert last_failure([reply, user]) == found
    assert last_failure([user]) is None


H = timedelta(hours=1)


@pytest.mark.parametrize(
    ("state", "check"),
    [
        (None, WakeCheck()),
        (None, WakeCheck(packet_id="p1", slept_at=T0)),
        (None, WakeCheck(last_turn_at=T0, silent_before=T0)),
        (None, WakeCheck(last_turn_at=T0, silent_before=T0 - H)),
        (("p1", T0), WakeCheck(packet_id="p1", slept_at=T0 - H)),
        (("p1", T0), WakeCheck(packet_id="p2", slept_at=T0 - H)),  # idle sleep before the wake
        (("p1", T0), WakeCheck(packet_id="p2", slept_at=T0)),
        (("p1", T0), WakeCheck(last_turn_at=T0 + H, silent_before=T0 + 2 * H)),
        (("p1", T0 + 3 * H), WakeCheck(last_turn_at=T0 + H, silent_before=T0 + 2 * H)),
        (("p1", T0), WakeCheck(packet_id="p1", slept_at=T0, force=True)),
    ],
)
def test_the_read_before_the_claim_agrees_with_the_claim(
    state: tuple[str, Any] | None, check: WakeCheck
) -> None:
    """``wake_reason`` (a read, so most turns write nothing) decides as the claim does."""
    store = FakeSleepStore()
    known = None
    if state is not None:
        known = store.claim_wake("ns", state[1], WakeCheck(force=True, packet_id=state[0]))
        assert known is not None
        known = store.wake_state("ns")
    claimed = store.claim_wake("ns", T0 + 10 * H, check)
    assert wake_reason(known, check) == (claimed.reason if claimed else None)
