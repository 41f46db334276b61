"""The sleep worker's passage thread (sleepwake/worker.py) against the real Neo4j: a namespace's
passages written while that namespace sleeps leave exactly what one thread doing one after the
other leaves (the same topics, facts, events and buffer; every message's passages once, none
pending), and a worker process killed (SIGKILL) mid-batch, its sleep thread working beside,
loses nothing: the batch it was writing stays pending and the next worker writes it, once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from graph.db import drop_namespace
from graph.passages import MessagePassages
from retrieval.embedding import MiniLMEmbedder
from retrieval.passage_index import BATCH_MESSAGES
from sleepwake.conversation import IncomingMessage
from tests.fakes import HashEmbedder
from tests.integration.sleep_procs import POLICY
from tests.integration.test_sleep_worker_faults import TURNS, snapshot
from text.passages import message_passages

ROOT = Path(__file__).resolve().parents[2]
DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
WAIT_S = 120  # a bound on waits that end as soon as the other thread gets there


def say(c: Container, namespace: str, n: int) -> None:
    """``n`` turns of two sentences each, in one append that makes a sleep due."""
    items = [
        IncomingMessage(role="user" if i % 2 == 0 else "assistant",
                        content=f"{TURNS[i % len(TURNS)]} Note {i} of the offsite thread.",
                        at=DAY1 + timedelta(minutes=i))
        for i in range(n)
    ]  # fmt: skip
    assert c.services.conversation.append(namespace, items).sleep_due


def passages(driver: Driver, namespace: str) -> dict[str, Any]:
    """Per message: its passages' texts in order, and whether it is still pending."""
    rows, _, _ = driver.execute_query(
        "MATCH (m:Message {namespace: $ns}) OPTIONAL MATCH (m)-[:HAS_PASSAGE]->(p:Passage) "
        "WITH m, p ORDER BY p.seq "
        "RETURN m.content AS content, m.role AS role, m.passages_pending = true AS pending, "
        "collect(p.text) AS texts, m.compacted_at IS NOT NULL AS compacted",
        ns=namespace,
    )
    return {r["content"]: (r["texts"], r["pending"], r["compacted"], r["role"]) for r in rows}


def test_passages_written_while_the_namespace_sleeps_leave_what_one_thread_leaves(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str,
    other_namespace: str,
) -> None:  # fmt: skip
    background = settings.model_copy(
        update={"sleep_mode": "background", "extractor": "deterministic"}
    )
    c = Container(background, clock=FixedClock(DAY1), driver=driver, embedder=embedder,
                  policy=POLICY)  # fmt: skip
    serial, parallel = namespace, other_namespace
    try:
        say(c, serial, 12)
        runs = c.sleep_worker("serial", serial, passage_thread=False).drain()
        assert [r.outcome for r in runs] == ["done"]
        say(c, parallel, 12)
        worker = c.sleep_worker("parallel", parallel, passage_thread=True)
        store = worker.passages.store  # type: ignore[union-attr]
        written, write = threading.Event(), store.write

        def writing(messages: Sequence[MessagePassages]) -> int:
            done = write(messages)
            written.set()
            return done

        def steps(step: str) -> None:  # the sleep read its slice; its commit waits for them
            if step == "extract":
                assert written.wait(WAIT_S), "no passages written while the sleep ran"

        store.write = writing  # type: ignore[method-assign]
        c.sleeper.faults = steps
        try:
            runs = worker.drain()
        finally:
            c.sleeper.faults = None
        assert [r.outcome for r in runs] == ["done"]
        assert snapshot(c, parallel) == snapshot(c, serial)
        mine, theirs = passages(driver, parallel), passages(driver, serial)
        assert mine == theirs and len(mine) == 12
        for content, (texts, pending, _, role) in mine.items():
            assert texts == message_passages(content, role) and not pending
        assert any(compacted for _, _, compacted, _ in mine.values())
    finally:
        drop_namespace(driver, serial)
        drop_namespace(driver, parallel)


def test_a_worker_killed_mid_batch_leaves_the_batch_pending_for_the_next(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    background = settings.model_copy(update={"sleep_mode": "background"})
    c = Container(background, clock=FixedClock(DAY1), driver=driver, embedder=HashEmbedder(),
                  policy=POLICY)  # fmt: skip
    clean = f"{namespace}-clean"
    n = BATCH_MESSAGES + 40
    try:
        say(c, clean, n)
        assert [r.outcome for r in c.sleep_worker("clean", clean, passage_thread=False).drain()] \
            == ["done"]  # fmt: skip
        say(c, namespace, n)
        proc = subprocess.run(
            [sys.executable, "-m", "tests.integration.sleep_procs", "kill-in-passages",
             namespace, "2"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True, text=True, timeout=180, check=True,
        )  # fmt: skip
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == {namespace: -9}, proc.stderr
        left = passages(driver, namespace)
        # the first batch written, the second (embedded, killed before its write) still pending
        assert sum(1 for _, pending, _, _ in left.values() if pending) == n - BATCH_MESSAGES
        rescuer = c.sleep_worker("rescuer", namespace, passage_thread=True)
        started = time.monotonic()
        while not _slept(c, namespace):  # the sleep committed by the dead worker, or taken over
            assert time.monotonic() - started < WAIT_S, "the sleep was not taken over"
            rescuer.drain()
            time.sleep(0.1)
        rescuer.drain()  # whatever the dead worker left, with the sleep done
        after = passages(driver, namespace)
        assert after == passages(driver, clean) and len(after) == n
        for content, (texts, pending, _, role) in after.items():
            assert texts == message_passages(content, role) and not pending  # once each
        assert snapshot(c, namespace) == snapshot(c, clean)
    finally:
        drop_namespace(driver, clean)
        drop_namespace(driver, namespace)


def _slept(c: Container, namespace: str) -> bool:
    """Whether a sleep of the namespace is recorded done (by the killed worker or another)."""
    return any(r.outcome == "done" for r in c.services.sleepwake.runs(namespace, 10))
