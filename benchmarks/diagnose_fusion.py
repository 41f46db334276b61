"""Why topic search's fusion moves a LongMemEval question: the same kept memory, ranked and
packed under several fusion settings, side by side.

    sheriff eval longmemeval --data ../shared/data/longmemeval/longmemeval-s-dev36.json \
        --budget 1000 --json --keep --question 1c0ddc50 > kept.json
    .venv/bin/python benchmarks/diagnose_fusion.py \
        --data ../shared/data/longmemeval/longmemeval-s-dev36.json --kept kept.json \
        --question 1c0ddc50 [--fusion score --fusion rrf] [--budget 1000] [--top 12]

Per question and setting it prints the context's recall and the evidence turns it missed, then
the topic pool in fused order: each topic's vector cosine and BM25 (the raw scores fusion
reads), its relevance and final score, and ``*`` when one of its facts cites an evidence turn;
then the items of the context that cite evidence. Diagnostic only: nothing is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from api.container import Container
from api.eval_longmemeval import load_reuse
from api.longmemeval_data import Question, load_questions
from api.settings import Settings
from retrieval.context import ContextRequest


def with_fusion(settings: Settings, fusion: str) -> Settings:
    """``settings`` with topic search fused by ``fusion``."""
    search = settings.retrieval.search.model_copy(update={"fusion": fusion})
    retrieval = settings.retrieval.model_copy(update={"search": search})
    return settings.model_copy(update={"retrieval": retrieval})


def holders(container: Container, ns: str, evidence: set[str]) -> set[str]:
    """Ids of the live topics with a fact citing an evidence turn."""
    external = {m.message_id: m.external_id for m in container.messages.tail(ns, 1_000_000)}
    return {
        t.topic_id
        for t in container.topics.list_live(ns, limit=100_000)
        if any(external.get(m) in evidence for f in t.facts for m in f.source_message_ids)
    }


def show(container: Container, ns: str, question: Question, budget: int, top: int) -> None:
    """One setting: recall, the pool in fused order, the items citing evidence."""
    evidence = question.evidence
    ctx = container.context.build(
        ContextRequest(
            namespace=ns, message=question.question, now=question.asked_at, budget=budget
        )
    )
    search, sizes = container.search, container.settings.retrieval.context
    k = sizes.deep_topics if ctx.deep else sizes.light_topics  # the pool the context searched
    vector = search.embed_query(question.question)
    pool = search.pool(ns, question.question, question.asked_at, k, None, vector)
    held = holders(container, ns, evidence)
    ranked = search.rank(pool, 40).hits
    print(
        f"  {'deep' if ctx.deep else 'light'} (k={k}), triggers {ctx.triggers}: "
        f"{len(pool.cosine)} by vector, {len(pool.text_scores)} by text"
    )
    for i, hit in enumerate(ranked[:top], 1):
        tid = hit.topic.topic_id
        mark = "*" if tid in held else " "
        print(
            f"  {i:2} {mark} {hit.topic.name[:38]:38} cos {pool.cosine.get(tid, float('nan')):.3f}"
            f"  bm25 {pool.text_scores.get(tid, float('nan')):6.2f}"
            f" (content {pool.content_scores.get(tid, float('nan')):5.2f})"
            f"  rel {hit.components['relevance']:.3f}  score {hit.score:.3f}"
        )
    lost = [h.topic.name for h in ranked[top:] if h.topic.topic_id in held]
    print(f"  evidence topics below {top}: {lost}")
    cited = {s for item in ctx.items for s in item["provenance"]["source_ids"]}
    print(
        f"  recall @{budget}: {len(evidence & cited)}/{len(evidence)}, missed {sorted(evidence - cited)}"
    )
    for item in ctx.items:
        hit = sorted(evidence & set(item["provenance"]["source_ids"]))
        print(f"   {'>' if hit else ' '} {item['title'][:40]:40} {item['layer']} {hit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--kept", type=Path, required=True, help="--json output of a --keep run")
    parser.add_argument("--question", action="append", required=True)
    parser.add_argument("--fusion", action="append", choices=["score", "rrf"])
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    kept = load_reuse(args.kept)
    base = Settings()
    shared = Container(base)
    for question in load_questions(args.data, only=args.question):
        ns = kept[question.question_id]["namespace"]
        print(f"{question.question_id} ({question.question_type}): {question.question}")
        print(f"  evidence {sorted(question.evidence)}")
        for fusion in args.fusion or ["score", "rrf"]:
            print(f" -- fusion {fusion}")
            container = Container(
                with_fusion(base, fusion), driver=shared.driver, embedder=shared.embedder
            )
            show(container, ns, question, args.budget, args.top)
    shared.close()


if __name__ == "__main__":
    main()
