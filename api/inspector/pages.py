"""The inspector's pages that only read: topics (list, timeline, one topic), a message in its
conversation, sleep runs and the wake packet, and the export download. Each reads through the
service the matching REST route calls, in the signed-in key's namespace only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse

from api.deps import (
    ExportDep,
    FactsDep,
    NowDep,
    SleepWakeDep,
    TopicsDep,
    WindowsDep,
)
from api.inspector.views import (
    GRAPH_SIZE,
    Neighbour,
    Pager,
    fact_views,
    neighbourhood,
    sleep_groups,
    step_rows,
)
from api.inspector.web import InspectorRoute, MessageId, SignedDep, TopicId, page
from api.windows import public
from graph.errors import NotFound
from graph.models import WakePacket
from service.inspect import MAX_NEEDLE, InspectService

router = APIRouter(prefix="/ui", route_class=InspectorRoute, include_in_schema=False)

Phrase = Annotated[str | None, Query(max_length=200)]
PAGE = 50
NEIGHBOURS = 20
TIMELINE_EVENTS = 500
SLEEP_RUNS = 200  # the most GET /v1/sleep-runs gives at once


def _inspect(request: Request) -> InspectService:
    service: InspectService = request.app.state.container.services.inspect
    return service


@router.get("")
def home() -> RedirectResponse:
    return RedirectResponse("/ui/topics", status_code=303)


@router.get("/topics")
def topics_list(
    request: Request,
    signed: SignedDep,
    windows: WindowsDep,
    now: NowDep,
    q: Annotated[str | None, Query(max_length=MAX_NEEDLE)] = None,
    window: Phrase = None,
    skip: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> HTMLResponse:
    """Topics last seen first, PAGE a page, filtered by a name or alias and a time phrase."""
    ns = signed.namespace
    resolved = windows.request(ns, window, None, None, now) if window else None
    found = _inspect(request).topic_page(ns, q, resolved, skip, PAGE)
    return page(request, "topics.html", signed=signed, rows=found.rows, q=q or "",
                window=window or "", resolved=public(resolved),
                pager=Pager(found.skip, found.limit, found.has_more))  # fmt: skip


@router.get("/timeline")
def timeline(
    request: Request,
    signed: SignedDep,
    topics: TopicsDep,
    windows: WindowsDep,
    sleepwake: SleepWakeDep,
    now: NowDep,
    window: Phrase = None,
) -> HTMLResponse:
    """Topic events in a window (the same read as ``GET /v1/timeline``), grouped by the sleep
    that wrote them (the namespace's recorded sleeps, ``GET /v1/sleep-runs``)."""
    ns = signed.namespace
    resolved = windows.request(ns, window, None, None, now) if window else None
    found = topics.timeline(ns, resolved, TIMELINE_EVENTS)
    slept = [
        r.slept_at for r in sleepwake.runs(ns, SLEEP_RUNS) if r.slept_at and r.outcome == "done"
    ]
    return page(request, "timeline.html", signed=signed, window=window or "",
                resolved=public(resolved), truncated=found.truncated,
                groups=sleep_groups(found.events, found.names, slept))  # fmt: skip


@router.get("/topics/{topic_id}")
def topic_page(
    request: Request,
    topic_id: TopicId,
    signed: SignedDep,
    topics: TopicsDep,
    now: NowDep,
) -> HTMLResponse:
    """One topic: every fact (past ones marked) with its sources, events, neighbourhood."""
    ns = signed.namespace
    found = topics.detail(ns, topic_id, None, history=True)
    near = [
        Neighbour(n.topic.topic_id, n.topic.name, n.type.value, n.weight, n.outgoing)
        for n in topics.neighbours(ns, topic_id, [], NEIGHBOURS)
    ]
    nodes, edges = neighbourhood(topic_id, found.topic.name, near)
    return page(request, "topic.html", signed=signed, topic=found.topic,
                facts=fact_views(found.topic.facts, now),
                events=sorted(found.events, key=lambda e: e.at, reverse=True),
                neighbours=near, nodes=nodes, edges=edges, size=GRAPH_SIZE)  # fmt: skip


@router.get("/topics/{topic_id}/history")
def topic_history(
    request: Request, topic_id: TopicId, signed: SignedDep, facts: FactsDep
) -> HTMLResponse:
    """Every fact version and event of a topic, merged in time (``GET /v1/topics/{id}/history``)."""
    found = facts.history(signed.namespace, topic_id)
    return page(request, "history.html", signed=signed, history=found)


@router.get("/messages/{message_id}")
def message_page(request: Request, message_id: MessageId, signed: SignedDep) -> HTMLResponse:
    """A message among its neighbours in the conversation."""
    found = _inspect(request).message(signed.namespace, message_id)
    return page(request, "message.html", signed=signed, found=found)


@router.get("/sleep")
def sleep_page(request: Request, signed: SignedDep, sleepwake: SleepWakeDep) -> HTMLResponse:
    """The latest sleep runs (outcome, step durations, counts) and the latest wake packet."""
    ns = signed.namespace
    runs = sleepwake.runs(ns, 20)
    packet: WakePacket | None
    try:
        packet = sleepwake.latest_packet(ns)
    except NotFound:
        packet = None
    return page(request, "sleep.html", signed=signed, packet=packet,
                runs=[(r, step_rows(r.step_ms)) for r in runs])  # fmt: skip


@router.get("/export")
def export(signed: SignedDep, exporter: ExportDep) -> StreamingResponse:
    """The namespace as JSON Lines, as ``GET /v1/export`` streams it."""
    ns = signed.namespace
    return StreamingResponse(
        exporter.lines(ns),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="sheriff-{ns}.jsonl"'},
    )
