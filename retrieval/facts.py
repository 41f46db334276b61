"""Facts of a topic ranked for a question (issue #12 item 4). Pure.

A topic that has been talked about for months holds hundreds of facts; showing its first ones
(or its last ones, regardless of the question) crowds the budget with statements that do not
answer anything. Wherever a topic's facts reach a context (light and deep packing, the L2 full
record, the wake packet's source ids) they are ordered by relevance to the query first (the share
of the query's stemmed terms the fact contains, ``retrieval.snippets.overlap``), then by recency
(newest first), then by their position in the topic (later first: facts are appended in time).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from graph.models import Fact
from retrieval.snippets import overlap

_UNDATED = datetime.min.replace(tzinfo=UTC)  # a fact without a time ranks below dated ones


def rank_facts(
    facts: Sequence[Fact], query_terms: frozenset[str], limit: int | None = None
) -> list[Fact]:
    """``facts`` best first for a query with ``query_terms``: more of the query's terms, then
    newer, then later in the topic; at most ``limit`` (all when None)."""
    scored = [(overlap(f.text, query_terms), f.at or _UNDATED, i, f) for i, f in enumerate(facts)]
    scored.sort(key=lambda x: (x[0], x[1], x[2]), reverse=True)
    ranked = [f for *_, f in scored]
    return ranked if limit is None else ranked[: max(0, limit)]
