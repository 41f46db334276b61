"""Ingest + sleep throughput on a ~600-turn LoCoMo conversation, replayed with its session dates
and slept by the production policy (budget share, idle gap between sessions).

    .venv/bin/python benchmarks/bench_sleep_locomo.py --data ../shared/data/locomo/locomo-dev.json

Model load is excluded (the model is loaded before the clock starts). Prints ingest and sleep
time, messages per second end to end, and what the memory holds afterwards.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path

from api.container import Container
from api.settings import Settings
from sleepwake.replay import locomo_sessions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo-dev.json"))
    parser.add_argument(
        "--turns", type=int, default=600, help="pick the conversation nearest this size"
    )
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    sized = [(sum(len(m) for _, m in locomo_sessions(s)), s) for s in samples]
    turns, sample = min(sized, key=lambda x: abs(x[0] - args.turns))

    container = Container(Settings())
    container.migrate()
    container.embedder.embed(["warm-up"])  # model load excluded from the figures
    ns = f"bench-locomo-{uuid.uuid4().hex[:8]}"
    sleeps = []
    started = time.perf_counter()
    for _, messages in locomo_sessions(sample):
        sleeps += container.conversation.append(ns, messages).sleeps
    total = time.perf_counter() - started
    sleep_s = sum(s.duration_ms for s in sleeps) / 1000
    topics = container.topics.list_live(ns)
    print(
        f"conversation {sample['sample_id']}: {turns} turns, {len(sleeps)} sleeps "
        f"({sum(1 for s in sleeps if s.reason == 'idle')} idle, "
        f"{sum(1 for s in sleeps if s.reason == 'budget')} budget)"
    )
    print(
        f"end to end: {total:.1f} s = {turns / total:.1f} messages/s "
        f"(sleep {sleep_s:.1f} s, ingest {total - sleep_s:.1f} s)"
    )
    print(
        f"compacted {sum(s.messages_compacted for s in sleeps)} messages into {len(topics)} topics, "
        f"{sum(len(t.facts) for t in topics)} facts, {sum(s.events for s in sleeps)} events, "
        f"{sum(s.edges for s in sleeps)} edge updates"
    )
    steps: dict[str, float] = {}
    for s in sleeps:
        for step, ms in s.step_ms.items():
            steps[step] = steps.get(step, 0.0) + ms
    print("time per sleep step (s): " + ", ".join(f"{k} {v / 1000:.1f}" for k, v in steps.items()))
    if not args.keep:
        with container.driver.session() as session:
            session.run(
                "MATCH (n) WHERE n.namespace = $ns "
                "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                ns=ns,
            ).consume()
    container.close()


if __name__ == "__main__":
    main()
