"""Neo4j's own cost of each query a context request runs (issue #13, step 1): database hits,
rows and page-cache hits from ``PROFILE``, independent of the machine's load, and Neo4j's CPU
per call (each captured read re-run ``--repeat`` times, one query file at a time, Neo4j's
process CPU from /proc before and after: meaningful on a quiet machine only).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/profile_queries.py [--kind question]

Builds one context per message of the benchmark mix (``--n``, default 6) against
``bench-api-10k`` with every query captured, then re-runs each captured read query with
``PROFILE`` and prints, per query file, the mean database hits and rows per call, then re-runs
them plainly for the CPU figures. Writes are not re-run. Figures, not a test.
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from typing import Any

from bench_api_concurrency import NOW, process_cpu_s, request_texts
from profile_context import query_names

from api.container import Container
from api.settings import Settings
from graph import db
from graph.db import connect
from graph.server import LocalNeo4j
from retrieval.context import ContextRequest


def _hits(plan: Any) -> tuple[int, int]:
    """Database hits and page-cache hits summed over a profiled plan."""
    hits = int(plan.get("dbHits", 0))
    cache = int(plan.get("pageCacheHits", 0))
    for child in plan.get("children", []):
        h, c = _hits(child)
        hits, cache = hits + h, cache + c
    return hits, cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=6)
    parser.add_argument("--kind", default=None, help="only this message kind")
    parser.add_argument("--namespace", default="bench-api-10k")
    parser.add_argument("--repeat", type=int, default=5, help="re-runs per call for CPU")
    args = parser.parse_args()
    settings = Settings()
    container = Container(settings, driver=connect(*settings.connection()))
    names = query_names()
    captured: list[tuple[str, str, dict[str, Any], str]] = []
    inner, read = container.driver.execute_query, db.read_query

    def capture(text: Any, *a: Any, **kw: Any) -> Any:  # a query of its own (a write)
        name = names.get(text)
        if name is not None:
            captured.append((name, text, dict(kw.get("parameters_") or {}), kw.get("routing_")))
        return inner(text, *a, **kw)

    def capture_read(driver: Any, database: str, text: str, params: Any) -> Any:
        name = names.get(text)
        if name is not None:
            captured.append((name, text, dict(params), "r"))
        return read(driver, database, text, params)

    texts = [t for t in request_texts(random.Random(11), args.n * 6) if args.kind in (None, t[0])]
    container.context.build(ContextRequest(namespace=args.namespace, message="warm-up", now=NOW))
    container.driver.execute_query = capture  # type: ignore[method-assign]
    db.read_query = capture_read
    for _, text in texts[: args.n]:
        container.context.build(ContextRequest(namespace=args.namespace, message=text, now=NOW))
    container.driver.execute_query = inner  # type: ignore[method-assign]
    db.read_query = read
    totals: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    with container.driver.session(database=settings.neo4j_database) as session:
        for name, text, params, routing in captured:
            if routing != "r":
                continue
            summary = session.run("PROFILE " + text, params).consume()
            hits, cache = _hits(summary.profile or {})
            rows = int((summary.profile or {}).get("rows", 0))
            totals[name].append((hits, rows, cache))
    cpu = neo4j_cpu(container.driver, settings, captured, args.repeat)
    requests = max(1, len(texts[: args.n]))
    print(f"{'query':30} {'calls/req':>9} {'db hits/call':>12} {'rows/call':>9} "
          f"{'Neo4j CPU ms/call':>17} {'ms/req':>7}")  # fmt: skip
    for name, values in sorted(totals.items(), key=lambda kv: -sum(v[0] for v in kv[1])):
        n = len(values)
        ms = cpu.get(name)
        shown = f"{ms:17.2f} {ms * n / requests:7.1f}" if ms is not None else f"{'?':>17} {'?':>7}"
        print(f"{name:30} {n / requests:9.2f} {sum(v[0] for v in values) / n:12.0f} "
              f"{sum(v[1] for v in values) / n:9.1f} {shown}")  # fmt: skip
    hits = sum(v[0] for values in totals.values() for v in values) / requests
    reads = sum(cpu.get(name, 0.0) * len(values) for name, values in totals.items()) / requests
    print(f"per request: {hits:,.0f} database hits, Neo4j CPU of the reads {reads:.1f} ms")


def neo4j_cpu(
    driver: Any,
    settings: Settings,
    captured: list[tuple[str, str, dict[str, Any], str]],
    repeat: int,
) -> dict[str, float]:
    """Neo4j's CPU ms per call of each read query file (its captured calls re-run ``repeat``
    times, one file at a time); empty when Neo4j is not the managed local server."""
    pid = (
        LocalNeo4j(settings.server_config()).running_pid() if settings.uses_managed_server else None
    )
    if pid is None:
        return {}
    by_name: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for name, text, params, routing in captured:
        if routing == "r":
            by_name[name].append((text, params))
    out: dict[str, float] = {}
    with driver.session(database=settings.neo4j_database) as session:
        for name, calls in by_name.items():
            before = process_cpu_s(pid) or 0.0
            for _ in range(repeat):
                for text, params in calls:
                    session.run(text, params).consume()
            spent = (process_cpu_s(pid) or 0.0) - before
            out[name] = 1000 * spent / (repeat * len(calls))
    return out


if __name__ == "__main__":
    main()
