"""Sleep and wake end to end: real Neo4j, real MiniLM, a controlled clock (spec §10.3, 10.4, 10.6)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

from graph.clock import FixedClock
from graph.errors import AlreadyRunning
from graph.events import EventStore
from graph.messages import MessageStore
from graph.sleep import SleepStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from retrieval.search import TopicSearch
from sleepwake.conversation import Conversation, IncomingMessage
from sleepwake.policy import SleepPolicy
from sleepwake.sleep import STEPS, Sleeper
from sleepwake.wake import Waker

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
POLICY = SleepPolicy(tail_turns=4, fresh_window=timedelta(hours=2))


@dataclass
class Memory:
    namespace: str
    clock: FixedClock
    messages: MessageStore
    topics: TopicStore
    events: EventStore
    store: SleepStore
    sleeper: Sleeper
    conversation: Conversation
    waker: Waker

    def say(self, at: datetime, *turns: tuple[str, str]) -> None:
        items = [
            IncomingMessage(role=role, content=text, at=at + timedelta(minutes=i))  # type: ignore[arg-type]
            for i, (role, text) in enumerate(turns)
        ]
        self.conversation.append(self.namespace, items, auto_sleep=False)

    def counts(self) -> dict[str, int]:
        topics = self.topics.list_live(self.namespace)
        return {
            "topics": len(topics),
            "facts": sum(len(t.facts) for t in topics),
            "events": len(self.events.in_window(self.namespace, None, None, limit=100_000)),
            "buffer": len(self.messages.buffer(self.namespace)),
        }


def build(
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    faults: Callable[[str], None] | None = None,
) -> Memory:
    messages, topics, events = MessageStore(driver), TopicStore(driver), EventStore(driver)
    store = SleepStore(driver)
    sleeper = Sleeper(messages, store, embedder, POLICY, faults=faults)
    clock = FixedClock(DAY1)
    search = TopicSearch(topics, events, embedder)
    return Memory(
        namespace,
        clock,
        messages,
        topics,
        events,
        store,
        sleeper,
        Conversation(messages, sleeper, clock, POLICY),
        Waker(store, messages, search, POLICY),
    )


@pytest.fixture
def memory(driver: Driver, embedder: MiniLMEmbedder, namespace: str) -> Memory:
    return build(driver, embedder, namespace)


PLANNING = [
    (
        "user",
        "We're planning Mel's surprise party at the lake house for Saturday with Anna and Ben.",
    ),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. We still need to book the caterer."),
    ("user", "Never use plastic plates, we prefer real dishes."),
    ("assistant", "Noted: no plastic plates."),
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("assistant", "Good choice for the billing migration."),
    ("user", "The billing migration depends on the schema review."),
    (
        "user",
        "We're halfway through migrating the billing tables; next step is the invoices table.",
    ),
    ("assistant", "Understood, the invoices table is next."),
    ("user", "Let's pause here for today."),
    ("assistant", "Sure, talk later."),
]


def test_sleep_compacts_buffer_into_topics_with_provenance(memory: Memory) -> None:
    memory.say(DAY1, *PLANNING)
    summary = memory.sleeper.sleep(memory.namespace, DAY1 + timedelta(hours=1))
    assert summary.messages_compacted == len(PLANNING) - POLICY.tail_turns
    assert summary.topics_created > 0 and summary.wake_packet_id
    buffer = memory.messages.buffer(memory.namespace)
    assert [m.content for m in buffer] == [t for _, t in PLANNING[-POLICY.tail_turns :]]
    everything = {m.message_id: m for m in memory.messages.tail(memory.namespace, 100)}
    assert len(everything) == len(PLANNING)  # compacted messages are still stored
    compacted = {mid for mid, m in everything.items() if m.compacted_at is not None}
    assert len(compacted) == summary.messages_compacted
    topics = memory.topics.list_live(memory.namespace)
    assert topics
    for topic in topics:
        assert topic.facts, topic.name
        for fact in topic.facts:
            assert fact.source_message_ids and set(fact.source_message_ids) <= compacted
            sentence = fact.text.split(": ", 1)[-1]
            assert any(sentence in everything[m].content for m in fact.source_message_ids)
        for number in topic.numbers:
            assert set(number.source_message_ids) <= compacted
    packets = memory.store.wake_packets(memory.namespace)
    assert packets and packets[0].packet_id == summary.wake_packet_id
    assert [t.content for t in packets[0].conversation_tail] == [t for _, t in PLANNING[-4:]]


def test_topics_carry_structure_events_edges_and_utility(memory: Memory, driver: Driver) -> None:
    memory.say(DAY1, *PLANNING)
    memory.sleeper.sleep(memory.namespace, DAY1 + timedelta(hours=1))
    caterer = memory.topics.find_by_alias(memory.namespace, "caterer")[0]
    assert [o.text for o in caterer.open_loops] == ["We still need to book the caterer."]
    assert [(n.key, n.value) for n in caterer.numbers] == [("guests", 30.0)]
    billing = memory.topics.find_by_alias(memory.namespace, "billing migration")[0]
    decisions = [e.event for e in billing.time.notable_events]
    assert any("Postgres" in d and "MySQL" in d and "JSONB" in d for d in decisions)
    plates = [t for t in memory.topics.list_live(memory.namespace) if "plates" in t.name.lower()]
    assert plates and plates[0].stats.constraint_count > 0
    assert plates[0].stats.utility_score > 3.0  # +3 constrained output, +1 per mention
    events = memory.events.for_topics(memory.namespace, [billing.topic_id])
    assert len(events) == 1 and "billing migration" in events[0].delta_summary
    edges = {(e.type.value) for e in memory.topics.edges(memory.namespace, billing.topic_id)}
    assert "DEPENDS_ON" in edges and "RELATES_TO" in edges
    records, _, _ = driver.execute_query(
        "MATCH (s:Subject {namespace: $ns})-[:TOUCHED]->(t:Topic) "
        "RETURN count(DISTINCT s) AS subjects, min(s.expires_at) AS expires",
        ns=memory.namespace,
    )
    assert records[0]["subjects"] >= 1
    assert records[0]["expires"].to_native() == DAY1 + timedelta(hours=1) + POLICY.subject_ttl


def test_mid_task_sleep_resumes_when_fresh_and_reports_stale_later(memory: Memory) -> None:
    memory.say(DAY1, *PLANNING)
    slept_at = DAY1 + timedelta(hours=1)
    memory.sleeper.sleep(memory.namespace, slept_at)
    fresh = memory.waker.wake(
        memory.namespace, "ok, where were we?", slept_at + timedelta(minutes=30)
    )
    assert fresh.resume.action == "resume"
    assert "migrating the billing tables" in fresh.resume.goal
    assert "invoices table" in fresh.resume.next_step
    assert fresh.resume.topic_id is not None
    resumed = memory.topics.get_one(memory.namespace, fresh.resume.topic_id)
    assert "billing" in resumed.name.lower()
    assert any("billing" in t.name.lower() for t in fresh.topics)
    assert [t.content for t in fresh.conversation_tail][-1] == "Sure, talk later."
    stale = memory.waker.wake(memory.namespace, "ok, where were we?", slept_at + timedelta(days=2))
    assert stale.resume.action == "confirm" and "stale" in stale.resume.reason
    assert stale.resume.next_step == fresh.resume.next_step


def test_one_concept_in_three_sessions_merges_into_one_topic(memory: Memory) -> None:
    sessions = [
        (DAY1, "We need to start the billing migration to Postgres this quarter."),
        (
            DAY1 + timedelta(days=2),
            "Quick update on migrating the billing tables: customers are done.",
        ),
        (
            DAY1 + timedelta(days=7),
            "The Postgres billing migration is nearly finished, only invoices left.",
        ),
    ]
    for at, text in sessions:
        memory.say(at, ("user", text), *[("assistant", "ok")] * 4)
        memory.sleeper.sleep(memory.namespace, at + timedelta(hours=1))
    billing = [t for t in memory.topics.list_live(memory.namespace) if "billing" in t.name.lower()]
    assert len(billing) == 1, [t.name for t in billing]
    topic = billing[0]
    days = sorted({f.at.date() for f in topic.facts if f.at})
    assert days == [at.date() for at, _ in sessions]
    assert topic.time.first_seen_at == sessions[0][0]
    assert topic.time.last_seen_at == sessions[2][0]
    assert len(memory.events.for_topics(memory.namespace, [topic.topic_id])) == 3


def test_two_parties_at_different_times_stay_apart(memory: Memory) -> None:
    march, june = DAY1 + timedelta(days=5), DAY1 + timedelta(days=110)
    memory.say(march, ("user", "The party with Anna and Ben at the lake house was so much fun."),
               *[("assistant", "Glad to hear!")] * 4)  # fmt: skip
    memory.sleeper.sleep(memory.namespace, march + timedelta(hours=2))
    memory.say(june, ("user", "The party with Carla and Dan at the rooftop bar went late."),
               *[("assistant", "Sounds great!")] * 4)  # fmt: skip
    memory.sleeper.sleep(memory.namespace, june + timedelta(hours=2))
    parties = sorted(
        (t for t in memory.topics.list_live(memory.namespace) if "party" in t.name.lower()),
        key=lambda t: t.time.first_seen_at,
    )
    assert len(parties) == 2, [t.name for t in memory.topics.list_live(memory.namespace)]
    assert parties[0].time.first_seen_at == march and parties[0].time.last_seen_at == march
    assert parties[1].time.first_seen_at == june
    assert any("Anna" in f.text for f in parties[0].facts)
    assert any("Carla" in f.text for f in parties[1].facts)
    assert not any("Carla" in f.text for f in parties[0].facts)


def test_before_you_slept_resolves_to_slept_at(memory: Memory) -> None:
    memory.say(DAY1, *PLANNING)
    slept_at = DAY1 + timedelta(hours=1)
    memory.sleeper.sleep(memory.namespace, slept_at)
    woke = memory.waker.wake(
        memory.namespace, "what were we doing before you slept?", slept_at + timedelta(hours=3)
    )
    assert woke.deep and woke.time_window is not None
    assert woke.time_window["start"] is None
    assert woke.time_window["end"] == slept_at.isoformat()
    assert woke.topics


def test_a_secret_never_reaches_a_topic(memory: Memory, driver: Driver) -> None:
    key = "sk-proj-Zx81QmP0v2Lr7Tt9Yb3Kd6Hs1Wq4Ne5Uc8Af"
    memory.say(
        DAY1,
        ("user", f"Use the OpenAI key {key} for the Billing Service deploy."),
        ("user", f"Also the Billing Service password=Hunter2!x and token {key}."),
        *[("assistant", "ok")] * 4,
    )
    memory.sleeper.sleep(memory.namespace, DAY1 + timedelta(hours=1))
    records, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns AND (n:Topic OR n:TopicEvent OR n:Subject) "
        "RETURN properties(n) AS p",
        ns=memory.namespace,
    )
    assert records
    for record in records:
        text = str({k: v for k, v in record["p"].items() if k != "embedding"})
        assert key not in text and "Hunter2" not in text
    service = memory.topics.find_by_alias(memory.namespace, "billing service")
    assert service and any("[REDACTED" in f.text for f in service[0].facts)


def test_two_concurrent_sleeps_one_runs_one_is_refused(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    inside, release = threading.Event(), threading.Event()

    def hold(step: str) -> None:
        if step == "extract":
            inside.set()
            release.wait(30)

    first = build(driver, embedder, namespace, faults=hold)
    first.say(DAY1, *PLANNING)
    results: list[object] = []
    worker = threading.Thread(
        target=lambda: results.append(first.sleeper.sleep(namespace, DAY1 + timedelta(hours=1)))
    )
    worker.start()
    assert inside.wait(30)
    second = build(driver, embedder, namespace)
    with pytest.raises(AlreadyRunning, match="already sleeping"):
        second.sleeper.sleep(namespace, DAY1 + timedelta(hours=1))
    release.set()
    worker.join(60)
    assert len(results) == 1
    second.sleeper.sleep(namespace, DAY1 + timedelta(hours=2))  # the lease was released


def test_a_policy_sleep_during_another_sleep_is_skipped_and_nothing_is_lost(
    memory: Memory,
) -> None:
    wall = datetime.now(UTC)
    memory.store.acquire_lease(
        memory.namespace, "another-worker", wall, wall + timedelta(minutes=5)
    )
    words = "The lake house booking needs the deposit, the keys and the cleaning slot. "
    items = [
        IncomingMessage(role="user", content=words * 40, at=DAY1 + timedelta(minutes=i))
        for i in range(8)
    ]
    result = memory.conversation.append(memory.namespace, items)  # over budget: a policy sleep
    assert result.sleeps == []
    assert len(result.messages) == 8
    assert len(memory.messages.buffer(memory.namespace)) == 8


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("step", STEPS)
def test_fault_at_any_step_then_rerun_equals_a_clean_run(
    step: str, driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    clean = build(driver, embedder, namespace + "-clean")
    try:
        clean.say(DAY1, *PLANNING)
        clean.sleeper.sleep(clean.namespace, DAY1 + timedelta(hours=1))
        expected = clean.counts()
    finally:
        driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=clean.namespace
        )

    def explode(at: str) -> None:
        if at == step:
            raise Boom(at)

    faulty = build(driver, embedder, namespace, faults=explode)
    faulty.say(DAY1, *PLANNING)
    with pytest.raises(Boom):
        faulty.sleeper.sleep(namespace, DAY1 + timedelta(hours=1))
    rerun = build(driver, embedder, namespace)
    rerun.sleeper.sleep(namespace, DAY1 + timedelta(hours=1))
    assert rerun.counts() == expected


def test_idle_gap_and_budget_trigger_sleeps_during_ingest(memory: Memory) -> None:
    policy = SleepPolicy(tail_turns=2, context_budget_tokens=500, buffer_share=0.5)
    memory.sleeper.policy = policy
    conversation = Conversation(memory.messages, memory.sleeper, memory.clock, policy)
    long = "We talked about the garden beds and the tomato plants for a long while. " * 3
    day2 = DAY1 + timedelta(days=1)
    items = [
        IncomingMessage(role="user", content="The Kitchen Renovation starts in May.", at=DAY1),
        IncomingMessage(role="assistant", content="Exciting!", at=DAY1 + timedelta(minutes=1)),
        IncomingMessage(
            role="user", content="Also the Garden Beds need soil.", at=DAY1 + timedelta(minutes=2)
        ),
        IncomingMessage(role="user", content="Good morning again.", at=day2),
        *[
            IncomingMessage(role="user", content=long, at=day2 + timedelta(minutes=i + 1))
            for i in range(8)
        ],
    ]
    result = conversation.append(memory.namespace, items)
    reasons = [s.reason for s in result.sleeps]
    assert reasons[0] == "idle" and "budget" in reasons
    assert result.sleeps[0].slept_at == DAY1 + timedelta(minutes=2) + policy.idle_gap
    assert len(result.messages) == len(items)
