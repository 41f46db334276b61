"""Pydantic models of the graph's nodes and edges (spec §2.1-§2.3).

The models mirror the spec's JSON (a Topic has nested ``time``, ``links``, ``embedding`` and
``stats``); ``graph/mapping.py`` flattens them into Neo4j properties with the spec's field names.
All timestamps are timezone-aware and normalised to UTC; naive datetimes are refused.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from graph.errors import ValidationFailed
from graph.validation import check_json_shape, not_blank, strip_controls
from text import gist as _gist

SCHEMA_VERSION = 1
EMBEDDING_DIMENSIONS = 384


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]
Namespace = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$", strip_whitespace=True)
]
# Names the sleep pipeline derives from conversation text: control characters are stripped here
# (the API refuses them with a 422 before they get this far, see graph/validation.py).
Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200, strip_whitespace=True),
    AfterValidator(strip_controls),
    AfterValidator(not_blank),
]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=2000, strip_whitespace=True)]
Key = Annotated[str, StringConstraints(min_length=1, max_length=120, strip_whitespace=True)]
MessageIds = Annotated[list[str], Field(default_factory=list, max_length=500)]


def new_id() -> str:
    return str(uuid.uuid4())


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EdgeType(StrEnum):
    """The closed set of topic-to-topic relationship types (spec §2.2)."""

    RELATES_TO = "RELATES_TO"
    DEPENDS_ON = "DEPENDS_ON"
    PART_OF = "PART_OF"
    NEXT = "NEXT"
    PREV = "PREV"


def fact_id_for(text: str, at: datetime | None) -> str:
    """A fact's stable id: a hash of its text and time. Old facts stored without an id get the
    same id on every read, and a sleep re-run writes the same ids (ids are unique per topic)."""
    stamp = at.astimezone(UTC).isoformat() if at is not None else ""
    digest = hashlib.sha256(f"{text}\x1f{stamp}".encode()).hexdigest()
    return f"f-{digest[:16]}"


class Fact(_Model):
    """One statement of a topic, with its time and validity (a bitemporal-lite record).

    ``at`` is when it was said; ``valid_from`` when it became true (None: since ``at``);
    ``invalid_at`` when it stopped being true (None: still true) and ``superseded_by`` the id of
    the fact that replaced it (None when it was retracted). Facts are never edited in place: a
    correction adds a new fact and closes the old one, so ``as_of`` can show any past state.
    """

    text: ShortText
    at: UtcDatetime | None = None
    source_message_ids: MessageIds
    fact_id: str = Field(
        default_factory=lambda data: fact_id_for(data["text"], data.get("at")),
        min_length=1,
        max_length=64,
    )
    valid_from: UtcDatetime | None = None
    invalid_at: UtcDatetime | None = None
    superseded_by: str | None = Field(default=None, max_length=64)
    invalid_reason: str | None = Field(default=None, max_length=300)

    @property
    def starts_at(self) -> datetime | None:
        """When the fact became true: ``valid_from``, else when it was said."""
        return self.valid_from or self.at

    def valid_at(self, when: datetime) -> bool:
        """True when the fact held at ``when`` (``valid_from``/``at`` <= when < ``invalid_at``)."""
        start = self.starts_at
        if start is not None and when < start:
            return False
        return self.invalid_at is None or when < self.invalid_at


class OpenLoop(_Model):
    text: ShortText
    at: UtcDatetime | None = None
    source_message_ids: MessageIds


class TypedNumber(_Model):
    """A number never buried in prose: key, value, unit, when, where from, how sure."""

    key: Key
    value: float
    unit: str | None = Field(default=None, max_length=40)
    at: UtcDatetime
    source: Literal["doc", "user", "tool", "assistant"] = "user"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    source_message_ids: MessageIds
    invalid_at: UtcDatetime | None = None  # a later value of the same key replaced it then

    def valid_at(self, when: datetime) -> bool:
        """True when this value was the current one at ``when``."""
        return self.at <= when and (self.invalid_at is None or when < self.invalid_at)


class NotableEvent(_Model):
    at: UtcDatetime
    event: ShortText
    source_message_ids: MessageIds


class TopicTime(_Model):
    first_seen_at: UtcDatetime
    last_seen_at: UtcDatetime
    notable_events: list[NotableEvent] = Field(default_factory=list)


class TopicLinks(_Model):
    related_topic_ids: list[str] = Field(default_factory=list)
    skill_refs: list[str] = Field(default_factory=list)
    artifact_refs: list[str] = Field(default_factory=list)


class EmbeddingMeta(_Model):
    model: str
    hash: str
    dimensions: int = EMBEDDING_DIMENSIONS


class TopicStats(_Model):
    utility_score: float = 0.0
    decay_bucket: Literal["hot", "warm", "cold"] = "hot"
    touch_count: int = Field(default=0, ge=0)
    correction_count: int = Field(default=0, ge=0)
    constraint_count: int = Field(default=0, ge=0)
    usage_count: int = Field(default=0, ge=0)
    last_used_at: UtcDatetime | None = None


class Topic(_Model):
    """A durable memory (spec §2.1). ``version`` guards concurrent updates."""

    schema_version: int = SCHEMA_VERSION
    topic_id: str = Field(default_factory=new_id, min_length=1, max_length=64)
    namespace: Namespace
    name: Name
    one_liner: Annotated[str, StringConstraints(max_length=500, strip_whitespace=True)] = ""
    facts: list[Fact] = Field(default_factory=list, max_length=5000)
    numbers: list[TypedNumber] = Field(default_factory=list, max_length=500)
    open_loops: list[OpenLoop] = Field(default_factory=list, max_length=200)
    aliases: list[Name] = Field(default_factory=list, max_length=100)
    time: TopicTime
    links: TopicLinks = Field(default_factory=TopicLinks)
    embedding: EmbeddingMeta | None = None
    stats: TopicStats = Field(default_factory=TopicStats)
    version: int = Field(default=0, ge=0)
    archived_at: UtcDatetime | None = None

    def semantic_text(self) -> str:
        """The text that is embedded: "name: one-liner" (the canonical semantic key, spec
        §2.1) and the topic's most central current facts (``text.gist``), so a question about
        any of what the topic holds finds it."""
        return _gist.semantic_text(self.name, self.one_liner, self._current_fact_texts())

    def gist(self) -> str:
        """The topic's full-text entry beside name, aliases and one-liner (``text.gist``)."""
        return _gist.gist(self.name, self.one_liner, self._current_fact_texts())

    def one_liner_sources(self) -> list[str]:
        """The message ids of the facts the one-liner quotes (a composed one-liner quotes a fact
        per part, ``text.gist.quoted``); none for a one-liner someone wrote."""
        if not self.one_liner:
            return []
        said = [f for f in self.facts if _gist.quoted(f.text, self.one_liner)]
        return list(dict.fromkeys(m for f in said for m in f.source_message_ids))

    def _current_fact_texts(self) -> list[str]:
        return [f.text for f in self.facts if f.invalid_at is None]

    def view(self, as_of: datetime | None = None) -> Topic:
        """What a reader sees: the facts valid ``as_of``, else the currently valid ones."""
        return self.as_of(as_of) if as_of is not None else self.current()

    def current(self) -> Topic:
        """This topic with only the facts and numbers not closed (superseded or retracted)."""
        if all(f.invalid_at is None for f in self.facts) and all(
            n.invalid_at is None for n in self.numbers
        ):
            return self
        return self.model_copy(
            update={
                "facts": [f for f in self.facts if f.invalid_at is None],
                "numbers": [n for n in self.numbers if n.invalid_at is None],
            }
        )

    def with_items(
        self,
        facts: list[Fact],
        open_loops: list[OpenLoop],
        numbers: list[TypedNumber],
        aliases: list[str],
        **more: Any,
    ) -> Topic:
        """This topic with its items replaced (a merge, a scrub), and any other field in
        ``more`` (``time``, ``one_liner``, ``stats``); like ``model_copy``, not re-validated."""
        items = {"facts": facts, "open_loops": open_loops, "numbers": numbers, "aliases": aliases}
        return self.model_copy(update=items | more)

    def as_of(self, when: datetime) -> Topic:
        """This topic as it stood at ``when``: only the facts and numbers valid then (the
        history stays in the stored record; see ``Fact.valid_at``)."""
        return self.model_copy(
            update={
                "facts": [f for f in self.facts if f.valid_at(when)],
                "numbers": [n for n in self.numbers if n.valid_at(when)],
            }
        )


class TopicSummary(BaseModel):
    """A topic as a result lists it (a search hit, a woken topic): what it is, when it was
    talked about, and its score; ``of`` fills these from the topic."""

    topic_id: str
    name: str
    one_liner: str
    first_seen_at: datetime
    last_seen_at: datetime
    score: float

    @classmethod
    def of(cls, topic: Topic, score: float, **more: Any) -> Self:
        """``topic``'s summary with ``score`` and the subclass's own fields in ``more``."""
        return cls(
            topic_id=topic.topic_id,
            name=topic.name,
            one_liner=topic.one_liner,
            first_seen_at=topic.time.first_seen_at,
            last_seen_at=topic.time.last_seen_at,
            score=score,
            **more,
        )


class TopicEdge(_Model):
    from_topic_id: str
    to_topic_id: str
    type: EdgeType
    weight: float = 0.0
    last_updated_at: UtcDatetime


class TopicEvent(_Model):
    """One update of a topic by a sleep (spec §6.3): what changed, when, from which messages."""

    event_id: str = Field(default_factory=new_id)
    namespace: Namespace
    topic_id: str
    at: UtcDatetime
    delta_summary: ShortText
    source_message_ids: MessageIds
    first_seq: int | None = None
    last_seq: int | None = None


class Message(_Model):
    """One turn of the continuous conversation."""

    message_id: str = Field(default_factory=new_id)
    namespace: Namespace
    role: Literal["user", "assistant", "system", "tool"]
    speaker: str | None = Field(default=None, max_length=100)  # display name, e.g. in a group chat
    content: Annotated[str, StringConstraints(max_length=100_000)]
    at: UtcDatetime
    seq: int | None = None
    token_estimate: int = Field(default=0, ge=0)
    tool_calls: list[Annotated[dict[str, Any], AfterValidator(check_json_shape)]] = Field(
        default_factory=list
    )
    compacted_at: UtcDatetime | None = None
    external_id: str | None = Field(default=None, max_length=200)


class Subject(_Model):
    """An ephemeral cluster of what the recent span was about (spec §1.2); expires."""

    subject_id: str = Field(default_factory=new_id)
    namespace: Namespace
    label: Name
    salience: float = Field(ge=0.0)
    created_at: UtcDatetime
    expires_at: UtcDatetime
    topic_ids: list[str] = Field(default_factory=list)


class Skill(_Model):
    """A skill's manifest as stored in the graph (spec §3.2)."""

    skill_id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    namespace: Namespace
    name: Name
    description: ShortText
    tags: list[str] = Field(default_factory=list)
    requires_tools: list[str] = Field(default_factory=list)
    default_reasoning_effort: Literal["minimal", "low", "medium", "high"] = "medium"
    examples: list[str] = Field(default_factory=list)
    manifest: dict[str, Any] = Field(default_factory=dict)


class InProgress(_Model):
    status: Literal["idle", "running", "blocked"] = "idle"
    resume_hint: str = ""
    topic_id: str | None = None


class TailTurn(_Model):
    role: str
    content: str
    at: UtcDatetime | None = None
    message_id: str | None = None


class WakePacket(_Model):
    """The tiny state written at sleep completion (spec §2.3)."""

    schema_version: int = SCHEMA_VERSION
    packet_id: str = Field(default_factory=new_id)
    namespace: Namespace
    slept_at: UtcDatetime
    conversation_tail: list[TailTurn] = Field(default_factory=list)
    active_subject_hints: list[str] = Field(default_factory=list)
    top_topic_ids: list[str] = Field(default_factory=list)
    recent_skill_refs: list[str] = Field(default_factory=list)
    in_progress: InProgress = Field(default_factory=InProgress)


class WakeCheck(_Model):
    """What decides whether a wake is due (``SleepStore.claim_wake``): the newest wake packet,
    the last stored turn, the silence threshold, or an explicit wake (``force``)."""

    packet_id: str | None = None
    slept_at: UtcDatetime | None = None
    last_turn_at: UtcDatetime | None = None
    silent_before: UtcDatetime | None = None
    force: bool = False


class WakeState(_Model):
    """When a namespace last woke, on which wake packet, and why (sleep | silence | explicit)."""

    woke_at: UtcDatetime
    packet_id: str | None = None
    reason: Literal["sleep", "silence", "explicit"]
    # what the claim replaced (``SleepStore.release_wake`` puts it back)
    previous_woke_at: UtcDatetime | None = None
    previous_packet_id: str | None = None
    previous_reason: Literal["sleep", "silence", "explicit"] | None = None


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any) -> M:
    """Validate ``data`` as ``model``; raise ``ValidationFailed`` listing every violation."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed(describe_errors(model.__name__, exc)) from exc


def describe_errors(what: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    return f"invalid {what}: " + "; ".join(parts)


def edge_type(value: str | EdgeType) -> EdgeType:
    """Map a user-supplied edge type onto the closed enum, refusing anything else."""
    try:
        return EdgeType(str(value).upper())
    except ValueError as exc:
        allowed = ", ".join(t.value for t in EdgeType)
        raise ValidationFailed(f"unknown edge type {value!r}; allowed: {allowed}") from exc
