"""Topic store benchmark: batched inserts of N topics with real embeddings, then vector-query
latency of ``TopicStore.search_vector`` beside the raw ``db.index.vector.queryNodes`` call, in the
same run on the same data (interleaved, so machine noise hits both alike).

    .venv/bin/python benchmarks/bench_topic_store.py --topics 10000 --queries 300

Uses the managed Neo4j (``sheriff neo4j start``) or NEO4J_URI; writes into a fresh namespace and
deletes it afterwards unless --keep.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from api.settings import Settings
from graph.db import connect
from graph.migrations import apply_migrations
from graph.models import Topic
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder

SUBJECTS = [
    "the billing service",
    "Mel's birthday party",
    "the kitchen renovation",
    "marathon training",
    "the Japan trip",
    "the sourdough starter",
    "the home network",
    "the tax return",
    "the podcast launch",
    "the garden beds",
    "the job interview",
    "the wedding speech",
    "the roof repair",
    "the book club",
    "the charity run",
    "the climbing gym",
    "the mortgage",
    "the electric car",
    "the piano recital",
    "the family reunion",
]
VERBS = [
    "needs a decision about",
    "was postponed because of",
    "depends on",
    "is blocked by",
    "got a new plan for",
    "has a budget question about",
    "moved forward with",
    "was discussed with",
]
OBJECTS = [
    "the contractor's quote",
    "a cheaper supplier",
    "the weekend schedule",
    "the database schema",
    "a visit from grandma",
    "the rainy weather",
    "the new laptop",
    "the insurance paperwork",
    "a change of venue",
    "the team's deadline",
    "the doctor's advice",
    "the moving boxes",
]


def sentence(rng: random.Random, i: int) -> tuple[str, str]:
    subject = rng.choice(SUBJECTS)
    text = f"{subject.capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})."
    return f"{subject} #{i}", text


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    settings = Settings()
    driver = connect(*settings.connection())
    apply_migrations(driver, datetime.now(UTC))
    store = TopicStore(driver)
    embedder = MiniLMEmbedder()
    embedder.load()
    rng = random.Random(7)
    ns = f"bench-{uuid.uuid4().hex[:8]}"
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    texts = [sentence(rng, i) for i in range(args.topics)]
    started = time.perf_counter()
    vectors = embedder.embed([f"{n}: {t}" for n, t in texts])
    embed_s = time.perf_counter() - started

    started = time.perf_counter()
    for start in range(0, args.topics, args.batch):
        chunk = range(start, min(start + args.batch, args.topics))
        topics = [
            Topic(
                namespace=ns,
                name=texts[i][0],
                one_liner=texts[i][1],
                time={
                    "first_seen_at": t0 + timedelta(minutes=i),
                    "last_seen_at": t0 + timedelta(minutes=i),
                },  # type: ignore[arg-type]
            )
            for i in chunk
        ]
        store.create(topics, [vectors[i] for i in chunk], t0)
    insert_s = time.perf_counter() - started
    driver.execute_query("CALL db.awaitIndexes(600)")

    queries = embedder.embed(
        [f"what happened with {rng.choice(SUBJECTS)}?" for _ in range(args.queries)]
    )
    raw_ms, store_ms = [], []
    for vec in queries[:20]:  # warm-up, not measured
        store.search_vector(ns, vec, k=args.k)
    for vec in queries:
        s = time.perf_counter()
        driver.execute_query(
            "CALL db.index.vector.queryNodes('topic_embedding_ns', $k, $v) YIELD node, score "
            "RETURN node.topic_id AS id, score",
            k=args.k,
            v=vec,
            routing_="r",
        )
        raw_ms.append((time.perf_counter() - s) * 1000)
        s = time.perf_counter()
        store.search_vector(ns, vec, k=args.k)
        store_ms.append((time.perf_counter() - s) * 1000)

    print(f"topics: {args.topics} in batches of {args.batch} (namespace {ns})")
    print(
        f"embedding: {args.topics / embed_s:,.0f} texts/s ({embed_s:.1f} s, all-MiniLM-L6-v2, CPU)"
    )
    print(
        f"insert:    {args.topics / insert_s:,.0f} topics/s ({insert_s:.1f} s, with 384-d vectors)"
    )
    print(f"vector query k={args.k}, {args.queries} queries, interleaved:")
    for label, values in (
        ("raw db.index.vector.queryNodes", raw_ms),
        ("TopicStore.search_vector", store_ms),
    ):
        print(
            f"  {label:32s} p50 {statistics.median(values):6.2f} ms  p95 {percentile(values, 95):6.2f} ms"
        )
    print(
        f"  ratio store/raw: p50 {statistics.median(store_ms) / statistics.median(raw_ms):.2f}x"
        f"  p95 {percentile(store_ms, 95) / percentile(raw_ms, 95):.2f}x"
    )
    if not args.keep:
        with driver.session() as session:  # CALL ... IN TRANSACTIONS needs an implicit transaction
            session.run(
                "MATCH (n:Topic {namespace: $ns}) "
                "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                ns=ns,
            ).consume()
    driver.close()


if __name__ == "__main__":
    main()
