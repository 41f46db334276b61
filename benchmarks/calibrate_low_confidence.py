"""Calibrate the low-confidence trigger (§5.2 trigger 4) on real retrieval results.

    .venv/bin/sheriff eval locomo --data ../shared/data/locomo/locomo-dev.json \\
        --sample conv-30 --keep                      # replays the conversation, keeps the namespace
    .venv/bin/python benchmarks/calibrate_low_confidence.py --namespace eval-conv-30-XXXXXX \\
        --data ../shared/data/locomo/locomo-dev.json --sample conv-30

For every message of three sets, the light search's candidate pool is built exactly as
``ContextBuilder`` builds it (one embedding, vector + full-text candidates) and its signals are
printed as distributions: best vector cosine, its margin over the second best, best full-text
BM25. The sets: the LoCoMo questions of the sample (specific questions about the conversation),
vague messages that name nothing (the trigger should fire), clear statements naming the
conversation's subjects (it should not), and 60 questions of another LoCoMo conversation (about
people this memory has never heard of: it mostly should). Then the firing rate of the configured thresholds (and
of a small grid around them) on each set, and the share of LoCoMo questions that would go deep
with every trigger. docs/retrieval.md ("Low confidence") records the figures and the choice.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from api.container import Container
from api.settings import Settings
from retrieval.config import TriggerConfig
from retrieval.triggers import RetrievalSignals, TriggerContext, low_confidence

VAGUE = [
    "hmm, what do you think?",
    "tell me more",
    "any thoughts on that?",
    "so what should I do now?",
    "can you help me with something?",
    "I'm not sure about this",
    "what's the best way to go about it?",
    "let's keep going",
    "ok, and what else?",
    "that's interesting, go on",
    "I was thinking about stuff",
    "how does that sound to you?",
    "what would you suggest?",
    "it's been a long day",
    "do you have any advice?",
    "what's next?",
    "I need some ideas",
    "could you explain that again?",
    "is that a good idea?",
    "honestly I don't know what to make of it",
]
CLEAR = {  # statements about the subjects of LoCoMo conv-30 (Jon and Gina)
    "conv-30": [
        "Jon is opening his dance studio next month",
        "Gina's clothing store ad campaign brought in new customers",
        "the dance crew won the regional competition",
        "Jon lost his job as a banker and started a business",
        "Gina painted a pink wall and put in a blue floor in the store",
        "the dance studio needs a good dance floor and natural light",
        "Jon travelled to Paris and Rome",
        "the contemporary piece Finding Freedom went well on stage",
        "Gina delivers for Door Dash on the side",
        "Jon rehearses contemporary dance with his students",
        "Gina is looking for investors for her online clothing store",
        "Jon's photography of the dance studio",
    ]
}


def signals(c: Container, namespace: str, text: str) -> RetrievalSignals:
    """The light search's signals for ``text``, as the context builder computes them."""
    vector = c.search.embed_query(text)
    k = c.settings.retrieval.context.deep_topics
    pool = c.search.pool(namespace, text, datetime.now(UTC), k, None, vector)
    return RetrievalSignals.of(pool.cosine, pool.text_scores)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] if ordered else float("nan")


def describe(name: str, sigs: list[RetrievalSignals]) -> None:
    cos = [s.best_cosine for s in sigs if s.best_cosine is not None]
    mar = [s.margin for s in sigs if s.margin is not None]
    txt = [s.best_text for s in sigs]
    print(f"\n{name} ({len(sigs)} messages)           p10    p25    p50    p75    p90")
    for label, vals in (("best_cosine", cos), ("cosine_margin", mar), ("best_text", txt)):
        row = "  ".join(f"{pct(vals, q):5.3f}" for q in (0.1, 0.25, 0.5, 0.75, 0.9))
        print(f"  {label:<28}{row}")


def rate(sigs: list[RetrievalSignals], cfg: TriggerConfig) -> float:
    fired = [low_confidence("", TriggerContext(now=_NOW, signals=s, config=cfg)) for s in sigs]
    return sum(1 for f in fired if f) / len(sigs) if sigs else 0.0


_NOW = datetime(2026, 1, 1, tzinfo=UTC)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--namespace", required=True, help="a replayed namespace (eval --keep)")
    ap.add_argument("--data", type=Path, required=True, help="locomo JSON file")
    ap.add_argument("--sample", required=True, help="the sample id replayed into the namespace")
    args = ap.parse_args()
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    sample = next(s for s in samples if s["sample_id"] == args.sample)
    questions = [str(q["question"]) for q in sample["qa"] if int(q["category"]) in (1, 2, 3, 4)]
    other = next(s for s in samples if s["sample_id"] != args.sample)
    foreign = [str(q["question"]) for q in other["qa"] if int(q["category"]) in (1, 2, 3, 4)]
    c = Container(Settings())
    try:
        sets = {
            "LoCoMo questions (cat 1-4)": [signals(c, args.namespace, q) for q in questions],
            "vague messages": [signals(c, args.namespace, m) for m in VAGUE],
            "clear statements": [signals(c, args.namespace, m) for m in CLEAR[args.sample]],
            f"{other['sample_id']}'s questions": [
                signals(c, args.namespace, q) for q in foreign[:60]
            ],
        }
    finally:
        c.close()
    for name, sigs in sets.items():
        describe(name, sigs)
    configured = c.settings.retrieval.triggers
    print(f"\nfiring rate, configured {configured.model_dump()}:")
    for name, sigs in sets.items():
        print(f"  {name:<32}{rate(sigs, configured):6.1%}")
    print("\ngrid (cosine_floor, cosine_clear, margin_gap, text_floor): " + " / ".join(sets))
    grid = itertools.product((0.35, 0.4, 0.45), (0.5, 0.55), (0.01, 0.02), (3.0, 4.0, 5.0))
    for floor, clear, gap, text in grid:
        cfg = TriggerConfig(cosine_floor=floor, cosine_clear=clear, margin_gap=gap, text_floor=text)
        rates = " / ".join(f"{rate(s, cfg):5.1%}" for s in sets.values())
        print(f"  {floor:4.2f} {clear:4.2f} {gap:4.2f} {text:3.1f}   {rates}")
    print(f"\nmedian of best_cosine, all sets: {statistics.median(_all_cos(sets)):.3f}")


def _all_cos(sets: dict[str, list[RetrievalSignals]]) -> list[float]:
    return [s.best_cosine for v in sets.values() for s in v if s.best_cosine is not None]


if __name__ == "__main__":
    main()
