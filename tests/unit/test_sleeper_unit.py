"""Sleep orchestration (sleepwake/sleep.py, spec §4.2) on the in-memory fakes: what a sleep
writes (topics with provenance, events, edges, a wake packet), what it trims (all but the tail,
never deleting), the lease that keeps a second sleep out, the retry when a writer races it, and
all-or-nothing on a crash at any step. Matching quality (which phrasings merge) needs the real
model and lives in tests/integration/test_sleep_wake.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from graph.errors import AlreadyRunning
from graph.models import WakePacket
from sleepwake.policy import SleepPolicy
from sleepwake.sleep import STEPS, Sleeper
from tests.fakes import FakeStores, HashEmbedder
from tests.fakes.pipelines import T0, Memory, wire

POLICY = SleepPolicy(tail_turns=4)
SLEPT = T0 + timedelta(hours=1)

PLANNING = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday with Anna."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. We still need to book the caterer."),
    ("user", "Never use plastic plates, we prefer real dishes."),
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "The billing migration depends on the schema review."),
    ("user", "We're halfway through migrating the billing tables; next step is the invoices."),
    ("assistant", "Understood, the invoices are next."),
    ("user", "Let's pause here for today."),
    ("assistant", "Sure, talk later."),
]


def planned(policy: SleepPolicy = POLICY, turns: list[tuple[str, str]] = PLANNING) -> Memory:
    m = wire(policy)
    m.say(T0, *turns)
    return m


def counts(m: Memory) -> dict[str, int]:
    topics = m.topics.list_live(m.namespace)
    return {
        "topics": len(topics),
        "facts": sum(len(t.facts) for t in topics),
        "events": len(m.stores.events.in_window(m.namespace, None, None)),
        "edges": len(m.stores.graph.edges),
        "buffer": len(m.stores.messages.buffer(m.namespace)),
        "packets": len(m.stores.sleep.wake_packets(m.namespace, limit=10)),
    }


@pytest.mark.parametrize(
    ("buffered", "tail", "compacted"), [(10, 4, 6), (10, 0, 10), (4, 4, 0), (3, 12, 0), (0, 4, 0)]
)
def test_a_sleep_compacts_all_but_the_last_tail_turns(
    buffered: int, tail: int, compacted: int
) -> None:
    m = planned(SleepPolicy(tail_turns=tail), PLANNING[:buffered])
    summary = m.sleeper.sleep(m.namespace, SLEPT)
    assert summary.messages_compacted == compacted
    buffer = m.stores.messages.buffer(m.namespace)
    assert [msg.content for msg in buffer] == [t for _, t in PLANNING[compacted:buffered]]
    stored = m.stores.messages.tail(m.namespace, 100)
    assert len(stored) == buffered  # compacted messages are kept, only marked
    assert [msg.compacted_at for msg in stored[:compacted]] == [SLEPT] * compacted


def test_a_sleep_turns_the_slice_into_topics_that_cite_their_messages() -> None:
    m = planned()
    summary = m.sleeper.sleep(m.namespace, SLEPT)
    topics = m.topics.list_live(m.namespace)
    assert summary.topics_created == len(topics) > 0 and summary.topics_updated == 0
    compacted = {msg.message_id: msg for msg in m.stores.messages.tail(m.namespace, 100)
                 if msg.compacted_at is not None}  # fmt: skip
    for topic in topics:
        assert topic.facts, topic.name
        for fact in topic.facts:
            assert set(fact.source_message_ids) <= set(compacted)
            sentence = fact.text.split(": ", 1)[-1]
            assert any(sentence in compacted[i].content for i in fact.source_message_ids)
    events = m.stores.events.in_window(m.namespace, None, None)
    assert summary.events == len(events) == len(topics)  # one event per touched topic
    assert summary.edges == len(m.stores.graph.edges) > 0
    caterer = m.topics.find_by_alias(m.namespace, "caterer")[0]
    assert [loop.text for loop in caterer.open_loops] == ["We still need to book the caterer."]
    assert [(n.key, n.value) for n in caterer.numbers] == [("guests", 30.0)]


def test_the_wake_packet_holds_the_tail_the_resume_hint_and_the_top_topics() -> None:
    m = planned()
    summary = m.sleeper.sleep(m.namespace, SLEPT)
    packet = m.stores.sleep.wake_packets(m.namespace)[0]
    assert packet.packet_id == summary.wake_packet_id
    assert packet.slept_at == SLEPT
    assert [t.content for t in packet.conversation_tail] == [t for _, t in PLANNING[-4:]]
    assert packet.in_progress.status == "running"
    assert packet.in_progress.resume_hint == (
        "migrating the billing tables; next step: the invoices"
    )
    billing = m.topics.get_one(m.namespace, packet.in_progress.topic_id or "")
    assert "billing" in billing.name.lower()
    live = {t.topic_id for t in m.topics.list_live(m.namespace)}
    assert packet.top_topic_ids and set(packet.top_topic_ids) <= live
    assert summary.in_progress == packet.in_progress


def test_an_empty_buffer_sleeps_without_a_packet() -> None:
    m = wire(POLICY)
    summary = m.sleeper.sleep(m.namespace, SLEPT)
    assert (summary.messages_compacted, summary.topics_created, summary.wake_packet_id) == (
        0,
        0,
        None,
    )
    assert m.stores.sleep.wake_packets(m.namespace) == []


def test_a_second_sleep_updates_the_topic_it_names_again() -> None:
    m = planned()
    m.sleeper.sleep(m.namespace, SLEPT)
    caterer = m.topics.find_by_alias(m.namespace, "caterer")[0]
    later = T0 + timedelta(days=2)
    # shared wording: the hashed embedder only sees words (paraphrases: integration tests)
    # the caterer is an alias of the party topic (topics are episodes, not noun phrases)
    m.say(later, ("user", "For the surprise party at the lake house we still need to book "
                          "the caterer, Rosa's Kitchen."),
          *[("assistant", "ok")] * 4)  # fmt: skip
    summary = m.sleeper.sleep(m.namespace, later + timedelta(hours=1))
    assert summary.topics_updated >= 1
    again = m.topics.get_one(m.namespace, caterer.topic_id)
    assert any("Rosa's Kitchen" in f.text for f in again.facts)
    assert again.time.last_seen_at == later
    assert again.version > caterer.version
    assert len(m.stores.events.for_topics(m.namespace, [caterer.topic_id])) == 2
    assert len(m.stores.sleep.wake_packets(m.namespace, limit=10)) == 2


# -- lease -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("held_for", "after", "refused"),
    [
        (timedelta(minutes=15), timedelta(minutes=5), True),  # another sleep is running
        (timedelta(minutes=15), timedelta(minutes=15), True),  # expires at, not before
        (timedelta(minutes=15), timedelta(minutes=16), False),  # it died: its lease expired
    ],
    ids=["live", "at-expiry", "expired"],
)
def test_a_lease_held_by_another_sleeper_is_respected_until_it_expires(
    held_for: timedelta, after: timedelta, refused: bool
) -> None:
    m = planned()
    m.stores.sleep.acquire_lease(m.namespace, "other-worker", T0, T0 + held_for)
    m.clock.set(T0 + after)  # the lease clock
    before = counts(m)
    if refused:
        with pytest.raises(AlreadyRunning, match="already sleeping"):
            m.sleeper.sleep(m.namespace, SLEPT)
        assert counts(m) == before
    else:
        assert m.sleeper.sleep(m.namespace, SLEPT).messages_compacted == 6


def test_the_lease_is_released_after_a_sleep_and_after_a_crash() -> None:
    crash = {"on": True}

    def fault(step: str) -> None:
        if step == "match" and crash["on"]:
            raise RuntimeError("crash")

    m = planned()
    sleeper = Sleeper(m.stores.messages, m.stores.sleep, HashEmbedder(), POLICY,
                      lease_clock=m.clock, faults=fault)  # fmt: skip
    with pytest.raises(RuntimeError, match="crash"):
        sleeper.sleep(m.namespace, SLEPT)
    crash["on"] = False
    assert sleeper.sleep(m.namespace, SLEPT).messages_compacted == 6  # not "already sleeping"
    m.sleeper.sleep(m.namespace, SLEPT + timedelta(minutes=1))  # and released again


def test_a_sleep_gives_its_lease_back_in_its_commit_and_says_what_it_left() -> None:
    m = planned()
    releases: list[str] = []
    release = m.stores.sleep.release_lease
    m.stores.sleep.release_lease = lambda ns, holder: (releases.append(holder), release(ns, holder))  # type: ignore[method-assign]
    summary = m.sleeper.sleep(m.namespace, SLEPT)
    assert summary.messages_compacted == 6 and releases == []  # no second write to release it
    left = summary.buffer_left()
    assert left is not None
    assert [x.message_id for x in left] == [
        x.message_id for x in m.stores.messages.buffer(m.namespace)
    ]
    assert len(left) == 4
    # the lease is free: a policy sleep right after takes it and, with only the tail left,
    # writes nothing and releases it the ordinary way
    again = m.sleeper.sleep(m.namespace, SLEPT + timedelta(minutes=1), "budget")
    assert again.skipped and len(releases) == 1
    assert [x.message_id for x in again.buffer_left() or []] == [x.message_id for x in left]


# -- races and crashes -----------------------------------------------------------------------------
def test_a_sleep_that_races_a_writer_recomputes_and_commits() -> None:
    m = planned()
    m.sleeper.sleep(m.namespace, SLEPT)
    caterer = m.topics.find_by_alias(m.namespace, "caterer")[0]
    later = T0 + timedelta(days=1)
    m.say(later, ("user", "For the surprise party at the lake house we still need to book "
                          "the caterer, they want a deposit."),
          *[("assistant", "ok")] * 4)  # fmt: skip
    slices: list[str] = []

    def writer(step: str) -> None:
        if step == "slice":
            slices.append(step)
        if step == "normalise" and len(slices) == 1:  # someone edits the topic mid-sleep
            m.stores.graph.topics[caterer.topic_id].props["version"] += 1

    racing = Sleeper(m.stores.messages, m.stores.sleep, m.embedder, POLICY,
                     lease_clock=m.clock, faults=writer)  # fmt: skip
    summary = racing.sleep(m.namespace, later + timedelta(hours=1))
    assert len(slices) == 2  # the first attempt hit the version check and was recomputed
    assert summary.topics_updated >= 1
    assert any("deposit" in f.text for f in m.topics.get_one(m.namespace, caterer.topic_id).facts)


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_any_step_writes_nothing_and_a_rerun_equals_a_clean_run(step: str) -> None:
    clean = planned()
    clean.sleeper.sleep(clean.namespace, SLEPT)

    def explode(at: str) -> None:
        if at == step:
            raise RuntimeError(at)

    stores = FakeStores()
    faulty = wire(POLICY, stores=stores)
    faulty.say(T0, *PLANNING)
    before = counts(faulty)
    crashing = Sleeper(stores.messages, stores.sleep, HashEmbedder(), POLICY,
                       lease_clock=faulty.clock, faults=explode)  # fmt: skip
    with pytest.raises(RuntimeError, match=step):
        crashing.sleep(faulty.namespace, SLEPT)
    expected = counts(clean)
    if step == "after_commit":  # the commit stood; the re-run finds only the tail to pack
        assert counts(faulty) == expected
        expected["packets"] += 1
    else:
        assert counts(faulty) == before
    faulty.sleeper.sleep(faulty.namespace, SLEPT)
    assert counts(faulty) == expected


def test_wake_packets_come_back_newest_first() -> None:
    m = planned()
    m.sleeper.sleep(m.namespace, SLEPT)
    m.say(T0 + timedelta(days=1), *PLANNING[:6])
    m.sleeper.sleep(m.namespace, T0 + timedelta(days=1, hours=1))
    packets: list[WakePacket] = m.stores.sleep.wake_packets(m.namespace, limit=5)
    assert [p.slept_at for p in packets] == [T0 + timedelta(days=1, hours=1), SLEPT]
