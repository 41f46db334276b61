"""Why a LoCoMo conversation's §4 figures miss: topic-only recall and observation coverage.

    sheriff eval topics --data ../shared/data/locomo/locomo-dev.json --conv 0 --keep
    .venv/bin/python benchmarks/diagnose_topics.py --data ../shared/data/locomo/locomo-dev.json \
        --conv 0 --namespace evaltopics-conv-26-<hex> [--rrf-k 60 --rrf-k 10] [--floor 0.5] \
        [--fusion score --fusion rrf] [--vector-weight 0.4] [--misses 10]

Reads a namespace kept by ``eval topics --keep`` (no replay, no sleep) and prints:

* per search setting (``--fusion`` x ``--vector-weight`` x ``--rrf-k`` x ``--floor``, the
  recency floor): topic-only recall @1000 as
  ``eval topics`` measures it (same packing, ``api.eval_topics._pack``), and where the evidence
  of each question (categories 1-4) went: its turn cited by no fact, the topic whose fact cites
  it ranked 1-3 / 4-8 / below 8 by topic search, and how often it was ranked but not packed
  (the 1000 tokens were full before its fact), and how many of the missed turns open their
  session (``opens_session``; each missed turn is tagged so in ``--misses``);
* the observations ``observation_coverage`` misses, split into evidence cited by no fact and
  evidence cited only by topics whose "name: one-liner" is unlike the observation (cosine
  < 0.35), with the topics that hold most of the latter (the catch-alls) and a few examples.

Diagnostic only: it changes nothing in the namespace.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from api.container import Container
from api.eval_locomo import load_samples, normalise_evidence
from api.eval_topics import OBSERVATION_COSINE, TOPIC_K, _cited, _header, _pack, _unit
from api.settings import Settings
from graph.models import Topic
from retrieval.search import TopicSearch

DEEP_K = 40  # how far down the ranking a holder is looked for


def _holders(topics: list[Topic], external: dict[str, str]) -> dict[str, list[Topic]]:
    """Turn id -> the topics with a fact citing it."""
    held: dict[str, list[Topic]] = {}
    for t in topics:
        for m in _cited(t):
            held.setdefault(external.get(m, m), []).append(t)
    return held


def _bucket(rank: int | None) -> str:
    if rank is None:
        return "holder not in top 40"
    return "holder rank 1-3" if rank < 3 else "holder rank 4-8" if rank < TOPIC_K else "rank 9-40"


def recall_breakdown(
    container: Container, search: TopicSearch, sample: dict[str, Any], ns: str, ctx: dict[str, Any]
) -> dict[str, Any]:
    """Topic-only recall with ``search`` and where each evidence turn went."""
    buckets: Counter[str] = Counter()
    recalls = []
    misses: list[str] = []
    missed_openers = 0
    for qa in sample["qa"]:
        evidence = set(normalise_evidence(qa.get("evidence", [])))
        if not evidence or int(qa["category"]) not in (1, 2, 3, 4):
            continue
        question = str(qa["question"])
        # packed from a search of k=8, as eval topics does (score fusion rescales the cosines
        # over the candidates, and a deeper search has more of them); ranked from a deep one
        top = [h.topic.topic_id for h in search.search(ns, question, ctx["now"], k=TOPIC_K)]
        packed = [ctx["by_id"][t] for t in top if t in ctx["by_id"]]
        cited = _pack(container, question, packed, ctx["external"])
        hits = search.search(ns, question, ctx["now"], k=DEEP_K)
        deep = [h.topic.topic_id for h in hits if h.topic.topic_id not in top]
        ranked = [ctx["by_id"][t] for t in [*top, *deep] if t in ctx["by_id"]]
        recalls.append(len(evidence & cited) / len(evidence))
        order = {t.topic_id: i for i, t in enumerate(ranked)}
        for turn in evidence:
            holders = ctx["held"].get(turn, [])
            if not holders:
                buckets["cited by no fact"] += 1
                continue
            rank = min((order[t.topic_id] for t in holders if t.topic_id in order), default=None)
            label = _bucket(rank)
            if rank is not None and rank < TOPIC_K:
                label += ", packed" if turn in cited else ", not packed (budget)"
            buckets[label] += 1
            if turn not in cited:
                missed_openers += opens_session(turn)
                misses.append(_miss(question, turn, holders, rank, ranked))
    return {
        "recall": round(sum(recalls) / max(len(recalls), 1), 3),
        "turns": dict(buckets),
        "missed turns opening their session": missed_openers,
        "misses": misses,
    }


def opens_session(turn: str) -> bool:
    """Whether a LoCoMo turn id ("D22:1") is the first turn of its session: a session between
    friends opens with one person's news, and such turns were a sixth to a quarter of the
    missed evidence (docs/topics.md, branch topics8)."""
    return turn.rsplit(":", 1)[-1] == "1"


def _miss(
    question: str, turn: str, holders: list[Topic], rank: int | None, ranked: list[Topic]
) -> str:
    """One missed evidence turn, to read by hand: the question, the topic holding the turn (its
    rank, or None below ``DEEP_K``), and the three topics ranked first."""
    holder = holders[0]
    first = ", ".join(repr(t.name) for t in ranked[:3])
    opener = " (opens its session)" if opens_session(turn) else ""
    return (
        f"{question!r} {turn}{opener}: held by {holder.name!r} ({len(holder.facts)} facts), "
        f"rank {None if rank is None else rank + 1}; first: {first}"
    )


def coverage_breakdown(
    container: Container, sample: dict[str, Any], topics: list[Topic], ctx: dict[str, Any]
) -> dict[str, Any]:
    """The observations coverage misses and the topics that hold their evidence."""
    observations = [
        (str(text), set(normalise_evidence([evidence])))
        for per_session in sample.get("observation", {}).values()
        for per_speaker in per_session.values()
        for text, evidence in per_speaker
    ]
    heads = _unit(container, [_header(t) for t in topics])
    sims = _unit(container, [text for text, _ in observations]) @ heads.T
    index = {t.topic_id: j for j, t in enumerate(topics)}
    kinds: Counter[str] = Counter()
    unlike: Counter[str] = Counter()
    examples: list[str] = []
    for i, (text, evidence) in enumerate(observations):
        holders = {t.topic_id: t for turn in evidence for t in ctx["held"].get(turn, [])}
        if not holders:
            kinds["evidence cited by no fact"] += 1
            continue
        best = max(holders.values(), key=lambda t: sims[i, index[t.topic_id]])
        cosine = float(sims[i, index[best.topic_id]])
        if cosine >= OBSERVATION_COSINE:
            kinds["covered"] += 1
            continue
        kinds["cited only by unlike topics"] += 1
        unlike[f"{best.name} ({len(best.facts)} facts)"] += 1
        if len(examples) < 12:
            examples.append(f"{cosine:.2f} {text[:90]!r} <- {_header(best)[:110]!r}")
    return {
        "observations": dict(kinds),
        "unlike_holders": unlike.most_common(12),
        "examples": examples,
    }


def main() -> None:
    """Parse the arguments, read the kept namespace and print both breakdowns."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--conv", type=int, required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--rrf-k", type=float, action="append")
    parser.add_argument("--floor", type=float, action="append")
    parser.add_argument("--fusion", choices=["score", "rrf"], action="append")
    parser.add_argument("--vector-weight", type=float, action="append")
    parser.add_argument("--misses", type=int, default=0, help="print this many missed turns")
    args = parser.parse_args()
    container = Container(Settings().model_copy(update={"sleep_mode": "inline"}))
    try:
        sample = load_samples(args.data)[args.conv]
        ns = args.namespace
        topics = container.topics.list_live(ns, limit=100_000)
        messages = container.messages.tail(ns, 1_000_000)
        external = {m.message_id: m.external_id or m.message_id for m in messages}
        ctx = {
            "now": max(m.at for m in messages) + timedelta(days=1),
            "external": external,
            "by_id": {t.topic_id: t for t in topics},
            "held": _holders(topics, external),
        }
        base = container.settings.retrieval.search
        for fusion, weight, k, floor in itertools.product(
            args.fusion or [base.fusion],
            args.vector_weight or [base.vector_weight],
            args.rrf_k or [base.rrf_k],
            args.floor or [base.recency_floor],
        ):
            update = {"fusion": fusion, "vector_weight": weight, "rrf_k": k, "recency_floor": floor}
            cfg = base.model_copy(update=update)
            search = TopicSearch(
                container.topics, container.events, container.embedder, cfg,
                speakers=container.messages.speakers_named,
            )  # fmt: skip
            result = recall_breakdown(container, search, sample, ns, ctx)
            misses = result.pop("misses")
            print(", ".join(f"{key}={value}" for key, value in update.items()) + ":", result)
            for line in misses[: args.misses]:
                print("  ", line)
        report = coverage_breakdown(container, sample, topics, ctx)
        print("observations:", report["observations"])
        print("topics holding unlike-cited evidence:", report["unlike_holders"])
        print("\n".join(report["examples"]))
    finally:
        container.close()


if __name__ == "__main__":
    main()
