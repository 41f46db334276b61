"""Where the product's context loses an evidence turn that the flat fusion finds: one kept
LongMemEval memory, its context built in process, beside the flat BM25 + MiniLM fusion.

    sheriff eval longmemeval --data ../shared/data/longmemeval/longmemeval-s-dev36.json \
        --budget 1000 --json --keep --question 4c36ccef > kept.json
    .venv/bin/python benchmarks/diagnose_evidence.py \
        --data ../shared/data/longmemeval/longmemeval-s-dev36.json --kept kept.json \
        [--question 4c36ccef ...] [--budget 1000]

Per question: the request class, band and triggers; per evidence turn its rank among the
messages found by words, by meaning and fused, whether the context cites it, and the rank and
the tokens spent before it in the flat fusion; then the context's items (layer, tokens, the
evidence each cites). Diagnostic only: nothing is written but the topics' use marks.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from api.container import Container
from api.eval_longmemeval import Baselines, load_reuse
from api.eval_vectors import SentenceVectors
from api.longmemeval_data import Question, load_questions
from api.settings import Settings
from retrieval.context import ContextRequest
from retrieval.context_run import ContextRun
from retrieval.packer import tokens


def flat_place(flat: Baselines, turn: str) -> tuple[int, int]:
    """(rank of the turn's best sentence in the fusion, tokens packed before it)."""
    spent = 0
    for rank, i in enumerate(flat.orders["fusion"], 1):
        tid, text = flat.sentences[i]
        if tid == turn:
            return rank, spent
        spent += tokens(text)
    return -1, spent


def show(container: Container, ns: str, q: Question, budget: int, vectors: SentenceVectors) -> None:
    run = ContextRun(
        container.context,
        ContextRequest(namespace=ns, message=q.question, now=q.asked_at, budget=budget),
    )
    ctx = run.run()
    got = run.got
    cited = {s for item in ctx.items for s in item["provenance"]["source_ids"]}
    print(f"{q.question_id} ({q.question_type}): {q.question}")
    print(
        f"  class {ctx.request_class} deep {ctx.deep} band {ctx.consult['band']} "
        f"conf {ctx.consult['confidence']:.2f} triggers {ctx.triggers} used {ctx.used_tokens}"
    )
    ext = {h.message.message_id: h.message.external_id for h in got.evidence}
    fused = [ext[h.message.message_id] for h in got.evidence]
    dense = [ext[h.message.message_id] for h in got.evidence if h.passages]
    flat = Baselines.of(q, vectors.vectors)
    for turn in sorted(q.evidence):
        rank, spent = flat_place(flat, turn)
        f = fused.index(turn) + 1 if turn in fused else None
        d = dense.index(turn) + 1 if turn in dense else None
        print(
            f"  {'+' if turn in cited else '-'} {turn:28} fused #{f} (of {len(fused)}) "
            f"by meaning #{d} | flat fusion #{rank} after {spent} tokens"
        )
    for item in ctx.items:
        hit = sorted(q.evidence & set(item["provenance"]["source_ids"]))
        size = tokens(item["durable_summary"])
        print(f"   {'>' if hit else ' '} {item['layer']} {size:4}t {item['title'][:50]:50} {hit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--kept", type=Path, action="append", required=True)
    parser.add_argument("--question", action="append")
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args()
    kept: dict[str, dict[str, object]] = {}
    for path in args.kept:
        kept |= load_reuse(path)
    container = Container(Settings())
    vectors = SentenceVectors(container.settings.home / "eval-cache", container.embedder)
    try:
        for q in load_questions(args.data, only=args.question or list(kept)):
            show(container, str(kept[q.question_id]["namespace"]), q, args.budget, vectors)
    finally:
        vectors.close()
        container.close()


if __name__ == "__main__":
    main()
