"""Topic search as the REST API (``/v1/topics/search``) and ``sheriff search`` both run it.

The window is the request's (a phrase or ``from``/``to``), else the time phrase inside the query
itself; with a window the graph is expanded one hop unless the request says otherwise. Each hit
carries its score components and the reason it was found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from api.schemas import SearchHitPublic, SearchPublic, TopicSearch
from api.windows import public, query_window, request_window
from retrieval.search import TopicHit

if TYPE_CHECKING:
    from api.container import Container


def search_topics(c: Container, namespace: str, q: TopicSearch) -> SearchPublic:
    """Ranked topics of ``namespace`` for ``q``, with why each was found."""
    now = q.now or q.as_of or c.clock.now()
    window = request_window(c, namespace, q.window, q.from_, q.to, now)
    if window is None:
        window = query_window(c, namespace, q.query, now)
    expand = q.expand if q.expand is not None else window is not None
    k = q.k if q.as_of is None else min(200, q.k * 5)  # as_of filters after ranking: fetch more
    result = c.search.run(namespace, q.query, now, k=k, window=window, expand=expand)
    hits = [h for h in result.hits if q.as_of is None or h.topic.time.first_seen_at <= q.as_of]
    return SearchPublic(
        query=q.query,
        time_window=public(window),
        degraded=result.degraded,
        hits=[_hit(h) for h in hits[: q.k]],
    )


def _hit(h: TopicHit) -> SearchHitPublic:
    return SearchHitPublic(
        topic_id=h.topic.topic_id,
        name=h.topic.name,
        one_liner=h.topic.one_liner,
        first_seen_at=h.topic.time.first_seen_at,
        last_seen_at=h.topic.time.last_seen_at,
        score=h.score,
        components=h.components,
        sources=h.sources,
        reason=h.reason,
    )
