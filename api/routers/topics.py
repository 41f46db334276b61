"""``/v1/topics``: create, read (with events), update (versioned), search, neighbours, links."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from api import topic_service
from api.deps import ContainerDep, NamespaceDep, NowDep
from api.routers.common import errors
from api.schemas import (
    EdgePublic,
    LinkCreate,
    NeighbourPublic,
    SearchPublic,
    Time,
    TopicCreate,
    TopicDetail,
    TopicPublic,
    TopicSearch,
    TopicUpdate,
)
from api.search import search_topics
from graph.models import EdgeType

router = APIRouter(prefix="/topics", tags=["topics"])

TopicIdPath = Annotated[str, Path(min_length=1, max_length=64, description="the topic's id")]


@router.post("", status_code=201)
def create_topic(body: TopicCreate, c: ContainerDep, ns: NamespaceDep, now: NowDep) -> TopicPublic:
    """Create a topic; its one-liner (or name) is embedded. Secrets in text are redacted."""
    return topic_service.public(topic_service.create(c, ns, body, now))


@router.get("/search")
def search_get(
    q: Annotated[TopicSearch, Query()], c: ContainerDep, ns: NamespaceDep
) -> SearchPublic:
    """Ranked topics for ``query``; a window (phrase, range, or a phrase in the query) filters
    and boosts. Each hit says why it was found."""
    return search_topics(c, ns, q)


@router.post("/search")
def search_post(body: TopicSearch, c: ContainerDep, ns: NamespaceDep) -> SearchPublic:
    """The same search with a JSON body."""
    return search_topics(c, ns, body)


@router.get("/{topic_id}", responses=errors(404))
def get_topic(
    topic_id: TopicIdPath,
    c: ContainerDep,
    ns: NamespaceDep,
    as_of: Annotated[Time | None, Query(description="facts valid then (ISO-8601)")] = None,
    history: Annotated[bool, Query(description="every fact, superseded ones too")] = False,
) -> TopicDetail:
    """The whole topic with its events (oldest first) and its typed edges; its facts are the
    currently valid ones, or those valid ``as_of``, or all of them with ``history``."""
    return topic_service.detail(c, ns, topic_id, as_of, history)


@router.patch("/{topic_id}", responses=errors(404, 409))
def update_topic(
    topic_id: TopicIdPath, body: TopicUpdate, c: ContainerDep, ns: NamespaceDep, now: NowDep
) -> TopicPublic:
    """Replace the fields given; ``version`` must be the one you read, else 409."""
    return topic_service.public(topic_service.update(c, ns, topic_id, body, now))


@router.get("/{topic_id}/neighbours", responses=errors(404))
def get_neighbours(
    topic_id: TopicIdPath,
    c: ContainerDep,
    ns: NamespaceDep,
    types: Annotated[list[EdgeType] | None, Query(description="edge types (default all)")] = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> list[NeighbourPublic]:
    """Topics one typed edge away, strongest edge first."""
    return topic_service.neighbours(c, ns, topic_id, types or [], limit)


@router.post("/{topic_id}/links", responses=errors(404))
def link_topics(
    topic_id: TopicIdPath, body: LinkCreate, c: ContainerDep, ns: NamespaceDep, now: NowDep
) -> EdgePublic:
    """Create the edge ``topic_id -[type]-> to`` or add ``weight`` to it."""
    edge = topic_service.link(c, ns, topic_id, body.to, body.type, body.weight, now)
    return EdgePublic.model_validate(edge)
