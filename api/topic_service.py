"""Topic operations behind ``/v1/topics``: create, read with events and edges, versioned update,
neighbours and links. Text is redacted before it is stored (as the sleep pipeline does), the
one-liner (or name) is embedded, and every write records a ``TopicEvent`` so the timeline shows
API edits beside sleeps.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from api.schemas import (
    EdgePublic,
    EventPublic,
    FactCreate,
    NeighbourPublic,
    NumberCreate,
    TopicCreate,
    TopicDetail,
    TopicPublic,
    TopicUpdate,
    _TopicFields,
)
from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.models import EdgeType, EmbeddingMeta, Topic, TopicEdge, TopicEvent, parse
from graph.topics import LinkRequest
from retrieval.embedding import text_hash
from sleepwake.redact import redact

if TYPE_CHECKING:
    from api.container import Container


def public(topic: Topic) -> TopicPublic:
    return TopicPublic(
        **topic.model_dump(exclude={"namespace", "embedding", "schema_version"}),
        embedding_model=topic.embedding.model if topic.embedding else None,
    )


def create(c: Container, namespace: str, body: TopicCreate, now: datetime) -> Topic:
    """A new topic (version 1), embedded and recorded with a 'created' event."""
    first = body.first_seen_at or body.last_seen_at or now
    data: dict[str, Any] = {
        "namespace": namespace,
        "name": redact(body.name),
        "time": {"first_seen_at": first, "last_seen_at": body.last_seen_at or first},
        **_fields(body, now),
    }
    topic = _embedded(c, parse(Topic, data))
    c.topics.create([topic], [_vector(c, topic)], now)
    _record(c, namespace, topic.topic_id, now, "created via the API")
    return c.topics.get_one(namespace, topic.topic_id)


def update(c: Container, namespace: str, topic_id: str, body: TopicUpdate, now: datetime) -> Topic:
    """Replace the given fields if the stored version is still ``body.version`` (else 409)."""
    current = c.topics.get_one(namespace, topic_id)
    if current.version != body.version:
        raise VersionConflict(
            f"topic {topic_id} is at version {current.version}, not {body.version}: "
            "re-read it and apply your change again"
        )
    data = current.model_dump()
    fields = _fields(body, now)
    data["links"].update(fields.pop("links"))
    if "facts" in fields:  # they replace the valid facts; superseded ones stay as history
        fields["facts"] = [f for f in data["facts"] if f["invalid_at"]] + fields["facts"]
    data.update(fields)
    if body.name is not None:
        data["name"] = redact(body.name)
    if body.last_seen_at is not None:
        if body.last_seen_at < current.time.first_seen_at:
            raise ValidationFailed("last_seen_at must not be before the topic's first_seen_at")
        data["time"]["last_seen_at"] = body.last_seen_at
    updated = parse(Topic, data)
    vector = None
    if updated.semantic_text() != current.semantic_text() or updated.embedding is None:
        updated, vector = _embedded(c, updated), _vector(c, updated)
    c.topics.update(updated, vector, now, expected_version=body.version)
    changed = sorted(body.model_dump(exclude_none=True, exclude={"version"}))
    _record(c, namespace, topic_id, now, "updated via the API: " + ", ".join(changed))
    return c.topics.get_one(namespace, topic_id)


def detail(
    c: Container,
    namespace: str,
    topic_id: str,
    as_of: datetime | None = None,
    history: bool = False,
) -> TopicDetail:
    """The whole topic with its events (oldest first) and its typed edges; facts valid now
    (or ``as_of``; every one with ``history``)."""
    topic = c.topics.get_one(namespace, topic_id)
    topic = topic if history else topic.view(as_of)
    events = c.events.for_topics(namespace, [topic_id])
    edges = c.topics.edges(namespace, topic_id)
    return TopicDetail(
        **public(topic).model_dump(),
        events=[EventPublic.model_validate(e) for e in events],
        edges=[EdgePublic.model_validate(e) for e in edges],
    )


def neighbours(
    c: Container, namespace: str, topic_id: str, types: list[EdgeType], limit: int
) -> list[NeighbourPublic]:
    """1-hop neighbours over the given edge types (all when empty), strongest first."""
    if not c.topics.summaries(namespace, [topic_id]):
        raise NotFound(f"topic {topic_id} not found")
    found = c.topics.neighbours(namespace, [topic_id], types or tuple(EdgeType), limit, light=True)
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
        for n in found
    ]


def link(
    c: Container,
    namespace: str,
    from_id: str,
    to_id: str,
    etype: EdgeType,
    weight: float,
    now: datetime,
) -> TopicEdge:
    """Create or strengthen one typed edge; both topics must be in this namespace (else 404)."""
    edges = c.topics.link(namespace, [LinkRequest(from_id, to_id, etype, weight)], now)
    if not edges:
        missing = {from_id, to_id} - {t.topic_id for t in c.topics.get(namespace, [from_id, to_id])}
        raise NotFound(f"topic {', '.join(sorted(missing)) or to_id} not found")
    return edges[0]


def _fields(body: _TopicFields, now: datetime) -> dict[str, Any]:
    """The optional fields that were given, redacted, in the Topic model's shape."""
    out: dict[str, Any] = {}
    if body.one_liner is not None:
        out["one_liner"] = redact(body.one_liner)
    if body.aliases is not None:
        out["aliases"] = [redact(a) for a in body.aliases]
    if body.facts is not None:
        out["facts"] = [_item(f, now) for f in body.facts]
    if body.open_loops is not None:
        out["open_loops"] = [_item(o, now) for o in body.open_loops]
    if body.numbers is not None:
        out["numbers"] = [_number(n) for n in body.numbers]
    links = {k: getattr(body, k) for k in ("skill_refs", "artifact_refs")}
    out["links"] = {k: v for k, v in links.items() if v is not None}
    return out


def _item(item: FactCreate, now: datetime) -> dict[str, Any]:
    return {
        "text": redact(item.text),
        "at": item.at or now,
        "source_message_ids": item.source_message_ids,
    }


def _number(n: NumberCreate) -> dict[str, Any]:
    return {**n.model_dump(), "key": redact(n.key)}


def _embedded(c: Container, topic: Topic) -> Topic:
    meta = EmbeddingMeta(model=c.embedder.model_name, hash=text_hash(topic.semantic_text()))
    return topic.model_copy(update={"embedding": meta})


def _vector(c: Container, topic: Topic) -> list[float]:
    return c.embedder.embed([topic.semantic_text()])[0]


def _record(c: Container, namespace: str, topic_id: str, now: datetime, summary: str) -> None:
    event = TopicEvent(
        namespace=namespace,
        topic_id=topic_id,
        at=now,
        delta_summary=summary[:2000],
        source_message_ids=[],
    )
    c.events.record(namespace, [event])
