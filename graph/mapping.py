"""The one place where models become Neo4j properties and records become models.

Nested spec fields are flattened with the spec's names (see docs/graph-model.md):
``time.first_seen_at`` -> ``first_seen_at``, ``stats.utility_score`` -> ``utility_score``,
``links.skill_refs`` -> ``skill_refs``, ``embedding.model`` -> ``embedding_model``. Lists of objects
(facts, numbers, open loops, notable events) are kept whole as JSON strings in ``*_json`` and, where
Cypher users want to read them, also as plain string lists (``facts``, ``open_loops``, ``number_keys``).

The ``redact_*`` functions give the copy of a model that a store writes: every free text (and
every string inside tool calls) passed through a :class:`~graph.redaction.Redactor`; ids, times
and numbers unchanged.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter

from graph.fulltext import day_tokens, namespace_token, span_tokens
from graph.models import (
    EdgeType,
    EmbeddingMeta,
    Fact,
    Message,
    NotableEvent,
    OpenLoop,
    Subject,
    Topic,
    TopicEdge,
    TopicEvent,
    TopicLinks,
    TopicStats,
    TopicTime,
    TypedNumber,
    WakePacket,
)
from graph.redaction import Redactor
from graph.validation import MAX_JSON_DEPTH, within_json_limits
from text.claims import state_tokens

_FACTS = TypeAdapter(list[Fact])
_LOOPS = TypeAdapter(list[OpenLoop])
_NUMBERS = TypeAdapter(list[TypedNumber])
_EVENTS = TypeAdapter(list[NotableEvent])


_PLAIN = frozenset({str, int, float, bool, list, type(None)})  # what Bolt gives as itself


def native(value: Any) -> Any:
    """Neo4j temporal values -> Python datetimes; everything else unchanged."""
    if type(value) in _PLAIN:  # most values: no attribute lookup (a topic has ~25 of them)
        return value
    to_native = getattr(value, "to_native", None)
    return to_native() if callable(to_native) else value


def _json_list(adapter: TypeAdapter[Any], text: str | None) -> Any:
    """A ``*_json`` list property as models ([] without parsing when empty: a light read's
    topics mostly hold "[]", and a context maps ~250 topics)."""
    return adapter.validate_json(text) if text and text != "[]" else []


def topic_props(topic: Topic) -> dict[str, Any]:
    """Flatten a topic into node properties (without the embedding vector)."""
    aliases = _dedupe(topic.aliases)
    return {
        "topic_id": topic.topic_id,
        "namespace": topic.namespace,
        "ns_token": namespace_token(topic.namespace),
        "schema_version": topic.schema_version,
        "name": topic.name,
        "name_lc": topic.name.lower(),
        "one_liner": topic.one_liner,
        "gist": topic.gist(),  # full-text: the topic's central facts (text.gist)
        "one_liner_source_ids": topic.one_liner_sources(),
        "facts": [f.text for f in topic.facts],
        # validity fields are left out while null, so old and new records are the same size
        "facts_json": _FACTS.dump_json(topic.facts, exclude_none=True).decode(),
        "numbers_json": _NUMBERS.dump_json(topic.numbers, exclude_none=True).decode(),
        "number_keys": [n.key for n in topic.numbers],
        # the states of a life its facts claim, now ("s...") and once ("p..."): topic_states
        # finds the topics holding a key across the namespace (text.claims, sleepwake.supersede)
        "state_keys": state_tokens(
            (f.text for f in topic.facts if f.invalid_at is None),
            (f.text for f in topic.facts if f.superseded_by is not None),
        ),
        "open_loops": [o.text for o in topic.open_loops],
        "open_loops_json": _LOOPS.dump_json(topic.open_loops).decode(),
        "aliases": aliases,
        "aliases_lc": [a.lower() for a in aliases],
        "alias_text": " | ".join(aliases),
        "first_seen_at": topic.time.first_seen_at,
        "last_seen_at": topic.time.last_seen_at,
        # a windowed full-text search names the days its window covers (fulltext.in_span)
        "span_days": span_tokens(topic.time.first_seen_at, topic.time.last_seen_at),
        "notable_events_json": _EVENTS.dump_json(topic.time.notable_events).decode(),
        "skill_refs": topic.links.skill_refs,
        "artifact_refs": topic.links.artifact_refs,
        "embedding_model": topic.embedding.model if topic.embedding else None,
        "embedding_hash": topic.embedding.hash if topic.embedding else None,
        "embedding_dimensions": topic.embedding.dimensions if topic.embedding else None,
        "utility_score": topic.stats.utility_score,
        "decay_bucket": topic.stats.decay_bucket,
        "touch_count": topic.stats.touch_count,
        "correction_count": topic.stats.correction_count,
        "constraint_count": topic.stats.constraint_count,
        "usage_count": topic.stats.usage_count,
        "last_used_at": topic.stats.last_used_at,
        "archived_at": topic.archived_at,
    }


USAGE_FIELDS = ("usage_count", "last_used_at")


def update_props(topic: Topic) -> dict[str, Any]:
    """Properties an update writes: not the keys, not the usage fields (only ``mark_used``
    writes those, so a writer holding an older read cannot roll usage back)."""
    props = topic_props(topic)
    for key in ("topic_id", "namespace", "ns_token", *USAGE_FIELDS):
        props.pop(key)
    return props


# Topic times a light read returns as ISO text (``toString`` in Cypher): the driver's pure-Python
# temporal decoding was the largest share of a context request's CPU (docs/performance.md)
def iso_time(value: Any) -> Any:
    """A Neo4j ``toString(datetime)`` text as an aware datetime ("...Z", "+01:00", a zone name in
    brackets dropped after its offset); anything else through ``native``."""
    if isinstance(value, str):
        return datetime.fromisoformat(value.split("[", 1)[0])
    return native(value)


def topic_from_props(props: dict[str, Any], related: list[str] | None = None) -> Topic:
    """Rebuild a topic from node properties (the inverse of ``topic_props``); the times may come
    as ISO text (the light reads). Built without validation, as ``model_construct`` builds it
    (``_built``: a context maps ~180 topics per request)."""
    p = props.get
    model = p("embedding_model")
    embedding = None
    if model:
        embedding = _built(
            EmbeddingMeta,
            {
                "model": native(model),
                "hash": native(p("embedding_hash")) or "",
                "dimensions": native(p("embedding_dimensions")) or 0,
            },
        )
    time = {
        "first_seen_at": iso_time(props["first_seen_at"]),
        "last_seen_at": iso_time(props["last_seen_at"]),
        "notable_events": _json_list(_EVENTS, p("notable_events_json")),
    }
    links = {
        "related_topic_ids": sorted(related or []),
        "skill_refs": list(p("skill_refs") or []),
        "artifact_refs": list(p("artifact_refs") or []),
    }
    stats = {
        "utility_score": float(p("utility_score") or 0.0),
        "decay_bucket": p("decay_bucket") or "hot",
        "touch_count": int(p("touch_count") or 0),
        "correction_count": int(p("correction_count") or 0),
        "constraint_count": int(p("constraint_count") or 0),
        "usage_count": int(p("usage_count") or 0),
        "last_used_at": iso_time(p("last_used_at")),
    }
    return _built(
        Topic,
        {
            "schema_version": native(p("schema_version", 1)),
            "topic_id": props["topic_id"],
            "namespace": props["namespace"],
            "name": props["name"],
            "one_liner": p("one_liner") or "",
            "facts": _json_list(_FACTS, p("facts_json")),
            "numbers": _json_list(_NUMBERS, p("numbers_json")),
            "open_loops": _json_list(_LOOPS, p("open_loops_json")),
            "aliases": list(p("aliases") or []),
            "time": _built(TopicTime, time),
            "links": _built(TopicLinks, links),
            "embedding": embedding,
            "stats": _built(TopicStats, stats),
            "version": int(p("version") or 0),
            "archived_at": iso_time(p("archived_at")),
        },
    )


_Built = TypeVar("_Built", bound=BaseModel)


def _plain_model(cls: type[BaseModel]) -> bool:
    """Whether ``model_construct`` does nothing for ``cls`` beyond storing the values given
    (no aliases, private attributes, extras kept or post-init hook)."""
    return (
        cls.__pydantic_post_init__ is None
        and not cls.__private_attributes__
        and not cls.__pydantic_root_model__
        and cls.model_config.get("extra") != "allow"
        and all(
            f.alias is None and f.validation_alias is None for f in cls.__pydantic_fields__.values()
        )
    )


_PLAIN_MODELS: dict[type[BaseModel], bool] = {
    c: _plain_model(c) for c in (Topic, TopicTime, TopicLinks, TopicStats, EmbeddingMeta)
}


def _built(cls: type[_Built], values: dict[str, Any]) -> _Built:
    """``cls.model_construct(**values)`` where ``values`` names every field of ``cls`` in
    declaration order, at a fifth of its cost (4.7 against 23.6 us for a ``Topic``, same run:
    it walks every field's aliases and default even when all are given). Falls back to
    ``model_construct`` for a model for which that does more than store the values
    (``_plain_model``)."""
    if not _PLAIN_MODELS.get(cls, False):
        return cls.model_construct(**values)
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def event_props(event: TopicEvent) -> dict[str, Any]:
    return event.model_dump()


def event_from_props(props: dict[str, Any]) -> TopicEvent:
    p = {k: native(v) for k, v in props.items() if k != "embedding"}
    return TopicEvent.model_validate(p)


def message_props(message: Message) -> dict[str, Any]:
    data = message.model_dump(exclude={"tool_calls"})
    data["tool_calls_json"] = json.dumps(message.tool_calls)
    data["ns_token"] = namespace_token(message.namespace)
    # a windowed search names the days it covers (graph/fulltext.py in_window)
    data["at_days"] = day_tokens(message.at)
    # the participant lookup of the context path (find_speakers_named.cypher) compares it
    data["speaker_lc"] = speaker_key(message.speaker) if message.speaker else None
    return data


def speaker_key(speaker: str) -> str:
    """How a speaker's name is looked up: stripped and lower-cased, as the context path's
    phrases are (``graph.fulltext.wanted_names``) and as migration 014 backfilled it."""
    return speaker.strip().lower()


_MESSAGE_TIMES = ("at", "compacted_at")


def message_from_props(props: dict[str, Any]) -> Message:
    """Rebuild a message from node properties; the times may come as ISO text (the context
    path's reads: no driver temporal decoding, docs/performance.md)."""
    p = {
        k: iso_time(v) if k in _MESSAGE_TIMES else native(v)
        for k, v in props.items()
        if k not in ("ns_token", "speaker_lc", "at_days", "passages_pending")
    }
    p["tool_calls"] = _readable_tool_calls(p.pop("tool_calls_json", None))
    return Message.model_validate(p)


def _readable_tool_calls(text: str | None) -> list[dict[str, Any]]:
    """Stored tool calls, or a stand-in when they break today's limits: a message stored before
    the limits (nested 900 deep) must not make every later read of the conversation fail."""
    try:
        calls = json.loads(text or "[]")
    except (RecursionError, ValueError):
        calls = None
    if isinstance(calls, list) and all(within_json_limits(c) for c in calls):
        return [c if isinstance(c, dict) else {"value": c} for c in calls]
    return [{"withheld": f"stored tool calls exceed {MAX_JSON_DEPTH} levels or cannot be read"}]


def wake_packet_props(packet: WakePacket) -> dict[str, Any]:
    """Flatten a wake packet; ``in_progress.*`` becomes ``in_progress_*``, the tail is JSON."""
    return {
        "packet_id": packet.packet_id,
        "namespace": packet.namespace,
        "schema_version": packet.schema_version,
        "slept_at": packet.slept_at,
        "conversation_tail_json": json.dumps(
            [t.model_dump(mode="json") for t in packet.conversation_tail]
        ),
        "active_subject_hints": packet.active_subject_hints,
        "top_topic_ids": packet.top_topic_ids,
        "recent_skill_refs": packet.recent_skill_refs,
        "in_progress_status": packet.in_progress.status,
        "in_progress_resume_hint": packet.in_progress.resume_hint,
        "in_progress_topic_id": packet.in_progress.topic_id,
    }


def wake_packet_from_props(props: dict[str, Any]) -> WakePacket:
    p = {k: native(v) for k, v in props.items()}
    return WakePacket.model_validate(
        {
            "packet_id": p["packet_id"],
            "namespace": p["namespace"],
            "schema_version": p.get("schema_version", 1),
            "slept_at": p["slept_at"],
            "conversation_tail": json.loads(p.get("conversation_tail_json") or "[]"),
            "active_subject_hints": p.get("active_subject_hints") or [],
            "top_topic_ids": p.get("top_topic_ids") or [],
            "recent_skill_refs": p.get("recent_skill_refs") or [],
            "in_progress": {
                "status": p.get("in_progress_status") or "idle",
                "resume_hint": p.get("in_progress_resume_hint") or "",
                "topic_id": p.get("in_progress_topic_id"),
            },
        }
    )


def _dedupe(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for v in values:
        if v.lower() not in seen:
            seen.add(v.lower())
            out.append(v)
    return out


def as_datetime(value: Any) -> datetime | None:
    v = native(value)
    return v if isinstance(v, datetime) else None


# -- redaction: the copy of a model that is written --------------------------------------------
def redact_message(message: Message, r: Redactor) -> Message:
    """Content, speaker, every string of the tool calls (arguments, outputs, errors) and the
    external id (the surfaces refuse a secret-shaped id; this catches the operator's shapes)."""
    return message.model_copy(
        update={
            "content": r.text(message.content),
            "speaker": r.text(message.speaker) if message.speaker else message.speaker,
            "tool_calls": r.value(message.tool_calls),
            "external_id": r.text(message.external_id)
            if message.external_id
            else message.external_id,
        }
    )


def redact_topic(topic: Topic, r: Redactor) -> Topic:
    """Name, one-liner, aliases, facts (text, why they closed, their source ids), open loops,
    number keys and units, notable events, skill and artifact references (a URL there may
    carry a password)."""
    events = [
        e.model_copy(update={"event": r.text(e.event), "source_message_ids": _ids(e, r)})
        for e in topic.time.notable_events
    ]
    return topic.model_copy(
        update={
            "name": r.text(topic.name),
            "one_liner": r.text(topic.one_liner),
            "aliases": [r.text(a) for a in topic.aliases],
            "facts": [_with_text(f, r) for f in topic.facts],
            "open_loops": [_with_text(o, r) for o in topic.open_loops],
            "numbers": [
                n.model_copy(
                    update={
                        "key": r.text(n.key),
                        "unit": n.unit and r.text(n.unit),
                        "source_message_ids": _ids(n, r),
                    }
                )
                for n in topic.numbers
            ],
            "time": topic.time.model_copy(update={"notable_events": events}),
            "links": topic.links.model_copy(
                update={
                    "artifact_refs": [r.text(a) for a in topic.links.artifact_refs],
                    "skill_refs": [r.text(a) for a in topic.links.skill_refs],
                }
            ),
        }
    )


def _ids(item: Any, r: Redactor) -> list[str]:
    return [r.text(i) for i in item.source_message_ids]


def _with_text(item: Fact | OpenLoop, r: Redactor) -> Any:
    update: dict[str, Any] = {"text": r.text(item.text), "source_message_ids": _ids(item, r)}
    if isinstance(item, Fact) and item.invalid_reason:
        update["invalid_reason"] = r.text(item.invalid_reason)
    changed = any(getattr(item, k) != v for k, v in update.items())
    return item.model_copy(update=update) if changed else item


def redact_event(event: TopicEvent, r: Redactor) -> TopicEvent:
    return event.model_copy(
        update={"delta_summary": r.text(event.delta_summary), "source_message_ids": _ids(event, r)}
    )


def redact_subject(subject: Subject, r: Redactor) -> Subject:
    return subject.model_copy(update={"label": r.text(subject.label)})


def redact_wake_packet(packet: WakePacket, r: Redactor) -> WakePacket:
    """The conversation tail, the subject hints, the recent skill references and the resume
    hint."""
    return packet.model_copy(
        update={
            "conversation_tail": [
                t.model_copy(update={"content": r.text(t.content)})
                for t in packet.conversation_tail
            ],
            "active_subject_hints": [r.text(h) for h in packet.active_subject_hints],
            "recent_skill_refs": [r.text(h) for h in packet.recent_skill_refs],
            "in_progress": packet.in_progress.model_copy(
                update={"resume_hint": r.text(packet.in_progress.resume_hint)}
            ),
        }
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # edges always carry a time; a fallback, never reached


def edge_from_row(from_id: str, row: Any) -> TopicEdge:
    """A typed edge from a query row (``to_id``, ``type``, ``weight``, ``last_updated_at``)."""
    return TopicEdge.model_construct(
        from_topic_id=from_id,
        to_topic_id=row["to_id"],
        type=EdgeType(row["type"]),
        weight=float(row["weight"] or 0.0),
        last_updated_at=as_datetime(row["last_updated_at"]) or _EPOCH,
    )
