"""``/v1/topics``: create, read (with events), update (versioned), search, neighbours, links."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query

from api.deps import NamespaceDep, NowDep, TopicsDep, WindowsDep
from api.routers.common import NOT_RETRY_SAFE, errors
from api.schemas import (
    EdgePublic,
    EventPublic,
    LinkCreate,
    NeighbourPublic,
    SearchPublic,
    TopicCreate,
    TopicDetail,
    TopicPublic,
    TopicSearch,
    TopicUpdate,
)
from api.search import search_topics
from graph.models import EdgeType, Topic
from graph.validation import Time
from service.topics import TopicService

router = APIRouter(prefix="/topics", tags=["topics"])

TopicIdPath = Annotated[str, Path(min_length=1, max_length=64, description="the topic's id")]


def public(topic: Topic) -> TopicPublic:
    return TopicPublic(
        **topic.model_dump(exclude={"namespace", "embedding", "schema_version"}),
        embedding_model=topic.embedding.model if topic.embedding else None,
    )


@router.post("", status_code=201, dependencies=NOT_RETRY_SAFE)  # a repeat: a second topic
def create_topic(
    body: TopicCreate, topics: TopicsDep, ns: NamespaceDep, now: NowDep
) -> TopicPublic:
    """Create a topic; its one-liner (or name) is embedded. Secrets in text are redacted."""
    return public(topics.create(ns, body, now))


@router.get("/search")
def search_get(
    q: Annotated[TopicSearch, Query()],
    topics: TopicsDep,
    windows: WindowsDep,
    ns: NamespaceDep,
    now: NowDep,
) -> SearchPublic:
    """Ranked topics for ``query``; a window (phrase, range, or a phrase in the query) filters
    and boosts. Each hit says why it was found."""
    return search_topics(topics, windows, ns, q, now)


@router.post("/search")
def search_post(
    body: TopicSearch, topics: TopicsDep, windows: WindowsDep, ns: NamespaceDep, now: NowDep
) -> SearchPublic:
    """The same search with a JSON body."""
    return search_topics(topics, windows, ns, body, now)


@router.get("/{topic_id}", responses=errors(404))
def get_topic(
    topic_id: TopicIdPath,
    topics: TopicsDep,
    ns: NamespaceDep,
    as_of: Annotated[Time | None, Query(description="facts valid then (ISO-8601)")] = None,
    history: Annotated[bool, Query(description="every fact, superseded ones too")] = False,
) -> TopicDetail:
    """The whole topic with its events (oldest first) and its typed edges; its facts are the
    currently valid ones, or those valid ``as_of``, or all of them with ``history``."""
    return topic_detail(topics, ns, topic_id, as_of, history)


def topic_detail(
    topics: TopicService,
    ns: str,
    topic_id: str,
    as_of: datetime | None = None,
    history: bool = False,
) -> TopicDetail:
    """The whole topic as REST shows it (the route and the MCP topic resource)."""
    found = topics.detail(ns, topic_id, as_of, history)
    return TopicDetail(
        **public(found.topic).model_dump(),
        events=[EventPublic.model_validate(e) for e in found.events],
        edges=[EdgePublic.model_validate(e) for e in found.edges],
    )


@router.patch("/{topic_id}", responses=errors(404, 409))
def update_topic(
    topic_id: TopicIdPath, body: TopicUpdate, topics: TopicsDep, ns: NamespaceDep, now: NowDep
) -> TopicPublic:
    """Replace the fields given; ``version`` must be the one you read, else 409."""
    return public(topics.update(ns, topic_id, body, now))


@router.get("/{topic_id}/neighbours", responses=errors(404))
def get_neighbours(
    topic_id: TopicIdPath,
    topics: TopicsDep,
    ns: NamespaceDep,
    types: Annotated[list[EdgeType] | None, Query(description="edge types (default all)")] = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> list[NeighbourPublic]:
    """Topics one typed edge away, strongest edge first."""
    return [
        NeighbourPublic(
            topic_id=n.topic.topic_id,
            name=n.topic.name,
            one_liner=n.topic.one_liner,
            last_seen_at=n.topic.time.last_seen_at,
            type=n.type,
            weight=n.weight,
            direction="out" if n.outgoing else "in",
        )
        for n in topics.neighbours(ns, topic_id, types or [], limit)
    ]


@router.post(  # a repeat adds the weight again
    "/{topic_id}/links", responses=errors(404), dependencies=NOT_RETRY_SAFE
)
def link_topics(
    topic_id: TopicIdPath, body: LinkCreate, topics: TopicsDep, ns: NamespaceDep, now: NowDep
) -> EdgePublic:
    """Create the edge ``topic_id -[type]-> to`` or add ``weight`` to it."""
    edge = topics.link(ns, topic_id, body.to, body.type, body.weight, now)
    return EdgePublic.model_validate(edge)
