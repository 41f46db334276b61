"""Facts with a history: correct or retract one fact, and a topic's history.

``POST /v1/topics/{id}/facts/{fact_id}/correct`` and ``.../retract`` close the fact (it stays in
the history) without rewriting the topic; ``GET /v1/topics/{id}/history`` lists every fact
version and event. See ``service.facts``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from api.deps import FactsDep, NamespaceDep
from api.routers.common import errors
from api.schemas_memory import FactCorrect, FactRetract
from service.facts import FactChange, TopicHistory

router = APIRouter(prefix="/topics", tags=["facts"])

TopicIdPath = Annotated[str, Path(min_length=1, max_length=64, description="the topic's id")]
FactIdPath = Annotated[str, Path(min_length=1, max_length=64, description="the fact's id")]


@router.get("/{topic_id}/history", responses=errors(404))
def topic_history(topic_id: TopicIdPath, facts: FactsDep, ns: NamespaceDep) -> TopicHistory:
    """Every fact (current, superseded, retracted), their chains, events, one timeline."""
    return facts.history(ns, topic_id)


@router.post("/{topic_id}/facts/{fact_id}/correct", responses=errors(404, 409))
def correct_fact(
    topic_id: TopicIdPath, fact_id: FactIdPath, body: FactCorrect, facts: FactsDep,
    ns: NamespaceDep,
) -> FactChange:  # fmt: skip
    """Replace one fact: the new one is added, the old one closed (409 if already closed)."""
    return facts.correct(
        ns, topic_id, fact_id, body.text, at=body.at, valid_from=body.valid_from,
        reason=body.reason, source_message_ids=body.source_message_ids,
    )  # fmt: skip


@router.post("/{topic_id}/facts/{fact_id}/retract", responses=errors(404, 409))
def retract_fact(
    topic_id: TopicIdPath, fact_id: FactIdPath, body: FactRetract, facts: FactsDep,
    ns: NamespaceDep,
) -> FactChange:  # fmt: skip
    """Close one fact with no successor: it is no longer true (409 if already closed)."""
    return facts.retract(
        ns, topic_id, fact_id, at=body.at, reason=body.reason,
        source_message_ids=body.source_message_ids,
    )  # fmt: skip
