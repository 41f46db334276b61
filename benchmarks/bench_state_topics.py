"""The read a sleep (and a question about a state) makes of the topics holding a state of a life:
``state_topics`` on a namespace of N topics, beside a neighbour whose every topic holds the same
key (docs/sleep-and-wake.md, "What is true now").

    .venv/bin/python benchmarks/bench_state_topics.py              # 10,000 topics each side
    .venv/bin/python benchmarks/bench_state_topics.py --topics 2000 --repeat 200

Namespace A holds N topics of small talk, of which five hold where the user lives (one now, four
superseded); namespace B (the neighbour) holds N topics that all hold it now. Printed: p50/p95/max
of ``SleepStore.state_topics`` for A (the sleep's read: the key now) and of the retrieval read
(now and once), the topics each returned, and the same for B, with the time to seed. Both
namespaces are deleted afterwards. Needs Neo4j (``sheriff neo4j env``).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from api.settings import Settings
from graph.db import connect
from graph.migrations import apply_migrations
from graph.models import Fact, Topic, TopicTime
from graph.sleep import SleepStore
from graph.topics import TopicStore
from text.claims import state_token

T0 = datetime(2026, 1, 1, tzinfo=UTC)
KEY = ("", "self", "residence")
CITIES = ("Boston", "Denver", "Austin", "Lisbon", "Berlin")


def topic(ns: str, i: int, facts: list[Fact]) -> Topic:
    at = T0 + timedelta(hours=i)
    return Topic(
        topic_id=f"{ns}-{i}",
        namespace=ns,
        name=f"subject {i}",
        one_liner=facts[0].text,
        time=TopicTime(first_seen_at=at, last_seen_at=at),
        facts=facts,
    )


def fact(text: str, i: int, **extra: object) -> Fact:
    return Fact(text=text, at=T0 + timedelta(hours=i), source_message_ids=[f"m{i}"], **extra)


def seed(store: TopicStore, ns: str, n: int, holders: set[int], all_hold: bool) -> float:
    started = time.perf_counter()
    batch: list[Topic] = []
    for i in range(n):
        facts = [fact(f"We talked about the weather on day {i}.", i)]
        if all_hold or i in holders:
            city = CITIES[i % len(CITIES)]
            closed = not all_hold and i != max(holders)
            extra = {"invalid_at": T0 + timedelta(hours=i + 1), "superseded_by": "f-x"}
            facts.append(fact(f"I live in {city}.", i, **(extra if closed else {})))
        batch.append(topic(ns, i, facts))
        if len(batch) == 500:
            store.create(batch, [None] * len(batch), T0)
            batch = []
    if batch:
        store.create(batch, [None] * len(batch), T0)
    return time.perf_counter() - started


def timed(call: object, repeat: int) -> tuple[list[float], int]:
    times, found = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        found = len(call())  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return times, found


def report(label: str, times: list[float], found: int) -> None:
    times = sorted(times)
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"{label:<44} p50 {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  "
          f"max {times[-1]:6.2f} ms  topics {found}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args()
    settings = Settings()
    driver = connect(*settings.connection())
    apply_migrations(driver, datetime.now(UTC), settings.neo4j_database)
    topics, sleep = TopicStore(driver), SleepStore(driver)
    a, b = (f"bench-states-{uuid.uuid4().hex[:8]}" for _ in range(2))
    try:
        holders = {args.topics // 7 * k for k in range(1, 6)}
        print(f"seeded A in {seed(topics, a, args.topics, holders, False):.1f} s, "
              f"B in {seed(topics, b, args.topics, set(), True):.1f} s")  # fmt: skip
        now, once = state_token(KEY), state_token(KEY, past=True)
        for ns, name in ((a, "A (5 of N hold it)"), (b, "B (all N hold it)")):
            times, found = timed(lambda ns=ns: sleep.state_topics(ns, [now]), args.repeat)
            report(f"{name}: sleep's read (now)", times, found)
            times, found = timed(lambda ns=ns: topics.state_topics(ns, [now, once], 8), args.repeat)
            report(f"{name}: question's read (now, once; 8)", times, found)
    finally:
        for ns in (a, b):
            driver.execute_query("MATCH (t:Topic) WHERE t.namespace = $ns DETACH DELETE t", ns=ns)
        driver.close()


if __name__ == "__main__":
    main()
