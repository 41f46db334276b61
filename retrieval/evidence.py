"""The conversation's evidence for a context: the messages found by their words (full text,
BM25) fused with those found by meaning (the nearest passages, ``graph.passages``). Pure.

Score fusion, as topic search fuses its two lists (``retrieval.search.score_fusion``): the
BM25 over the best BM25, and the cosine rescaled to [0, 1] over the dense candidates, weighed
``dense_weight`` against the rest; a message absent from a list gets 0 for it. Unlike rank
fusion it keeps how far apart the scores are, and the snippets' scores stay in [0, 1] as the
packer's other weights expect (``ContextConfig.fact_weight`` and the rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from graph.messages import MessageHit
from retrieval.scoring import score_fusion


def with_scoped(near: Sequence[MessageHit], scoped: Sequence[MessageHit]) -> list[MessageHit]:
    """The namespace's nearest passages (``near``) with those of the best topics (``scoped``,
    ``PassageStore.search_within``; scored against the same vector, so comparable): one hit a
    message, its best cosine, the passages of both (best first), ``near``'s order then the
    messages only the topics' passages found."""
    out: dict[str, MessageHit] = {}
    for hit in [*near, *scoped]:
        mid = hit.message.message_id
        known = out.get(mid)
        if known is None:
            out[mid] = hit
            continue
        first, second = (known, hit) if known.score >= hit.score else (hit, known)
        passages = tuple(dict.fromkeys((*first.passages, *second.passages)))
        out[mid] = replace(known, score=first.score, passages=passages)
    return list(out.values())


def fuse_evidence(
    lexical: Sequence[MessageHit], dense: Sequence[MessageHit], dense_weight: float
) -> list[MessageHit]:
    """One hit per message, best first, scored by fusion; a hit keeps its full-text reading
    and gains the passages the dense search found of it. Without dense hits: ``lexical`` as
    it is (its BM25 scores), so a namespace without passages ranks as before."""
    if not dense:
        return list(lexical)
    text: dict[str, float] = {}
    by_id: dict[str, MessageHit] = {}
    for hit in lexical:
        mid = hit.message.message_id
        if mid not in by_id:
            by_id[mid] = hit
            text[mid] = hit.score
    cosine: dict[str, float] = {}
    for hit in dense:
        mid = hit.message.message_id
        cosine[mid] = max(cosine.get(mid, 0.0), hit.score)
        known = by_id.get(mid)
        by_id[mid] = hit if known is None else replace(known, passages=hit.passages)
    fused = score_fusion(cosine, text, dense_weight)
    # the full-text order first among equals (the sort is stable)
    order = sorted(by_id, key=lambda mid: -fused.get(mid, 0.0))
    return [replace(by_id[mid], score=fused[mid]) for mid in order]
