"""`sheriff eval longmemeval`: evidence recall on LongMemEval through the public API (EVALUATION.md §5).

Per question, in a fresh namespace with its own API key, against a real local HTTP server (the
app ``sheriff up`` serves, on a free 127.0.0.1 port): the haystack sessions are appended in date
order, one ``POST /v1/messages`` per session, with the production sleep policy on; turn ``i`` of a
session is dated ``session date + 30 s * i`` and carries ``external_id = "<session_id>:<i>"``.
A session dated before the end of the previous one starts 30 s after it (the API refuses
messages older than the conversation's newest), and a session id seen twice gets ``#2``. Then
``POST /v1/context`` at ``question_date`` for each budget. Evidence turns are those with
``has_answer``; recall is the share of them cited by the context's items, R_all whether all are.

Ingest rate = messages / wall time of the appends, sleeps included: appends queue their sleeps
(background mode, the default) and :func:`settle` runs them, as a sleep worker that keeps up
would, before the next session is appended.

Three flat baselines are computed in the same run from the data alone, with no memory system:
every turn split into sentences, ranked against the question by BM25 (``graph.lexical``: the
product's own analysis and BM25, statistics of that haystack only), by the cosine of the
product's MiniLM vectors (the server's embedder), and by their reciprocal rank fusion
(``retrieval.search.rrf``, k = 60), each packed best-first to the budget (tokens =
ceil(chars / 4)). Pure Python over the product's own tokeniser and model (no rank_bm25): the
baselines then differ from the product in what they rank, never in how words are counted or
texts embedded.

Ingest includes the sleeps and the passages' vectors (``retrieval.passage_index``): after
every session the queued sleeps run to the end (:func:`settle`), while the sleep worker's
passage thread writes the passages beside them, as a worker process does; the clock stops once
the last passage is written.
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn

from api.app import create_app
from api.container import Container
from api.eval_vectors import SentenceVectors
from api.longmemeval_data import Question, Turn
from graph.db import drop_namespace
from graph.errors import ValidationFailed
from graph.lexical import rank, tokens
from retrieval.embedding import Embedder
from retrieval.scoring import rrf
from sleepwake.worker import SleepWorker
from text.english import split_sentences

VectorSource = Callable[[Sequence[str]], np.ndarray]  # texts -> unit-length rows, in order
HTTP_TIMEOUT_S = 900.0  # an append runs the sleeps it triggers; on a busy machine that is slow


# -- the flat baselines -------------------------------------------------------------------------
RRF_K = 60.0  # the usual constant of reciprocal rank fusion


def flat_sentences(question: Question) -> list[tuple[str, str]]:
    """(turn id, sentence) of every sentence of the haystack, in conversation order."""
    return [(t.external_id, s) for t in question.turns for s in split_sentences(t.content)]


def bm25_order(question: Question, sentences: list[tuple[str, str]]) -> list[int]:
    """Indexes of the sentences sharing a word with the question, best BM25 first."""
    words = list(dict.fromkeys(tokens(question.question)))
    scores = rank(words, [{"text": s} for _, s in sentences], ["text"])
    order = sorted(range(len(sentences)), key=lambda i: -scores[i])
    return [i for i in order if scores[i] > 0]


def minilm_order(
    question: Question, sentences: list[tuple[str, str]], vectors: VectorSource
) -> list[int]:
    """Indexes of every sentence, nearest the question's vector first (cosine)."""
    if not sentences:
        return []
    rows = vectors([question.question, *(s for _, s in sentences)])
    cosine = rows[1:] @ rows[0]
    return sorted(range(len(sentences)), key=lambda i: -float(cosine[i]))


def unit_vectors(embedder: Embedder) -> VectorSource:
    """``embedder``'s vectors as unit-length rows, uncached (the tests' fakes)."""

    def vectors(texts: Sequence[str]) -> np.ndarray:
        rows = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)

    return vectors


def fused_order(*orders: list[int]) -> list[int]:
    """Reciprocal rank fusion of rankings of the same sentences (k = ``RRF_K``)."""
    fused = rrf([[str(i) for i in order] for order in orders], RRF_K)
    return [int(i) for i in sorted(fused, key=lambda i: -fused[i])]


def packed_sources(order: list[int], sentences: list[tuple[str, str]], budget: int) -> set[str]:
    """The turns cited by the sentences of ``order`` packed best-first into ``budget`` tokens."""
    cited: set[str] = set()
    used = 0
    for i in order:
        cost = math.ceil(len(sentences[i][1]) / 4)
        if used + cost > budget:
            continue  # a shorter sentence further down may still fit
        used += cost
        cited.add(sentences[i][0])
    return cited


def bm25_sources(question: Question, budget: int) -> set[str]:
    """The turns cited by flat BM25 over sentences, packed best-first to ``budget`` tokens."""
    sentences = flat_sentences(question)
    return packed_sources(bm25_order(question, sentences), sentences, budget)


@dataclass
class Baselines:
    """The flat baselines' rankings of one question's sentences (computed once, packed at
    every budget)."""

    sentences: list[tuple[str, str]]
    orders: dict[str, list[int]]

    @classmethod
    def of(cls, question: Question, vectors: VectorSource | None) -> Baselines:
        sentences = flat_sentences(question)
        orders = {"bm25": bm25_order(question, sentences)}
        if vectors is not None:
            orders["minilm"] = minilm_order(question, sentences, vectors)
            orders["fusion"] = fused_order(orders["bm25"], orders["minilm"])
        return cls(sentences, orders)

    def sources(self, method: str, budget: int) -> set[str]:
        return packed_sources(self.orders[method], self.sentences, budget)


# -- scores -------------------------------------------------------------------------------------
@dataclass
class Scores:
    """Recall and R_all per question type, for one method at one budget."""

    recall: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    complete: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, qtype: str, evidence: set[str], cited: set[str]) -> float:
        found = len(evidence & cited) / len(evidence) if evidence else 0.0
        self.recall[qtype].append(found)
        self.complete[qtype].append(1.0 if evidence and evidence <= cited else 0.0)
        return found

    def summary(self) -> dict[str, Any]:
        every = [v for vs in self.recall.values() for v in vs]
        full = [v for vs in self.complete.values() for v in vs]
        return {
            "recall": _mean(every),
            "r_all": _mean(full),
            "per_type": {
                t: {"recall": _mean(v), "r_all": _mean(self.complete[t]), "questions": len(v)}
                for t, v in sorted(self.recall.items())
            },
        }


BASELINES = ("bm25", "minilm", "fusion")


@dataclass
class Report:
    budgets: list[int]
    memory: dict[int, Scores] = field(default_factory=dict)
    # baseline -> budget -> scores (the MiniLM and fusion baselines only with an embedder)
    flat: dict[str, dict[int, Scores]] = field(default_factory=dict)
    latency_ms: list[float] = field(default_factory=list)
    # sentence vectors the MiniLM baseline embedded in this run / found in the disk cache
    vector_cache: dict[str, int] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.memory = {b: Scores() for b in self.budgets}
        self.flat = {m: {b: Scores() for b in self.budgets} for m in BASELINES}

    @property
    def bm25(self) -> dict[int, Scores]:
        return self.flat["bm25"]

    def summary(self) -> dict[str, Any]:
        """Every figure of §5, memory beside the BM25 baseline, plus per-question rows."""
        messages = sum(q["messages"] for q in self.questions)
        ingest_s = sum(q["ingest_s"] for q in self.questions)
        topics = sum(q["topics"] for q in self.questions)
        return {
            "questions": len(self.questions),
            "messages": messages,
            "ingest_messages_per_s": round(messages / ingest_s, 2) if ingest_s else None,
            "topics_per_100_messages": round(100 * topics / messages, 1) if messages else None,
            "baselines_s": round(sum(q.get("baselines_s", 0.0) for q in self.questions), 1),
            "sentence_vectors": self.vector_cache,
            "context_latency_ms": {
                "p50": _percentile(self.latency_ms, 0.50),
                "p95": _percentile(self.latency_ms, 0.95),
            },
            "budgets": {
                str(b): {
                    "memory": self.memory[b].summary(),
                    **{m: self.flat[m][b].summary() for m in BASELINES if self.flat[m][b].recall},
                }
                for b in self.budgets
            },
            "per_question": self.questions,
        }


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))], 1)


# -- the server and the run ---------------------------------------------------------------------
@contextmanager
def serve(container: Container) -> Iterator[tuple[str, Callable[[str], str]]]:
    """The real app on a free 127.0.0.1 port (uvicorn in a thread, sharing ``container``):
    its base URL and a function that creates an API key for a namespace."""
    app = create_app(container)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 300
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the local API server did not start")
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}", lambda ns: str(app.state.api_keys.create(ns)[1])
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def settle(worker: SleepWorker, namespace: str) -> int:
    """Run the namespace's queued sleeps to the end, as a sleep worker keeping up would (the
    ingest clock includes them); the number of sleep runs. Its passage thread writes the new
    messages' passages meanwhile (``SleepWorker.writing_passages``, around the whole ingest).
    With inline sleeps (the append ran them already) no sleep is queued."""
    runs = 0
    while (run := worker.run_once()) is not None:
        runs += 1
        if run.outcome not in {"done", "abandoned"}:
            raise RuntimeError(f"sleep run {run.run_id} of {namespace}: {run.outcome}: {run.error}")
    return runs


def evaluate(
    container: Container,
    questions: list[Question],
    budgets: list[int],
    keep: bool = False,
    progress: Callable[[str], None] | None = None,
    reuse: dict[str, dict[str, Any]] | None = None,
    baselines: bool = True,
) -> Report:
    """Run §5 for ``questions`` through a local server; namespaces dropped unless ``keep``.
    ``reuse`` (question id -> that question's ``per_question`` row of an earlier ``--keep``
    run): score contexts in the kept namespace without ingesting again (its ingest figures are
    the earlier run's), so a retrieval change can be measured on the same memory."""
    report = Report(sorted(set(budgets)))
    reuse = reuse or {}
    cache = (
        SentenceVectors(container.settings.home / "eval-cache", container.embedder)
        if baselines
        else None
    )
    try:
        _run(container, questions, report, keep, progress, reuse, cache)
    finally:
        if cache is not None:
            report.vector_cache = {"embedded": cache.embedded, "from_cache": cache.hits}
            cache.close()
    return report


def _run(
    container: Container,
    questions: list[Question],
    report: Report,
    keep: bool,
    progress: Callable[[str], None] | None,
    reuse: dict[str, dict[str, Any]],
    cache: SentenceVectors | None,
) -> None:
    vectors = cache.vectors if cache is not None else None
    with serve(container) as (base_url, new_key):
        for question in questions:
            earlier = reuse.get(question.question_id)
            ns = (
                earlier["namespace"]
                if earlier
                else f"lme-{question.question_id}-{uuid.uuid4().hex[:6]}"
            )
            try:
                headers = {"Authorization": f"Bearer {new_key(ns)}"}
                with httpx.Client(
                    base_url=base_url, headers=headers, timeout=HTTP_TIMEOUT_S
                ) as http:
                    if earlier:
                        row = rescore(http, question, report, earlier)
                    else:
                        row = one_question(container, http, ns, question, report)
                    t0 = time.perf_counter()
                    score_baselines(question, report, row, vectors)
                    row["baselines_s"] = round(time.perf_counter() - t0, 2)
            finally:
                if not keep:
                    drop_namespace(container.driver, ns, container.settings.neo4j_database)
            report.questions.append(row)
            if progress:
                progress(_progress_line(row))


def one_question(
    container: Container, http: httpx.Client, ns: str, question: Question, report: Report
) -> dict[str, Any]:
    """Ingest one haystack, then score the memory's and BM25's contexts at every budget."""
    started = time.perf_counter()
    sleeps = 0
    worker = container.sleep_worker(namespace=ns)
    # the worker's passage thread writes the passages' vectors while the sessions arrive and
    # sleep; the clock stops once the last one is written
    with worker.writing_passages():
        for session in question.sessions:
            body = {"messages": [_message(t) for t in session]}
            answer = _post(http, "/v1/messages", body)
            sleeps += len(answer["sleeps"])
            # the sleeps queued run before the next session
            sleeps += settle(worker, ns)
    ingest_s = time.perf_counter() - started
    messages = len(question.turns)
    row: dict[str, Any] = {
        "question_id": question.question_id,
        "question_type": question.question_type,
        "namespace": ns,
        "messages": messages,
        "sleeps": sleeps,
        "ingest_s": round(ingest_s, 2),
        "messages_per_s": round(messages / ingest_s, 2),
        "topics": len(container.topics.list_live(ns)),
        "evidence": len(question.evidence),
    }
    score_contexts(http, question, report, row)
    return row


def rescore(
    http: httpx.Client, question: Question, report: Report, earlier: dict[str, Any]
) -> dict[str, Any]:
    """Score the contexts of an already ingested namespace (the earlier row's ingest figures)."""
    fields = ("question_id", "question_type", "namespace", "messages", "sleeps", "ingest_s")
    row = {k: earlier[k] for k in fields}
    row |= {k: earlier[k] for k in ("messages_per_s", "topics", "evidence")}
    score_contexts(http, question, report, row)
    return row


def load_reuse(path: Path) -> dict[str, dict[str, Any]]:
    """question id -> its row of an earlier ``--json --keep`` run's output (``per_question``)."""
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
        rows = summary["per_question"]
        return {str(r["question_id"]): r for r in rows if r.get("namespace")}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValidationFailed(f"{path}: not the --json output of an earlier run ({exc})") from exc


def score_contexts(
    http: httpx.Client, question: Question, report: Report, row: dict[str, Any]
) -> None:
    """Ask the context at every budget; score it into ``report`` and ``row``, with what the
    context held (``context@B``: class, triggers, band, cited and missing evidence)."""
    for budget in report.budgets:
        t0 = time.perf_counter()
        ctx = _post(
            http,
            "/v1/context",
            {"message": question.question, "now": question.asked_at.isoformat(), "budget": budget},
        )
        report.latency_ms.append((time.perf_counter() - t0) * 1000)
        cited = {sid for item in ctx["items"] for sid in item["provenance"]["source_ids"]}
        qtype, evidence = question.question_type, question.evidence
        row[f"recall@{budget}"] = report.memory[budget].add(qtype, evidence, cited)
        row[f"context@{budget}"] = describe_context(ctx, evidence)


def score_baselines(
    question: Question, report: Report, row: dict[str, Any], vectors: VectorSource | None
) -> None:
    """Score the flat baselines (BM25; MiniLM and their fusion with ``vectors``) at every
    budget into ``report`` and ``row`` (``bm25@B``, ``minilm@B``, ``fusion@B``)."""
    flat = Baselines.of(question, vectors)
    for method in flat.orders:
        for budget in report.budgets:
            scores = report.flat[method][budget]
            found = scores.add(
                question.question_type, question.evidence, flat.sources(method, budget)
            )
            row[f"{method}@{budget}"] = found


def describe_context(ctx: dict[str, Any], evidence: set[str]) -> dict[str, Any]:
    """What one context answer held, for reading a run question by question: the request
    class, triggers, consult band, how many items and tokens, and which evidence turns it cited
    or missed."""
    cited = {sid for item in ctx["items"] for sid in item["provenance"]["source_ids"]}
    return {
        "request_class": ctx.get("request_class"),
        "deep": ctx.get("deep"),
        "triggers": ctx.get("triggers", []),
        "band": (ctx.get("consult") or {}).get("band"),
        "confidence": (ctx.get("consult") or {}).get("confidence"),
        "items": len(ctx["items"]),
        "used_tokens": ctx.get("used_tokens"),
        "cited_evidence": sorted(evidence & cited),
        "missing_evidence": sorted(evidence - cited),
    }


def _message(turn: Turn) -> dict[str, Any]:
    return {
        "role": turn.role,
        "content": turn.content,
        "at": turn.at.isoformat(),
        "external_id": turn.external_id,
    }


def _post(http: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST and return the JSON answer; a non-2xx answer stops the run with its detail."""
    response = http.post(path, json=body)
    if response.status_code >= 300:
        raise ValidationFailed(f"{path} answered {response.status_code}: {response.text[:500]}")
    answer: dict[str, Any] = response.json()
    return answer


def _progress_line(row: dict[str, Any]) -> str:
    recalls = "  ".join(
        f"{k} {v:.2f}"
        for k, v in row.items()
        if k.startswith(("recall@", *(f"{m}@" for m in BASELINES)))
    )
    return (
        f"{row['question_id']} ({row['question_type']}): {row['messages']} msgs, "
        f"{row['sleeps']} sleeps, {row['messages_per_s']} msg/s, {row['topics']} topics  {recalls}"
    )


def render(summary: dict[str, Any]) -> str:
    """The summary as a short plain-text table (memory beside BM25 per budget and type)."""
    lines = [
        f"questions {summary['questions']}, messages {summary['messages']}, "
        f"ingest {summary['ingest_messages_per_s']} msg/s, "
        f"topics per 100 messages {summary['topics_per_100_messages']}, "
        f"context p50 {summary['context_latency_ms']['p50']} ms, "
        f"p95 {summary['context_latency_ms']['p95']} ms",
    ]
    for budget, methods in summary["budgets"].items():
        names = ["memory", *(m for m in BASELINES if m in methods)]
        header = f"@{budget} tokens".ljust(29)
        lines.append("\n" + header + "".join(f"{m + ' (R_all)':<18}" for m in names))
        lines.append(_row("all", [methods[m] for m in names], len(summary["per_question"])))
        for qtype, stats in methods["memory"]["per_type"].items():
            cells = [methods[m]["per_type"][qtype] for m in names]
            lines.append(_row(qtype, cells, stats["questions"]))
    return "\n".join(lines)


def _row(name: str, cells: list[dict[str, Any]], n: int) -> str:
    shown = "".join(f"{c['recall']:.3f} ({c['r_all']:.3f})".ljust(18) for c in cells)
    return f"  {name:<26} {shown} n={n}"
