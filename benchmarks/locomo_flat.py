"""The flat baselines of LongMemEval (``api.eval_longmemeval``) on LoCoMo: every sentence of a
conversation's turns ranked against each question by BM25, by MiniLM's cosine and by their
reciprocal rank fusion, packed best-first to the budget, evidence recall per category
(categories 1-4, docs/evaluation.md "The flat fusion on LoCoMo"). No memory, no Neo4j.

    PYTHONPATH=. .venv/bin/python benchmarks/locomo_flat.py \
        --data ../shared/data/locomo/locomo-dev.json [--budget 1000] [--cache DIR] [--overhead 7]

``--overhead`` adds that many tokens a sentence (a context line's "- 8 May 2023 Caroline: ");
``--cache`` holds the sentence vectors (``api.eval_vectors``; default
<SHERIFF_HOME>/eval-cache), so a second run embeds nothing.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from api.eval_locomo import CATEGORIES, normalise_evidence
from api.eval_longmemeval import bm25_order, fused_order
from api.eval_vectors import SentenceVectors
from api.settings import Settings
from retrieval.embedding import build_embedder
from sleepwake.replay import locomo_sessions
from text.english import split_sentences


class _Asked:  # what ``bm25_order`` reads of a question
    def __init__(self, question: str) -> None:
        self.question = question


def packed(
    order: list[int], sentences: list[tuple[str, str]], budget: int, overhead: int
) -> set[str]:
    cited: set[str] = set()
    used = 0
    for i in order:
        cost = math.ceil(len(sentences[i][1]) / 4) + overhead
        if used + cost <= budget:
            used += cost
            cited.add(sentences[i][0])
    return cited


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--overhead", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=None)
    args = ap.parse_args()
    settings = Settings()
    embedder = build_embedder("minilm", home=settings.home)
    cache = SentenceVectors(args.cache or settings.home / "eval-cache", embedder)
    recall: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    samples: list[dict[str, Any]] = json.loads(args.data.read_text(encoding="utf-8"))
    for sample in samples:
        sentences = [
            (m.external_id or "", s)
            for _, messages in locomo_sessions(sample)
            for m in messages
            for s in split_sentences(m.content)
        ]
        vectors = cache.vectors([s for _, s in sentences])
        for qa in sample["qa"]:
            category, evidence = (
                int(qa["category"]),
                set(normalise_evidence(qa.get("evidence", []))),
            )
            if category not in (1, 2, 3, 4) or not evidence:
                continue
            question = str(qa["question"])
            by_words = bm25_order(_Asked(question), sentences)  # type: ignore[arg-type]
            cosine = vectors @ cache.vectors([question])[0]
            by_meaning = sorted(range(len(sentences)), key=lambda i: -float(cosine[i]))
            orders = {"bm25": by_words, "minilm": by_meaning}
            orders["fusion"] = fused_order(by_words, by_meaning)
            for name, order in orders.items():
                cited = packed(order, sentences, args.budget, args.overhead)
                recall[name][category].append(len(evidence & cited) / len(evidence))
    cache.close()
    for name, per in recall.items():
        every = [v for values in per.values() for v in values]
        cells = [f"{CATEGORIES[c]} {sum(v) / len(v):.3f}" for c, v in sorted(per.items())]
        print(f"{name:7s} all 1-4 {sum(every) / len(every):.4f}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
