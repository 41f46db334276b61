"""``/v1/timeline``: what changed in memory, when (topic events in a window)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import ContainerDep, NamespaceDep
from api.schemas import TimelineEvent, TimelinePublic, WindowQuery
from api.windows import public, request_window

router = APIRouter(tags=["timeline"])


@router.get("/timeline")
def timeline(
    q: Annotated[WindowQuery, Query()], c: ContainerDep, ns: NamespaceDep
) -> TimelinePublic:
    """Topic events in a window (``window=yesterday`` or ``from``/``to``), oldest first, each
    with its topic's name; with no window, from the beginning."""
    now = q.now or c.clock.now()
    window = request_window(c, ns, q.window, q.from_, q.to, now)
    since, until = (window.start, window.end) if window else (None, None)
    events = c.events.in_window(ns, since, until, limit=q.limit + 1)
    shown = events[: q.limit]
    names = {
        t.topic_id: t.name for t, _ in c.topics.summaries(ns, list({e.topic_id for e in shown}))
    }
    return TimelinePublic(
        time_window=public(window),
        events=[
            TimelineEvent(**e.model_dump(exclude={"namespace", "first_seq", "last_seq"}),
                          topic_name=names.get(e.topic_id))
            for e in shown
        ],
        truncated=len(events) > q.limit,
    )  # fmt: skip
