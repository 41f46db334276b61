"""Ingest + sleep throughput on a ~600-turn LoCoMo conversation, replayed with its session dates
and slept by the production policy (budget share, idle gap between sessions).

    .venv/bin/python benchmarks/bench_sleep_locomo.py [--data ../shared/data/locomo/locomo-dev.json]

Model load is excluded (the model is loaded before the clock starts); everything else - append,
the policy, every sleep step and the commit - is inside the clock. Prints ingest and sleep time,
messages per second end to end, the time of each sleep step (summed over the sleeps), and what
the memory holds afterwards.

The machine is shared and small, so absolute figures swing by 2-3x from run to run. To make a run
comparable with another, the same process then embeds the very texts the sleeps embedded, raw
(sentence-transformers ``encode`` with its default batch size, no cache), and prints the end to
end time as a multiple of that: the ratio moves far less with the machine's load than either
figure alone.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from api.container import Container
from api.settings import Settings
from retrieval.embedding import Embedder
from sleepwake.replay import locomo_sessions
from sleepwake.sleep import SleepSummary

TARGET_MSGS_PER_S = 50.0


class RecordingEmbedder:
    """Passes every call through to the real embedder and keeps the texts (for the baseline)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo-dev.json"))
    parser.add_argument(
        "--turns", type=int, default=600, help="pick the conversation nearest this size"
    )
    parser.add_argument("--raw-repeats", type=int, default=2, help="raw embedding passes (min)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    sized = [(sum(len(m) for _, m in locomo_sessions(s)), s) for s in samples]
    turns, sample = min(sized, key=lambda x: abs(x[0] - args.turns))

    container = Container(Settings())
    container.migrate()
    container.embedder.embed(["warm-up"])  # model load excluded from the figures
    recorder = RecordingEmbedder(container.embedder)
    container.sleeper.embedder = recorder
    ns = f"bench-locomo-{uuid.uuid4().hex[:8]}"
    sleeps: list[SleepSummary] = []
    started = time.perf_counter()
    for _, messages in locomo_sessions(sample):
        sleeps += container.conversation.append(ns, messages).sleeps
    total = time.perf_counter() - started
    _report(sample["sample_id"], turns, total, sleeps, container.topics.list_live(ns))
    _raw_baseline(container.embedder, recorder.calls, total, args.raw_repeats)
    if not args.keep:
        with container.driver.session() as session:
            session.run(
                "MATCH (n) WHERE n.namespace = $ns "
                "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                ns=ns,
            ).consume()
    container.close()


def _report(
    sample_id: str, turns: int, total: float, sleeps: list[SleepSummary], topics: list[Any]
) -> None:
    sleep_s = sum(s.duration_ms for s in sleeps) / 1000
    rate = turns / total
    print(
        f"conversation {sample_id}: {turns} turns, {len(sleeps)} sleeps "
        f"({sum(1 for s in sleeps if s.reason == 'idle')} idle, "
        f"{sum(1 for s in sleeps if s.reason == 'budget')} budget)"
    )
    print(
        f"end to end: {total:.1f} s = {rate:.1f} messages/s "
        f"(sleep {sleep_s:.1f} s, ingest {total - sleep_s:.1f} s); "
        f"target {TARGET_MSGS_PER_S:.0f} messages/s: {'PASS' if rate >= TARGET_MSGS_PER_S else 'MISS'}"
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
    main_steps = {k: v for k, v in steps.items() if not k.startswith("commit.")}
    commit_steps = {k[len("commit.") :]: v for k, v in steps.items() if k.startswith("commit.")}
    print(
        "time per sleep step (s): "
        + ", ".join(f"{k} {v / 1000:.2f}" for k, v in main_steps.items())
    )
    print(
        "  inside the commit (s): "
        + ", ".join(f"{k} {v / 1000:.2f}" for k, v in commit_steps.items())
    )


def _raw_baseline(embedder: Embedder, calls: list[list[str]], total: float, repeats: int) -> None:
    """Embed the sleeps' texts again, raw, in the same batches; print end to end / raw."""
    model = getattr(embedder, "_model", None)
    texts = sum(len(c) for c in calls)
    if model is None or not texts:
        return
    best = float("inf")
    for _ in range(max(1, repeats)):
        mark = time.perf_counter()
        for batch in calls:
            model.encode(batch)  # the runtime (onnx or torch) returns unit-length rows
        best = min(best, time.perf_counter() - mark)
    print(
        f"baseline, same process: raw embedding of the {texts} texts the sleeps embedded "
        f"({len(set(t for c in calls for t in c))} distinct, {len(calls)} calls) "
        f"{best:.1f} s = {texts / best:.0f} texts/s; end to end = {total / best:.2f} x raw"
    )


if __name__ == "__main__":
    main()
