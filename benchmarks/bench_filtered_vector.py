"""A small namespace's vector search beside a big one: Neo4j 5.26's shared index with a
post-filter against 2026.x's vector index with ``namespace`` as a filter property.

    .venv/bin/python benchmarks/bench_filtered_vector.py                 # 50k + 200 topics
    .venv/bin/python benchmarks/bench_filtered_vector.py --big 100000    # issue #33's size

Each version runs on a private server this script starts (``graph.server.LocalNeo4j``: own home
under ``--home``, own ports ``--bolt``/``--http`` + 0 for 5.26 and + 1 for 2026.x; the jars are
fetched from Maven Central on first use, 5.26's shared with the main managed home when it has
them), one after the other, and stops again. The project's migrations are applied, then two
namespaces are seeded (kept between runs, ``--reseed`` rebuilds): ``fv-big-<N>`` with N topics
and ``fv-small-<M>`` with M topics, random unit vectors, in batched ``UNWIND`` writes of
``--batch`` rows (the small one's from numpy, seeded). The queries are the small namespace's own vectors with Gaussian
noise (``--noise``, sigma 0.02 per dimension: about cosine 0.93 to its source, re-normalised),
so each has a true nearest neighbour there; the big namespace's vectors are made by Neo4j
itself (uniform in the cube, normalised: nothing to send, ~100 s for 50k here).

What is measured, per version, after ``--warmup`` unmeasured queries, over ``--queries``:

  today    the project's own search (``TopicStore.search_vector``, k, light): the shared
           ``topic_embedding`` index over-fetched and filtered to the namespace, the share of
           the index learnt by ``graph/index_share.py``, the in-query fallbacks
           (cypher/queries/search_topics_vector.cypher). On both versions.
  filtered (2026.x only) ``CYPHER 25 MATCH (t:Topic) SEARCH t IN (VECTOR INDEX ... FOR $v
           WHERE t.namespace = $ns LIMIT $k) SCORE AS score``, on ``topic_embedding``
           recreated with ``WITH [t.namespace]`` (the index the migration would build).
  rescored (2026.x only) the same SEARCH with ``LIMIT k * --overfetch``, then the exact cosine
           picks the k (as today's query scores what the index found).
  today on the filtered index (2026.x only): the project's query unchanged, on that index
           (``db.index.vector.queryNodes`` still serves an index with filter properties).

For each: latency p50/p95 (client side, the whole round trip, the paths one after the other,
not interleaved), Neo4j's db hits and "rows": the most rows any one operator of the plan
produced (``PROFILE`` of the same query and parameters, once per query), and recall@k against
the exact top k of the namespace (``vector.similarity.cosine`` over all of its topics). A procedure call
(``db.index.vector.queryNodes``) reports no db hits for the index itself, and its rows are
folded into collect(): today's query asks the index for at least 50 rows (more at a learnt
share), so "rows" understates what it read.
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

from api.settings import Settings
from graph.db import connect
from graph.migrations import apply_migrations
from graph.server import NEO4J_VERSION, LocalNeo4j, ServerConfig
from graph.topics import TopicStore

NEW_VERSION = "2026.08.1"
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
RETURN t.topic_id AS id ORDER BY vector.similarity.cosine(t.embedding, $v) DESC LIMIT $k
"""
FILTERED = """
CYPHER 25
MATCH (t:Topic)
  SEARCH t IN (VECTOR INDEX topic_embedding FOR $v WHERE t.namespace = $ns LIMIT $k)
  SCORE AS score
RETURN t.topic_id AS id, score ORDER BY score DESC
"""
FILTERED_WIDE = """
CYPHER 25
MATCH (t:Topic)
  SEARCH t IN (VECTOR INDEX topic_embedding FOR $v WHERE t.namespace = $ns LIMIT $fetch)
WITH t ORDER BY vector.similarity.cosine(t.embedding, $v) DESC LIMIT $k
RETURN t.topic_id AS id
"""
INDEX_OPTIONS = (
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
)
FILTERED_INDEX = (
    "CYPHER 25 CREATE VECTOR INDEX topic_embedding IF NOT EXISTS FOR (t:Topic) ON t.embedding "
    f"WITH [t.namespace] {INDEX_OPTIONS}"
)
PLAIN_INDEX = (
    "CREATE VECTOR INDEX topic_embedding IF NOT EXISTS FOR (t:Topic) ON t.embedding "
    f"{INDEX_OPTIONS}"
)


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
def server(args: argparse.Namespace, version: str, offset: int) -> Iterator[Driver]:
    home = Path(args.home) / version / "neo4j"
    shared = (Settings().home / "neo4j" / "lib").resolve()
    if version == NEO4J_VERSION and not (home / "lib").exists() and shared.is_dir():
        home.mkdir(parents=True, exist_ok=True)
        (home / "lib").symlink_to(shared)
    config = ServerConfig(home=home, version=version, bolt_port=args.bolt + offset,
                          http_port=args.http + offset, heap="1g", start_timeout_s=900)  # fmt: skip
    managed = LocalNeo4j(config)
    started = time.monotonic()
    managed.start()
    print(f"Neo4j {version} up in {time.monotonic() - started:.0f} s ({config.uri})", flush=True)
    driver = connect(config.uri, "neo4j", managed.password())
    try:
        yield driver
    finally:
        driver.close()
        managed.stop()


def run_version(args: argparse.Namespace, version: str, offset: int) -> list[Figures]:
    rng = np.random.default_rng(args.seed)
    with server(args, version, offset) as driver:
        apply_migrations(driver, datetime.now(UTC))
        big, small = f"fv-big-{args.big}", f"fv-small-{args.small}"
        if args.reseed:
            for ns in (big, small):
                driver.execute_query(DELETE, ns=ns)
        wanted = {big: args.big, small: args.small}
        if any(driver.execute_query(COUNT, ns=ns).records[0]["n"] != n for ns, n in wanted.items()):
            driver.execute_query("DROP INDEX topic_embedding IF EXISTS")  # populated at once below
        seed_random(driver, big, args.big, args.batch)
        vectors = seed(driver, small, args.small, args.batch, rng)
        if index_properties(driver) != ["embedding"]:  # dropped above, or filtered by a last run
            started = time.monotonic()
            use_index(driver, PLAIN_INDEX)  # the migrations' index, as a 5.26 store brings it
            print(f"  index built in {time.monotonic() - started:.0f} s", flush=True)
        qs = queries(vectors, args.warmup + args.queries, args.noise, rng)
        warm, measured = qs[: args.warmup], qs[args.warmup :]
        exact = [exact_top(driver, small, q, args.k) for q in measured]
        store = CapturingStore(driver)

        def today(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
            hits = store.search_vector(small, q, k=args.k, light=True)
            return [h.topic.topic_id for h in hits], *store.last

        figures = [measure(f"{version} today", today, driver, warm, measured, exact)]
        if version != NEO4J_VERSION:
            figures += filtered_figures(driver, small, warm, measured, exact, args)
        return figures


def filtered_figures(
    driver: Driver,
    ns: str,
    warm: Sequence[list[float]],
    qs: Sequence[list[float]],
    exact: Sequence[set[str]],
    args: Any,
) -> list[Figures]:
    """The index rebuilt with ``namespace`` as a filter property, then SEARCH ... WHERE."""
    started = time.monotonic()
    use_index(driver, FILTERED_INDEX)
    print(f"  filtered index built in {time.monotonic() - started:.0f} s", flush=True)

    def filtered(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
        params = {"v": q, "ns": ns, "k": args.k}
        records = driver.execute_query(FILTERED, params).records
        return [r["id"] for r in records], FILTERED, params

    def wide(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
        params = {"v": q, "ns": ns, "k": args.k, "fetch": args.k * args.overfetch}
        records = driver.execute_query(FILTERED_WIDE, params).records
        return [r["id"] for r in records], FILTERED_WIDE, params

    store = CapturingStore(driver)

    def today(q: list[float]) -> tuple[list[str], str, dict[str, Any]]:
        hits = store.search_vector(ns, q, k=args.k, light=True)
        return [h.topic.topic_id for h in hits], *store.last

    return [
        measure("2026 SEARCH ... WHERE", filtered, driver, warm, qs, exact),
        measure(f"2026 SEARCH {args.overfetch}k, rescored", wide, driver, warm, qs, exact),
        measure("2026 today, filtered index", today, driver, warm, qs, exact),
    ]


def use_index(driver: Driver, create: str) -> None:
    """Drop ``topic_embedding`` and build it again as ``create`` says; wait until online."""
    driver.execute_query("DROP INDEX topic_embedding IF EXISTS")
    driver.execute_query(create)
    driver.execute_query("CALL db.awaitIndexes(1800)")


def index_properties(driver: Driver) -> list[str]:
    """The properties of ``topic_embedding`` (the vector first, then any filter ones)."""
    records = driver.execute_query(
        "SHOW INDEXES YIELD name, properties WHERE name = 'topic_embedding' RETURN properties"
    ).records
    return list(records[0]["properties"]) if records else []


def exact_top(driver: Driver, ns: str, q: list[float], k: int) -> set[str]:
    return {r["id"] for r in driver.execute_query(EXACT, ns=ns, v=q, k=k).records}


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
    parser.add_argument("--overfetch", type=int, default=5, help="SEARCH LIMIT k * this")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--versions", default=f"{NEO4J_VERSION},{NEW_VERSION}")
    parser.add_argument("--reseed", action="store_true")
    args = parser.parse_args()
    results: list[Figures] = []
    for offset, version in enumerate(args.versions.split(",")):
        results += run_version(args, version, offset)
    print(f"\n{args.small} topics beside {args.big}, k={args.k}, {args.queries} queries:")
    for figures in results:
        print(figures.line())


if __name__ == "__main__":
    main()
