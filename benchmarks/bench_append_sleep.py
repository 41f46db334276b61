"""Append latency with and without a due sleep, inline vs background sleep mode (issue #14:
"appending the message that fills the buffer returns in the time of an append").

    .venv/bin/python benchmarks/bench_append_sleep.py [--messages 60]

One namespace per mode; one message per append (a chat client's pattern), ~250 tokens each, so
the production policy (0.6 x 8000 tokens, tail 12) makes a sleep due every few appends. Prints
p50/p95/max of the appends that made a sleep due (or ran it) and of the others, per mode. The
background mode's sleeps are run afterwards by a worker, outside the clock. MiniLM is loaded
before the clock starts. The machine is shared: compare the modes within one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from sleepwake.conversation import IncomingMessage

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TEXT = "We reviewed the Harbor Project crane schedule, the dock four permits and the budget. "


def run(mode: str, messages: int) -> dict[str, list[float]]:
    """Append ``messages`` one at a time; milliseconds of appends with and without a sleep."""
    container = Container(Settings(sleep_mode=mode))  # type: ignore[arg-type]
    container.embedder.embed(["warm-up"])
    namespace = f"bench-append-{mode}-{uuid.uuid4().hex[:8]}"
    out: dict[str, list[float]] = {"with a sleep": [], "without": []}
    try:
        for i in range(messages):
            item = IncomingMessage(role="user", content=f"{i}: {TEXT * 12}",
                                   at=T0 + timedelta(minutes=i))  # fmt: skip
            started = time.perf_counter()
            result = container.conversation.append(namespace, [item])
            ms = (time.perf_counter() - started) * 1000
            out["with a sleep" if result.sleeps or result.sleep_due else "without"].append(ms)
        if mode == "background":
            worker = container.sleep_worker("bench")
            while worker.run_once() is not None:
                pass
    finally:
        drop_namespace(container.driver, namespace)
        container.close()
    return out


def _line(mode: str, kind: str, values: list[float]) -> str:
    if not values:
        return f"{mode:<10} {kind:<13} n=0"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{mode:<10} {kind:<13} n={len(values):<3} p50={statistics.median(values):7.1f} ms "
            f"p95={p95:7.1f} ms max={ordered[-1]:7.1f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=60)
    args = parser.parse_args()
    for mode in ("inline", "background"):
        for kind, values in run(mode, args.messages).items():
            print(_line(mode, kind, values))


if __name__ == "__main__":
    main()
