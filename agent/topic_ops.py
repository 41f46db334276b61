"""Topic operations behind the ``topics_*`` tools: search with a time phrase, full records with
events, create-or-add (redacted, embedded, with a TopicEvent) and typed links.

Kept apart from the tool registry so the REST API can call the same functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graph.errors import NotFound, ValidationFailed
from graph.models import Fact, OpenLoop, Topic, TopicEvent, TopicTime, edge_type, parse
from retrieval.timephrases import TimeWindow, resolve
from sleepwake.redact import redact

if TYPE_CHECKING:
    from api.container import Container

SNIPPET_FACTS = 3


@dataclass(frozen=True)
class TopicChange:
    """What an agent asked to write: a new one_liner, and items to add (never to remove)."""

    name: str | None = None
    one_liner: str | None = None
    facts: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    open_loops: list[str] = field(default_factory=list)


def window_for(
    c: Container, namespace: str, query: str, phrase: str | None, now: datetime
) -> TimeWindow | None:
    """The window of an explicit ``phrase`` (refused when it names no time), else the query's."""
    history = c.sleep_history(namespace)
    if phrase is not None and phrase.strip():
        window = resolve(phrase, now, c.settings.timezone, history)
        if window is None:
            raise ValidationFailed(
                f"time_window {phrase!r} is not a time phrase I understand "
                "(try 'last week', 'yesterday', 'in March', 'before you slept', '2026-03-02')"
            )
        return window
    return resolve(query, now, c.settings.timezone, history)


def search(
    c: Container, namespace: str, query: str, now: datetime, phrase: str | None, k: int
) -> dict[str, Any]:
    """Ranked topic snippets; a window filters and boosts, and expands 1 hop over edges."""
    window = window_for(c, namespace, query, phrase, now)
    result = c.search.run(namespace, query, now, k, window, expand=window is not None)
    full = {t.topic_id: t for t in c.topics.get(namespace, [h.topic.topic_id for h in result.hits])}
    for hit in result.hits:  # search returns match fields only; snippets want facts and loops
        hit.topic = full.get(hit.topic.topic_id, hit.topic)
    return {
        "time_window": window.as_dict() if window else None,
        "degraded": result.degraded,
        "topics": [
            {
                "topic_id": h.topic.topic_id,
                "name": h.topic.name,
                "one_liner": h.topic.one_liner,
                "first_seen_at": h.topic.time.first_seen_at.isoformat(),
                "last_seen_at": h.topic.time.last_seen_at.isoformat(),
                "facts": [f.text for f in h.topic.current().facts[-SNIPPET_FACTS:]],
                "open_loops": [o.text for o in h.topic.open_loops[:SNIPPET_FACTS]],
                "score": round(h.score, 4),
                "why": h.reason,
            }
            for h in result.hits
        ],
    }


def get_full(c: Container, namespace: str, topic_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Whole topics with their events, in the order asked; unknown ids are refused."""
    found = {t.topic_id: t for t in c.topics.get(namespace, list(topic_ids))}
    missing = [tid for tid in topic_ids if tid not in found]
    if missing:
        raise NotFound(f"no topic with id {', '.join(missing)} in this memory")
    events: dict[str, list[dict[str, Any]]] = {}
    for e in c.events.for_topics(namespace, list(topic_ids)):
        events.setdefault(e.topic_id, []).append(e.model_dump(mode="json"))
    return [  # the facts valid now (topics_history has the superseded ones)
        {
            **found[tid].current().model_dump(mode="json", exclude={"namespace"}),
            "events": events.get(tid, []),
        }
        for tid in topic_ids
    ]


def upsert(
    c: Container,
    namespace: str,
    topic_id: str | None,
    change: TopicChange,
    now: datetime,
    message_ids: Sequence[str] = (),
) -> dict[str, Any]:
    """Create a topic (``topic_id`` None) or add to one; secrets are redacted first."""
    change = _redacted(change)
    sources = list(message_ids)
    if topic_id is None:
        topic = _new_topic(namespace, change, now, sources)
        vector = c.embedder.embed([topic.semantic_text()])[0]
        c.topics.create([topic], [vector], now)
        created = True
    else:
        topic = c.topics.merge(
            namespace, topic_id, lambda t: _apply(c, t, change, now, sources), now
        )
        created = False
    summary = _delta_summary(change, created)
    c.events.record(
        namespace,
        [
            TopicEvent(
                namespace=namespace,
                topic_id=topic.topic_id,
                at=now,
                delta_summary=summary,
                source_message_ids=sources,
            )
        ],
    )
    return {"topic_id": topic.topic_id, "created": created, "version": topic.version}


def link(
    c: Container, namespace: str, from_id: str, to_id: str, type_: str, delta: float, now: datetime
) -> dict[str, Any]:
    """Create or strengthen one typed edge; both topics must exist in this namespace."""
    from api import topic_service  # the REST API's link: one place that checks both ends

    edge = topic_service.link(c, namespace, from_id, to_id, edge_type(type_), delta, now)
    return edge.model_dump(mode="json")


def _redacted(change: TopicChange) -> TopicChange:
    return TopicChange(
        name=redact(change.name) if change.name else change.name,
        one_liner=redact(change.one_liner) if change.one_liner else change.one_liner,
        facts=[redact(f) for f in change.facts],
        aliases=[redact(a) for a in change.aliases],
        open_loops=[redact(o) for o in change.open_loops],
    )


def _new_topic(namespace: str, change: TopicChange, now: datetime, sources: list[str]) -> Topic:
    if not change.name:
        raise ValidationFailed("name is required to create a topic")
    return parse(
        Topic,
        {
            "namespace": namespace,
            "name": change.name,
            "one_liner": change.one_liner or "",
            "facts": [{"text": f, "at": now, "source_message_ids": sources} for f in change.facts],
            "open_loops": [
                {"text": o, "at": now, "source_message_ids": sources} for o in change.open_loops
            ],
            "aliases": change.aliases,
            "time": TopicTime(first_seen_at=now, last_seen_at=now),
        },
    )


def _apply(
    c: Container, topic: Topic, change: TopicChange, now: datetime, sources: list[str]
) -> tuple[Topic, list[float] | None]:
    known_facts = {f.text.casefold() for f in topic.facts if f.invalid_at is None}
    known_loops = {o.text.casefold() for o in topic.open_loops}
    known_names = {a.casefold() for a in [topic.name, *topic.aliases]}
    facts = [
        Fact(text=f, at=now, source_message_ids=sources)
        for f in dict.fromkeys(change.facts)
        if f.casefold() not in known_facts
    ]
    loops = [
        OpenLoop(text=o, at=now, source_message_ids=sources)
        for o in dict.fromkeys(change.open_loops)
        if o.casefold() not in known_loops
    ]
    aliases = [a for a in dict.fromkeys(change.aliases) if a.casefold() not in known_names]
    one_liner = change.one_liner if change.one_liner else topic.one_liner
    updated = topic.model_copy(
        update={
            "one_liner": one_liner,
            "facts": [*topic.facts, *facts],
            "open_loops": [*topic.open_loops, *loops],
            "aliases": [*topic.aliases, *aliases],
            "time": topic.time.model_copy(
                update={"last_seen_at": max(now, topic.time.last_seen_at)}
            ),
        }
    )
    vector = (
        c.embedder.embed([updated.semantic_text()])[0] if one_liner != topic.one_liner else None
    )
    return updated, vector


def _delta_summary(change: TopicChange, created: bool) -> str:
    parts = ["created by the agent" if created else "updated by the agent"]
    if change.one_liner:
        parts.append(f"one_liner: {change.one_liner}")
    for label, items in (
        ("facts", change.facts),
        ("aliases", change.aliases),
        ("open loops", change.open_loops),
    ):
        if items:
            parts.append(f"+{len(items)} {label}")
    return "; ".join(parts)[:2000]
