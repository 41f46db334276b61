"""API under load: POST /v1/context against a 10k-topic memory over real HTTP, 1 and N workers.

    .venv/bin/python benchmarks/bench_api_concurrency.py                  # floor, 1 and N workers
    .venv/bin/python benchmarks/bench_api_concurrency.py --workers 2      # one server, 2 workers
    .venv/bin/python benchmarks/bench_api_concurrency.py --soak 10000     # RSS over 10k requests
    .venv/bin/python benchmarks/bench_api_concurrency.py --quick          # smoke run: 1k topics
    .venv/bin/python benchmarks/bench_api_concurrency.py --reseed         # rebuild the data first
    .venv/bin/python benchmarks/bench_api_concurrency.py --otlp-sink      # tracing on (OTLP to a local sink)

(run from the repository root with PYTHONPATH=.:benchmarks when the venv's install points
elsewhere). One run prints, in order:

1. The floor: per message, one embedding of a text the embedder has not seen (the server's
   embedder, built from the same Settings), one raw ``db.index.vector.queryNodes`` and one
   namespace-filtered full-text query against the same namespace, from this process; p50/p95
   of each part and of the total.
2. Per worker count (default: 1 and ``sheriff up``'s default, the usable CPUs): the real
   ``sheriff up --workers N --keep-neo4j`` in a subprocess on a free port (migrations once in the
   parent, N spawned workers each with its own container and model; ready when every worker's
   lifespan finished and /health answers); a warm-up (not measured), then a wait until the
   server's CPU is quiet (``settle``: each worker reads its namespace's passage copy in a
   background thread once asked, graph/vector_loads.py); sequential requests (one
   client), with the floor measured again right before and right after them (half the floor's
   messages each, other messages, the server up and idle); then C concurrent clients (threads, one keep-alive ``httpx.Client`` each, released
   together by a barrier) x R requests; then SIGTERM, timed until every process is gone.
   Printed per phase: latency p50/p95/p99/max (client side, HTTP included), the server's own
   build time (``timings_ms``), requests/s, errors by status (any non-200 answer or client-side
   exception; the first bodies are printed), deep-retrieval share per message kind, CPU seconds
   of the server tree, Neo4j, this client and the rest of the machine (from /proc) with server +
   Neo4j CPU per request, and RSS per worker process.
3. A summary against issue #13's targets (sequential p50 <= 40 ms, p95 <= 100 ms, p50 <= 3x the
   floor measured around that sequential phase: this machine's speed drifts by a fifth within
   minutes, so a floor taken a few minutes earlier moved the ratio by as much as the work did;
   the ratio to the run's first floor is printed beside it; 20 clients >= 30 requests/s, p95 <= 1 s, 0 errors; RSS per worker <= 500 MB) and the
   N-worker / 1-worker throughput ratio.

``--soak N`` instead runs N requests from the concurrent clients against one server (the last
--workers count), sampling every worker's RSS every 2 s, and prints RSS after the first 10% of
the requests (warm), at the end, the peak and the growth past warm-up.

Every request carries ``now`` = the data's fixed clock (2026-03-02 12:00 UTC) so "last week"
resolves into the seeded data on any day, and a ``session_id`` per client, new each run (the
suppression state is per session, in Neo4j, as for a real agent; with the fixed clock an old
run's sessions would never expire). Environment variables reach the server
(e.g. OMP_NUM_THREADS=1 to give torch one intra-op thread per call).

Message mix (seeded RNG): plain questions about the seeded subjects (35%), questions with time
phrases ("last week", "yesterday", "two weeks ago", "in February", ...; 30%: these fire the
relative-time trigger and run deep retrieval with a window), statements naming people and
topic aliases (25%: reintroduced-entity trigger), and small talk ("thanks!", 10%: class none).
Most non-small-talk messages end with a specific ("ticket #4821", "I owe Sam 120 euros") so
that, as with a real agent, nearly every message is new to the server (its embedder keeps an
LRU of text -> vector; repeats across requests would flatter the figures). The number of
distinct messages is printed.

Data: namespace ``bench-api-10k`` (``bench-api-<N>`` for other sizes), reused when it holds
exactly the expected topics, messages and mention links, rebuilt with --reseed (or when the
counts disagree). Topics come from the retrieval benchmark's generator
(``bench_retrieval.sentence_pool`` / ``make_topic``: 25 subjects x 10 verbs x 16 objects, first
and last seen spread over 120 days) and each gets the real MiniLM vector of its own one-liner.
The conversation is what a sleep would have left behind: per topic a user message stating the
one-liner, an assistant acknowledgement and a user follow-up at the topic's last_seen (3 N
messages in time order), each topic ``MENTIONED_IN`` its three messages, facts citing them,
~3 RELATES_TO edges per topic and a TopicEvent for ~10% of them, so light retrieval's message
evidence and deep retrieval's window, events and 1-hop expansion all have work to do.
The messages' passages (evidence by meaning) are written in this process before the floor
(``index_passages``): the seeded messages are appended, so they wait for a sleep worker, and
``sheriff up``'s would otherwise embed 30,000 of them while the requests are timed.
"""

from __future__ import annotations

import argparse
import http.server
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import httpx
from bench_retrieval import (
    FOLLOWUPS,
    NOW,
    OBJECTS,
    POOL_SIZE,
    QUESTIONS,
    SUBJECTS,
    make_topic,
    percentile,
    sentence_pool,
)
from neo4j import Driver

from api.serve import default_workers
from api.settings import Settings
from graph.cypher import query
from graph.db import connect
from graph.events import EventStore
from graph.fulltext import in_namespace, lucene_query
from graph.keys import ApiKeyStore
from graph.messages import MessageStore
from graph.migrations import apply_migrations
from graph.models import EdgeType, Fact, Message, Topic, TopicEvent, TopicTime
from graph.server import LocalNeo4j
from graph.topics import LinkRequest, TopicStore
from retrieval.embedding import MiniLMEmbedder

REPO = Path(__file__).resolve().parent.parent
WARMUP = 20
# in every session id: a run's sessions start empty (their suppression state, which every
# worker reads from Neo4j, would otherwise carry over from an earlier run: its ``now`` is fixed)
RUN = secrets.token_hex(4)
GROWTH_MB = 50  # soak: RSS growth past warm-up counted as "no growth"
ERROR_BODIES = 5

PEOPLE = ["Dana", "Sam", "Priya", "Jordan", "Alex", "Mel", "Grandma", "the accountant"]
OPENERS = ["", "Quick update: ", "Heads up, ", "So, ", "Just so you know, ", "Ugh, "]
ACKS = [
    "Noted. I'll keep {alias} in mind.",
    "Got it. Do you want a reminder about {object}?",
    "Understood, {alias} is on the list now.",
    "OK. Should I check back on {object} later this week?",
    "Thanks for the update on {subject}.",
]
TIME_QUESTIONS = [
    "what did we say about {subject} last week?",
    "anything new on {alias} since yesterday?",
    "what happened with {object} two weeks ago?",
    "what did I decide about {subject} in February?",
    "remind me what came up about {alias} last month",
    "did {person} reply about {object} yesterday?",
    "what was the plan for {subject} three days ago?",
    "what did we discuss over the weekend about {alias}?",
]
ENTITY_STATEMENTS = [
    "{person} just called about {alias}, {object} is still open.",
    "{person} thinks {subject} can wait until after payday.",
    "I'm meeting {person} tomorrow to go over {alias}.",
    "{person} sent a message about {object} for {alias}.",
    "Can you draft a note to {person} about {subject}?",
]
SMALL_TALK = ["thanks!", "ok", "great, thank you", "good morning", "cool", "nice"]
# specifics that make most messages unique, as a real agent's are (so the server's text ->
# vector cache only helps within a request); none is a time phrase, so the trigger mix holds
DETAILS = [
    " {person} needs it for ticket #{n}.",
    " I owe {person} {n} euros for it.",
    " Asking because {person} has quote {n} open.",
    " Reference number {n}, if that helps.",
]
KINDS = ("question", "time", "entity", "smalltalk")
KIND_WEIGHTS = (0.35, 0.30, 0.25, 0.10)


# -- data ----------------------------------------------------------------------------------------
@dataclass
class Seed:
    """Everything written for one namespace, generated before anything is written."""

    topics: list[Topic] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    mentions: list[dict[str, Any]] = field(default_factory=list)
    links: list[LinkRequest] = field(default_factory=list)
    events: list[TopicEvent] = field(default_factory=list)


def namespace_for(n: int) -> str:
    return f"bench-api-{n // 1000}k" if n % 1000 == 0 else f"bench-api-{n}"


def plan_topic(rng: random.Random, ns: str, pool: list[tuple[int, str, str]], seed: Seed) -> None:
    """One topic with the three messages it came from, its mention links and maybe an event."""
    p = rng.randrange(POOL_SIZE)
    topic = make_topic(rng, ns, pool, p)
    s, obj, _ = pool[p]
    subject, aliases = SUBJECTS[s]
    alias = rng.choice(aliases)
    first = topic.time.first_seen_at
    last = min(NOW, max(topic.time.last_seen_at, first + timedelta(minutes=1)))
    opener = rng.choice(OPENERS)
    stated = (
        topic.one_liner
        if not opener
        else opener + topic.one_liner[:1].lower() + topic.one_liner[1:]
    )
    followup = f"About {alias}: {rng.choice(FOLLOWUPS)}"
    ack = rng.choice(ACKS).format(alias=alias, object=obj, subject=subject)
    said = Message(namespace=ns, role="user", content=stated, at=first)
    acked = Message(namespace=ns, role="assistant", content=ack, at=first + timedelta(seconds=20))
    later = Message(namespace=ns, role="user", content=followup, at=last)
    facts = [
        Fact(text=topic.one_liner, at=first, source_message_ids=[said.message_id]),
        Fact(text=followup, at=last, source_message_ids=[later.message_id]),
    ]
    topic = topic.model_copy(
        update={"facts": facts, "time": TopicTime(first_seen_at=first, last_seen_at=last)}
    )
    seed.topics.append(topic)
    seed.messages += [said, acked, later]
    seed.mentions.append(
        {"topic_id": topic.topic_id, "message_ids": [m.message_id for m in (said, acked, later)]}
    )
    if rng.random() < 0.1:
        seed.events.append(
            TopicEvent(
                namespace=ns,
                topic_id=topic.topic_id,
                at=last,
                delta_summary=followup,
                source_message_ids=[later.message_id],
            )
        )


def plan(n: int, ns: str, edges: int) -> Seed:
    rng = random.Random(2026)
    pool = sentence_pool(rng)
    seed = Seed()
    for _ in range(n):
        plan_topic(rng, ns, pool, seed)
    ids = [t.topic_id for t in seed.topics]
    for i in range(n):
        for j in [j for j in rng.sample(range(n), edges + 1) if j != i][:edges]:
            delta = round(rng.uniform(0.5, 3), 2)
            seed.links.append(LinkRequest(ids[i], ids[j], EdgeType.RELATES_TO, delta=delta))
    seed.messages.sort(key=lambda m: m.at)  # the conversation's seq follows time
    return seed


def counts(driver: Driver, database: str, ns: str) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        "CALL { MATCH (t:Topic {namespace: $ns}) RETURN count(t) AS topics } "
        "CALL { MATCH (m:Message {namespace: $ns}) RETURN count(m) AS messages } "
        "CALL { MATCH (:Topic {namespace: $ns})-[r:MENTIONED_IN]->() RETURN count(r) AS mentions } "
        "CALL { MATCH (:Topic {namespace: $ns})-[r:RELATES_TO]->() RETURN count(r) AS edges } "
        "CALL { MATCH (e:TopicEvent {namespace: $ns}) RETURN count(e) AS events } "
        "RETURN topics, messages, mentions, edges, events",
        ns=ns,
        database_=database,
        routing_="r",
    )
    return {k: int(v) for k, v in dict(records[0]).items()}


def complete(found: dict[str, int], n: int) -> bool:
    """Events are written last, so a full count of everything before them plus some events
    means an earlier seeding run finished."""
    return (
        found["topics"] == n
        and found["messages"] == 3 * n
        and found["mentions"] == 3 * n
        and found["edges"] > 0
        and found["events"] > 0
    )


def delete_namespace(driver: Driver, database: str, ns: str) -> None:
    # CALL ... IN TRANSACTIONS needs an implicit (auto-commit) transaction
    with driver.session(database=database) as session:
        for label in ("TopicEvent", "Topic", "Message", "Conversation", "ApiKey"):
            session.run(
                f"MATCH (n:{label} {{namespace: $ns}}) "
                "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
                ns=ns,
            ).consume()


def seed_namespace(driver: Driver, database: str, ns: str, n: int, edges: int) -> None:
    """Write the planned topics (real MiniLM vectors of their one-liners), the conversation,
    mention links, edges and events, in that order."""
    started = time.perf_counter()
    seed = plan(n, ns, edges)
    embedder = MiniLMEmbedder()
    texts = sorted({t.semantic_text() for t in seed.topics})
    by_text = dict(zip(texts, embedder.embed(texts), strict=True))
    print(
        f"  embedded {len(texts):,} distinct one-liners with {embedder.model_name} in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    messages, topics, events = (
        MessageStore(driver, database),
        TopicStore(driver, database),
        EventStore(driver, database),
    )
    for start in range(0, len(seed.messages), 2000):
        messages.append(ns, seed.messages[start : start + 2000])
    for start in range(0, n, 1000):
        chunk = seed.topics[start : start + 1000]
        topics.create(chunk, [by_text[t.semantic_text()] for t in chunk], NOW)
    for start in range(0, n, 2000):
        driver.execute_query(
            query("link_topic_messages"),
            namespace=ns,
            rows=seed.mentions[start : start + 2000],
            database_=database,
        )
    for start in range(0, len(seed.links), 5000):
        topics.link(ns, seed.links[start : start + 5000], NOW)
    for start in range(0, len(seed.events), 1000):
        events.record(ns, seed.events[start : start + 1000])
    driver.execute_query("CALL db.awaitIndexes(600)", database_=database)
    print(f"  seeded in {time.perf_counter() - started:.0f} s", flush=True)


def ensure_data(args: argparse.Namespace, driver: Driver, database: str, ns: str) -> None:
    found = counts(driver, database, ns)
    if not args.reseed and complete(found, args.topics):
        print(f"data: namespace {ns} reused: " + ", ".join(f"{v:,} {k}" for k, v in found.items()))
        return
    why = "--reseed" if args.reseed else f"found {found}"
    print(f"data: seeding namespace {ns} ({why})", flush=True)
    delete_namespace(driver, database, ns)
    seed_namespace(driver, database, ns, args.topics, args.edges)
    found = counts(driver, database, ns)
    print("data: " + ", ".join(f"{v:,} {k}" for k, v in found.items()))


# -- requests ------------------------------------------------------------------------------------
def request_texts(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """``n`` (kind, message) pairs in the realistic mix."""
    out = []
    for kind in rng.choices(KINDS, KIND_WEIGHTS, k=n):
        subject, aliases = rng.choice(SUBJECTS)
        fill = {
            "subject": subject,
            "alias": rng.choice(aliases),
            "object": rng.choice(OBJECTS),
            "person": rng.choice(PEOPLE),
        }
        if kind == "question":
            text = rng.choice(QUESTIONS).format(**fill)
        elif kind == "time":
            text = rng.choice(TIME_QUESTIONS).format(**fill)
        elif kind == "entity":
            text = rng.choice(ENTITY_STATEMENTS).format(**fill)
        else:
            text = rng.choice(SMALL_TALK)
        if kind != "smalltalk" and rng.random() < 0.8:
            text += "" if text.endswith(("?", ".", "!")) else "."
            text += rng.choice(DETAILS).format(person=rng.choice(PEOPLE), n=rng.randint(100, 9999))
        out.append((kind, text[:1].upper() + text[1:]))
    return out


@dataclass
class Outcome:
    kind: str
    ms: float
    status: str  # "200", "503", ... or the exception's class name
    deep: bool = False
    server_ms: float | None = None
    body: str = ""
    steps: dict[str, float] = field(default_factory=dict)  # the answer's timings_ms
    triggers: tuple[str, ...] = ()  # the answer's triggers ("relative_time: 'last week'", ...)


def send(http: httpx.Client, kind: str, text: str, session: str, budget: int = 1000) -> Outcome:
    body = {"message": text, "now": NOW.isoformat(), "session_id": session, "budget": budget}
    started = time.perf_counter()
    try:
        response = http.post("/v1/context", json=body)
        ms = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            return Outcome(kind, ms, str(response.status_code), body=response.text[:300])
        data = response.json()
        steps = {k: float(v) for k, v in data["timings_ms"].items()}
        return Outcome(
            kind, ms, "200", bool(data["deep"]), steps["total"], steps=steps,
            triggers=tuple(data.get("triggers") or ()),
        )  # fmt: skip
    except Exception as exc:  # any failure is an error to count, never a crash of the run
        ms = (time.perf_counter() - started) * 1000
        return Outcome(kind, ms, type(exc).__name__, body=str(exc)[:300])


# -- CPU accounting from /proc (Linux; None elsewhere) -------------------------------------------
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state is [0], ppid [1])."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (uvicorn's worker processes when --workers > 1)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _stat(int(entry.name))
        if fields is not None:
            children[int(fields[1])].append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo += children.get(current, [])
    return out


def process_cpu_s(pid: int | None, tree: bool = False) -> float | None:
    """User + system CPU seconds of one process (all its threads), or of its whole tree."""
    if pid is None:
        return None
    total, found = 0.0, False
    for each in process_tree(pid) if tree else [pid]:
        fields = _stat(each)
        if fields is not None:
            total += (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
            found = True
    return total if found else None


def machine_busy_s() -> float | None:
    try:
        line = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return None
    ticks = [int(x) for x in line[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / TICK


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants (every worker loads its own model)."""
    total = 0.0
    for each in process_tree(pid):
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


@dataclass
class CpuSample:
    server: float | None
    neo4j: float | None
    client: float
    machine: float | None

    @staticmethod
    def take(server_pid: int, neo4j_pid: int | None) -> CpuSample:
        t = os.times()
        return CpuSample(
            process_cpu_s(server_pid, tree=True),
            process_cpu_s(neo4j_pid),
            t.user + t.system,
            machine_busy_s(),
        )


def cpu_line(before: CpuSample, after: CpuSample, wall: float, requests: int) -> str:
    """CPU seconds per process over the phase, as cores and (server, Neo4j) per request:
    CPU time per request is steadier than wall time on a shared machine."""

    def delta(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    parts = {
        "server": delta(before.server, after.server),
        "neo4j": delta(before.neo4j, after.neo4j),
        "bench client": after.client - before.client,
    }
    machine = delta(before.machine, after.machine)
    if machine is not None:
        parts["everything else"] = machine - sum(v for v in parts.values() if v is not None)
    per_request = ("server", "neo4j")
    text = ", ".join(
        f"{k} {v:.0f} s ({v / wall:.2f} cores"
        + (f", {1000 * v / max(requests, 1):.1f} ms/request)" if k in per_request else ")")
        for k, v in parts.items()
        if v is not None
    )
    cores = os.cpu_count() or 1
    if machine is not None:
        text += f"; machine busy {100 * machine / (wall * cores):.0f}% of {cores} CPUs"
    return text


# -- the server ----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _rss_one(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class ApiServer:
    """``sheriff up --workers N`` in a subprocess on a free port: the real start-up (migrations
    once in the parent, N spawned workers each with its own container and model)."""

    def __init__(self, log: TextIO, log_path: Path, workers: int) -> None:
        self.workers = workers
        self.log_path = log_path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_mark = 0

    def start(self, timeout_s: float = 600.0) -> None:
        cmd = [sys.executable, "-c", "from api.cli import main; main()",
               "up", "--workers", str(self.workers), "--keep-neo4j"]  # fmt: skip
        env = os.environ | {"SHERIFF_API_PORT": str(self.port)}
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

    def _started(self) -> int:
        """Workers whose lifespan finished (schema checked, model loaded)."""
        self.log.flush()
        with self.log_path.open() as fh:
            fh.seek(self.log_mark)
            return fh.read().count("Application startup complete")

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def worker_pids(self) -> list[int]:
        """The processes serving requests: the spawned workers, or ``sheriff up`` itself when
        it runs one worker (multiprocessing's resource tracker is not one)."""
        assert self.proc is not None
        if self.workers == 1:
            return [self.proc.pid]
        tree = process_tree(self.proc.pid)[1:]
        return [p for p in tree if "spawn_main" in _cmdline(p)]

    def rss_per_worker(self) -> list[float]:
        return [_rss_one(p) for p in self.worker_pids()]

    def stop(self) -> float:
        """SIGTERM, as an operator would; the seconds until every process is gone."""
        if self.proc is None or self.proc.poll() is not None:
            return 0.0
        started = time.perf_counter()
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        return time.perf_counter() - started


# -- the floor -----------------------------------------------------------------------------------
FLOOR_VECTOR = (
    "CALL db.index.vector.queryNodes('topic_embedding_ns', $k, $vector) YIELD node, score "
    "WHERE node.namespace = $ns RETURN node.topic_id AS id, score"
)
FLOOR_TEXT = (
    "CALL db.index.fulltext.queryNodes('topic_text', $q, {limit: $k}) YIELD node, score "
    "RETURN node.topic_id AS id, score"
)


def floor_embedder(settings: Settings, driver: Driver) -> Any:
    """The server's embedder, built from the same Settings, warmed up."""
    from api.container import Container

    embedder = Container(settings, driver=driver).embedder
    embedder.embed(["warm-up"])
    return embedder


def index_passages(embedder: Any, driver: Driver, database: str, ns: str) -> None:
    """Write every pending passage of ``ns`` before anything is measured, as the server's
    sleep worker would have long before a real tenant's question: otherwise that worker (in
    ``sheriff up``'s parent) embeds the seeded conversation while the requests are timed, and
    the evidence found by meaning changes from one request to the next. The same for the walk
    of the passage backfill (migration 021)."""
    from graph.passages import PassageStore
    from retrieval.passage_index import PassageIndexer

    started = time.perf_counter()
    indexer, done = PassageIndexer(PassageStore(driver, database), embedder), 0
    # the backfill's walk of the namespace too (a store migrated to 021 while holding it)
    while (written := indexer.run(ns)) or indexer.backfill_once(ns):
        done += written
    records, _, _ = driver.execute_query(
        "MATCH (p:Passage {namespace: $ns}) RETURN count(p) AS n", ns=ns, database_=database
    )
    print(f"data: {done:,} pending messages' passages written in "
          f"{time.perf_counter() - started:.0f} s; {records[0]['n']:,} passages")  # fmt: skip


def measure_floor(
    embedder: Any, settings: Settings, driver: Driver, ns: str, texts: list[tuple[str, str]],
    label: str = "floor",
) -> list[float]:  # fmt: skip
    """Per message: one embedding (the server's embedder, a text it has not seen) + one raw
    vector-index query + one full-text query, in this process; prints p50/p95 per part and
    returns the totals (ms)."""
    parts: dict[str, list[float]] = {"embed": [], "vector": [], "fulltext": [], "total": []}
    for _, text in texts:
        t0 = time.perf_counter()
        vector = embedder.embed([text])[0]
        t1 = time.perf_counter()
        driver.execute_query(FLOOR_VECTOR, k=8, vector=vector, ns=ns,
                             database_=settings.neo4j_database, routing_="r")  # fmt: skip
        t2 = time.perf_counter()
        # the light path's shape: exact words (fuzzy "word~" terms cost 5-10x: issue #13's
        # "suspiciously slow" floor full-text of 56 ms was fuzzy, docs/performance.md)
        lucene = in_namespace(ns, lucene_query(text, fuzzy=False) or "none")
        driver.execute_query(FLOOR_TEXT, k=8, q=lucene,
                             database_=settings.neo4j_database, routing_="r")  # fmt: skip
        t3 = time.perf_counter()
        for name, ms in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
            parts[name].append(ms * 1000)
    print(f"\n== {label}: {len(texts)} messages, one at a time (embedding + vector + full-text) ==")
    print(
        "  "
        + "  ".join(f"{k} p50 {p(v, 50):.1f} / p95 {p(v, 95):.1f} ms" for k, v in parts.items())
    )
    return parts["total"]


# -- phases --------------------------------------------------------------------------------------
@dataclass
class Phase:
    name: str
    clients: int
    outcomes: list[Outcome]
    wall_s: float
    cpu: str
    server_cpu_ms: float | None = None  # server + Neo4j CPU per request

    @property
    def ok(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "200"]

    @property
    def errors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status != "200"]


def run_phase(
    name: str,
    server: ApiServer,
    key: str,
    plans: Sequence[list[tuple[str, str]]],
    neo4j_pid: int | None,
    outcomes: list[Outcome] | None = None,
) -> Phase:
    """One client thread per plan, released together; each sends its plan's messages in turn
    (appended to ``outcomes`` as they finish, so a sampler can follow the progress)."""
    assert server.proc is not None
    outcomes = [] if outcomes is None else outcomes
    barrier = threading.Barrier(len(plans) + 1)

    def client(i: int, texts: list[tuple[str, str]]) -> None:
        headers = {"Authorization": f"Bearer {key}"}
        limits = httpx.Limits(max_connections=1)
        with httpx.Client(base_url=server.url, headers=headers, timeout=120, limits=limits) as http:
            barrier.wait()
            for kind, text in texts:
                outcomes.append(send(http, kind, text, f"{name}-{i}-{RUN}"))

    threads = [
        threading.Thread(target=client, args=(i, texts), daemon=True)
        for i, texts in enumerate(plans)
    ]
    for t in threads:
        t.start()
    barrier.wait()
    before = CpuSample.take(server.proc.pid, neo4j_pid)
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    after = CpuSample.take(server.proc.pid, neo4j_pid)
    n = sum(len(texts) for texts in plans)
    spent = [d for d in (_delta(before.server, after.server), _delta(before.neo4j, after.neo4j))]
    per_request = 1000 * sum(x for x in spent if x is not None) / max(n, 1)
    return Phase(name, len(plans), outcomes, wall, cpu_line(before, after, wall, n), per_request)


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def p(values: Sequence[float], q: float) -> float:
    return statistics.median(values) if q == 50 else percentile(values, q)


def step_line(ok: list[Outcome]) -> str:
    """p50 of the context builder's own steps: triggers (tail, sleep history, known names),
    retrieve (topic search + message evidence) and the rest (candidates, packing, mark used,
    suppression, skill routing, and a second, deep retrieval when a trigger fires late)."""

    def rest(o: Outcome) -> float:
        return o.steps["total"] - o.steps.get("triggers", 0.0) - o.steps.get("retrieve", 0.0)

    parts = {
        "triggers": [o.steps.get("triggers", 0.0) for o in ok],
        "retrieve": [o.steps.get("retrieve", 0.0) for o in ok],
        "rest": [rest(o) for o in ok],
    }
    return "  ".join(f"{k} {p(v, 50):.1f} ms" for k, v in parts.items())


def report(phase: Phase) -> None:
    ok, errors = phase.ok, phase.errors
    total = len(phase.outcomes)
    print(
        f"\n== {phase.name}: {phase.clients} client(s) x {total // phase.clients} requests "
        f"= {total:,} in {phase.wall_s:.1f} s =="
    )
    if ok:
        ms = [o.ms for o in ok]
        server_ms = [o.server_ms for o in ok if o.server_ms is not None]
        print(
            f"  latency (client, HTTP incl.)  p50 {p(ms, 50):7.1f} ms  p95 {p(ms, 95):7.1f} ms  "
            f"p99 {p(ms, 99):7.1f} ms  max {max(ms):7.1f} ms"
        )
        print(
            f"  server build (timings_ms)     p50 {p(server_ms, 50):7.1f} ms  "
            f"p95 {p(server_ms, 95):7.1f} ms"
        )
        print(f"  server steps p50              {step_line(ok)}")
        print(f"  throughput                    {len(ok) / phase.wall_s:.1f} requests/s")
        deep = [o for o in ok if o.deep]
        print(
            f"  deep retrieval                {100 * len(deep) / len(ok):.1f}% of requests "
            f"({len(deep):,} of {len(ok):,}); by first trigger: {trigger_families(deep)}"
        )
    by_status = Counter(o.status for o in phase.outcomes)
    print(f"  errors                        {len(errors)}  (by status: {dict(by_status)})")
    for o in errors[:ERROR_BODIES]:
        print(f"    {o.status} after {o.ms:.0f} ms on {o.kind!r}: {o.body}")
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in ok:
        groups[o.kind].append(o)
    for kind in KINDS:
        g = groups.get(kind)
        if g:
            ms = [o.ms for o in g]
            deep = 100 * sum(o.deep for o in g) / len(g)
            print(
                f"    {kind:10s} {len(g):6,}  deep {deep:4.0f}%  p50 {p(ms, 50):7.1f} ms  "
                f"p95 {p(ms, 95):7.1f} ms"
            )
    print(f"  CPU during the phase: {phase.cpu}")


# -- runs ----------------------------------------------------------------------------------------
@dataclass
class Run:
    """One server (``workers`` processes): its sequential and concurrent phases."""

    workers: int
    sequential: Phase
    concurrent: Phase
    rss: list[float]
    ready_s: float
    stop_s: float = 0.0
    # the floor measured right before and right after the sequential phase, server up and
    # idle: the machine's speed drifts by a fifth within minutes here, so the phase is set
    # against the floor of its own minute (the run's first floor is printed beside it)
    floor: list[float] = field(default_factory=list)


def run_server(args: argparse.Namespace, workers: int, key: str, neo4j_pid: int | None,
               log: TextIO, log_path: Path,
               floor: Callable[[str, int], list[float]] | None = None) -> Run:  # fmt: skip
    """Start ``sheriff up --workers N``, warm it up, run both phases, stop it (SIGTERM);
    ``floor`` (a label and a seed: the floor's totals) is measured right before and after the
    sequential phase."""
    rng = random.Random(7)  # the same messages for every worker count
    warmup = [request_texts(rng, WARMUP * workers)]
    sequential = [request_texts(rng, args.sequential)]
    concurrent = [request_texts(rng, args.requests) for _ in range(args.clients)]
    server = ApiServer(log, log_path, workers)
    started = time.perf_counter()
    try:
        server.start()
        ready = time.perf_counter() - started
        print(f"\n#### sheriff up --workers {workers}: ready in {ready:.1f} s, worker pids "
              f"{server.worker_pids()}, RSS {_mb(server.rss_per_worker())}")  # fmt: skip
        warm = run_phase("warm-up", server, key, warmup, neo4j_pid)
        print(f"warm-up: {len(warm.outcomes)} requests, {len(warm.errors)} errors (not measured)")
        quiet = settle(server)
        print(f"settled: the server's CPU quiet {quiet:.1f} s after the warm-up (each worker's "
              f"passage copy read in the background, graph/vector_loads.py)")  # fmt: skip
        around = (
            floor(f"floor before the sequential phase, {workers} worker(s)", 1) if floor else []
        )
        seq = run_phase(f"sequential, {workers} worker(s)", server, key, sequential, neo4j_pid)
        if floor:
            around += floor(f"floor after the sequential phase, {workers} worker(s)", 2)
        report(seq)
        conc = run_phase(f"concurrent, {workers} worker(s)", server, key, concurrent, neo4j_pid)
        report(conc)
        run = Run(workers, seq, conc, server.rss_per_worker(), ready, floor=around)
        print(f"  RSS per worker after the run: {_mb(run.rss)}")
    finally:
        stop = server.stop()
    run.stop_s = stop
    print(f"  SIGTERM: every process gone in {stop:.1f} s")
    return run


def settle(server: ApiServer, idle: float = 0.05, most_s: float = 180.0) -> float:
    """Wait until the server's process tree used under ``idle`` of a core in two seconds in a
    row (at most ``most_s``): the workers read their namespace's passage copy in a background
    thread once a request asks for it (graph/vector_loads.py), and the phases measure the
    steady state after it. The seconds waited."""
    assert server.proc is not None
    started, calm = time.perf_counter(), 0
    before = process_cpu_s(server.proc.pid, tree=True)
    while calm < 2 and time.perf_counter() - started < most_s:
        time.sleep(1.0)
        after = process_cpu_s(server.proc.pid, tree=True)
        used = _delta(before, after)
        calm = calm + 1 if used is not None and used < idle else 0
        before = after
    return time.perf_counter() - started


def _mb(values: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:.0f}" for v in values) + "] MB"


def soak(args: argparse.Namespace, key: str, neo4j_pid: int | None, log: TextIO,
         log_path: Path) -> None:  # fmt: skip
    """``--soak N``: N requests from the concurrent clients against one server, RSS of every
    worker sampled every 2 s; growth is the end against the sample after the first 10%."""
    workers = args.workers[-1]
    rng = random.Random(11)
    per_client = max(1, args.soak // args.clients)
    plans = [request_texts(rng, per_client) for _ in range(args.clients)]
    server = ApiServer(log, log_path, workers)
    samples: list[tuple[int, list[float]]] = []
    outcomes: list[Outcome] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(2.0):
            samples.append((len(outcomes), server.rss_per_worker()))

    try:
        server.start()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        phase = run_phase(f"soak, {workers} worker(s)", server, key, plans, neo4j_pid, outcomes)
        done.set()
        sampler.join()
        samples.append((len(outcomes), server.rss_per_worker()))
    finally:
        server.stop()
    report(phase)
    warm = next((s for s in samples if s[0] >= len(outcomes) // 10), samples[0])
    print(f"\n== RSS over {len(outcomes):,} requests ({len(samples)} samples) ==")
    print(f"  after {warm[0]:,} requests (warm): {_mb(warm[1])}")
    print(f"  at the end:                {_mb(samples[-1][1])}")
    peak = [max(s[1][i] for s in samples if len(s[1]) > i) for i in range(len(samples[-1][1]))]
    print(f"  peak:                      {_mb(peak)}")
    growth = [e - w for e, w in zip(samples[-1][1], warm[1], strict=False)]
    print(f"  growth past warm-up:       {_mb(growth)}")
    # the bounded caches may still fill after warm-up: 8,192 cached vectors are ~12 MB
    print(f"  RSS per worker <= 500 MB: {'PASS' if max(peak, default=0) <= 500 else 'FAIL'}; "
          f"growth <= {GROWTH_MB} MB: {'PASS' if max(growth, default=0) <= GROWTH_MB else 'FAIL'}")  # fmt: skip


def trigger_families(deep: Sequence[Outcome]) -> str:
    """How many deep answers each trigger family named first ("relative_time 1,029, ..."; a
    deep answer naming none would show as "none", which only an explicit request may)."""
    first = Counter(o.triggers[0].split(":", 1)[0] if o.triggers else "none" for o in deep)
    return ", ".join(f"{name} {n:,}" for name, n in first.most_common()) or "-"


def summary(floor: list[float], runs: list[Run]) -> None:
    """The issue's targets against this run's figures."""
    print("\n== summary (targets of issue #13; compare ratios on a busy machine) ==")
    first = p(floor, 50)
    print(f"  floor p50 {first:.1f} ms, p95 {p(floor, 95):.1f} ms (the run's first)")
    for run in runs:
        seq, conc = [o.ms for o in run.sequential.ok], [o.ms for o in run.concurrent.ok]
        # the sequential phase against the floor of its own minute (before and after it)
        fl = p(run.floor, 50) if run.floor else first
        errors = len(run.sequential.errors) + len(run.concurrent.errors)
        deep = [o.deep for o in run.concurrent.ok]
        clients = run.concurrent.clients  # the targets are for 20
        checks = {
            "sequential p50 <= 40 ms": bool(seq) and p(seq, 50) <= 40,
            "sequential p95 <= 100 ms": bool(seq) and p(seq, 95) <= 100,
            "sequential p50 <= 3x floor": bool(seq) and p(seq, 50) <= 3 * fl,
            f"{clients} clients >= 30 req/s": len(conc) / run.concurrent.wall_s >= 30,
            f"{clients} clients p95 <= 1 s": bool(conc) and p(conc, 95) <= 1000,
            "0 errors": errors == 0,
            "RSS per worker <= 500 MB": max(run.rss, default=0) <= 500,
        }
        print(
            f"  {run.workers} worker(s): sequential p50 {p(seq, 50) if seq else 0:.1f} ms "
            f"({p(seq, 50) / fl if seq and fl else 0:.2f}x the floor around it, {fl:.1f} ms; "
            f"{p(seq, 50) / first if seq and first else 0:.2f}x the first) p95 "
            f"{p(seq, 95) if seq else 0:.1f}"
            f" ms; concurrent {len(conc) / run.concurrent.wall_s:.1f} req/s, p50/p95/p99 "
            f"{p(conc, 50) if conc else 0:.0f}/{p(conc, 95) if conc else 0:.0f}/"
            f"{p(conc, 99) if conc else 0:.0f} ms; CPU/request (server + Neo4j) sequential "
            f"{run.sequential.server_cpu_ms or 0:.1f} ms, concurrent "
            f"{run.concurrent.server_cpu_ms or 0:.1f} ms; deep "
            f"{100 * sum(deep) / max(len(deep), 1):.1f}%; RSS {_mb(run.rss)}; errors {errors}"
        )
        print("    " + "  ".join(f"{k}: {'PASS' if v else 'FAIL'}" for k, v in checks.items()))
    if len(runs) > 1 and runs[0].concurrent.ok:
        one, many = runs[0].concurrent, runs[-1].concurrent
        print(f"  {runs[-1].workers} workers / 1 worker throughput: "
              f"{(len(many.ok) / many.wall_s) / (len(one.ok) / one.wall_s):.2f}x")  # fmt: skip


class OtlpSink:
    """``--otlp-sink``: a local OTLP/HTTP trace receiver (threads of this process) that counts
    the exports, spans and bytes it gets; the servers started afterwards export to it
    (``OTEL_EXPORTER_OTLP_ENDPOINT`` in the environment they inherit), so tracing costs them
    what it costs against a real collector: spans, batching, protobuf, HTTP."""

    def __init__(self, server: http.server.ThreadingHTTPServer) -> None:
        self.server = server
        self.exports = self.spans = self.bytes = 0
        self.lock = threading.Lock()

    @classmethod
    def start(cls) -> OtlpSink:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        sink: OtlpSink

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                got = ExportTraceServiceRequest.FromString(body)
                n = sum(len(s.spans) for r in got.resource_spans for s in r.scope_spans)
                with sink.lock:
                    sink.exports, sink.spans, sink.bytes = (
                        sink.exports + 1,
                        sink.spans + n,
                        sink.bytes + len(body),
                    )
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        sink = cls(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        threading.Thread(target=sink.server.serve_forever, daemon=True).start()
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{sink.server.server_port}"
        os.environ.setdefault("OTEL_SERVICE_NAME", "sheriff-bench")
        print(f"tracing on: OTLP http/protobuf to {os.environ['OTEL_EXPORTER_OTLP_ENDPOINT']}")
        return sink

    def report(self, requests: int) -> str:
        with self.lock:
            return (
                f"OTLP sink: {self.exports:,} exports, {self.spans:,} spans "
                f"({self.spans / max(requests, 1):.1f} per request of {requests:,}), "
                f"{self.bytes / 1e6:.1f} MB"
            )

    def stop(self) -> None:
        self.server.shutdown()
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)


# -- main ----------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, help="concurrent clients (default 20; quick 4)")
    parser.add_argument("--requests", type=int, help="requests per client (default 100; quick 10)")
    parser.add_argument(
        "--topics", type=int, help="topics in the namespace (default 10000; quick 1000)"
    )
    parser.add_argument(
        "--sequential", type=int, help="sequential requests per server (default 200; quick 20)"
    )
    parser.add_argument("--floor", type=int, help="floor messages (default 200; quick 20)")
    parser.add_argument(
        "--edges", type=int, default=3, help="RELATES_TO edges per topic when seeding"
    )
    parser.add_argument(
        "--workers", type=str, default=None,
        help="comma-separated worker counts, one server each (default: 1 and sheriff up's default)",
    )  # fmt: skip
    parser.add_argument(
        "--soak", type=int, default=0,
        help="instead: this many requests against one server (the last --workers), RSS sampled",
    )  # fmt: skip
    parser.add_argument("--reseed", action="store_true", help="delete and rebuild the namespace")
    parser.add_argument(
        "--otlp-sink", action="store_true",
        help="tracing on: the servers export OTLP http/protobuf to a local sink that counts spans",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="smoke run: 1k topics, 4 x 10")
    args = parser.parse_args()
    defaults = {"clients": 20, "requests": 100, "topics": 10_000, "sequential": 200, "floor": 200}
    quick = {"clients": 4, "requests": 10, "topics": 1_000, "sequential": 20, "floor": 20}
    for name, value in (quick if args.quick else defaults).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    counts = [1, default_workers()] if args.workers is None else args.workers.split(",")
    args.workers = list(dict.fromkeys(int(c) for c in counts))
    return args


def main() -> None:
    args = parse_args()
    settings = Settings()
    database = settings.neo4j_database
    driver = connect(*settings.connection())
    neo4j_pid = (
        LocalNeo4j(settings.server_config()).running_pid() if settings.uses_managed_server else None
    )
    apply_migrations(driver, datetime.now(UTC), database)
    ns = namespace_for(args.topics)
    ensure_data(args, driver, database, ns)
    keys = ApiKeyStore(driver, database)
    record, key = keys.create(ns, "bench_api_concurrency", datetime.now(UTC))
    print(f"machine: {os.cpu_count()} CPUs, load average "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()))  # fmt: skip
    log_path = Path(tempfile.gettempdir()) / f"bench-api-{os.getpid()}.log"
    sink = OtlpSink.start() if args.otlp_sink else None
    try:
        with log_path.open("w") as log:
            if args.soak:
                soak(args, key, neo4j_pid, log, log_path)
                return
            embedder = floor_embedder(settings, driver)
            index_passages(embedder, driver, database, ns)
            floor = measure_floor(
                embedder, settings, driver, ns, request_texts(random.Random(3), args.floor)
            )

            def around(label: str, k: int, workers: int) -> list[float]:
                texts = request_texts(random.Random(1000 + 10 * workers + k), args.floor // 2)
                return measure_floor(embedder, settings, driver, ns, texts, label)

            runs = []
            for w in args.workers:

                def floor_of(label: str, k: int, w: int = w) -> list[float]:
                    return around(label, k, w)

                runs.append(run_server(args, w, key, neo4j_pid, log, log_path, floor_of))
            summary(floor, runs)
            if sink is not None:
                print(sink.report(sum(len(r.sequential.outcomes) + len(r.concurrent.outcomes)
                                      + WARMUP * r.workers for r in runs)))  # fmt: skip
            print(f"server log: {log_path}")
    finally:
        if sink is not None:
            sink.stop()
        keys.revoke(record.key_id, datetime.now(UTC))
        driver.close()


if __name__ == "__main__":
    main()
