"""Concurrent contexts of ONE namespace against the same load spread over many namespaces.

    .venv/bin/python benchmarks/bench_one_namespace.py                    # both spreads
    .venv/bin/python benchmarks/bench_one_namespace.py --spread one       # one namespace only
    .venv/bin/python benchmarks/bench_one_namespace.py --clients 20 --requests 100 --topics 300
    SHERIFF_API_CONTEXT_CONCURRENCY=20 .venv/bin/python benchmarks/bench_one_namespace.py \
        --topics 40 --workers 2 --budget 4000 --fresh-sessions   # many writes overlapping

(run from the repository root with PYTHONPATH=.:benchmarks when the venv's install points
elsewhere). Every request is ``POST /v1/context`` with a message of ``bench_api_concurrency``'s
realistic mix, the data's fixed clock as ``now`` and a session per client (new each run), so
each request marks the topics it packed as used and counts its session's suppression turn: the
context's writes that two requests of one namespace can collide on. A session suppresses the
topics it was just shown, so a client's later contexts pack fewer of them; ``--fresh-sessions``
gives every request a session of its own (each its first turn), so every context packs its best
topics, as an agent without a session id would, and ``--budget`` packs more of them.

Two phases against one ``sheriff up --workers N --keep-neo4j`` (default one worker: its thread
pool runs the clients' requests side by side, as a busy agent's would):

- ``one``: C clients on one namespace (``bench-one-<topics>``): every client's write touches the
  same topics.
- ``many``: C clients, each on a namespace of its own (``bench-one-<topics>-<i>``), same data.

Printed per phase (``bench_api_concurrency.report``): latency p50/p95/p99 (client side),
requests/s, errors by status with the first bodies; then the server log's count of
``DeadlockDetected`` lines and of every log line naming a Neo4j transient error during the
phase (a retried deadlock is logged as a warning, so it is counted even when the request
succeeded). Namespaces are reused when they hold the expected data (``--reseed``: rebuilt).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import bench_api_concurrency as bench
import httpx
from bench_api_concurrency import (
    RUN,
    ApiServer,
    CpuSample,
    Outcome,
    Phase,
    cpu_line,
    ensure_data,
    report,
    request_texts,
    send,
)
from neo4j import Driver

from api.settings import Settings
from graph.db import connect
from graph.keys import ApiKeyStore
from graph.migrations import apply_migrations
from retrieval.embedding import MiniLMEmbedder

TRANSIENT = re.compile(r"Neo\.TransientError\.\S+")


def namespaces(spread: str, clients: int, topics: int) -> list[str]:
    """The namespace of each client: one for all, or one each."""
    if spread == "one":
        return [f"bench-one-{topics}"] * clients
    return [f"bench-one-{topics}-{i}" for i in range(clients)]


def seed(args: argparse.Namespace, driver: Driver, database: str, names: Sequence[str]) -> None:
    """Each namespace's data as ``bench_api_concurrency`` seeds it; one embedder for all (the
    namespaces hold the same one-liners, embedded once)."""
    shared = MiniLMEmbedder()
    bench.MiniLMEmbedder = lambda: shared  # type: ignore[assignment,misc]
    for ns in dict.fromkeys(names):
        ensure_data(args, driver, database, ns)


def run_clients(
    name: str, server: ApiServer, keys: Sequence[str], args: argparse.Namespace, pid: int | None
) -> Phase:
    """One client per key (its own keep-alive connection and session), released together,
    each sending ``args.requests`` messages in turn."""
    assert server.proc is not None
    rng = random.Random(7)
    plans = [request_texts(rng, args.requests) for _ in keys]
    outcomes: list[Outcome] = []
    barrier = threading.Barrier(len(keys) + 1)

    def client(i: int) -> None:
        headers = {"Authorization": f"Bearer {keys[i]}"}
        limits = httpx.Limits(max_connections=1)
        with httpx.Client(base_url=server.url, headers=headers, timeout=120, limits=limits) as http:
            barrier.wait()
            for j, (kind, text) in enumerate(plans[i]):
                session = f"{name}-{i}-{RUN}" + (f"-{j}" if args.fresh_sessions else "")
                outcomes.append(send(http, kind, text, session, args.budget))

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(len(keys))]
    for t in threads:
        t.start()
    barrier.wait()
    before, started = CpuSample.take(server.proc.pid, pid), time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    after = CpuSample.take(server.proc.pid, pid)
    return Phase(name, len(keys), outcomes, wall, cpu_line(before, after, wall, len(outcomes)))


def log_since(path: Path, mark: int) -> str:
    with path.open() as fh:
        fh.seek(mark)
        return fh.read()


def phase(
    spread: str, args: argparse.Namespace, keys: Sequence[str], log: TextIO, log_path: Path
) -> None:
    """Start a server, warm it up (not measured), run the phase, stop it; print the figures and
    the server log's deadlocks and transient errors during the phase."""
    server = ApiServer(log, log_path, args.workers)
    try:
        server.start()
        warm_rng = random.Random(3)
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {keys[0]}"}, timeout=120
        ) as http:
            for kind, text in request_texts(warm_rng, 10):
                send(http, kind, text, f"warm-{RUN}")
        log.flush()
        mark = log_path.stat().st_size
        result = run_clients(f"{spread} namespace(s)", server, keys, args, None)
        log.flush()
        text = log_since(log_path, mark)
    finally:
        server.stop()
    report(result)
    transient = TRANSIENT.findall(text)
    print(f"  server log: {text.count('DeadlockDetected')} DeadlockDetected line(s); "
          f"transient errors by code: {dict(sorted(_count(transient).items()))}")  # fmt: skip
    print(f"  server log: {log_path}")


def _count(items: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--spread", choices=("one", "many", "both"), default="both")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients")
    parser.add_argument("--requests", type=int, default=100, help="requests per client")
    parser.add_argument("--topics", type=int, default=300, help="topics per namespace")
    parser.add_argument("--edges", type=int, default=3, help="RELATES_TO edges per topic")
    parser.add_argument("--workers", type=int, default=1, help="API worker processes")
    parser.add_argument(
        "--budget", type=int, default=1000, help="token budget of each context (more: more topics)"
    )
    parser.add_argument(
        "--fresh-sessions", action="store_true",
        help="a new session per request (no suppression: every context packs its best topics)",
    )  # fmt: skip
    parser.add_argument("--reseed", action="store_true", help="delete and rebuild the data")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    spreads = ("one", "many") if args.spread == "both" else (args.spread,)
    settings = Settings()
    driver = connect(*settings.connection())
    apply_migrations(driver, datetime.now(UTC), settings.neo4j_database)
    keys = ApiKeyStore(driver, settings.neo4j_database)
    made = []
    print(f"machine: {os.cpu_count()} CPUs, load average "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()))  # fmt: skip
    log_path = Path(tempfile.gettempdir()) / f"bench-one-namespace-{os.getpid()}.log"
    try:
        with log_path.open("w") as log:
            for spread in spreads:
                names = namespaces(spread, args.clients, args.topics)
                seed(args, driver, settings.neo4j_database, names)
                now = datetime.now(UTC)
                by_ns = {ns: keys.create(ns, "bench_one_namespace", now) for ns in names}
                made += [record.key_id for record, _ in by_ns.values()]
                phase(spread, args, [by_ns[ns][1] for ns in names], log, log_path)
    finally:
        for key_id in made:
            keys.revoke(key_id, datetime.now(UTC))
        driver.close()


if __name__ == "__main__":
    main()
