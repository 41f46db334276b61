"""Where the ingest time of one LongMemEval haystack goes (issue #12, EVALUATION.md §5).

    .venv/bin/python benchmarks/bench_lme_ingest.py --question 853b0a1d \
        [--data LONGMEMEVAL.json] [--sessions N] \
        [--mode inline|background] [--profile OUT.pstats] [--topics] [--keep] \
        [--neo4j-pid PID] [--runtime onnx|onnx-int8] [--one-thread]

In process (no HTTP), against the Neo4j the settings name: the haystack's sessions are
appended in date order with ``Conversation.append`` (production policy), the sleeps run inside
the appends (``--mode inline``) or queued and run by a sleep worker before the next session
(``--mode background``, what ``sheriff eval longmemeval`` does), while the worker's passage
thread writes the new messages' passages beside them (``SleepWorker.writing_passages``; the
clock stops once the last is written). ``--one-thread`` and inline: the passages are written
after each session's sleeps instead (``PassageIndexer.run``, timed on their own as
``passages_s``).
Prints messages/s, the CPU of the calling thread and of the passage thread, sleeps,
topics per 100 messages, the sleeps' step times summed (``SleepSummary.step_ms``), CPU
seconds of this process and (``--neo4j-pid``, a private server's) of Neo4j, the embedding
calls, texts, characters, word pieces, the CPU the calling thread spent inside the model, and
repeated texts by caller (``repeats of X``: texts and word pieces caller X embedded first,
which the per-namespace vector cache then serves), the Cypher statements run (by query file) and the
transactions committed, and with ``--topics`` the topic list a user would see
(name, facts, touches, first and last seen). ``--runtime onnx-int8`` embeds with the int8
graph (docs/embedding.md). With ``--profile`` the run is under cProfile and
the 25 costliest functions (cumulative) are printed.
MiniLM is loaded before the clock starts. The machine is shared: compare runs taken together.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from api.container import Container
from api.longmemeval_data import Question, load_questions
from api.settings import Settings
from graph.db import drop_namespace
from sleepwake.conversation import IncomingMessage

DATA = Path("/work/shared/data/longmemeval/longmemeval-s-dev36.json")


class CountingEmbedder:
    """Wraps the container's embedder: how many calls and texts (and characters) a run embeds."""

    def __init__(self, inner: object, counts: CountingEmbedder | None = None) -> None:
        self.inner = inner
        self.counts = counts or self  # another counter's totals (the passages' own embedder)
        self.lock = threading.Lock()  # the worker's two threads embed at once
        self.model_name = inner.model_name  # type: ignore[attr-defined]
        self.dimensions = inner.dimensions  # type: ignore[attr-defined]
        self.calls = 0
        self.texts = 0
        self.chars = 0
        self.seconds = 0.0
        self.cpu = 0.0  # CPU seconds of the calling thread inside the model (1 thread: all of it)
        self.by_caller: Counter[str] = Counter()  # "caller: texts" -> texts, chars, seconds
        self.seen: dict[str, str] = {}  # every text embedded so far -> its first caller
        self.tokenizer = _tokenizer()

    def reset(self) -> None:
        self.calls = self.texts = self.chars = 0
        self.seconds = self.cpu = 0.0
        self.by_caller.clear()
        self.seen.clear()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        chars = sum(len(t) for t in texts)
        started, cpu = time.perf_counter(), time.thread_time()
        vectors: list[list[float]] = self.inner.embed(texts)  # type: ignore[attr-defined]
        seconds, cpu = time.perf_counter() - started, time.thread_time() - cpu
        with self.counts.lock:
            self.counts._count(texts, chars, seconds, cpu, sys._getframe(1).f_code.co_name)
        return vectors

    def _count(
        self, texts: Sequence[str], chars: int, seconds: float, cpu: float, caller: str
    ) -> None:
        self.calls += 1
        self.texts += len(texts)
        self.chars += chars
        self.seconds += seconds
        self.cpu += cpu
        self.by_caller[f"{caller} texts"] += len(texts)
        self.by_caller[f"{caller} chars"] += chars
        self.by_caller[f"{caller} ms"] += round(seconds * 1000)
        self.by_caller[f"{caller} cpu_ms"] += round(cpu * 1000)
        # word pieces (truncated as the model reads them): what the model's time follows
        counts = [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]
        self.by_caller[f"{caller} pieces"] += sum(counts)
        self.by_caller[f"{caller} repeats"] += sum(1 for t in texts if t in self.seen)
        # a text another caller embedded first: what one shared cache saves (texts, pieces)
        for text, n in zip(texts, counts, strict=True):
            if (first := self.seen.get(text, caller)) != caller:
                self.by_caller[f"{caller} repeats of {first}"] += 1
                self.by_caller[f"{caller} repeats of {first} pieces"] += n
        self.seen.update((t, caller) for t in texts if t not in self.seen)


def _tokenizer() -> Any:
    """MiniLM's word-piece tokenizer, truncating at the model's 256 pieces as it reads."""
    from tokenizers import Tokenizer

    from retrieval.minilm import MAX_SEQ_LENGTH, weights_dir

    tokenizer = Tokenizer.from_file(str(weights_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    return tokenizer


class QueryCounter:
    """Counts the Cypher statements the run sends (by ``cypher/queries`` file) and the
    transactions it commits, by wrapping the driver's ``run`` and ``commit`` (a benchmark only:
    every round trip of the product goes through these)."""

    def __init__(self) -> None:
        folder = Path(__file__).resolve().parents[1] / "cypher" / "queries"
        self.names = {p.read_text(encoding="utf-8"): p.stem for p in folder.glob("*.cypher")}
        self.statements: Counter[str] = Counter()
        self.commits = 0

    def install(self) -> None:
        """Wrap ``Transaction.run``, ``Session.run`` and the commit of a transaction."""
        from neo4j._sync.work.session import Session
        from neo4j._sync.work.transaction import TransactionBase

        counter = self
        tx_run, session_run, commit = TransactionBase.run, Session.run, TransactionBase._commit

        def run_in_tx(tx: object, text: str, *args: object, **kwargs: object) -> object:
            counter.statements[counter.names.get(str(text), "other")] += 1
            return tx_run(tx, text, *args, **kwargs)  # type: ignore[arg-type]

        def run_alone(session: object, text: str, *args: object, **kwargs: object) -> object:
            counter.statements[counter.names.get(str(text), "other")] += 1
            counter.commits += 1
            return session_run(session, text, *args, **kwargs)  # type: ignore[arg-type]

        def commit_tx(tx: object) -> object:
            counter.commits += 1
            return commit(tx)  # type: ignore[arg-type]

        TransactionBase.run = run_in_tx  # type: ignore[method-assign,assignment]
        Session.run = run_alone  # type: ignore[method-assign,assignment]
        TransactionBase._commit = commit_tx  # type: ignore[method-assign]

    def reset(self) -> None:
        self.statements.clear()
        self.commits = 0


def process_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux /proc); 0 if None."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ingest(
    container: Container,
    ns: str,
    question: Question,
    sessions: int | None,
    neo4j_pid: int | None,
    one_thread: bool = False,
) -> dict:
    """Append the haystack session by session, running queued sleeps; the figures."""
    steps: Counter[str] = Counter()
    sleeps = messages = 0
    append_cpu = 0.0  # Neo4j's CPU during the appends (the rest: sleeps and their queue)
    passages_msgs, passages_s, passages_cpu = 0, 0.0, 0.0  # the passage indexer's share
    # inline, the sleeps run inside the appends and nothing is queued: no worker, so its queue
    # polls are not counted as the product's round trips
    inline = container.settings.sleep_mode == "inline"
    worker = None if inline else container.sleep_worker(namespace=ns)
    beside = worker is not None and not one_thread  # the worker's passage thread
    writer_cpu = [0.0]  # CPU seconds of the passage thread's rounds
    if beside:
        index = worker.index_passages  # type: ignore[union-attr]

        def timed() -> int:
            mark = time.thread_time()
            try:
                return index()
            finally:  # the passage thread's (the last rounds run in this thread)
                if threading.current_thread() is not threading.main_thread():
                    writer_cpu[0] += time.thread_time() - mark

        worker.index_passages = timed  # type: ignore[method-assign,union-attr]
    main_cpu = time.thread_time()
    cpu, server_cpu = time.process_time(), process_cpu(neo4j_pid)
    started = time.perf_counter()
    # background: the worker's passage thread writes the passages while the sessions arrive
    # and sleep, as `sheriff eval longmemeval` runs it; the clock stops once all are written
    with worker.writing_passages() if beside else nullcontext():  # type: ignore[union-attr]
        for session in question.sessions[:sessions]:
            items = [
                IncomingMessage(role=t.role, content=t.content, at=t.at, external_id=t.external_id)  # type: ignore[arg-type]
                for t in session
            ]
            before = process_cpu(neo4j_pid)
            result = container.conversation.append(ns, items)
            append_cpu += process_cpu(neo4j_pid) - before
            messages += len(items)
            for summary in result.sleeps:
                sleeps += 1
                steps.update(summary.step_ms)
            # the queued sleeps, as `sheriff eval longmemeval`'s settle runs them
            while worker is not None and (run := worker.run_once()) is not None:
                sleeps += 1
                steps.update(run.step_ms or {})
            if beside:
                continue
            # the new messages' passages after the sleeps (inline, --one-thread), timed apart
            mark = time.perf_counter()
            before = process_cpu(neo4j_pid)
            passages_msgs += container.passage_indexer.run(ns)
            passages_s += time.perf_counter() - mark
            passages_cpu += process_cpu(neo4j_pid) - before
    seconds = time.perf_counter() - started
    cpu, server_cpu = time.process_time() - cpu, process_cpu(neo4j_pid) - server_cpu
    main_cpu = time.thread_time() - main_cpu
    topics = container.topics.list_live(ns)
    return {
        "messages": messages,
        "seconds": round(seconds, 1),
        "msg_per_s": round(messages / seconds, 2),
        "cpu_s": round(cpu, 1),
        # this thread (appends, sleeps; one-thread: passages too) and the passage thread: on
        # two free cores the wall time is at least the larger of the two
        "main_thread_cpu_s": round(main_cpu, 1),
        "passage_thread_cpu_s": round(writer_cpu[0], 1),
        "neo4j_cpu_s": round(server_cpu, 1),
        "neo4j_cpu_appends_s": round(append_cpu, 1),
        # what one dedicated core running both would give, whatever the machine's load
        "msg_per_cpu_s": round(messages / max(cpu + server_cpu, 1e-9), 2),
        "sleeps": sleeps,
        "passages_s": round(passages_s, 1),
        "passages_messages": passages_msgs,
        "neo4j_cpu_passages_s": round(passages_cpu, 1),
        "topics": len(topics),
        "topics_per_100": round(100 * len(topics) / max(messages, 1), 1),
        "steps_s": {k: round(v / 1000, 2) for k, v in steps.most_common()},
        "topic_list": topics,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--question", required=True)
    parser.add_argument("--sessions", type=int, default=None, help="only the first N sessions")
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--topics", action="store_true", help="list the topics")
    parser.add_argument("--keep", action="store_true", help="keep the namespace")
    parser.add_argument(
        "--mode",
        choices=["inline", "background"],
        default="inline",
        help="sleep mode: inline (as `sheriff eval longmemeval` runs) or background",
    )
    parser.add_argument(
        "--neo4j-pid", type=int, default=None, help="also count this Neo4j server's CPU"
    )
    parser.add_argument(
        "--runtime",
        choices=["onnx", "onnx-int8"],
        default="onnx",
        help="the embedding runtime (SHERIFF_EMBEDDING_RUNTIME)",
    )
    parser.add_argument(
        "--one-thread",
        action="store_true",
        help="background: the passages after the sleeps, not on a thread of their own",
    )
    args = parser.parse_args()
    (question,) = load_questions(args.data, only=[args.question])
    container = Container(Settings(sleep_mode=args.mode, embedding_runtime=args.runtime))
    container.migrate()
    counting = CountingEmbedder(container.embedder)
    if container.passage_embedder is not container.embedder:  # int8 passages (the default)
        passages = CountingEmbedder(container.passage_embedder, counting)
        passages.embed(["warm-up"])
        container.__dict__["passage_embedder"] = passages
    else:
        container.__dict__["passage_embedder"] = counting
    container.__dict__["embedder"] = counting  # before the sleeper is built: it counts too
    counting.embed(["warm-up"])
    counting.reset()
    queries = QueryCounter()
    queries.install()
    ns = f"bench-lme-{question.question_id}-{uuid.uuid4().hex[:6]}"
    profiler = cProfile.Profile() if args.profile else None
    load = os.getloadavg()
    try:
        queries.reset()
        if profiler:
            profiler.enable()
        figures = ingest(container, ns, question, args.sessions, args.neo4j_pid, args.one_thread)
        if profiler:
            profiler.disable()
        statements, commits = sum(queries.statements.values()), queries.commits
        top = queries.statements.most_common()
    finally:
        if not args.keep:
            drop_namespace(container.driver, ns, container.settings.neo4j_database)
        container.close()
    topics = figures.pop("topic_list")
    print(f"namespace {ns}{' (kept)' if args.keep else ''}")
    print(f"load average (1 min) before / after: {load[0]:.1f} / {os.getloadavg()[0]:.1f}")
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(
        f"embed: {counting.calls} calls, {counting.texts} texts, {counting.chars} chars, "
        f"{counting.seconds:.1f} s, CPU {counting.cpu:.1f} s, "
        f"{sum(v for k, v in counting.by_caller.items() if k.endswith(' pieces'))} word pieces"
    )
    for key, value in sorted(counting.by_caller.items()):
        print(f"  {key}: {value}")
    sleeps = max(figures["sleeps"], 1)
    print(
        f"cypher: {statements} statements ({statements / sleeps:.1f} per sleep), "
        f"{commits} transactions ({commits / sleeps:.1f} per sleep)"
    )
    for name, count in top:
        print(f"  {name}: {count}")
    if args.topics:
        for t in sorted(topics, key=lambda t: t.time.first_seen_at):
            print(
                f"  {t.name[:50]:<50} {len(t.facts):>3} facts {t.stats.touch_count:>3} touches  "
                f"{t.time.first_seen_at:%Y-%m-%d} .. {t.time.last_seen_at:%Y-%m-%d}"
            )
    if profiler and args.profile:
        profiler.dump_stats(args.profile)
        pstats.Stats(str(args.profile)).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
