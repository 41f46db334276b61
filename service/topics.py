"""Topics as callers change and read them: create, versioned update, the agent's create-or-add,
typed links, neighbours, search with a time window, the timeline.

One write path: every write redacts its text, embeds the topic's semantic text when it changed
(recording the model and text hash, so the next sleep does not re-embed it) and records a
``TopicEvent``, so the timeline shows API and agent edits beside sleeps. REST, the tools, the CLI
and MCP all come here; the request models of a surface only have to look like the protocols
below (``api.schemas.TopicCreate`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field
from datetime import datetime
from typing import Any, Protocol

from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.events import EventStore
from graph.models import (
    EdgeType,
    EmbeddingMeta,
    Fact,
    OpenLoop,
    Topic,
    TopicEdge,
    TopicEvent,
    TopicTime,
    parse,
)
from graph.redaction import Redactor
from graph.topics import LinkRequest, Neighbour, TopicStore
from retrieval.embedding import Embedder, cache_scope, text_hash
from retrieval.search import SearchResult, TopicSearch
from service.windows import WindowResolver
from text.timephrases import TimeWindow


# -- what a surface hands in ------------------------------------------------------------------
class ItemInput(Protocol):
    """A fact or open loop as given: text, when, and the messages it came from."""

    @property
    def text(self) -> str: ...
    @property
    def at(self) -> datetime | None: ...
    @property
    def source_message_ids(self) -> list[str]: ...


class NumberInput(Protocol):
    @property
    def key(self) -> str: ...
    def model_dump(self) -> dict[str, Any]: ...


class TopicFieldsInput(Protocol):
    """The optional fields of a create or update: given ones replace, None ones are kept."""

    @property
    def one_liner(self) -> str | None: ...
    @property
    def aliases(self) -> Sequence[str] | None: ...
    @property
    def facts(self) -> Sequence[ItemInput] | None: ...
    @property
    def open_loops(self) -> Sequence[ItemInput] | None: ...
    @property
    def numbers(self) -> Sequence[NumberInput] | None: ...
    @property
    def skill_refs(self) -> Sequence[str] | None: ...
    @property
    def artifact_refs(self) -> Sequence[str] | None: ...
    @property
    def last_seen_at(self) -> datetime | None: ...


class TopicCreateInput(TopicFieldsInput, Protocol):
    @property
    def name(self) -> str: ...
    @property
    def first_seen_at(self) -> datetime | None: ...


class TopicUpdateInput(TopicFieldsInput, Protocol):
    @property
    def version(self) -> int: ...
    @property
    def name(self) -> str | None: ...
    def model_dump(self, *, exclude_none: bool, exclude: set[str]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class TopicChange:
    """What an agent asked to write: a new one_liner, and items to add (never to remove)."""

    name: str | None = None
    one_liner: str | None = None
    facts: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    open_loops: list[str] = field(default_factory=list)


# -- what comes back ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TopicDetail:
    topic: Topic
    events: list[TopicEvent]
    edges: list[TopicEdge]


@dataclass(frozen=True)
class Upserted:
    topic: Topic
    created: bool


@dataclass(frozen=True)
class WindowedSearch:
    result: SearchResult
    window: TimeWindow | None


@dataclass(frozen=True)
class Timeline:
    events: list[TopicEvent]
    names: dict[str, str]
    truncated: bool


@dataclass(eq=False)
class TopicService:
    """Topic use cases of one deployment; every method takes the caller's namespace."""

    topics: TopicStore
    events: EventStore
    searcher: TopicSearch
    embedder: Embedder
    windows: WindowResolver
    redactor: InitVar[Redactor | None] = None

    def __post_init__(self, redactor: Redactor | None) -> None:
        self.redact = (redactor or Redactor()).text  # before anything is embedded or stored

    # -- reads -----------------------------------------------------------------------------------
    def get(self, namespace: str, topic_id: str) -> Topic:
        """One topic; ``NotFound`` when this namespace has none of that id."""
        return self.topics.get_one(namespace, topic_id)

    def get_many(self, namespace: str, topic_ids: Sequence[str]) -> list[Topic]:
        """Topics in the order asked; any unknown id is refused (``NotFound``), naming it."""
        found = {t.topic_id: t for t in self.topics.get(namespace, list(topic_ids))}
        missing = [tid for tid in topic_ids if tid not in found]
        if missing:
            raise NotFound(f"no topic with id {', '.join(missing)} in this memory")
        return [found[tid] for tid in topic_ids]

    def events_of(self, namespace: str, topic_ids: Sequence[str]) -> list[TopicEvent]:
        return self.events.for_topics(namespace, list(topic_ids))

    def detail(
        self,
        namespace: str,
        topic_id: str,
        as_of: datetime | None = None,
        history: bool = False,
    ) -> TopicDetail:
        """The whole topic with its events (oldest first) and its typed edges; facts valid now
        (or ``as_of``; every one with ``history``)."""
        topic = self.get(namespace, topic_id)
        topic = topic if history else topic.view(as_of)
        events = self.events.for_topics(namespace, [topic_id])
        return TopicDetail(topic, events, self.topics.edges(namespace, topic_id))

    def neighbours(
        self, namespace: str, topic_id: str, types: Sequence[EdgeType], limit: int
    ) -> list[Neighbour]:
        """1-hop neighbours over the given edge types (all when empty), strongest first."""
        if not self.topics.summaries(namespace, [topic_id]):
            raise NotFound(f"topic {topic_id} not found")
        kinds = tuple(types) or tuple(EdgeType)
        return self.topics.neighbours(namespace, [topic_id], kinds, limit, light=True)

    def search(
        self,
        namespace: str,
        query: str,
        now: datetime,
        k: int,
        window: TimeWindow | None,
        expand: bool | None = None,
        as_of: datetime | None = None,
    ) -> WindowedSearch:
        """Ranked topics; the window is the one given, else the time phrase inside ``query``.
        With a window the graph is expanded one hop unless ``expand`` says otherwise; with
        ``as_of`` only topics known then."""
        # the query's own time phrase favours topics with something said then; it filters
        # nothing (docs/topics.md, branch topics11)
        named = self.windows.in_text(namespace, query, now) if window is None else None
        grow = expand if expand is not None else (window or named) is not None
        fetch = k if as_of is None else min(200, k * 5)  # as_of filters after ranking
        with cache_scope(namespace):  # the query's vector cached for this namespace only
            result = self.searcher.run(
                namespace, query, now, k=fetch, window=window, expand=grow, named=named
            )
        if as_of is not None:
            known = [h for h in result.hits if h.topic.time.first_seen_at <= as_of]
            result.hits = known[:k]
        return WindowedSearch(result, window or named)

    def search_full(
        self, namespace: str, query: str, now: datetime, phrase: str | None, k: int
    ) -> WindowedSearch:
        """The agent's search: an explicit ``phrase`` must name a time; hits carry whole topics
        (facts and loops), as search itself returns match fields only."""
        # an explicit phrase filters; the query's own is a preference (``search``)
        window = None
        if phrase is not None and phrase.strip():
            window = self.windows.phrase(namespace, phrase, now, "time_window")
        found = self.search(namespace, query, now, k, window)
        ids = [h.topic.topic_id for h in found.result.hits]
        full = {t.topic_id: t for t in self.topics.get(namespace, ids)}
        for hit in found.result.hits:
            hit.topic = full.get(hit.topic.topic_id, hit.topic)
        return found

    def timeline(self, namespace: str, window: TimeWindow | None, limit: int) -> Timeline:
        """Topic events in the window, oldest first, with their topics' names."""
        since, until = (window.start, window.end) if window else (None, None)
        events = self.events.in_window(namespace, since, until, limit=limit + 1)
        shown = events[:limit]
        ids = list({e.topic_id for e in shown})
        names = {t.topic_id: t.name for t, _ in self.topics.summaries(namespace, ids)}
        return Timeline(shown, names, len(events) > limit)

    # -- writes ----------------------------------------------------------------------------------
    def create(self, namespace: str, body: TopicCreateInput, now: datetime) -> Topic:
        """A new topic (version 1), embedded and recorded with a 'created' event."""
        first = body.first_seen_at or body.last_seen_at or now
        data: dict[str, Any] = {
            "namespace": namespace,
            "name": self.redact(body.name),
            "time": {"first_seen_at": first, "last_seen_at": body.last_seen_at or first},
            **_fields(body, now, self.redact),
        }
        return self._create(parse(Topic, data), now, "created via the API", [])

    def update(self, namespace: str, topic_id: str, body: TopicUpdateInput, now: datetime) -> Topic:
        """Replace the given fields if the stored version is still ``body.version`` (else 409)."""
        current = self.topics.get_one(namespace, topic_id, for_update=True)
        if current.version != body.version:
            raise VersionConflict(
                f"topic {topic_id} is at version {current.version}, not {body.version}: "
                "re-read it and apply your change again"
            )
        data = current.model_dump()
        fields = _fields(body, now, self.redact)
        data["links"].update(fields.pop("links"))
        if "facts" in fields:  # they replace the valid facts; superseded ones stay as history
            fields["facts"] = [f for f in data["facts"] if f["invalid_at"]] + fields["facts"]
        data.update(fields)
        if body.name is not None:
            data["name"] = self.redact(body.name)
        if body.last_seen_at is not None:
            if body.last_seen_at < current.time.first_seen_at:
                raise ValidationFailed("last_seen_at must not be before the topic's first_seen_at")
            data["time"]["last_seen_at"] = body.last_seen_at
        updated, vector = self._embedded(parse(Topic, data), current)
        self.topics.update(updated, vector, now, expected_version=body.version)
        changed = sorted(body.model_dump(exclude_none=True, exclude={"version"}))
        self._record(namespace, topic_id, now, "updated via the API: " + ", ".join(changed), [])
        return self.topics.get_one(namespace, topic_id)

    def upsert(
        self,
        namespace: str,
        topic_id: str | None,
        change: TopicChange,
        now: datetime,
        message_ids: Sequence[str] = (),
    ) -> Upserted:
        """The agent's write: create a topic (``topic_id`` None, name required) or add facts,
        aliases and open loops to one (never removing any); secrets are redacted first."""
        change = _redacted(change, self.redact)
        sources = list(message_ids)
        summary = _delta_summary(change, created=topic_id is None)
        if topic_id is None:
            topic = self._create(_new_topic(namespace, change, now, sources), now, summary, sources)
            return Upserted(topic, created=True)
        topic = self.topics.merge(
            namespace, topic_id, lambda t: self._embedded(_added(t, change, now, sources), t), now
        )
        self._record(namespace, topic.topic_id, now, summary, sources)
        return Upserted(topic, created=False)

    def link(
        self,
        namespace: str,
        from_id: str,
        to_id: str,
        etype: EdgeType,
        weight: float,
        now: datetime,
    ) -> TopicEdge:
        """Create or strengthen one typed edge; both topics must be in this namespace (else
        ``NotFound`` naming the missing one)."""
        edges = self.topics.link(namespace, [LinkRequest(from_id, to_id, etype, weight)], now)
        if not edges:
            present = {t.topic_id for t in self.topics.get(namespace, [from_id, to_id])}
            missing = {from_id, to_id} - present
            raise NotFound(f"topic {', '.join(sorted(missing)) or to_id} not found")
        return edges[0]

    # -- the one write path ----------------------------------------------------------------------
    def _create(self, topic: Topic, now: datetime, summary: str, sources: list[str]) -> Topic:
        topic, vector = self._embedded(topic, None)
        self.topics.create([topic], [vector], now)
        self._record(topic.namespace, topic.topic_id, now, summary, sources)
        return self.topics.get_one(topic.namespace, topic.topic_id)

    def _embedded(self, topic: Topic, before: Topic | None) -> tuple[Topic, list[float] | None]:
        return reembedded(self.embedder, [(topic, before)])[0]

    def _record(
        self, namespace: str, topic_id: str, now: datetime, summary: str, sources: list[str]
    ) -> None:
        record_change(self.events, namespace, topic_id, now, summary, sources)


def reembedded(
    embedder: Embedder, changes: Sequence[tuple[Topic, Topic | None]]
) -> list[tuple[Topic, list[float] | None]]:
    """Each (new, stored) topic with its embedding metadata and vector when its semantic text
    changed or it never had an embedding, in one embed call; a None vector keeps the stored one
    (and its metadata). The one place a caller's edit re-embeds a topic."""

    def stale(new: Topic, old: Topic | None) -> bool:
        return old is None or old.embedding is None or new.semantic_text() != old.semantic_text()

    texts = [new.semantic_text() for new, old in changes if stale(new, old)]
    with cache_scope(changes[0][0].namespace if changes else ""):  # one namespace's topics
        vectors = iter(embedder.embed(texts) if texts else [])
    out: list[tuple[Topic, list[float] | None]] = []
    for new, old in changes:
        if not stale(new, old):
            out.append((new, None))
            continue
        meta = EmbeddingMeta(model=embedder.model_name, hash=text_hash(new.semantic_text()))
        out.append((new.model_copy(update={"embedding": meta}), next(vectors)))
    return out


def record_change(
    events: EventStore,
    namespace: str,
    topic_id: str,
    at: datetime,
    summary: str,
    sources: Sequence[str],
) -> None:
    """One ``TopicEvent`` for a change a caller made (the timeline shows it beside sleeps)."""
    event = TopicEvent(
        namespace=namespace,
        topic_id=topic_id,
        at=at,
        delta_summary=summary[:2000],
        source_message_ids=list(sources),
    )
    events.record(namespace, [event])


# -- pure helpers ------------------------------------------------------------------------------
def _fields(body: TopicFieldsInput, now: datetime, redact: Callable[[str], str]) -> dict[str, Any]:
    """The optional fields that were given, redacted, in the Topic model's shape."""
    out: dict[str, Any] = {}
    if body.one_liner is not None:
        out["one_liner"] = redact(body.one_liner)
    if body.aliases is not None:
        out["aliases"] = [redact(a) for a in body.aliases]
    if body.facts is not None:
        out["facts"] = [_item(f, now, redact) for f in body.facts]
    if body.open_loops is not None:
        out["open_loops"] = [_item(o, now, redact) for o in body.open_loops]
    if body.numbers is not None:
        out["numbers"] = [{**n.model_dump(), "key": redact(n.key)} for n in body.numbers]
    links = {"skill_refs": body.skill_refs, "artifact_refs": body.artifact_refs}
    out["links"] = {k: list(v) for k, v in links.items() if v is not None}
    return out


def _item(item: ItemInput, now: datetime, redact: Callable[[str], str]) -> dict[str, Any]:
    return {
        "text": redact(item.text),
        "at": item.at or now,
        "source_message_ids": item.source_message_ids,
    }


def _redacted(change: TopicChange, redact: Callable[[str], str]) -> TopicChange:
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

    def items(texts: list[str]) -> list[dict[str, Any]]:
        return [{"text": t, "at": now, "source_message_ids": sources} for t in texts]

    return parse(
        Topic,
        {
            "namespace": namespace,
            "name": change.name,
            "one_liner": change.one_liner or "",
            "facts": items(change.facts),
            "open_loops": items(change.open_loops),
            "aliases": change.aliases,
            "time": TopicTime(first_seen_at=now, last_seen_at=now),
        },
    )


def _added(topic: Topic, change: TopicChange, now: datetime, sources: list[str]) -> Topic:
    """``topic`` with the change's new items (case-insensitively new) and one-liner."""
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
    last_seen = max(now, topic.time.last_seen_at)
    return topic.model_copy(
        update={
            "one_liner": change.one_liner or topic.one_liner,
            "facts": [*topic.facts, *facts],
            "open_loops": [*topic.open_loops, *loops],
            "aliases": [*topic.aliases, *aliases],
            "time": topic.time.model_copy(update={"last_seen_at": last_seen}),
        }
    )


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
