"""MessageStore and EventStore against the real Neo4j."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from neo4j import Driver

from graph.errors import Conflict, NotFound, ValidationFailed
from graph.events import EventStore
from graph.messages import MessageStore
from graph.models import Message, Topic, TopicEvent, parse
from graph.topics import TopicStore
from tests.conftest import T0
from tests.integration.stores import CompactingMessageStore


def msg(namespace: str, i: int, role: str = "user") -> Message:
    return Message(namespace=namespace, role=role, content=f"turn {i}", at=T0 + timedelta(hours=i))  # type: ignore[arg-type]


def test_append_tail_range_and_compaction(driver: Driver, namespace: str) -> None:
    store = CompactingMessageStore(driver)
    first = store.append(namespace, [msg(namespace, i) for i in range(5)])
    more = store.append(namespace, [msg(namespace, i) for i in range(5, 10)])
    assert [m.seq for m in first + more] == list(range(10))
    assert [m.content for m in store.tail(namespace, 3)] == ["turn 7", "turn 8", "turn 9"]
    window = store.in_range(namespace, T0 + timedelta(hours=2), T0 + timedelta(hours=4))
    assert [m.content for m in window] == ["turn 2", "turn 3"]
    assert store.mark_compacted(namespace, [m.message_id for m in first], T0) == 5
    assert store.mark_compacted(namespace, [m.message_id for m in first], T0) == 0
    assert [m.seq for m in store.buffer(namespace)] == [5, 6, 7, 8, 9]
    assert len(store.get(namespace, [m.message_id for m in first])) == 5  # never deleted
    assert store.tail(namespace + "-other", 10) == []


def test_concurrent_appends_get_distinct_seqs(driver: Driver, namespace: str) -> None:
    store = MessageStore(driver)

    def writer(offset: int) -> None:
        # The writers' clocks interleave; as for API requests without an ``at``, those times
        # are server-assigned and may move forward (an older caller-given time is refused).
        for i in range(10):
            m = msg(namespace, offset + i)
            store.append(namespace, [m], server_time={m.message_id})

    threads = [threading.Thread(target=writer, args=(k * 100,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    seqs = [m.seq for m in store.tail(namespace, 100)]
    assert seqs == list(range(40))


def test_concurrent_appends_keep_seq_in_time_order(driver: Driver, namespace: str) -> None:
    """Four writers whose clocks interleave (writer k stamps hour k*100+i): server-stamped
    messages move forward past a later one stored first, caller-stamped ones older than the
    newest are refused; either way seq order is time order and nothing is stored twice."""
    store = MessageStore(driver)
    refused: list[int] = []

    def writer(offset: int, server_time: bool) -> None:
        for i in range(10):
            batch = [msg(namespace, offset + i), msg(namespace, offset + i)]
            batch[1] = batch[1].model_copy(update={"content": "reply"})
            moved = {m.message_id for m in batch} if server_time else set()
            try:
                store.append(namespace, batch, server_time=moved)
            except Conflict:
                refused.append(offset + i)

    threads = [
        threading.Thread(target=writer, args=(k * 3, k % 2 == 0)) for k in range(4)
    ]  # offsets 0, 3, 6, 9: every writer's times overlap the next one's
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stored = store.tail(namespace, 200)
    assert [m.seq for m in stored] == list(range(len(stored)))
    assert [m.at for m in stored] == sorted(m.at for m in stored)
    assert len(stored) == 2 * (40 - len(refused))
    assert len({m.message_id for m in stored}) == len(stored)


def test_bad_messages_are_refused_and_nothing_is_written(driver: Driver, namespace: str) -> None:
    store = MessageStore(driver)
    good = msg(namespace, 1)
    store.append(namespace, [good])
    with pytest.raises(ValidationFailed, match="already exists"):
        store.append(namespace, [msg(namespace, 2), good])  # duplicate id: whole batch refused
    assert [m.content for m in store.tail(namespace, 10)] == ["turn 1"]
    with pytest.raises(ValidationFailed, match="namespace"):
        store.append(namespace, [msg(namespace + "x", 3)])


def test_events_are_idempotent_and_found_by_window(driver: Driver, namespace: str) -> None:
    topics, events = TopicStore(driver), EventStore(driver)
    topic = parse(
        Topic,
        {
            "namespace": namespace,
            "name": "Party",
            "time": {"first_seen_at": T0, "last_seen_at": T0},
        },
    )
    topics.create([topic], None, T0)
    evs = [
        TopicEvent(
            namespace=namespace,
            topic_id=topic.topic_id,
            at=T0 + timedelta(days=d),
            delta_summary=f"update on day {d}",
            source_message_ids=[f"m{d}"],
        )
        for d in range(3)
    ]
    assert events.record(namespace, evs) == [e.event_id for e in evs]
    events.record(namespace, evs)  # a re-run writes nothing new
    assert [e.delta_summary for e in events.for_topics(namespace, [topic.topic_id])] == [
        "update on day 0",
        "update on day 1",
        "update on day 2",
    ]
    got = events.in_window(namespace, T0 + timedelta(days=1), T0 + timedelta(days=2))
    assert [e.source_message_ids for e in got] == [["m1"]]
    assert events.in_window(namespace + "-b", None, None) == []
    orphan = TopicEvent(
        namespace=namespace, topic_id="missing", at=T0, delta_summary="x", source_message_ids=[]
    )
    with pytest.raises(NotFound, match="missing"):
        events.record(namespace, [orphan])
