"""`sheriff eval locomo`: evidence recall at a token budget, following docs EVALUATION.md §1.

Per conversation, in a fresh namespace: every session is replayed in order through the same
ingestion path a live agent uses (``Conversation.append``, production sleep policy, the session
dates as the clock); the user then comes back a day later (periodic maintenance runs); for every
question the awake-loop context is built for a user message equal to the question, packed to
B tokens. One JSON line per question; recall is computed from the items' source ids.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from api.container import Container
from graph.db import drop_namespace
from graph.errors import ValidationFailed
from retrieval.context import ContextRequest
from sleepwake.replay import locomo_sessions

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def normalise_evidence(evidence: Iterable[Any]) -> list[str]:
    """'D8:6; D9:17' -> ['D8:6', 'D9:17']; 'D:11:26' -> 'D11:26'; 'D30:05' -> 'D30:5'."""
    out: list[str] = []
    for item in evidence:
        for m in _EVIDENCE.finditer(str(item)):
            ref = f"D{int(m.group(1))}:{int(m.group(2))}"
            if ref not in out:
                out.append(ref)
    return out


@dataclass
class EvalReport:
    budget: int
    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    latency_ms: list[float] = field(default_factory=list)
    conversations: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0

    def mean(self, cats: Iterable[int]) -> float:
        values = [v for c in cats for v in self.recall.get(c, [])]
        return sum(values) / len(values) if values else 0.0

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latency_ms)
        return {
            "budget": self.budget,
            "recall_cat_1_4": round(self.mean([1, 2, 3, 4]), 4),
            "per_category": {
                f"{c} {CATEGORIES[c]}": {"recall": round(self.mean([c]), 4), "questions": len(v)}
                for c, v in sorted(self.recall.items())
            },
            "questions_skipped_no_evidence": self.skipped,
            "context_latency_ms": {
                "p50": round(statistics.median(lat), 1) if lat else None,
                "p95": round(lat[min(len(lat) - 1, int(0.95 * (len(lat) - 1)))], 1)
                if lat
                else None,
            },
            "conversations": self.conversations,
        }


def evaluate(
    container: Container,
    samples: list[dict[str, Any]],
    budgets: Mapping[int, TextIO],
    keep: bool = False,
    progress: Callable[[str], None] | None = None,
    reuse: Mapping[str, str] | None = None,
) -> list[EvalReport]:
    """Replay each conversation once, then score its questions at every budget. ``reuse``
    (sample id -> namespace an earlier ``--keep`` run left): score that memory again without
    replaying, so a retrieval change is measured on the same topics in minutes."""
    reports = {b: EvalReport(b) for b in budgets}
    for sample in samples:
        kept = (reuse or {}).get(sample["sample_id"])
        ns = kept or f"eval-{sample['sample_id']}-{uuid.uuid4().hex[:6]}"
        try:
            _score_conversation(container, sample, ns, bool(kept), reports, budgets, progress)
        finally:
            if not keep:
                _drop(container, ns)
    return list(reports.values())


def replay_end(sample: dict[str, Any]) -> datetime:
    """When the questions are asked: a day after the conversation's last turn (the replay's
    clock), computed from the data so a kept namespace is asked at the same time."""
    last_at = None
    for _, messages in locomo_sessions(sample):
        last_at = messages[-1].at if messages else last_at
    if last_at is None:
        raise ValidationFailed(f"{sample.get('sample_id')}: a conversation without turns")
    return last_at + timedelta(days=1)


def require_kept(container: Container, ns: str) -> None:
    """Refuse to score a namespace that holds no messages (dropped, or another server's)."""
    if not container.messages.tail(ns, 1):
        raise ValidationFailed(f"namespace {ns} holds no messages: was it kept on this server?")


def _score_conversation(
    container: Container,
    sample: dict[str, Any],
    ns: str,
    kept: bool,
    reports: dict[int, EvalReport],
    outs: Mapping[int, TextIO],
    progress: Callable[[str], None] | None,
) -> None:
    """Replay ``sample`` into ``ns`` (or, ``kept``, take the memory an earlier run left
    there), then score its questions at every budget, asked a day after its last turn."""
    now = replay_end(sample)
    facts, note = _reused(container, ns) if kept else _replay(container, sample, ns, now)
    facts = {"sample_id": sample["sample_id"], "namespace": ns, **facts}
    for budget, report in reports.items():
        report.conversations.append(facts)
        score_questions(container, sample, ns, now, report, outs[budget])
    if progress:
        progress(f"{sample['sample_id']}: {note}")


def _reused(container: Container, ns: str) -> tuple[dict[str, Any], str]:
    require_kept(container, ns)
    return {"reused": True}, f"scored again in {ns}"


def load_kept(path: Path) -> dict[str, str]:
    """sample id -> namespace from the ``--json`` output of an earlier ``--keep`` run of
    ``eval locomo`` (a list of budget summaries) or ``eval topics`` (a list of reports)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = [c for entry in data for c in entry.get("conversations", [entry])]
        kept = {str(r["sample_id"]): str(r["namespace"]) for r in rows if r.get("namespace")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValidationFailed(f"{path}: not the --json output of an earlier run ({exc})") from exc
    if not kept:
        raise ValidationFailed(f"{path}: no kept namespace in it (was it run with --keep?)")
    return kept


def _replay(
    container: Container, sample: dict[str, Any], ns: str, now: datetime
) -> tuple[dict[str, Any], str]:
    """Every session appended in order, then the maintenance of the user's return at ``now``
    (the sleeps due by then) and the passages' vectors, as the sleep worker writes them."""
    started = time.perf_counter()
    sleeps = []
    turns = 0
    for _, messages in locomo_sessions(sample):
        sleeps += container.conversation.append(ns, messages).sleeps
        turns += len(messages)
    final = container.conversation.maintain(ns, now)
    sleeps += [final] if final else []
    container.passage_indexer.run(ns)
    ingest_s = time.perf_counter() - started
    facts = {
        "turns": turns,
        "sleeps": len(sleeps),
        "ingest_and_sleep_s": round(ingest_s, 2),
        "sleep_s": round(sum(s.duration_ms for s in sleeps) / 1000, 2),
        "messages_per_s": round(turns / ingest_s, 1),
    }
    return facts, f"{turns} turns, {len(sleeps)} sleeps, {ingest_s:.1f} s"


def score_questions(
    container: Container,
    sample: dict[str, Any],
    ns: str,
    now: datetime,
    report: EvalReport,
    out: TextIO,
) -> None:
    """Build the context for every question of ``sample`` and record recall and latency."""
    for index, qa in enumerate(sample["qa"]):
        evidence = normalise_evidence(qa.get("evidence", []))
        if not evidence:
            report.skipped += 1
            continue
        t0 = time.perf_counter()
        ctx = container.context.build(
            ContextRequest(namespace=ns, message=str(qa["question"]), now=now, budget=report.budget)
        )
        report.latency_ms.append((time.perf_counter() - t0) * 1000)
        cited = {sid for item in ctx.items for sid in item["provenance"]["source_ids"]}
        category = int(qa["category"])
        report.recall[category].append(len(set(evidence) & cited) / len(evidence))
        line = {
            "sample_id": sample["sample_id"],
            "qa_index": index,
            "category": category,
            "context_text": ctx.context_text,
            "items": [
                {"text": item["durable_summary"], "source_ids": item["provenance"]["source_ids"]}
                for item in ctx.items
            ],
        }
        out.write(json.dumps(line, ensure_ascii=False) + "\n")


def _drop(container: Container, ns: str) -> None:
    drop_namespace(container.driver, ns, container.settings.neo4j_database)


def load_samples(path: Path, only: list[str] | None = None) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [s for s in samples if not only or s["sample_id"] in only]
