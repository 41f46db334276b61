"""``/v1/context``: the awake-loop memory context for one user message."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import ContainerDep, NamespaceDep
from api.schemas import ContextCreate, ContextPublic
from retrieval.context import ContextRequest

router = APIRouter(tags=["context"])


@router.post("/context")
def build_context(body: ContextCreate, c: ContainerDep, ns: NamespaceDep) -> ContextPublic:
    """Light retrieval always; deep retrieval on a trigger or ``explicit``; packed into
    ``budget`` tokens with citations. ``trace`` adds why each candidate was kept or dropped.
    Topics that reach the context are marked used."""
    result = c.context.build(
        ContextRequest(
            namespace=ns,
            message=body.message,
            now=body.now or c.clock.now(),
            budget=body.budget,
            # the suppression cache is keyed by session: keep sessions apart per namespace
            session_id=f"{ns}/{body.session_id}" if body.session_id else None,
            explicit=body.explicit,
            full_records=body.full_records,
            last_tool_output=body.last_tool_output,
            as_of=body.as_of,
        )
    )
    data = result.model_dump()
    if not body.trace:
        data["trace"] = None
    return ContextPublic.model_validate(data)
