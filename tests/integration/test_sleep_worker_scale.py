"""More than one machine (issue #14 item 5): two API processes and two sleep workers share one
Neo4j and nothing else. Eight clients append to eight namespaces through both APIs: every
message is stored once, every namespace is compacted, and its sleeps never overlap (one sleep
at a time per namespace, by the lease). Real processes (tests/integration/sleep_procs.py)."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from neo4j import Driver

from api.auth import api_keys_for
from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from tests.fakes import HashEmbedder
from tests.integration.live_server import free_port
from tests.integration.sleep_procs import POLICY

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CLIENTS, MESSAGES = 8, 7


def text(ns: int, i: int) -> str:
    """About 60 tokens: four messages fill the 250-token threshold of the test policy."""
    return (f"Client {ns} note {i}: the Harbor Project shipment {i} leaves dock {ns} at noon. ") * 3


def client(urls: list[str], key: str, ns: int) -> None:
    """One message per request, alternating between the API processes."""
    for i in range(MESSAGES):
        body = {"messages": [{"role": "user", "content": text(ns, i), "external_id": f"m{i}",
                              "at": (T0 + timedelta(minutes=i)).isoformat()}]}  # fmt: skip
        response = httpx.post(f"{urls[i % 2]}/v1/messages", json=body, timeout=30,
                              headers={"Authorization": f"Bearer {key}"})  # fmt: skip
        assert response.status_code == 201, response.text
        assert response.json()["sleeps"] == []  # never slept inside the append


def test_two_apis_and_two_workers_share_one_neo4j(
    settings: Settings, driver: Driver, namespace: str
) -> None:
    c = Container(settings, driver=driver, embedder=HashEmbedder(), policy=POLICY)
    names = [f"{namespace}-{i}" for i in range(CLIENTS)]
    keys = [api_keys_for(c).create(ns)[1] for ns in names]
    ports = [free_port(), free_port()]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SLEEP_PROCS_LEASE": "6"}  # no takeover by load
    procs = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.sleep_procs", "serve", *map(str, ports),
         "--workers", "2"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    try:
        _wait_healthy(urls)
        with ThreadPoolExecutor(CLIENTS) as pool:
            list(pool.map(client, [urls] * CLIENTS, keys, range(CLIENTS)))
        _wait_drained(driver, names)
        for ns in names:
            stored = c.messages.tail(ns, 1000)
            assert sorted(m.external_id or "" for m in stored) == sorted(
                f"m{i}" for i in range(MESSAGES)
            ), ns  # every message once
            compacted = [m for m in stored if m.compacted_at is not None]
            runs = sorted(c.services.sleepwake.runs(ns, 100), key=lambda r: r.started_at)
            done = [r for r in runs if r.outcome == "done"]
            assert done and compacted, f"{ns} was never compacted: {runs}"
            assert sum(r.messages_compacted for r in done) == len(compacted), runs  # none twice
            for before, after in itertools.pairwise(runs):
                assert before.finished_at is not None and before.finished_at <= after.started_at
            assert {r.holder.split("/")[0] for r in runs} <= {"worker-0", "worker-1"}
    finally:
        procs.send_signal(signal.SIGTERM)
        try:
            procs.wait(timeout=20)
        except subprocess.TimeoutExpired:
            procs.kill()
        for ns in names:
            drop_namespace(driver, ns)


def _wait_healthy(urls: list[str]) -> None:
    deadline = time.monotonic() + 90
    for url in urls:
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{url} did not start"
            time.sleep(0.2)


def _wait_drained(driver: Driver, names: list[str]) -> None:
    """Until no namespace is due or held (the workers have caught up), at most 60 s."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        records, _, _ = driver.execute_query(
            "MATCH (l:SleepLease) WHERE l.namespace IN $names "
            "AND (l.due_since IS NOT NULL OR l.holder IS NOT NULL) RETURN count(l) AS busy",
            names=names,
        )
        if records[0]["busy"] == 0:
            return
        time.sleep(0.2)
    raise AssertionError("the workers did not drain the queue within 60 s")
