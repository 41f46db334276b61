"""The neighbourhood: one measured tenant beside 1,000 small tenants and a 300k-topic tenant, and
the same tenant alone, in one run (issue #33, "Benchmarks" and its acceptance).

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/bench_neighbourhood.py
    ... --topics 10000            # the measured tenant: bench-api-10k's shape (default 1000)
    ... --crossover               # instead: exact scan vs index by namespace size
    ... --stop                    # stop both private servers at the end

Two private Neo4j servers of the default version (2026.08.1: vector search filtered by namespace
inside the index; never the shared one), each started by this script when it is
not running, under ``--home`` (default benchmarks/out/neighbourhood) ``/with`` (Bolt 7690, HTTP
7477) and ``/alone`` (Bolt 7691, HTTP 7478), with the managed server's defaults (1 GB heap,
256 MB page cache). Both are left running (``--stop`` stops them) and their data reused: the
neighbours are seeded once and found again by their counts, the measured tenant likewise
(``--reseed`` rebuilds everything).

Data:
- the measured tenant ``bench-api-<N>`` on both servers: bench_api_concurrency's shape (topics
  with the real MiniLM vector of their one-liner, three messages each, mention links, edges,
  events) and, as the sleep worker would write them, its messages' passages with real vectors;
- on ``with`` only: 1,000 small tenants ``nb-small-NNNN`` (3 topics, 6 messages and their
  passages each) and one tenant ``nb-big`` of 300,000 topics, written through the stores'
  write paths (``TopicStore.create`` in batches of 2,000, ``PassageStore.write``). Their
  vectors are **perturbations of real ones**: the MiniLM vector of a sentence of the very pool
  the measured tenant's topics and questions come from, plus Gaussian noise (norm ~0.35, cosine
  ~0.94 to the original), normalised: the neighbours sit in the vector indexes right where the
  measured tenant's queries land (random unit vectors would sit far from every query and crowd
  nothing; on 5.26 they crowded its rows of the shared index, on 2026.08 ``SEARCH ... WHERE
  namespace`` leaves them out).

Measured: ``sheriff up --workers W --no-worker`` against each server, both up at once
(bench_api_concurrency's ApiServer, phases and CPU accounting from /proc): a warm-up, then in
``--rounds`` rounds alternating between the servers (the machine's speed drifts within
minutes; alternating puts both under the same drift) S/rounds sequential context requests
(p50/p95, server + Neo4j CPU per request) and C concurrent clients x R/rounds requests
(throughput), the same messages on both; then A messages' answers, whose items (kind, title,
reason, score; the ids differ between the servers) are compared between the servers, and
where they differ store by store (``store_differences``: the topics' and the messages' full-text
search and the topic and passage vector searches of the same messages). Then the recall of the
store's vector search (``TopicStore.search_vector``, k=8, as a context asks) against the exact
top k computed here from every vector of the tenant, for Q questions.

``--crossover``: namespaces of 100 ... 8,000 topics (``nbx-00NNNN``, perturbed vectors) are added to
both servers; for each size, Q searches with the exact scan forced (``EXACT_VECTOR_MAX`` large)
and with the index path forced (-1), timed from here (client wall, p50)
and by Neo4j's CPU (per search), and above the threshold the path as it runs (the namespace
counted up to the threshold, then the index): the size where the index path becomes cheaper
is the threshold (graph/overfetch.py EXACT_VECTOR_MAX, docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from bench_api_concurrency import (
    WARMUP,
    ApiServer,
    Phase,
    ensure_data,
    namespace_for,
    p,
    report,
    request_texts,
    run_phase,
    settle,
)
from bench_retrieval import NOW, make_topic, sentence_pool
from neo4j import Driver

import graph.overfetch
import graph.topic_search
from api.settings import Settings
from graph.db import connect
from graph.keys import ApiKeyStore
from graph.messages import MessageStore
from graph.migrations import apply_migrations
from graph.models import Message
from graph.passages import MessagePassages, PassageStore
from graph.server import LocalNeo4j
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from retrieval.passage_index import PassageIndexer
from text.passages import message_passages

REPO = Path(__file__).resolve().parent.parent
SMALL = 1000  # small tenants
SMALL_TOPICS, SMALL_MESSAGES = 3, 6
BIG = 300_000  # topics of the big tenant
BIG_NS = "nb-big"
BATCH = 2000
NOISE = 0.35  # norm of the noise added to a real vector (cosine ~0.94 to it)
K = 8  # the topic search's k in a light context
CROSSOVER_SIZES = (100, 300, 1000, 2000, 4000, 8000)


@dataclass
class Private:
    """One private managed Neo4j: its settings, driver and Java pid."""

    name: str
    settings: Settings
    driver: Driver
    pid: int | None

    @property
    def env(self) -> dict[str, str]:
        uri, user, password = self.settings.connection()
        return {"NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password}


def private(name: str, home: Path, bolt: int, http: int) -> Private:
    settings = Settings(home=home, neo4j_bolt_port=bolt, neo4j_http_port=http, neo4j_uri=None)
    server = LocalNeo4j(settings.server_config())
    if server.running_pid() is None:
        print(f"starting the private Neo4j '{name}' under {home} (Bolt {bolt})", flush=True)
        server.start()
    driver = connect(*settings.connection())
    apply_migrations(driver, datetime.now(UTC), settings.neo4j_database)
    return Private(name, settings, driver, server.running_pid())


class CachedEmbedder:
    """The real embedder, each text embedded once for both servers."""

    def __init__(self) -> None:
        self.inner = MiniLMEmbedder()
        self.model_name = self.inner.model_name
        self.known: dict[str, list[float]] = {}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        new = sorted({t for t in texts if t not in self.known})
        for start in range(0, len(new), 256):
            chunk = new[start : start + 256]
            self.known |= dict(zip(chunk, self.inner.embed(chunk), strict=True))
        return [self.known[t] for t in texts]


def count(driver: Driver, label: str, ns_prefix: str) -> int:
    records, _, _ = driver.execute_query(
        f"MATCH (n:{label}) WHERE n.namespace STARTS WITH $prefix RETURN count(n) AS n",
        prefix=ns_prefix,
        routing_="r",
    )
    return int(records[0]["n"])


def delete_prefix(driver: Driver, prefix: str) -> None:
    with driver.session() as session:
        session.run(
            "MATCH (n) WHERE n.namespace STARTS WITH $prefix "
            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
            prefix=prefix,
        ).consume()


def perturbed(gen: np.random.Generator, base: np.ndarray) -> list[float]:
    noise = gen.normal(size=base.shape)
    v = base + NOISE * noise / np.linalg.norm(noise)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def seed_measured(args: argparse.Namespace, s: Private, embedder: CachedEmbedder) -> str:
    """bench_api_concurrency's tenant, then its messages' passages (as the worker writes them)."""
    ns = namespace_for(args.topics)
    ensure_data(args, s.driver, s.settings.neo4j_database, ns)
    done = PassageIndexer(PassageStore(s.driver), embedder, batch=500).run(ns)  # type: ignore[arg-type]
    print(f"  {s.name}: {ns}: passages written for {done:,} pending messages", flush=True)
    return ns


def pool_vectors(embedder: CachedEmbedder) -> tuple[list[tuple[int, str, str]], np.ndarray]:
    pool = sentence_pool(random.Random(2026))
    return pool, np.asarray(embedder.embed([text for _, _, text in pool]))


def seed_topics(
    driver: Driver, ns: str, n: int, pool: list[tuple[int, str, str]], base: np.ndarray, seed: int
) -> None:
    rng, gen, store = random.Random(seed), np.random.default_rng(seed), TopicStore(driver)
    for start in range(0, n, BATCH):
        picks = [rng.randrange(len(pool)) for _ in range(min(BATCH, n - start))]
        topics = [make_topic(rng, ns, pool, i) for i in picks]
        store.create(topics, [perturbed(gen, base[i]) for i in picks], NOW)
        if (start // BATCH) % 25 == 24:
            print(f"    {ns}: {start + BATCH:,} topics", flush=True)


def seed_neighbours(s: Private, embedder: CachedEmbedder, reseed: bool) -> None:
    pool, base = pool_vectors(embedder)
    small_ok = count(s.driver, "Passage", "nb-small-") >= SMALL * SMALL_MESSAGES
    if reseed or count(s.driver, "Topic", "nb-small-") != SMALL * SMALL_TOPICS or not small_ok:
        started = time.perf_counter()
        delete_prefix(s.driver, "nb-small-")
        gen = np.random.default_rng(5)
        messages, passages = MessageStore(s.driver), PassageStore(s.driver)
        for i in range(SMALL):
            ns = f"nb-small-{i:04d}"
            seed_topics(s.driver, ns, SMALL_TOPICS, pool, base, i)
            picks = [gen.integers(len(pool)) for _ in range(SMALL_MESSAGES)]
            said = [Message(namespace=ns, role="user", content=pool[j][2],
                            at=NOW - timedelta(days=30, minutes=SMALL_MESSAGES - k))
                    for k, j in enumerate(picks)]  # fmt: skip
            written = messages.append(ns, said)
            passages.write([
                MessagePassages(ns, m.message_id, m.content, cut := message_passages(
                    m.content, m.role), [perturbed(gen, base[j]) for _ in cut])
                for m, j in zip(written, picks, strict=True)
            ])  # fmt: skip
        print(f"  seeded {SMALL:,} small tenants in {time.perf_counter() - started:.0f} s")
    if reseed or count(s.driver, "Topic", BIG_NS) != BIG:
        started = time.perf_counter()
        delete_prefix(s.driver, BIG_NS)
        seed_topics(s.driver, BIG_NS, BIG, pool, base, 300)
        s.driver.execute_query("CALL db.awaitIndexes(1200)")
        print(f"  seeded {BIG:,} topics of {BIG_NS} in {time.perf_counter() - started:.0f} s")
    print(f"  {s.name}: neighbours: {count(s.driver, 'Topic', 'nb-'):,} topics, "
          f"{count(s.driver, 'Passage', 'nb-'):,} passages", flush=True)  # fmt: skip


# -- the measured tenant's requests ----------------------------------------------------------------
class Server(ApiServer):
    """``sheriff up --workers W --keep-neo4j --no-worker`` against one private server (no sleep
    or passage worker: the data stays as seeded and nothing runs beside the requests)."""

    def __init__(self, log: Any, log_path: Path, workers: int, env: dict[str, str]) -> None:
        super().__init__(log, log_path, workers)
        self.env = env

    def start(self, timeout_s: float = 600.0) -> None:
        cmd = [sys.executable, "-c", "from api.cli import main; main()", "up",
               "--workers", str(self.workers), "--keep-neo4j", "--no-worker"]  # fmt: skip
        env = os.environ | self.env | {"SHERIFF_API_PORT": str(self.port)}
        self.log_mark = self.log_path.stat().st_size
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sheriff up exited with {self.proc.returncode}")
            if self._started() >= self.workers and self._healthy():
                return
            time.sleep(0.5)
        raise RuntimeError(f"the API server did not answer /health within {timeout_s:.0f} s")


@dataclass
class Measured:
    name: str
    sequential: Phase
    concurrent: Phase
    answers: list[list[tuple[str, str, str, float]]]
    recall: float
    exact_share: float  # searches the exact scan answered


def answers_of(url: str, key: str, texts: list[tuple[str, str]], run: str) -> list[Any]:
    """Each text's context items as (kind, title, reason, score), one session, in order."""
    out = []
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
        for _, text in texts:
            body = {"message": text, "now": NOW.isoformat(), "session_id": f"answers-{run}",
                    "budget": 1000}  # fmt: skip
            data = http.post("/v1/context", json=body).json()
            out.append([(i["kind"], i["title"], i["reason_label"], round(i["score"], 6))
                        for i in data.get("items", [])])  # fmt: skip
    return out


def recall(s: Private, ns: str, embedder: CachedEmbedder, texts: list[str]) -> tuple[float, float]:
    """Mean recall@K of the store's vector search against the exact top K over every vector of
    the tenant (computed here), and the share of searches the exact scan answered."""
    records, _, _ = s.driver.execute_query(
        "MATCH (t:Topic {namespace: $ns}) WHERE t.embedding IS NOT NULL AND t.archived_at IS NULL "
        "RETURN t.topic_id AS id, t.embedding AS v", ns=ns, routing_="r")  # fmt: skip
    ids = [r["id"] for r in records]
    matrix = np.asarray([r["v"] for r in records])
    store = TopicStore(s.driver)
    found, scanned = [], 0
    for text in texts:
        q = np.asarray(embedder.embed([text])[0])
        exact = {ids[i] for i in np.argsort(-(matrix @ q))[:K]}
        hits = store.search_vector(ns, q.tolist(), k=K, light=True)
        scanned += all(h.source == "vector-scan" for h in hits)
        found.append(len(exact & {h.topic.topic_id for h in hits}) / K)
    return statistics.mean(found), scanned / len(texts)


SEARCHES = ("topic full text", "topic vectors", "message full text", "passage vectors")


_PASSAGES: dict[str, PassageStore] = {}


def searched(s: Private, ns: str, text: str, vector: list[float]) -> list[list[Any]]:
    """What each store search of a context finds for ``text`` on ``s``: (name or content,
    score) in order (the ids differ between the servers). One passage store per server, as an
    API worker holds one: its passage vectors are read once (graph/passage_vectors.py)."""
    topics, messages = TopicStore(s.driver), MessageStore(s.driver)
    passages = _PASSAGES.setdefault(s.name, PassageStore(s.driver))
    return [
        [(h.topic.name, round(h.score, 4)) for h in topics.search_text(ns, text, k=K, light=True)],
        [(h.topic.name, round(h.score, 4))
         for h in topics.search_vector(ns, vector, k=K, light=True)],
        [(h.message.content, round(h.score, 4)) for h in messages.search_text(ns, text, k=20)],
        [(h.message.content, round(h.score, 4)) for h in passages.search(ns, vector, k=20)],
    ]  # fmt: skip


def canonical(items: list[Any]) -> list[Any]:
    """``items`` (text, score) with ties in one order (the stores order them by id, and the
    ids differ between the servers), and of the items tied at the cut only their score
    (which of them made the cut follows the ids too)."""
    last = min((score for _, score in items), default=None)
    return sorted(((text if score != last else "", score) for text, score in items),
                  key=lambda item: (-item[1], item[0]))  # fmt: skip


def store_differences(
    servers: list[Private], ns: str, embedder: CachedEmbedder, texts: list[str]
) -> None:
    """Where answers differ, store by store: for how many of ``texts`` each search of a
    context (the topics' and the messages' full text, the topic and passage vectors) finds
    other items or scores on the two servers (items of one score in any order)."""
    differ = dict.fromkeys(SEARCHES, 0)
    for text in texts:
        vector = embedder.embed([text])[0]
        alone, beside = (searched(s, ns, text, vector) for s in servers)
        for name, a, b in zip(SEARCHES, alone, beside, strict=True):
            differ[name] += canonical(a) != canonical(b)
    print(f"  store searches that differ between the servers, of {len(texts)} messages: "
          + ", ".join(f"{name} {n}" for name, n in differ.items()), flush=True)  # fmt: skip


def merged(name: str, phases: list[Phase]) -> Phase:
    """Rounds of one phase as one: their outcomes, wall times and CPU per request together."""
    n = sum(len(ph.outcomes) for ph in phases)
    cpu = sum((ph.server_cpu_ms or 0.0) * len(ph.outcomes) for ph in phases) / max(n, 1)
    outcomes = [o for ph in phases for o in ph.outcomes]
    wall = sum(ph.wall_s for ph in phases)
    return Phase(name, phases[0].clients, outcomes, wall, " | ".join(ph.cpu for ph in phases), cpu)


def measure(args: argparse.Namespace, servers: list[Private], ns: str,
            embedder: CachedEmbedder, log: Any, log_path: Path) -> list[Measured]:  # fmt: skip
    """Both API servers up at once; the phases alternate between them in ``args.rounds``
    rounds (this machine's speed drifts within minutes: alternating puts both under the same
    drift), each round the same messages on both."""
    keys = [ApiKeyStore(s.driver) for s in servers]
    made = [k.create(ns, "bench_neighbourhood", datetime.now(UTC)) for k in keys]
    apis = [Server(log, log_path, args.workers, s.env) for s in servers]
    rng = random.Random(7)
    warmup = [request_texts(rng, WARMUP * args.workers)]
    rounds = max(1, args.rounds)
    seq = [[request_texts(rng, args.sequential // rounds)] for _ in range(rounds)]
    conc = [
        [request_texts(rng, max(1, args.requests // rounds)) for _ in range(args.clients)]
        for _ in range(rounds)
    ]
    asked = request_texts(random.Random(9), args.answers)
    phases: dict[str, list[list[Phase]]] = {"seq": [[], []], "conc": [[], []]}
    answers: list[list[Any]] = []
    try:
        for api in apis:
            api.start()
        for api, s, (_, key) in zip(apis, servers, made, strict=True):
            run_phase("warm-up", api, key, warmup, s.pid)
        for api, s in zip(apis, servers, strict=True):  # the workers' passage copies read
            print(f"  {s.name}: the server's CPU quiet {settle(api):.1f} s after the warm-up")
        print(f"\n#### both servers up (--workers {args.workers}), warmed up", flush=True)
        for r in range(rounds):
            for kind, plans in (("seq", seq[r]), ("conc", conc[r])):
                for i, (api, s, (_, key)) in enumerate(zip(apis, servers, made, strict=True)):
                    phases[kind][i].append(
                        run_phase(f"{s.name} {kind} {r}", api, key, plans, s.pid)
                    )
        for api, s, (_, key) in zip(apis, servers, made, strict=True):
            answers.append(answers_of(api.url, key, asked, f"{s.name}-{os.getpid()}"))
    finally:
        for api in apis:
            api.stop()
        for k, (record, _) in zip(keys, made, strict=True):
            k.revoke(record.key_id, datetime.now(UTC))
    out = []
    for i, s in enumerate(servers):
        sequential = merged(f"{s.name}: sequential", phases["seq"][i])
        concurrent = merged(f"{s.name}: {args.clients} clients", phases["conc"][i])
        report(sequential)
        report(concurrent)
        rec, share = recall(s, ns, embedder, [t for _, t in asked])
        print(f"  recall@{K} of the vector search vs the exact top {K}: {rec:.4f} "
              f"({100 * share:.0f}% of searches scored exactly)", flush=True)  # fmt: skip
        out.append(Measured(s.name, sequential, concurrent, answers[i], rec, share))
    return out


def ms(phase: Phase, q: int) -> float:
    return p([o.ms for o in phase.ok], q)


def summary(alone: Measured, beside: Measured) -> None:
    print("\n== summary: beside the neighbours / alone (acceptance: <= 1.3x, the same answers) ==")
    rows = [
        ("sequential p50 ms", ms(alone.sequential, 50), ms(beside.sequential, 50)),
        ("sequential p95 ms", ms(alone.sequential, 95), ms(beside.sequential, 95)),
        ("server+Neo4j CPU ms/request (seq)", alone.sequential.server_cpu_ms or 0.0,
         beside.sequential.server_cpu_ms or 0.0),
        ("concurrent requests/s", len(alone.concurrent.ok) / alone.concurrent.wall_s,
         len(beside.concurrent.ok) / beside.concurrent.wall_s),
        ("concurrent p50 ms", ms(alone.concurrent, 50), ms(beside.concurrent, 50)),
        (f"recall@{K}", alone.recall, beside.recall),
    ]  # fmt: skip
    for name, a, b in rows:
        ratio = b / a if a else float("nan")
        print(f"  {name:36s} alone {a:9.2f}   beside {b:9.2f}   ratio {ratio:5.2f}")
    pairs = list(zip(alone.answers, beside.answers, strict=True))
    same = sum(a == b for a, b in pairs)
    alike = sum(sorted(a) == sorted(b) for a, b in pairs)
    print(f"  the same items (kind, title, reason, score) for {same} of {len(pairs)} messages "
          f"in the same order, {alike} as sets (the servers' topic ids differ; equal scores "
          "are ordered by name, first seen, then id)")  # fmt: skip
    for i, (x, y) in enumerate(zip(alone.answers, beside.answers, strict=True)):
        if x != y:  # the first that differs
            print(f"    message {i}: alone {x[:3]} / beside {y[:3]}")
            break
    errors = len(alone.sequential.errors) + len(beside.sequential.errors)
    errors += len(alone.concurrent.errors) + len(beside.concurrent.errors)
    print(f"  errors: {errors}")


# -- crossover -------------------------------------------------------------------------------------
def neo4j_cpu_s(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(s: Private, ns: str, vectors: list[list[float]], exact_max: int) -> tuple[float, float]:
    """p50 wall ms and Neo4j CPU ms per search of ``ns`` with ``EXACT_VECTOR_MAX`` set."""
    store = TopicStore(s.driver)
    vars(graph.topic_search)["EXACT_VECTOR_MAX"] = exact_max
    try:
        for v in vectors[:5]:  # warm: pages, plan
            store.search_vector(ns, v, k=K, light=True)
        walls = []
        cpu0 = neo4j_cpu_s(s.pid)
        for v in vectors:
            t0 = time.perf_counter()
            store.search_vector(ns, v, k=K, light=True)
            walls.append(1000 * (time.perf_counter() - t0))
        cpu = 1000 * (neo4j_cpu_s(s.pid) - cpu0) / len(vectors)
    finally:
        vars(graph.topic_search)["EXACT_VECTOR_MAX"] = EXACT_DEFAULT
    return statistics.median(walls), cpu


EXACT_DEFAULT = graph.overfetch.EXACT_VECTOR_MAX


def crossover(args: argparse.Namespace, servers: list[Private], embedder: CachedEmbedder) -> None:
    pool, base = pool_vectors(embedder)
    texts = [t for _, t in request_texts(random.Random(21), args.queries)]
    vectors = embedder.embed(texts)
    print(f"\n== crossover: {args.queries} searches (k={K}) per size; p50 wall ms / Neo4j CPU "
          "ms per search ==")  # fmt: skip
    for s in servers:
        for n in CROSSOVER_SIZES:
            ns = f"nbx-{n:06d}"  # no name a prefix of another (counted and deleted by prefix)
            if count(s.driver, "Topic", ns) != n:
                delete_prefix(s.driver, ns)
                seed_topics(s.driver, ns, n, pool, base, n)
            exact = timed(s, ns, vectors, 10**9)
            index = timed(s, ns, vectors, -1)
            line = (f"  {s.name:6s} {n:6,} topics: exact {exact[0]:6.1f} ms / {exact[1]:6.1f} ms "
                    f"CPU   index {index[0]:6.1f} ms / {index[1]:6.1f} ms CPU")  # fmt: skip
            if n > EXACT_DEFAULT:  # the index path as it runs: after the namespace's count
                counted = timed(s, ns, vectors, EXACT_DEFAULT)
                line += f"   counted+index {counted[0]:6.1f} ms / {counted[1]:6.1f} ms CPU"
            print(line, flush=True)


# -- main ------------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--home", type=Path, default=REPO / "benchmarks/out/neighbourhood")
    parser.add_argument("--topics", type=int, default=1000, help="the measured tenant's topics")
    parser.add_argument("--edges", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="API workers (default 2)")
    parser.add_argument("--sequential", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=25, help="per client")
    parser.add_argument("--rounds", type=int, default=4, help="alternations between servers")
    parser.add_argument("--answers", type=int, default=60, help="messages whose answers compare")
    parser.add_argument("--queries", type=int, default=60, help="searches for recall/crossover")
    parser.add_argument("--reseed", action="store_true", help="rebuild every tenant")
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--stop", action="store_true", help="stop both servers at the end")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    alone = private("alone", args.home / "alone", 7691, 7478)
    beside = private("with", args.home / "with", 7690, 7477)
    embedder = CachedEmbedder()
    try:
        print(f"machine: {os.cpu_count()} CPUs, load average "
              + ", ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)  # fmt: skip
        seed_neighbours(beside, embedder, args.reseed)
        if args.crossover:
            crossover(args, [alone, beside], embedder)
            return
        ns = seed_measured(args, alone, embedder)
        seed_measured(args, beside, embedder)
        print(f"data ready in {time.perf_counter() - started:.0f} s", flush=True)
        log_path = REPO / "benchmarks/out" / f"bench-neighbourhood-{os.getpid()}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w") as log:
            results = measure(args, [alone, beside], ns, embedder, log, log_path)
        summary(*results)
        asked = [t for _, t in request_texts(random.Random(9), args.answers)]
        store_differences([alone, beside], ns, embedder, asked)
    finally:
        for s in (alone, beside):
            s.driver.close()
            if args.stop:
                LocalNeo4j(s.settings.server_config()).stop()


if __name__ == "__main__":
    main()
