"""One tenant imports, another works: the neighbour's latency and errors while it runs.

    .venv/bin/python benchmarks/bench_import_neighbour.py               # 1 MiB, then ~60 MB
    .venv/bin/python benchmarks/bench_import_neighbour.py --big-mb 10   # a smaller second file
    .venv/bin/python benchmarks/bench_import_neighbour.py --workers 1

(run from the repository root with PYTHONPATH=.:benchmarks when the venv's install points
elsewhere). The real ``sheriff up --workers N --keep-neo4j`` in a subprocess on a free port (as
bench_api_concurrency.py starts it). Tenant Y gets a small memory first (an import of a few
hundred topics, not measured). Then Y asks ``POST /v1/context`` in one loop and ``GET
/health`` in another (one keep-alive client each, back to back, a fixed clock) through four
phases: idle (Y alone), tenant X importing ~1 MiB of tiny topics (embedded by the server),
idle again, X importing ~60 MB of topics with their vectors (made by the server's model:
stored as they are). Printed per phase and route: requests, p50/p95/max, errors by status (any
non-200 answer or client-side exception; the first bodies are printed); per import: size,
duration, the report's counts, batches and records written. Targets (issue 30): Y's
``/v1/context`` p95 < 1 s and ``/health`` p95 < 200 ms while X imports, 0 errors for Y. No
timed assertion: the figures are printed. Both namespaces are deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from bench_api_concurrency import ApiServer

from api.settings import Settings
from graph.db import connect
from graph.keys import ApiKeyStore
from retrieval.embedding import MiniLMEmbedder

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
WORDS = ("invoice ledger budget garden lake trip cake band bike brakes visa flight rent "
         "dentist report deploy backup laptop printer piano").split()  # fmt: skip
QUESTIONS = ["What did we decide about the {a} and the {b}?", "When is the {a} due?",
             "Remind me what I said about the {a} last week.", "Anything open on the {b}?"]  # fmt: skip


@dataclass
class Sample:
    at: float  # time.monotonic() when the request started
    ms: float
    status: str
    body: str = ""


@dataclass
class Loop:
    """One of Y's request loops, run in a thread until ``stop`` is set."""

    name: str
    call: Callable[[httpx.Client], httpx.Response]
    samples: list[Sample] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self, client: httpx.Client) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                response = self.call(client)
                status, body = str(response.status_code), response.text[:200]
            except Exception as exc:  # an error to count, never a crash of the run
                status, body = type(exc).__name__, str(exc)[:200]
            ms = (time.monotonic() - started) * 1000
            self.samples.append(Sample(started, ms, status, "" if status == "200" else body))


def document(namespace: str, topics: int, model: str, dims: int, rng: random.Random,
             vectors: bool, path: Path) -> int:  # fmt: skip
    """Write an export document of ``topics`` topics to ``path``; its size in bytes."""
    header = {"kind": "header", "format": "sheriff-claw-export", "version": 1,
              "namespace": namespace, "exported_at": NOW.isoformat(),
              "embedding": {"model": model, "dimensions": dims}, "vectors": vectors}  # fmt: skip
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        for i in range(topics):
            fh.write(json.dumps(_topic(i, rng, dims if vectors else 0)) + "\n")
        fh.write(json.dumps({"kind": "end", "counts": {"topic": topics}}) + "\n")
    return path.stat().st_size


def _topic(i: int, rng: random.Random, dims: int) -> dict[str, Any]:
    a, b = rng.sample(WORDS, 2)
    seen = (NOW - timedelta(days=rng.randint(1, 90))).isoformat()
    topic: dict[str, Any] = {"kind": "topic", "topic_id": f"t{i}-{uuid.uuid4().hex[:8]}",
                             "name": f"{a} {b} {i}", "one_liner": f"The {a} and the {b}, item {i}.",
                             "time": {"first_seen_at": seen, "last_seen_at": seen}}  # fmt: skip
    if dims:
        raw = [rng.gauss(0, 1) for _ in range(dims)]
        norm = math.sqrt(sum(v * v for v in raw))
        topic["vector"] = [v / norm for v in raw]
    return topic


def topics_for(megabytes: float, vectors: bool, dims: int) -> int:
    """How many generated topics make about ``megabytes`` MB (measured on a sample)."""
    rng = random.Random(7)
    line = len(json.dumps(_topic(123456, rng, dims if vectors else 0))) + 1
    return max(1, int(megabytes * 1_000_000 / line))


def import_file(url: str, key: str, path: Path) -> tuple[float, httpx.Response]:
    """POST the file to /v1/import, streamed from disk; (seconds, response)."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
    started = time.monotonic()
    with path.open("rb") as fh, httpx.Client(base_url=url, timeout=3600) as client:
        response = client.post("/v1/import", content=fh, headers=headers)
    return time.monotonic() - started, response


def percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def report(loops: list[Loop], phases: list[tuple[str, float, float]]) -> None:
    """Y's figures per phase and route."""
    print(f"\n{'phase':<26}{'route':<14}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}  errors")
    for name, start, end in phases:
        for loop in loops:
            got = [s for s in loop.samples if start <= s.at < end]
            ms = [s.ms for s in got]
            errors = Counter(s.status for s in got if s.status != "200")
            print(f"{name:<26}{loop.name:<14}{len(got):>6}{percentile(ms, 50):>9.1f}"
                  f"{percentile(ms, 95):>9.1f}{max(ms, default=float('nan')):>9.1f}  "
                  f"{dict(errors) or 0}")  # fmt: skip
            for s in [s for s in got if s.status != "200"][:3]:
                print(f"    {s.status}: {s.body}")


def describe(label: str, size: int, took: float, response: httpx.Response) -> None:
    if response.status_code != 200:
        print(f"{label}: {size / 1e6:.2f} MB -> HTTP {response.status_code} in {took:.1f} s: "
              f"{response.text[:300]}")  # fmt: skip
        return
    body = response.json()
    print(f"{label}: {size / 1e6:.2f} MB, {took:.1f} s; topics {body['counts']['topic']}, "
          f"embedded {body['embedded']}, vectors imported {body['vectors_imported']}, "
          f"{body['written']} records in {body['batches']} batches")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--small-mb", type=float, default=1.048576)
    parser.add_argument("--big-mb", type=float, default=60.0)
    parser.add_argument("--y-topics", type=int, default=300)
    parser.add_argument("--idle-s", type=float, default=10.0)
    args = parser.parse_args()
    settings = Settings()
    model, dims = MiniLMEmbedder.model_name, MiniLMEmbedder.dimensions  # the server's default
    run = uuid.uuid4().hex[:8]
    x_ns, y_ns = f"bench-import-x-{run}", f"bench-import-y-{run}"
    driver = connect(*settings.connection())
    keys = ApiKeyStore(driver, settings.neo4j_database)
    x_key, y_key = (keys.create(ns, "bench", datetime.now(UTC))[1] for ns in (x_ns, y_ns))
    with tempfile.TemporaryDirectory() as tmp:
        files = prepare(Path(tmp), args, model, dims)
        log_path = Path(tmp) / "server.log"
        with log_path.open("w") as log:
            server = ApiServer(log, log_path, args.workers)
            server.start()
            try:
                measure(server.url, x_key, y_key, files, args)
            finally:
                for ns, key in ((x_ns, x_key), (y_ns, y_key)):
                    forget(server.url, ns, key)
                server.stop()
    driver.close()


def prepare(tmp: Path, args: argparse.Namespace, model: str, dims: int) -> dict[str, Path]:
    rng = random.Random(42)
    files = {"y": tmp / "y.jsonl", "small": tmp / "small.jsonl", "big": tmp / "big.jsonl"}
    document("bench-y", args.y_topics, model, dims, rng, False, files["y"])
    small = topics_for(args.small_mb, False, dims)
    big = topics_for(args.big_mb, True, dims)
    for name, count, vectors in (("small", small, False), ("big", big, True)):
        size = document("bench-x", count, model, dims, rng, vectors, files[name])
        print(f"file {name}: {count} topics, {size / 1e6:.2f} MB, vectors {vectors}")
    return files


def measure(
    url: str, x_key: str, y_key: str, files: dict[str, Path], args: argparse.Namespace
) -> None:
    took, response = import_file(url, y_key, files["y"])
    describe("Y's own memory (not measured)", files["y"].stat().st_size, took, response)
    context_body = iter_questions()
    loops = [
        Loop("/v1/context", lambda c: c.post("/v1/context", json=next(context_body))),
        Loop("/health", lambda c: c.get("/health")),
    ]
    threads = []
    for loop in loops:
        client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {y_key}"}, timeout=60
        )
        threads.append(threading.Thread(target=loop.run, args=(client,), daemon=True))
    for t in threads:
        t.start()
    phases = []
    for label, name in (("X imports 1 MiB tiny", "small"), ("X imports big +vectors", "big")):
        start = time.monotonic()
        time.sleep(args.idle_s)
        phases.append(("idle", start, time.monotonic()))
        start = time.monotonic()
        took, response = import_file(url, x_key, files[name])
        phases.append((label, start, time.monotonic()))
        describe(f"X's import ({name})", files[name].stat().st_size, took, response)
    for loop in loops:
        loop.stop.set()
    for t in threads:
        t.join(60)
    report(loops, phases)


def iter_questions() -> Iterator[dict[str, Any]]:
    rng = random.Random(3)
    session = f"bench-{uuid.uuid4().hex[:8]}"
    while True:
        a, b = rng.sample(WORDS, 2)
        text = rng.choice(QUESTIONS).format(a=a, b=b) + f" (ref {rng.randint(100, 99999)})"
        yield {"message": text, "now": NOW.isoformat(), "session_id": session, "budget": 1000}


def forget(url: str, namespace: str, key: str) -> None:
    """Delete the benchmark's namespace through the API."""
    response = httpx.delete(f"{url}/v1/namespace", params={"confirm": namespace},
                            headers={"Authorization": f"Bearer {key}"}, timeout=600)  # fmt: skip
    print(f"deleted {namespace}: HTTP {response.status_code}")


if __name__ == "__main__":
    main()
