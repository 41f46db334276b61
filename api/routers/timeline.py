"""``/v1/timeline``: what changed in memory, when (topic events in a window)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import NamespaceDep, NowDep, TopicsDep, WindowsDep
from api.schemas import TimelineEvent, TimelinePublic, WindowQuery
from api.windows import public

router = APIRouter(tags=["timeline"])


@router.get("/timeline")
def timeline(
    q: Annotated[WindowQuery, Query()],
    topics: TopicsDep,
    windows: WindowsDep,
    ns: NamespaceDep,
    now: NowDep,
) -> TimelinePublic:
    """Topic events in a window (``window=yesterday`` or ``from``/``to``), oldest first, each
    with its topic's name; with no window, from the beginning."""
    window = windows.request(ns, q.window, q.from_, q.to, q.now or now)
    found = topics.timeline(ns, window, q.limit)
    return TimelinePublic(
        time_window=public(window),
        events=[
            TimelineEvent(**e.model_dump(exclude={"namespace", "first_seq", "last_seq"}),
                          topic_name=found.names.get(e.topic_id))
            for e in found.events
        ],
        truncated=found.truncated,
    )  # fmt: skip
