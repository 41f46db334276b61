"""RSS soak: one API worker under N requests of the bench mix; does its memory stop growing?

    .venv/bin/python benchmarks/bench_rss_soak.py                      # 2,000 requests
    .venv/bin/python benchmarks/bench_rss_soak.py --requests 10000     # issue #13's figure
    .venv/bin/python benchmarks/bench_rss_soak.py --server uvicorn     # uvicorn api.app:worker_app

(run from the repository root with PYTHONPATH=.:benchmarks when the venv's install points
elsewhere). Issue #13 asks for "RSS per API worker <= 500 MB after 10k requests (no growth past
warm-up)". This starts one worker process: the real ``sheriff up --workers 1 --no-worker
--keep-neo4j`` (one process: the app runs in it, no sleep worker beside it), or with
``--server uvicorn`` ``uvicorn api.app:worker_app --factory`` (what each of ``sheriff up``'s
worker processes runs); migrations are applied here first, as ``sheriff up`` does before its
workers start.

Requests (seeded RNG, ``--clients`` keep-alive clients, default 2, sharing one plan):
- POST /v1/context with the concurrency benchmark's message mix (``bench_api_concurrency.
  request_texts``: questions, time questions that go deep, entity statements, small talk; most
  carry a unique detail, so the worker's text -> vector LRU keeps filling as with real traffic)
  against ``bench-api-10k`` (seeded by that benchmark's ``ensure_data`` when missing), each
  with one of ``--sessions`` session ids (default 1,000: per-session state is exercised), and
- with probability ``--append-share`` (default 0.1) instead POST /v1/messages: a user message
  and an assistant reply appended to a scratch namespace ``bench-soak-<pid>`` (its own API key),
  in time order, the sleep policy on (``--no-worker``: a due sleep is only queued).

Every ``--sample-every`` requests (default 100) the worker's VmRSS and RssAnon are read from
/proc. Printed: the samples (condensed), RSS after warm-up (``--warmup``, default 10% of the
requests, at least 200), at the end, the peak, the growth past warm-up, the slope over the second
half (MB per 1,000 requests) and flags (``soak_stats.judge``): peak over 500 MB, growth over
50 MB, or a late slope over 2 MB / 1k requests, which is what an unbounded cache looks like.
Also latency p50/p95 per kind and errors by status, and the load average (``uptime``).

The scratch namespace, its key, the key of the bench namespace and the soak's suppression
sessions are deleted at the end.

What a worker keeps between requests (read from the code; each bounded, so RSS must level off):
the embedder's text -> vector LRU (``VectorCache``, 8,192 vectors, ~12 MB), the API-key cache
(``KeyCache``, bounded entries with a TTL), one skill service per namespace (LRU of 32), the
Cypher query texts (one per file), the English word lists (``lru_cache(16)``), Prometheus series
labelled by route template (not by path) and status. Session suppression state lives in Neo4j
(``SuppressionStore``), not in the worker. Anything else that grows with requests shows as a
late slope here.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

import httpx
from bench_api_concurrency import (
    NOW,
    ensure_data,
    free_port,
    namespace_for,
    request_texts,
)
from bench_retrieval import percentile
from neo4j import Driver
from soak_stats import Sample, Verdict, judge

from api.settings import Settings
from graph.db import connect, drop_namespace
from graph.keys import ApiKeyStore
from graph.migrations import apply_migrations

REPO = Path(__file__).resolve().parent.parent
SESSION_PREFIX = "soak-"


# -- the worker process --------------------------------------------------------------------------
class Worker:
    """One API worker process on a free port: ``sheriff up --workers 1 --no-worker`` (the app
    runs in that process) or ``uvicorn api.app:worker_app --factory``."""

    def __init__(self, kind: str, log: TextIO) -> None:
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        if self.kind == "uvicorn":
            return [sys.executable, "-m", "uvicorn", "api.app:worker_app", "--factory",
                    "--host", "127.0.0.1", "--port", str(self.port), "--no-access-log"]  # fmt: skip
        return [sys.executable, "-c", "from api.cli import main; main()",
                "up", "--workers", "1", "--no-worker", "--keep-neo4j"]  # fmt: skip

    def start(self, timeout_s: float = 300.0) -> None:
        env = os.environ | {"SHERIFF_API_PORT": str(self.port)}
        self.proc = subprocess.Popen(
            self.command(), cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the worker exited with {self.proc.returncode}")
            try:
                if httpx.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the worker did not answer /health within {timeout_s:.0f} s")

    def memory(self, requests: int) -> Sample:
        """VmRSS and RssAnon of the worker process (MB)."""
        assert self.proc is not None
        fields: dict[str, float] = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "RssAnon"):
                fields[name] = int(rest.split()[0]) / 1024
        return Sample(requests, fields["VmRSS"], fields.get("RssAnon", 0.0))

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


# -- the request plan ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    kind: str  # a context message kind, or "append"
    text: str
    session: str


def plan(n: int, sessions: int, append_share: float, seed: int = 13) -> list[Step]:
    """``n`` requests: context messages in the benchmark mix over ``sessions`` session ids,
    and appends with probability ``append_share``."""
    rng = random.Random(seed)
    texts = request_texts(rng, n)
    out = []
    for kind, text in texts:
        session = f"{SESSION_PREFIX}{rng.randrange(sessions)}"
        out.append(Step("append" if rng.random() < append_share else kind, text, session))
    return out


@dataclass
class Run:
    outcomes: list[tuple[str, float, str]] = field(default_factory=list)  # kind, ms, status
    samples: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    appended: int = 0


def send(http_ctx: httpx.Client, http_app: httpx.Client, step: Step, run: Run) -> str:
    """One request; its status ("200", "201", "503", or an exception's class name)."""
    try:
        if step.kind != "append":
            body = {"message": step.text, "now": NOW.isoformat(), "session_id": step.session,
                    "budget": 1000}  # fmt: skip
            return str(http_ctx.post("/v1/context", json=body).status_code)
        with run.lock:
            run.appended += 1
            at = NOW + timedelta(seconds=2 * run.appended)
            # appends of one namespace must arrive in time order: send under the lock
            msgs = [
                {"role": "user", "content": step.text, "at": at.isoformat()},
                {"role": "assistant", "content": f"Noted: {step.text[:60]}",
                 "at": (at + timedelta(seconds=1)).isoformat()},
            ]  # fmt: skip
            return str(http_app.post("/v1/messages", json={"messages": msgs}).status_code)
    except Exception as exc:  # counted as an error, never a crash of the run
        return type(exc).__name__


def drive(
    worker: Worker, keys: tuple[str, str], steps: list[Step], clients: int, every: int
) -> Run:
    """``clients`` threads take the next step until none is left; the worker's memory is read
    every ``every`` finished requests (by the thread that finished it)."""
    run = Run(samples=[worker.memory(0)])
    cursor = iter(enumerate(steps))
    take = threading.Lock()

    def client() -> None:
        limits = httpx.Limits(max_connections=1)
        mk = lambda key: httpx.Client(  # noqa: E731
            base_url=worker.url, headers={"Authorization": f"Bearer {key}"}, timeout=120,
            limits=limits)  # fmt: skip
        with mk(keys[0]) as http_ctx, mk(keys[1]) as http_app:
            while True:
                with take:
                    nxt = next(cursor, None)
                if nxt is None:
                    return
                started = time.perf_counter()
                status = send(http_ctx, http_app, nxt[1], run)
                ms = (time.perf_counter() - started) * 1000
                with run.lock:
                    run.outcomes.append((nxt[1].kind, ms, status))
                    done = len(run.outcomes)
                if done % every == 0 or done == len(steps):
                    sample = worker.memory(done)
                    run.samples.append(sample)
                    # printed as it goes: a long soak stopped early still shows its curve
                    print(f"  {done:>6,} requests: RSS {sample.rss_mb:6.1f} MB "
                          f"(anonymous {sample.anon_mb:6.1f} MB)", flush=True)  # fmt: skip

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return run


# -- report --------------------------------------------------------------------------------------
def report(run: Run, verdict: Verdict, wall_s: float) -> None:
    by_kind: dict[str, list[float]] = defaultdict(list)
    statuses = Counter(status for _, _, status in run.outcomes)
    for kind, ms, status in run.outcomes:
        if status in ("200", "201"):
            by_kind[kind].append(ms)
    n = len(run.outcomes)
    print(f"\n== {n:,} requests in {wall_s:.0f} s ({n / wall_s:.1f} requests/s) ==")
    print("  statuses: " + ", ".join(f"{k} x{v}" for k, v in sorted(statuses.items())))
    for kind, values in sorted(by_kind.items()):
        print(f"  {kind:10s} x{len(values):<6} p50 {statistics.median(values):7.1f} ms  "
              f"p95 {percentile(values, 95):7.1f} ms")  # fmt: skip
    step = max(1, len(run.samples) // 20)
    print("  RSS samples (requests: RSS MB / anonymous MB):")
    shown = run.samples[::step] + ([run.samples[-1]] if (len(run.samples) - 1) % step else [])
    print("    " + "  ".join(f"{s.requests}: {s.rss_mb:.0f}/{s.anon_mb:.0f}" for s in shown))
    w, e = verdict.warm, verdict.end
    print(f"  after warm-up ({w.requests:,} requests): RSS {w.rss_mb:.0f} MB "
          f"(anonymous {w.anon_mb:.0f} MB)")  # fmt: skip
    print(f"  at the end ({e.requests:,} requests):   RSS {e.rss_mb:.0f} MB "
          f"(anonymous {e.anon_mb:.0f} MB); peak {verdict.peak_mb:.0f} MB")  # fmt: skip
    print(f"  growth past warm-up: {verdict.growth_mb:+.1f} MB; slope over the second half: "
          f"{verdict.late_slope_mb_per_1k:+.2f} MB per 1,000 requests")  # fmt: skip
    print("  verdict: " + ("PASS (<= 500 MB, no growth past warm-up)" if verdict.ok
                           else "FLAGGED: " + "; ".join(verdict.flags)))  # fmt: skip
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"  load average at the end: {load} on {os.cpu_count()} CPUs")


def cleanup(driver: Driver, database: str, ns: str, scratch: str, key_ids: list[str]) -> None:
    """Delete the scratch namespace (every node of it: messages, the sleep it queued, its key)
    and the soak's suppression sessions; revoke the bench namespace's key."""
    keys = ApiKeyStore(driver, database)
    for key_id in key_ids:
        keys.revoke(key_id, datetime.now(UTC))
    drop_namespace(driver, scratch, database)
    for namespace in (ns, scratch):
        driver.execute_query(
            "MATCH (s:SuppressionSession {namespace: $ns}) WHERE s.session_id STARTS WITH $p "
            "DELETE s",
            ns=namespace,
            p=SESSION_PREFIX,
            database_=database,
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--sample-every", type=int, default=100, help="requests between samples")
    parser.add_argument("--warmup", type=int, help="requests before the warm sample (10%%, >= 200)")
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--append-share", type=float, default=0.1)
    parser.add_argument("--server", choices=("up", "uvicorn"), default="up")
    parser.add_argument("--topics", type=int, default=10_000, help="size of bench-api-<N>")
    parser.add_argument("--edges", type=int, default=3, help="edges per topic when seeding")
    parser.add_argument("--reseed", action="store_true", help="rebuild bench-api-<N> first")
    args = parser.parse_args()
    if args.warmup is None:
        args.warmup = max(200, args.requests // 10)
    return args


def main() -> None:
    args = parse_args()
    settings = Settings()
    database = settings.neo4j_database
    driver = connect(*settings.connection())
    apply_migrations(driver, datetime.now(UTC), database)
    ns, scratch = namespace_for(args.topics), f"bench-soak-{os.getpid()}"
    ensure_data(args, driver, database, ns)
    keys = ApiKeyStore(driver, database)
    (ctx_key, ctx_secret), (app_key, app_secret) = (
        keys.create(ns, "bench_rss_soak", datetime.now(UTC)),
        keys.create(scratch, "bench_rss_soak", datetime.now(UTC)),
    )
    steps = plan(args.requests, args.sessions, args.append_share)
    log_path = Path(tempfile.gettempdir()) / f"bench-soak-{os.getpid()}.log"
    print(f"soak: {args.requests:,} requests ({sum(s.kind == 'append' for s in steps):,} appends) "
          f"from {args.clients} clients over {args.sessions:,} sessions against {ns}; one worker "
          f"({args.server}); RSS every {args.sample_every} requests; server log {log_path}")  # fmt: skip
    try:
        with log_path.open("w") as log:
            worker = Worker(args.server, log)
            try:
                worker.start()
                print(f"worker pid {worker.proc.pid if worker.proc else '?'} ready: "
                      f"RSS {worker.memory(0).rss_mb:.0f} MB", flush=True)  # fmt: skip
                started = time.perf_counter()
                run = drive(
                    worker, (ctx_secret, app_secret), steps, args.clients, args.sample_every
                )
                wall = time.perf_counter() - started
            finally:
                worker.stop()
        report(run, judge(run.samples, args.warmup), wall)
    finally:
        cleanup(driver, database, ns, scratch, [ctx_key.key_id, app_key.key_id])
        driver.close()


if __name__ == "__main__":
    main()
