"""A small namespace's vector search beside a big one, on Neo4j 2026.x's vector index with
``namespace`` as a filter property (cypher/schema/022): the product's search and its parts.

    .venv/bin/python benchmarks/bench_filtered_vector.py                 # 50k + 200 topics
    .venv/bin/python benchmarks/bench_filtered_vector.py --small 2000    # at EXACT_VECTOR_MAX
    .venv/bin/python benchmarks/bench_filtered_vector.py --big 100000    # issue #33's size

It runs on a private server this script starts (``graph.server.LocalNeo4j``, the default
version: own home under ``--home``, own ports ``--bolt``/``--http``; the jars are fetched from
Maven Central on first use, shared with the main managed home when it has them) and stops
again. The project's migrations are applied, then two namespaces are seeded (kept between runs,
``--reseed`` rebuilds): ``fv-big-<N>`` with N topics and ``fv-small-<M>`` with M topics, random
unit vectors, in batched ``UNWIND`` writes of ``--batch`` rows (the small one's from numpy,
seeded). The queries are the small namespace's own vectors with Gaussian noise (``--noise``,
sigma 0.02 per dimension: about cosine 0.93 to its source, re-normalised), so each has a true
nearest neighbour there; the big namespace's vectors are made by Neo4j itself (uniform in the
cube, normalised: nothing to send, ~100 s for 50k here). The small namespace's topics were
last seen a minute apart; the windowed paths ask for the second half of them.

What is measured, after ``--warmup`` unmeasured queries, over ``--queries``:

  product      the project's search (``TopicStore.search_vector``, k, light) as it runs: a
               namespace of at most ``EXACT_VECTOR_MAX`` topics scored exactly without the
               index, a larger one by ``SEARCH`` (cypher/queries/search_topics_vector.cypher)
  index path   the same with ``EXACT_VECTOR_MAX`` = -1: ``SEARCH ... WHERE t.namespace = $ns
               LIMIT 50`` (5 x k at k = 10), the live ones picked by exact cosine
  SEARCH k     ``SEARCH ... LIMIT k`` alone, the index's own order (what rescoring adds)
  SEARCH N     ``SEARCH ... LIMIT N`` for each N of ``--fetches``, the k best by exact cosine
               (the rescoring of the product's index path at other fetch sizes)
  windowed     the product's search and its index path with ``since`` (a post-filter after
               the index, the query's exact-scan or second-fetch fallback when it keeps too few)

For each: latency p50/p95 (client side, the whole round trip, the paths one after the other,
not interleaved), Neo4j's db hits and "rows": the most rows any one operator of the plan
produced (``PROFILE`` of the same query and parameters, once per query), and recall@k against
the exact top k of the namespace (``vector.similarity.cosine`` over all of its topics, in the
window for the windowed paths).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver

import graph.topic_search
from api.settings import Settings
from graph.db import connect
from graph.migrations import apply_migrations
from graph.server import NEO4J_VERSION, LocalNeo4j, ServerConfig
from graph.topics import TopicStore

DIMS = 384
T0 = datetime(2026, 1, 1, tzinfo=UTC)
SEED_TOPICS = """
UNWIND $rows AS row
CREATE (t:Topic)
SET t = row.props, t.embedding = row.embedding, t.first_seen_at = datetime(row.seen),
    t.last_seen_at = datetime(row.seen), t.created_at = datetime(row.seen),
    t.updated_at = datetime(row.seen)
"""
SEED_RANDOM = """
UNWIND range($lo, $hi - 1) AS i
WITH i, [x IN range(1, $dims) | rand() - 0.5] AS v
WITH i, v, sqrt(reduce(s = 0.0, x IN v | s + x * x)) AS norm,
     datetime($t0) + duration({minutes: i}) AS seen
CREATE (t:Topic {topic_id: $ns + '-' + toString(i), namespace: $ns, name: 'topic ' + toString(i),
                 one_liner: 'synthetic topic ' + toString(i), schema_version: 1, version: 1,
                 utility_score: 0.0, decay_bucket: 'hot'})
SET t.embedding = [x IN v | x / norm], t.first_seen_at = seen, t.last_seen_at = seen,
    t.created_at = seen, t.updated_at = seen
"""
DELETE = "MATCH (t:Topic) WHERE t.namespace = $ns DETACH DELETE t"
COUNT = "MATCH (t:Topic) WHERE t.namespace = $ns RETURN count(t) AS n"
EXACT = """
MATCH (t:Topic) WHERE t.namespace = $ns AND t.embedding IS NOT NULL
  AND ($since IS NULL OR t.last_seen_at >= datetime($since))
RETURN t.topic_id AS id ORDER BY vector.similarity.cosine(t.embedding, $v) DESC LIMIT $k
"""
FILTERED = """
CYPHER 25
MATCH (t:Topic)
  SEARCH t IN (VECTOR INDEX topic_embedding_ns FOR $v WHERE t.namespace = $ns LIMIT $k)
  SCORE AS score
RETURN t.topic_id AS id, score ORDER BY score DESC
"""
FILTERED_WIDE = """
CYPHER 25
MATCH (t:Topic)
  SEARCH t IN (VECTOR INDEX topic_embedding_ns FOR $v WHERE t.namespace = $ns LIMIT $fetch)
WITH t ORDER BY vector.similarity.cosine(t.embedding, $v) DESC LIMIT $k
RETURN t.topic_id AS id
"""


@dataclass
class Figures:
    """One path's measurements on one version."""

    label: str
    latencies_ms: list[float]
    db_hits: list[int]
    rows: list[int]
    recall: list[float]

    def line(self) -> str:
        lat = sorted(self.latencies_ms)
        p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
        return (
            f"{self.label:<28} p50 {statistics.median(lat):7.1f} ms  p95 {p95:7.1f} ms  "
            f"db hits {statistics.median(self.db_hits):8.0f}  rows {statistics.median(self.rows):7.0f}"
            f"  recall@k {statistics.mean(self.recall):.3f}"
        )


class CapturingStore(TopicStore):
    """The product's TopicStore, keeping the last query text and parameters it ran."""

    last: tuple[str, dict[str, Any]] = ("", {})

    def _run(
        self, text: str, params: dict[str, Any], *, read: bool = False, once: bool = False
    ) -> list[Any]:
        self.last = (text, dict(params))
        return super()._run(text, params, read=read, once=once)


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def seed_random(driver: Driver, ns: str, n: int, batch: int) -> None:
    """``n`` topics of ``ns`` with random unit vectors made by Neo4j itself (nothing to send)."""
    if driver.execute_query(COUNT, ns=ns).records[0]["n"] == n:
        return
    driver.execute_query(DELETE, ns=ns)
    started = time.monotonic()
    for lo in range(0, n, batch):
        hi = min(lo + batch, n)
        driver.execute_query(SEED_RANDOM, lo=lo, hi=hi, dims=DIMS, ns=ns, t0=T0.isoformat())
    print(f"  seeded {n} topics of {ns} in {time.monotonic() - started:.0f} s", flush=True)


def seed(driver: Driver, ns: str, n: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` topics of ``ns`` (unless there already); returns their vectors when written now,
    else reads them back (the queries are made from them)."""
    have = driver.execute_query(COUNT, ns=ns).records[0]["n"]
    if have == n:
        rows = driver.execute_query(
            "MATCH (t:Topic) WHERE t.namespace = $ns RETURN t.embedding AS e", ns=ns
        ).records
        return np.array([r["e"] for r in rows], dtype=np.float32)
    driver.execute_query(DELETE, ns=ns)
    vectors = unit_vectors(rng, n)
    started = time.monotonic()
    for lo in range(0, n, batch):
        rows = [
            {
                "props": {"topic_id": str(uuid.uuid4()), "namespace": ns, "name": f"topic {i}",
                          "one_liner": f"synthetic topic {i}", "schema_version": 1,
                          "version": 1, "utility_score": 0.0, "decay_bucket": "hot"},
                "embedding": vectors[i].tolist(),
                "seen": (T0 + timedelta(minutes=i)).isoformat(),
            }
            for i in range(lo, min(lo + batch, n))
        ]  # fmt: skip
        driver.execute_query(SEED_TOPICS, rows=rows)
    print(f"  seeded {n} topics of {ns} in {time.monotonic() - started:.0f} s", flush=True)
    return vectors


def queries(
    vectors: np.ndarray, count: int, noise: float, rng: np.random.Generator
) -> list[list[float]]:
    picked = vectors[rng.integers(0, len(vectors), count)]
    noisy = picked + rng.normal(0.0, noise, picked.shape).astype(np.float32)
    return [list(map(float, v / np.linalg.norm(v))) for v in noisy]


def profile(driver: Driver, text: str, params: dict[str, Any]) -> tuple[int, int]:
    """(db hits, the most rows any operator produced) of one PROFILE run."""
    lines = text.strip().splitlines()
    body = "\n".join(lines[1:]) if lines[0].startswith("CYPHER") else text
    prefix = lines[0] + "\n" if lines[0].startswith("CYPHER") else ""
    summary = driver.execute_query(f"{prefix}PROFILE {body}", params).summary
    plan = summary.profile or {}

    def walk(node: dict[str, Any]) -> tuple[int, int]:
        hits, rows = int(node.get("dbHits", 0)), int(node.get("rows", 0))
        for child in node.get("children") or []:
            h, r = walk(child)
            hits, rows = hits + h, max(rows, r)
        return hits, rows

    return walk(plan)


def measure(
    label: str,
    run: Callable[[list[float]], tuple[list[str], str, dict[str, Any]]],
    driver: Driver,
    warm: Sequence[list[float]],
    qs: Sequence[list[float]],
    exact: Sequence[set[str]],
) -> Figures:
    """Time ``run`` over ``qs`` (after the ``warm`` ones, not measured), then PROFILE each."""
    for q in warm:
        run(q)
    figures = Figures(label, [], [], [], [])
    for q, truth in zip(qs, exact, strict=True):
        started = time.perf_counter()
        ids, text, params = run(q)
        figures.latencies_ms.append((time.perf_counter() - started) * 1000)
        figures.recall.append(len(truth & set(ids)) / max(1, len(truth)))
        hits, rows = profile(driver, text, params)
        figures.db_hits.append(hits)
        figures.rows.append(rows)
    return figures


@contextmanager
def server(args: argparse.Namespace) -> Iterator[Driver]:
    home = Path(args.home) / NEO4J_VERSION / "neo4j"
    shared = (Settings().home / "neo4j" / "lib").resolve()
    if not (home / "lib").exists() and (shared / f"neo4j-{NEO4J_VERSION}.jar").is_file():
        home.mkdir(parents=True, exist_ok=True)
        (home / "lib").symlink_to(shared)
    config = ServerConfig(home=home, bolt_port=args.bolt, http_port=args.http, heap="1g",
                          start_timeout_s=900)  # fmt: skip
    managed = LocalNeo4j(config)
    started = time.monotonic()
    managed.start()
    print(f"Neo4j {NEO4J_VERSION} up in {time.monotonic() - started:.0f} s ({config.uri})")
    driver = connect(config.uri, "neo4j", managed.password())
    try:
        yield driver
    finally:
        driver.close()
        managed.stop()


@contextmanager
def exact_max(value: int) -> Iterator[None]:
    """``EXACT_VECTOR_MAX`` of the topic search set to ``value`` meanwhile."""
    before = vars(graph.topic_search)["EXACT_VECTOR_MAX"]
    vars(graph.topic_search)["EXACT_VECTOR_MAX"] = value
    try:
        yield
    finally:
        vars(graph.topic_search)["EXACT_VECTOR_MAX"] = before


def run_all(args: argparse.Namespace) -> list[Figures]:
    rng = np.random.default_rng(args.seed)
    with server(args) as driver:
        started = time.monotonic()
        apply_migrations(driver, datetime.now(UTC))
        print(f"  migrations (and index builds) in {time.monotonic() - started:.0f} s")
        big, small = f"fv-big-{args.big}", f"fv-small-{args.small}"
        if args.reseed:
            for ns in (big, small):
                driver.execute_query(DELETE, ns=ns)
        seed_random(driver, big, args.big, args.batch)
        vectors = seed(driver, small, args.small, args.batch, rng)
        driver.execute_query("CALL db.awaitIndexes(1800)")
        qs = queries(vectors, args.warmup + args.queries, args.noise, rng)
        warm, measured = qs[: args.warmup], qs[args.warmup :]
        since = (T0 + timedelta(minutes=args.small // 2)).isoformat()
        exact = [exact_top(driver, small, q, args.k) for q in measured]
        exact_window = [exact_top(driver, small, q, args.k, since) for q in measured]
        store = CapturingStore(driver)

        def product(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
            hits = store.search_vector(small, q, k=args.k, light=True)
            return [h.topic.topic_id for h in hits], *store.last

        def windowed(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
            hits = store.search_vector(small, q, k=args.k, since=datetime.fromisoformat(since),
                                       light=True)  # fmt: skip
            return [h.topic.topic_id for h in hits], *store.last

        def filtered(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
            params = {"v": q, "ns": small, "k": args.k}
            records = driver.execute_query(FILTERED, params).records
            return [r["id"] for r in records], FILTERED, params

        figures = [measure("product", product, driver, warm, measured, exact)]
        with exact_max(-1):
            figures.append(measure("index path", product, driver, warm, measured, exact))
        figures.append(measure("SEARCH k", filtered, driver, warm, measured, exact))
        for fetch in [int(n) for n in args.fetches.split(",") if n]:

            def wide(q: list[float], fetch: int = fetch) -> tuple[list[str], str, dict[str, Any]]:
                params = {"v": q, "ns": small, "k": args.k, "fetch": fetch}
                records = driver.execute_query(FILTERED_WIDE, params).records
                return [r["id"] for r in records], FILTERED_WIDE, params

            figures.append(
                measure(f"SEARCH {fetch}, rescored", wide, driver, warm, measured, exact)
            )
        figures.append(measure("windowed product", windowed, driver, warm, measured, exact_window))
        with exact_max(-1):
            figures.append(
                measure("windowed index path", windowed, driver, warm, measured, exact_window)
            )
        return figures


def exact_top(
    driver: Driver, ns: str, q: list[float], k: int, since: str | None = None
) -> set[str]:
    records = driver.execute_query(EXACT, ns=ns, v=q, k=k, since=since).records
    return {r["id"] for r in records}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", default=str(Path(tempfile.gettempdir()) / "sheriff-fv"))
    parser.add_argument("--bolt", type=int, default=7895)
    parser.add_argument("--http", type=int, default=7595)
    parser.add_argument("--big", type=int, default=50_000)
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.02, help="query noise per dimension")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--fetches", default="", help="SEARCH LIMIT sizes to rescore, e.g. 100,200")
    parser.add_argument("--reseed", action="store_true")
    args = parser.parse_args()
    results = run_all(args)
    print(f"\nNeo4j {NEO4J_VERSION}: {args.small} topics beside {args.big}, k={args.k}, "
          f"{args.queries} queries:")  # fmt: skip
    for figures in results:
        print(figures.line())


if __name__ == "__main__":
    main()
