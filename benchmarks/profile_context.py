"""Where one light POST /v1/context request spends its time, in process (issue #13, step 1).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/profile_context.py [--n 40] [--cprofile]

Builds the server's container (same Settings, the real Neo4j and embedder), warms it up, then
runs ``ContextBuilder.build`` for ``--n`` messages of the benchmark mix against the seeded
namespace ``bench-api-10k`` (bench_api_concurrency.py seeds it). Every Neo4j round trip is
counted and timed by query file (``cypher/queries/<name>.cypher``); the per-stage
``timings_ms`` of the answers and, with ``--cprofile``, the functions with the most own and
cumulative time are printed. Figures, not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import threading
import time
from collections import defaultdict
from importlib import resources
from typing import Any

from bench_api_concurrency import NOW, process_cpu_s, request_texts

from api.container import Container
from api.settings import Settings
from graph import db
from graph.db import connect
from graph.server import LocalNeo4j
from retrieval.context import ContextRequest


def query_names() -> dict[str, str]:
    """Query text -> file name, from the ``cypher`` package the code under test loads."""
    folder = resources.files("cypher") / "queries"
    return {
        p.read_text(encoding="utf-8"): p.name.removesuffix(".cypher")
        for p in folder.iterdir()
        if p.name.endswith(".cypher")
    }


class RoundTrips:
    """Wraps ``driver.execute_query`` (a query of its own: a write), ``graph.db.read_query`` (a
    read) and ``graph.db.write_query`` (the context's write) to time every call by query file
    name."""

    def __init__(self, driver: Any) -> None:
        self.names = query_names()
        self.calls: dict[str, list[float]] = defaultdict(list)
        self.lock = threading.Lock()
        self.inner = driver.execute_query
        driver.execute_query = self.timed
        self.read, self.write = db.read_query, db.write_query
        db.read_query, db.write_query = self.timed_read, self.timed_write

    def timed_read(self, driver: Any, database: str, text: str, params: Any) -> Any:
        return self._time(text, lambda: self.read(driver, database, text, params))

    def timed_write(self, driver: Any, database: str, text: str, params: Any) -> Any:
        return self._time(text, lambda: self.write(driver, database, text, params))

    def timed(self, text: Any, *args: Any, **kwargs: Any) -> Any:
        return self._time(text, lambda: self.inner(text, *args, **kwargs))

    def _time(self, text: Any, call: Any) -> Any:
        started = time.perf_counter()
        try:
            return call()
        finally:
            ms = (time.perf_counter() - started) * 1000
            name = self.names.get(text, str(text)[:40].replace("\n", " "))
            with self.lock:
                self.calls[name].append(ms)

    def report(self, requests: int) -> None:
        print(f"\n{'query':34} {'calls/req':>9} {'p50 ms':>7} {'ms/req':>7}")
        rows = sorted(self.calls.items(), key=lambda kv: -sum(kv[1]))
        for name, ms in rows:
            print(f"{name:34} {len(ms) / requests:9.2f} {statistics.median(ms):7.1f} "
                  f"{sum(ms) / requests:7.1f}")  # fmt: skip
        total = sum(len(v) for v in self.calls.values())
        print(f"round trips per request: {total / requests:.2f}")


GROUPS = (  # (label, path fragment): the first that matches a function's file names its group
    ("neo4j driver: temporal decoding", "neo4j/time"),
    ("neo4j driver: temporal decoding", "hydration/bolt/v2/temporal"),
    ("neo4j driver: socket wait", "<method 'recv_into'"),
    ("neo4j driver: socket wait", "<method 'sendall'"),
    ("neo4j driver: other", "site-packages/neo4j"),
    ("embedding (ONNX Runtime, tokenizer)", "onnxruntime"),
    ("embedding (ONNX Runtime, tokenizer)", "tokenizers"),
    ("thread waits (pools)", "<method 'acquire'"),
    ("pydantic", "site-packages/pydantic"),
    ("graph/ (mapping, stores)", "/graph/"),
    ("retrieval/", "/retrieval/"),
    ("text/", "/text/"),
    ("skills/", "/skills/"),
)


def groups(stats: pstats.Stats, requests: int) -> None:
    """Own time per request by where the code lives (cProfile's clock: wall, inflated ~2x)."""
    totals: dict[str, float] = defaultdict(float)
    for (path, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{path}:{name}"
        label = next((g for g, frag in GROUPS if frag in where), "other")
        totals[label] += row[2]
    print(f"\n{'own time per request (cProfile)':40} {'ms':>7}")
    for label, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{label:40} {seconds * 1000 / requests:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--namespace", default="bench-api-10k")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--kind", default=None, help="only this message kind")
    parser.add_argument("--seed", type=int, default=11, help="which messages of the mix")
    args = parser.parse_args()
    settings = Settings()
    container = Container(settings, driver=connect(*settings.connection()))
    builder = container.context
    texts = request_texts(random.Random(args.seed), args.n * 4)
    texts = [t for t in texts if args.kind in (None, t[0])][: args.n]
    for _, text in request_texts(random.Random(5), 10):  # warm-up: model, skills, pools
        builder.build(ContextRequest(namespace=args.namespace, message=text, now=NOW))
    loads = container.passages.loads  # the passage copy, read in the background after the first
    if loads is not None:
        loads.wait_idle(600)
    trips = RoundTrips(container.driver)
    profile = cProfile.Profile() if args.cprofile else None
    stages: dict[str, list[float]] = defaultdict(list)
    walls, cpus, deep = [], [], 0
    neo4j_pid = (
        LocalNeo4j(settings.server_config()).running_pid() if settings.uses_managed_server else None
    )
    neo4j_before = process_cpu_s(neo4j_pid)
    for i, (_, text) in enumerate(texts):
        req = ContextRequest(
            namespace=args.namespace, message=text, now=NOW, session_id=f"p{i % 3}"
        )
        started, cpu = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        out = builder.build(req)
        if profile:
            profile.disable()
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        deep += out.deep
        for k, v in out.timings_ms.items():
            stages[k].append(v)
    neo4j_after = process_cpu_s(neo4j_pid)
    neo4j_ms = (
        f"{1000 * (neo4j_after - neo4j_before) / len(texts):.1f} ms"
        if neo4j_after is not None and neo4j_before is not None
        else "unknown (not the managed server)"
    )
    print(
        f"{len(texts)} requests, deep {deep}; wall p50 {statistics.median(walls):.1f} ms, "
        f"this process's CPU p50 {statistics.median(cpus):.1f} ms / mean "
        f"{statistics.fmean(cpus):.1f} ms per request; Neo4j's CPU {neo4j_ms} per request "
        "(every session's queries while this ran: run it on a quiet machine)"
    )
    print("  ".join(f"{k} p50 {statistics.median(v):.1f}" for k, v in stages.items()))
    trips.report(len(texts))
    if profile:
        groups(pstats.Stats(profile), len(texts))
        stats = pstats.Stats(profile)
        stats.sort_stats("cumulative").print_stats(45)
        stats.sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
