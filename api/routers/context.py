"""``/v1/context``: the awake-loop memory context for one user message."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request

from api.admission import ContextGate
from api.deps import ContextDep, NamespaceDep, NowDep
from api.schemas import ContextCreate, ContextPublic
from service.memory import ContextService

router = APIRouter(tags=["context"])


@router.post("/context")
async def build_context(
    body: ContextCreate, context: ContextDep, ns: NamespaceDep, now: NowDep, request: Request
) -> ContextPublic:
    """Light retrieval always; deep retrieval on a trigger or ``explicit``; packed into
    ``budget`` tokens with citations. ``trace`` adds why each candidate was kept or dropped.
    Topics that reach the context are marked used."""
    # the build blocks (Neo4j, the model): one worker thread for it, once the worker's context
    # gate lets it in (api/admission.py: a few at a time, namespaces in turn); the answer,
    # already a ContextPublic, is then checked and written as JSON on the event loop, where a
    # sync route would hand both to a thread again (docs/performance.md, seventh pass)
    gate: ContextGate = request.app.state.context_gate
    return await gate.run(ns, memory_context, context, ns, body, now)


def memory_context(
    context: ContextService, ns: str, body: ContextCreate, now: datetime
) -> ContextPublic:
    """The memory context for ``body.message`` in namespace ``ns`` (REST and the MCP tool)."""
    return ContextPublic.of(context.build(body.request(ns, now)), body.trace)
