"""Topic search as the REST API (``/v1/topics/search``) and ``sheriff search`` both run it.

The window is the request's (a phrase or ``from``/``to``), else the time phrase inside the query
itself; with a window the graph is expanded one hop unless the request says otherwise. Each hit
carries its score components and the reason it was found.
"""

from __future__ import annotations

from datetime import datetime

from api.schemas import SearchHitPublic, SearchPublic, TopicSearch
from api.windows import public
from retrieval.search import TopicHit
from service.topics import TopicService
from service.windows import WindowResolver


def search_topics(
    topics: TopicService, windows: WindowResolver, namespace: str, q: TopicSearch, now: datetime
) -> SearchPublic:
    """Ranked topics of ``namespace`` for ``q``, with why each was found."""
    now = q.now or q.as_of or now
    window = windows.request(namespace, q.window, q.from_, q.to, now)
    found = topics.search(namespace, q.query, now, q.k, window, q.expand, as_of=q.as_of)
    return SearchPublic(
        query=q.query,
        time_window=public(found.window),
        degraded=found.result.degraded,
        hits=[_hit(h) for h in found.result.hits],
    )


def _hit(h: TopicHit) -> SearchHitPublic:
    return SearchHitPublic.of(
        h.topic, h.score, components=h.components, sources=h.sources, reason=h.reason
    )
