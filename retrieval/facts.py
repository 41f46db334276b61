"""Facts of a topic ranked for a question (issue #12 item 4). Pure.

A topic that has been talked about for months holds hundreds of facts; showing its first ones
(or its last ones, regardless of the question) crowds the budget with statements that do not
answer anything. Wherever a topic's facts reach a context (light and deep packing, the L2 full
record, the wake packet's source ids) they are ordered by relevance to the query first (the share
of the query's stemmed terms the fact contains, ``retrieval.snippets.overlap``), then by recency
(newest first), then by their position in the topic (later first: facts are appended in time).
A question about a decision ("what did we decide about the database?") is answered by the
statement of the choice ("We chose Postgres over MongoDB"), which rarely repeats the question's
words: such a question ranks the topic's decisions first among equally relevant facts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from graph.models import Fact
from retrieval.snippets import overlap

_IS_DECISION = re.compile(
    r"\b(?:decided|chose|chosen|picked|went\s+with|going\s+with|settled\s+on|opted|"
    r"we'll\s+use|let's\s+(?:go\s+with|use|pick)|decision\s*:)",
    re.IGNORECASE,
)
DECISION_GAIN = 1.0  # within a topic found for the question, its decision is the answer
_UNDATED = datetime.min.replace(tzinfo=UTC)  # a fact without a time ranks below dated ones


def rank_facts(
    facts: Sequence[Fact],
    query_terms: frozenset[str],
    limit: int | None = None,
    decision: bool = False,
) -> list[Fact]:
    """``facts`` best first for a query with ``query_terms``: more of the query's terms (a fact
    stating a choice gains ``DECISION_GAIN`` when ``decision``: the question asks what was
    decided, ``retrieval.intent.asks_decision``), then newer, then later in the topic; at most ``limit`` (all
    when None)."""

    scored = [
        (fact_relevance(f.text, query_terms, decision), f.at or _UNDATED, i, f)
        for i, f in enumerate(facts)
    ]
    scored.sort(key=lambda x: (x[0], x[1], x[2]), reverse=True)
    ranked = [f for *_, f in scored]
    return ranked if limit is None else ranked[: max(0, limit)]


def fact_relevance(text: str, query_terms: frozenset[str], decision: bool = False) -> float:
    """How well a fact's ``text`` answers the query: the share of its terms the fact holds, plus
    ``DECISION_GAIN`` for a stated choice when the question asks what was decided."""
    gain = DECISION_GAIN if decision and _IS_DECISION.search(text) else 0.0
    return overlap(text, query_terms) + gain
