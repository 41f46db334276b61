"""The inspector's topic list (``/ui/topics``) against 10k topics: one page of
``cypher/queries/page_topics.cypher`` first, deep, searched and windowed.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_inspector_topics.py [--topics 10000]

Writes the topics straight into a scratch namespace (one in a hundred named "party"), times
``InspectorStore.topic_page`` ten times per case after one warm-up (median and max, ms, from
this process over Bolt), then deletes the namespace. Figures, no assertions (docs/inspector.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from api.settings import Settings
from graph.db import connect, drop_namespace
from graph.inspector import InspectorStore
from graph.mapping import topic_props
from graph.models import Topic, TopicTime

T0 = datetime(2025, 1, 1, tzinfo=UTC)
PAGE = 50


def _rows(namespace: str, n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        at = T0 + timedelta(hours=i)
        name = f"topic {i} {'party' if i % 100 == 0 else 'work'}"
        seen = TopicTime(first_seen_at=at, last_seen_at=at + timedelta(hours=2))
        out.append(topic_props(Topic(namespace=namespace, name=name, time=seen)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    n = parser.parse_args().topics
    uri, user, password = Settings().connection()
    driver = connect(uri, user, password)
    namespace = f"bench-ui-{uuid.uuid4().hex[:8]}"
    try:
        rows = _rows(namespace, n)
        for k in range(0, n, 2000):
            driver.execute_query(
                "UNWIND $rows AS r CREATE (t:Topic) SET t = r", rows=rows[k : k + 2000]
            )
        store = InspectorStore(driver)
        week = {"since": T0 + timedelta(days=200), "until": T0 + timedelta(days=207)}
        cases: list[tuple[str, dict[str, Any]]] = [
            ("first page", {}),
            (f"middle page (skip {n // 2})", {"skip": n // 2}),
            (f"last page (skip {n - PAGE})", {"skip": n - PAGE}),
            ("search 'party'", {"needle": "party"}),
            ("search matching nothing", {"needle": "zzzz"}),
            ("window of one week", week),
        ]
        for label, given in cases:
            args: dict[str, Any] = {"needle": None, "since": None, "until": None, "skip": 0,
                                    "limit": PAGE + 1, **given}  # fmt: skip
            store.topic_page(namespace, **args)
            times = []
            for _ in range(10):
                start = time.perf_counter()
                found = store.topic_page(namespace, **args)
                times.append((time.perf_counter() - start) * 1000)
            print(f"{label:32s} rows={len(found):3d} median={statistics.median(times):6.1f} ms "
                  f"max={max(times):6.1f} ms")  # fmt: skip
    finally:
        drop_namespace(driver, namespace)
        driver.close()


if __name__ == "__main__":
    main()
