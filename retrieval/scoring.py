"""Topic search's scores (pure): rank and score fusion of the candidate lists, and the §8.2 score
of one topic (docs/retrieval.md, "How topic search ranks")."""

from __future__ import annotations

import math
from datetime import datetime

from graph.models import Topic
from retrieval.config import SearchConfig


def rrf(rankings: list[list[str]], k: float) -> dict[str, float]:
    """Reciprocal rank fusion of several ranked id lists (``k``: ``SearchConfig.rrf_k``)."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank + 1)
    return fused


def score_fusion(
    cosine: dict[str, float], text_scores: dict[str, float], vector_weight: float
) -> dict[str, float]:
    """Relative score fusion of the vector and full-text candidates: ``vector_weight`` x the
    cosine rescaled to [0, 1] over the vector candidates (min-max) plus the rest x BM25 over the
    best BM25; a topic absent from a list gets 0 for it. Unlike rank fusion it keeps how much
    better the first candidate is: a topic nearest by vector but sharing no word with the
    question keeps its lead over one both lists rank tenth."""
    lo, hi = min(cosine.values(), default=0.0), max(cosine.values(), default=0.0)
    top = max(text_scores.values(), default=0.0)
    fused: dict[str, float] = {}
    for tid in {**cosine, **text_scores}:
        near = 0.0
        if tid in cosine:  # one candidate (or all equally near): each is the nearest
            near = (cosine[tid] - lo) / (hi - lo) if hi > lo else 1.0
        said = text_scores.get(tid, 0.0) / top if top > 0 else 0.0
        fused[tid] = vector_weight * near + (1 - vector_weight) * said
    return fused


def final_score(
    relevance: float,
    topic: Topic,
    now: datetime,
    in_window: bool,
    cfg: SearchConfig,
    fact: float = 0.0,
) -> dict[str, float]:
    """§8.2 components for one topic; ``fact``, its best fact's signal for the query
    (``retrieval.fact_rank``), is added at ``fact_weight`` beside the topic's relevance x
    utility x recency, before the window boost: the evidence that the answer is in the topic is
    not scaled by how much the topic was used."""
    utility = max(0.0, topic.stats.utility_score)
    age = max(0.0, (now - topic.time.last_seen_at).total_seconds())
    parts = {
        "relevance": relevance,
        "utility_boost": utility / (utility + cfg.utility_scale),
        "recency_boost": math.exp(-age / cfg.tau.total_seconds()),
        "time_window_boost": cfg.window_boost if in_window else 1.0,
    }
    whole = (
        parts["relevance"]
        * (1 + parts["utility_boost"])
        * (cfg.recency_floor + (1 - cfg.recency_floor) * parts["recency_boost"])
    )
    if fact:
        parts["fact_signal"] = fact
    parts["score"] = (whole + cfg.fact_weight * fact) * parts["time_window_boost"]
    return parts
