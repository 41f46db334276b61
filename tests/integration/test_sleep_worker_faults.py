"""kill -9 of a sleep worker at every sleep step, then recovery (issue #14 acceptance): another
worker takes the lease over within the lease time (1 s here; 60 s by default), the memory equals
a clean run's (nothing lost, nothing compacted twice), and every attempt is a :SleepRun (the
killed one recorded as abandoned). The doomed workers are real processes
(tests/integration/sleep_procs.py) that SIGKILL themselves at the end of the step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from graph.db import drop_namespace
from sleepwake.conversation import IncomingMessage
from sleepwake.sleep import STEPS
from tests.fakes import HashEmbedder
from tests.integration.sleep_procs import POLICY

ROOT = Path(__file__).resolve().parents[2]
DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TURNS = [
    "The Lisbon Offsite is booked for the ninth of May at the riverside hotel near Belem.",
    "Marta owns the Lisbon Offsite budget of 12000 euros and wants receipts by Friday.",
    "We chose the Alfama walking tour over the boat trip because of the weather risk.",
    "Remind me to send the Lisbon Offsite agenda to the whole platform team next week.",
    "The keynote speaker for the Lisbon Offsite is Joana Silva from the data team.",
    "Flights land at eleven, so the first session starts after lunch, around two.",
]


def say(c: Container, namespace: str) -> None:
    items = [
        IncomingMessage(role="user", content=(t + " ") * 3, at=DAY1 + timedelta(minutes=i))
        for i, t in enumerate(TURNS)
    ]
    assert c.services.conversation.append(namespace, items).sleep_due


def snapshot(c: Container, namespace: str) -> dict[str, Any]:
    """What a sleep leaves, without the namespace-derived ids."""
    topics = c.topics.list_live(namespace)
    return {
        "topics": sorted(t.name for t in topics),
        "facts": sorted(f.text for t in topics for f in t.facts),
        "events": len(c.events.in_window(namespace, None, None, limit=10_000)),
        "buffer": [m.content for m in c.messages.buffer(namespace)],
        "messages": len(c.messages.tail(namespace, 10_000)),
        "packets": len(c.sleep_store.wake_packets(namespace, limit=10)),
    }


def test_kill_9_at_every_sleep_step_then_another_worker_finishes_the_sleep(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    background = settings.model_copy(update={"sleep_mode": "background"})
    c = Container(background, clock=FixedClock(DAY1), driver=driver, embedder=HashEmbedder(),
                  policy=POLICY)  # fmt: skip
    doomed = {step: f"{namespace}-{i}" for i, step in enumerate(STEPS)}
    clean = f"{namespace}-clean"
    try:
        say(c, clean)
        done = c.sleep_worker("clean", clean).run_once()
        assert done is not None and done.outcome == "done"
        expected = snapshot(c, clean)
        for ns in doomed.values():
            say(c, ns)
        pairs = [f"{ns}:{step}" for step, ns in doomed.items()]
        proc = subprocess.run(
            [sys.executable, "-m", "tests.integration.sleep_procs", "kill-at", *pairs],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True, text=True, timeout=180, check=True,
        )  # fmt: skip
        statuses = json.loads(proc.stdout.strip().splitlines()[-1])
        assert statuses == {ns: -9 for ns in doomed.values()}, proc.stderr[-2000:]
        for step, ns in doomed.items():
            run, waited = _take_over(c, ns)
            assert waited < 60, f"{step}: the lease was taken over after {waited:.1f} s"
            assert run.outcome == ("skipped" if step == "after_commit" else "done"), (step, run)
            assert snapshot(c, ns) == expected, step
            runs = c.services.sleepwake.runs(ns, 10)
            assert [r.outcome for r in runs] == [run.outcome, "abandoned"], step
            assert runs[1].holder.startswith(f"doomed-{step}/") and runs[1].finished_at
    finally:
        for ns in [clean, *doomed.values()]:
            drop_namespace(driver, ns)


def _take_over(c: Container, namespace: str) -> tuple[Any, float]:
    """Poll like an idle worker until the dead worker's lease lapses and the sleep runs."""
    worker = c.sleep_worker("rescuer", namespace)
    started = time.monotonic()
    while time.monotonic() - started < 60:
        run = worker.run_once()
        if run is not None:
            return run, time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"nobody took the sleep of {namespace} over within 60 s")
