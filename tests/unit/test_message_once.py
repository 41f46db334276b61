"""The message read once per context request (``retrieval.message.ParsedMessage``): the plan's
window and the relative-time trigger read the same windows, found by one call of
``text.timephrases.find_windows``; the task fingerprint is made of the terms already read."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval.message
from retrieval.context import ContextRequest
from retrieval.intent import task_fingerprint
from retrieval.message import ParsedMessage
from retrieval.triggers import TriggerContext, relative_time
from tests.fakes.pipelines import T0, wire
from text.timephrases import SleepHistory, TimeWindow, find_windows, most_specific

NOW = T0 + timedelta(days=9)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``find_windows`` was called on (through the parsed message)."""
    seen: list[str] = []

    def counted(text: str, *args: Any, **kw: Any) -> list[TimeWindow]:
        seen.append(text)
        return find_windows(text, *args, **kw)

    monkeypatch.setattr(retrieval.message, "find_windows", counted)
    return seen


def test_a_context_request_finds_its_windows_once(calls: list[str]) -> None:
    m = wire()
    m.say(NOW - timedelta(days=6), ("user", "We booked Rosa's Kitchen as the caterer."))
    asked = "What did we decide about the caterer last week?"
    result = m.context.build(ContextRequest(namespace=m.namespace, message=asked, now=NOW))
    assert calls == [asked]
    assert result.time_window is not None and result.time_window["phrase"] == "last week"
    assert "relative_time: 'last week'" in result.triggers


def test_the_trigger_reads_the_windows_the_message_holds(calls: list[str]) -> None:
    msg = ParsedMessage("anything from yesterday or tomorrow?")
    found = msg.windows(NOW, "UTC", SleepHistory())
    assert [w.phrase for w in found] == ["yesterday"]  # tomorrow is still ahead: left out
    reason = relative_time(msg, TriggerContext(now=NOW, sleep=SleepHistory()))
    assert reason == "relative_time: 'yesterday'"
    assert len(calls) == 1
    msg.windows(NOW + timedelta(days=1), "UTC", SleepHistory())  # another clock: found again
    assert len(calls) == 2


def test_a_time_phrase_inside_a_known_name_is_no_window(calls: list[str]) -> None:
    msg = ParsedMessage("Any news on this month's novel since yesterday?")
    found = msg.windows(NOW, known_names={"this month's novel"})
    assert [w.phrase for w in found] == ["since yesterday"]
    assert calls == ["Any news on   since yesterday?"]


def test_most_specific_is_the_shortest_then_the_first() -> None:
    windows = find_windows("last month, yesterday and last week", NOW)
    best = most_specific(windows)
    assert best is not None and best.phrase == "yesterday"
    assert most_specific([]) is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_the_parsed_fingerprint_is_the_task_fingerprint(text: str) -> None:
    assert ParsedMessage(text).fingerprint == task_fingerprint(text)
