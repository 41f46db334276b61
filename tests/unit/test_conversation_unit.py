"""The conversation and its sleep policy (sleepwake/conversation.py, spec §4.2 triggers) on the
in-memory fakes with a fixed clock: a sleep starts when the buffer goes over its share of the
context budget or after an idle gap, never otherwise; it is dated as the policy says; nothing the
caller sent is lost, and a bad batch writes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from api.settings import Settings
from graph.append_plan import BufferStats
from graph.errors import ValidationFailed
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from tests.fakes.pipelines import T0, Memory, wire

# budget share = 0.5 x 500 = 250 tokens; the last 2 turns stay verbatim; idle after 6 h
POLICY = SleepPolicy(context_budget_tokens=500, buffer_share=0.5, tail_turns=2)
IDLE = 6 * 60  # minutes


def text(tokens: int) -> str:
    """A message of exactly ``tokens`` estimated tokens (ceil(chars / 4))."""
    return ("We need the lake house deposit and the keys. " * 40)[: 4 * tokens]


def incoming(minute: int, tokens: int) -> IncomingMessage:
    return IncomingMessage(role="user", content=text(tokens), at=T0 + timedelta(minutes=minute))


def memory() -> Memory:
    return wire(POLICY)


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        ([(0, 100), (1, 100)], []),
        ([(0, 65), (1, 60), (2, 125)], []),  # at the budget is not over it
        ([(0, 65), (1, 60), (2, 126)], [("budget", 2)]),
        ([(0, 125), (1, 126)], []),  # over it, but all of it is the tail: nothing to compact
        ([(0, 20), (1, 110), (2, 130)], []),  # a one-message slice of 20 tokens waits
        ([(0, 20), (1, 110), (2, 130), (3, 10)], [("budget", 3)]),  # a 130-token slice
        ([(0, 10), (1, 10), (2, 10), (2 + IDLE - 1, 10)], []),  # a minute short of idle
        ([(0, 10), (1, 10), (2, 10), (2 + IDLE, 10)], [("idle", 2 + IDLE)]),
        ([(0, 10), (1, 10), (1 + IDLE * 3, 10)], []),  # idle, but only the tail is buffered
        (
            [(0, 10), (1, 10), (2, 10), (400, 150), (401, 150)],
            [("idle", 2 + IDLE), ("budget", 401)],
        ),
    ],
    ids=[
        "under-budget",
        "at-budget",
        "one-token-over",
        "tail-only",
        "small-slice-waits",
        "slice-of-tail-turns",
        "short-gap",
        "idle-gap",
        "idle-tail-only",
        "idle-then-budget",
    ],
)
def test_the_policy_sleeps_over_budget_or_after_an_idle_gap_and_not_otherwise(
    turns: list[tuple[int, int]], expected: list[tuple[str, int]]
) -> None:
    m = memory()
    result = m.conversation.append(m.namespace, [incoming(at, size) for at, size in turns])
    slept = [(s.reason, s.slept_at) for s in result.sleeps]
    assert slept == [(reason, T0 + timedelta(minutes=at)) for reason, at in expected]
    assert [msg.seq for msg in result.messages] == list(range(len(turns)))
    assert len(m.stores.messages.tail(m.namespace, 100)) == len(turns)  # nothing lost


def test_auto_sleep_off_never_sleeps() -> None:
    m = memory()
    result = m.conversation.append(
        m.namespace, [incoming(0, 200), incoming(1, 200), incoming(IDLE * 2, 200)], auto_sleep=False
    )
    assert result.sleeps == []
    assert len(m.stores.messages.buffer(m.namespace)) == 3


def test_a_budget_sleep_compacts_all_but_the_tail_before_the_next_message() -> None:
    m = memory()
    result = m.conversation.append(
        m.namespace, [incoming(i, 60) for i in range(5)] + [incoming(5, 10)]
    )
    assert [s.reason for s in result.sleeps] == ["budget"]
    assert result.sleeps[0].messages_compacted == 3  # 5 buffered at the crossing, 2 kept
    buffer = m.stores.messages.buffer(m.namespace)
    assert [msg.seq for msg in buffer] == [3, 4, 5]
    assert m.stores.sleep.wake_packets(m.namespace)[0].slept_at == T0 + timedelta(minutes=4)


def test_the_idle_gap_counts_from_messages_stored_by_an_earlier_append() -> None:
    m = memory()
    m.conversation.append(m.namespace, [incoming(i, 10) for i in range(3)])
    later = m.conversation.append(m.namespace, [incoming(2 + IDLE + 30, 10)])
    assert [(s.reason, s.slept_at) for s in later.sleeps] == [
        ("idle", T0 + timedelta(minutes=2 + IDLE))
    ]
    assert later.messages[0].seq == 3


@pytest.mark.parametrize(
    ("buffered", "hours_idle", "sleeps"),
    [(3, 5.9, False), (3, 6.0, True), (3, 48.0, True), (2, 48.0, False), (0, 48.0, False)],
)
def test_maintenance_sleeps_an_idle_buffer_longer_than_the_tail(
    buffered: int, hours_idle: float, sleeps: bool
) -> None:
    m = memory()
    m.conversation.append(m.namespace, [incoming(i, 10) for i in range(buffered)], False)
    last = T0 + timedelta(minutes=max(buffered - 1, 0))
    summary = m.conversation.maintain(m.namespace, last + timedelta(hours=hours_idle))
    assert (summary is not None) is sleeps
    if summary is not None:
        assert summary.reason == "idle" and summary.slept_at == last + POLICY.idle_gap
        assert len(m.stores.messages.buffer(m.namespace)) == POLICY.tail_turns


def test_a_policy_sleep_while_another_sleep_holds_the_lease_is_skipped_and_nothing_is_lost() -> (
    None
):
    m = memory()
    wall = m.clock.now()
    m.stores.sleep.acquire_lease(m.namespace, "another-worker", wall, wall + timedelta(minutes=5))
    result = m.conversation.append(m.namespace, [incoming(i, 100) for i in range(6)])
    assert result.sleeps == []
    assert len(result.messages) == 6
    assert len(m.stores.messages.buffer(m.namespace)) == 6
    assert m.conversation.maintain(m.namespace, T0 + timedelta(days=1)) is None


def test_a_message_without_a_time_takes_the_clock() -> None:
    m = memory()
    m.clock.set(T0 + timedelta(hours=3))
    result = m.conversation.append(m.namespace, [IncomingMessage(role="user", content="hi")])
    assert result.messages[0].at == T0 + timedelta(hours=3)
    assert result.messages[0].token_estimate == 1


@pytest.mark.parametrize(
    ("items", "error"),
    [
        ([incoming(5, 10), incoming(4, 10)], "time order"),
        (
            [incoming(0, 10), IncomingMessage(role="user", content="x", at=datetime(2026, 3, 2))],
            "timezone-aware",
        ),
        (
            [incoming(0, 10), IncomingMessage(role="user", content="x", speaker="s" * 101)],
            "speaker",
        ),
    ],
    ids=["out-of-order", "naive-time", "speaker-too-long"],
)
def test_a_bad_message_refuses_the_whole_batch_and_writes_nothing(
    items: list[IncomingMessage], error: str
) -> None:
    m = memory()
    with pytest.raises(ValidationFailed, match=error):
        m.conversation.append(m.namespace, items)
    assert m.stores.messages.tail(m.namespace, 10) == []
    assert m.stores.sleep.wake_packets(m.namespace) == []


def test_a_replayed_conversation_keeps_its_own_dates() -> None:
    m = memory()
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    result = m.conversation.append(
        m.namespace, [IncomingMessage(role="user", content="old news", at=when)]
    )
    assert result.messages[0].at == when != m.clock.now()


def test_long_turns_do_not_make_one_sleep_per_message() -> None:
    """Twelve ~2,000-character turns fill the budget with the tail alone; then twelve short
    ones: the production policy sleeps at most once per four messages, and every sleep
    compacts something (a sleep that would compact nothing does not run)."""
    m = wire(SleepPolicy())
    long_turn = ("We moved the ingest service to the new cluster and kept the old one. " * 30)[
        :2000
    ]
    turns = [IncomingMessage(role="user", content=long_turn, at=T0 + timedelta(minutes=i))
             for i in range(12)]  # fmt: skip
    turns += [IncomingMessage(role="assistant", content=f"Noted, step {i}.",
                              at=T0 + timedelta(minutes=12 + i)) for i in range(12)]  # fmt: skip
    sleeps = []
    for item in turns:  # one append per message, as a chat client sends them
        sleeps += m.conversation.append(m.namespace, [item]).sleeps
    assert len(sleeps) / len(turns) <= 0.25
    assert sleeps and all(s.messages_compacted > 0 for s in sleeps)
    assert len(m.stores.sleep.wake_packets(m.namespace, limit=100)) == len(sleeps)


def test_chat_assistant_turns_sleep_once_per_dozen_messages() -> None:
    """Questions of ~400 characters and answers of ~2,000 (LongMemEval's shape), one append
    per message: the tail keeps a quarter of the threshold in tokens, not twelve long turns,
    so each sleep compacts three quarters of it (a sleep came every four messages before)."""
    m = wire(SleepPolicy())
    answer = "Here is a plan: water the peace lily weekly and keep it out of direct sun. " * 30
    turns = [
        IncomingMessage(
            role="user" if i % 2 == 0 else "assistant",
            content=text(100) if i % 2 == 0 else answer[:2000],
            at=T0 + timedelta(minutes=i),
        )
        for i in range(96)
    ]
    sleeps = []
    for item in turns:
        sleeps += m.conversation.append(m.namespace, [item]).sleeps
    assert 0 < len(sleeps) <= len(turns) / 10
    assert all(s.messages_compacted >= 10 for s in sleeps)
    packets = m.stores.sleep.wake_packets(m.namespace, limit=100)
    # two exchanges (1,200 tokens), and the question of an answer the cut would orphan
    assert packets and all(len(p.conversation_tail) <= 5 for p in packets)


def test_the_tail_share_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().sleep_policy().tail_share == 0.25
    monkeypatch.setenv("SHERIFF_TAIL_SHARE", "0.5")
    assert Settings().sleep_policy().tail_share == 0.5
    monkeypatch.setenv("SHERIFF_TAIL_SHARE", "0")
    with pytest.raises(ValidationError, match="tail_share"):
        Settings()


def test_a_batch_is_stored_in_one_write_and_its_sleeps_compact_only_what_came_before_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One store call (one transaction) for the whole batch, however many sleeps the policy
    calls for inside it; each sleep compacts the messages up to its point, as in parts."""
    m = memory()
    store = m.stores.messages
    writes: list[int] = []
    real_append = store.append
    monkeypatch.setattr(
        store, "append", lambda ns, ms, **kw: writes.append(len(ms)) or real_append(ns, ms, **kw)
    )
    turns = [(0, 10), (1, 10), (2, 10), (400, 120), (401, 120), (402, 5)]
    result = m.conversation.append(m.namespace, [incoming(at, size) for at, size in turns])
    assert writes == [6]
    assert [(s.reason, s.messages_compacted) for s in result.sleeps] == [("idle", 1), ("budget", 2)]
    # the budget sleep at minute 401 left its tail (400, 401) and not the later 402 message
    assert [msg.seq for msg in store.buffer(m.namespace)] == [3, 4, 5]


def test_inline_sleeps_read_the_buffer_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy takes the buffer a sleep left from the sleep itself instead of reading it
    again after each one (a read of every buffered message per sleep), with the same sleeps."""
    m = memory()
    store = m.stores.messages
    reads: list[str] = []
    real_buffer = store.buffer

    def stats(ns: str) -> BufferStats:  # the fake's own goes through ``buffer``: not counted
        held = real_buffer(ns)
        last = held[-1].at if held else None
        return BufferStats(len(held), sum(x.token_estimate for x in held), last)

    monkeypatch.setattr(store, "buffer_stats", stats)
    monkeypatch.setattr(
        store, "buffer", lambda ns, *a, **kw: reads.append(ns) or real_buffer(ns, *a, **kw)
    )
    sleeps = []
    for minute in range(0, 40, 4):  # a budget sleep every few messages, appended in pairs
        pair = [incoming(minute, 60), incoming(minute + 1, 60)]
        sleeps += m.conversation.append(m.namespace, pair).sleeps
    assert len(sleeps) >= 3 and all(s.messages_compacted > 0 for s in sleeps)
    assert len(reads) == len(sleeps)  # the sleeps' own reads, none after them
    assert [msg.seq for msg in real_buffer(m.namespace)] == [18, 19]  # the tail: two turns


def test_a_sleep_that_fails_after_the_batch_is_stored_loses_nothing_and_the_retry_adds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client sees the failure (a 503 over HTTP) and retries the same external ids: the
    batch was kept whole, the retry returns it and stores nothing twice."""
    m = memory()
    items = [
        IncomingMessage(role="user", content=text(100), at=T0 + timedelta(minutes=i),
                        external_id=f"x{i}")
        for i in range(6)
    ]  # fmt: skip

    def down(*args: object, **kwargs: object) -> None:
        raise ConnectionError("Neo4j went away mid-sleep")

    monkeypatch.setattr(m.conversation.sleeper, "sleep", down)
    with pytest.raises(ConnectionError):
        m.conversation.append(m.namespace, items)
    monkeypatch.undo()
    stored = m.stores.messages.tail(m.namespace, 100)
    assert [msg.external_id for msg in stored] == [f"x{i}" for i in range(6)]
    retry = m.conversation.append(m.namespace, items)
    assert retry.duplicates == 6
    assert [msg.message_id for msg in retry.messages] == [msg.message_id for msg in stored]
    assert len(m.stores.messages.tail(m.namespace, 100)) == 6
