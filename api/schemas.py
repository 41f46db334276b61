"""Request and response schemas of the REST API (``*Create`` / ``*Update`` in, ``*Public`` out).

Input is refused here, before anything reaches Neo4j: every string has a length limit and must be
encodable as UTF-8 (a lone surrogate would fail deep in the driver), numbers are finite and
bounded to what Neo4j can store, timestamps need a zone and a year in 1900-2999 (so time
arithmetic downstream cannot overflow), and free-form JSON (tool calls, skill args) must be
plain JSON. Unknown fields are refused, so a typo is an error rather than silently ignored.
Pipeline outputs that are already API-shaped (``SleepSummary``, ``WakeResult``, ``WakePacket``,
``SkillResult``) are returned as they are.
The field types and their rules live in :mod:`graph.validation`, shared with the Responses tools
(``agent/tools.py``) so every surface refuses the same input.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from graph.models import (
    EdgeType,
    Fact,
    OpenLoop,
    TopicLinks,
    TopicStats,
    TopicSummary,
    TopicTime,
    TypedNumber,
)
from graph.sleep_queue import SleepRun
from graph.validation import (
    MAX_INT,
    Ident,
    JsonObject,
    LinkWeight,
    LongText,
    MessageText,
    Name,
    NumberIn,
    OneLiner,
    Phrase,
    QueryText,
    Ref,
    Speaker,
    StatementIn,
    Time,
    ToolCalls,
    TopicId,
    utf8,
)
from retrieval.context_result import (
    ConsultReport,
    ContextRequest,
    ContextResult,
    RoutedSkill,
    SkillRouting,
)
from retrieval.packer import ContextItem, TraceEntry


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


Plain = AfterValidator(utf8)
Finite = Annotated[float, Field(allow_inf_nan=False)]
Edge = Annotated[EdgeType, BeforeValidator(_upper)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class WindowPublic(_Out):
    """A resolved half-open time window ``[start, end)`` in UTC; None = open on that side."""

    phrase: str
    kind: str
    start: datetime | None
    end: datetime | None


class WindowQuery(_In):
    """Query parameters that pick a time window: a phrase or an explicit range, not both."""

    window: Phrase | None = Field(default=None, description='a time phrase: "last week"')
    from_: Time | None = Field(default=None, alias="from", description="window start (ISO)")
    to: Time | None = Field(default=None, description="window end, exclusive (ISO)")
    limit: int = Field(default=100, ge=1, le=1000)
    now: Time | None = Field(default=None, description="the clock for phrases; default: now")


# -- messages -------------------------------------------------------------------------------------
class MessageCreate(_In):
    role: Literal["user", "assistant", "system", "tool"]
    content: MessageText
    at: Time | None = Field(default=None, description="when it was said; default: now")
    speaker: Speaker | None = None
    tool_calls: ToolCalls = Field(
        default=[], description="plain JSON objects, at most 32 levels deep (422 otherwise)"
    )
    external_id: Ident | None = Field(default=None, description="the caller's id, cited back")


class MessagesCreate(_In):
    messages: list[MessageCreate] = Field(min_length=1, max_length=1000)
    auto_sleep: bool = Field(default=True, description="run the sleep policy between messages")


class MessagePublic(_Out):
    message_id: str
    role: str
    speaker: str | None
    content: str
    at: datetime
    seq: int | None
    external_id: str | None
    tool_calls: list[dict[str, Any]]
    compacted_at: datetime | None


class MessagesAppended(BaseModel):
    appended: int = Field(description="messages stored by this request")
    duplicates: int = Field(
        default=0, description="messages whose external_id was already stored: returned as "
        "stored, not stored again (a retried batch has only duplicates)"
    )  # fmt: skip
    messages: list[MessagePublic] = Field(description="every message sent, in order, as stored")
    sleeps: list[dict[str, Any]] = Field(
        description="the sleeps the policy ran here (inline sleep mode; SleepSummary)"
    )
    sleep_due: bool = Field(
        default=False,
        description="the policy queued a sleep for the sleep workers (background sleep mode)",
    )


class MessageList(BaseModel):
    time_window: WindowPublic | None
    messages: list[MessagePublic]
    truncated: bool = Field(description="true when the limit cut the list short")


# -- context --------------------------------------------------------------------------------------
class ContextCreate(_In):
    message: LongText
    budget: int = Field(default=1000, ge=50, le=100_000, description="token budget")
    session_id: Ident | None = Field(default=None, description="suppression cache per session")
    explicit: bool = Field(default=False, description="an explicit search: always inject")
    full_records: bool = Field(default=False, description="L2: the best topic's full record")
    last_tool_output: Annotated[str, Field(max_length=32_000), Plain] | None = None
    now: Time | None = Field(default=None, description="the clock (replays); default: now")
    trace: bool = Field(default=False, description="include why each candidate was kept")
    as_of: Time | None = Field(default=None, description="the memory as it stood then: facts "
                               "valid then, nothing said later; default: what is valid now")  # fmt: skip

    def request(self, namespace: str, now: datetime) -> ContextRequest:
        """The context this body asks for in ``namespace`` at ``now`` (the body's own ``now``
        when it names one); ``trace`` is the answer's, not the request's."""
        return ContextRequest(
            namespace=namespace,
            message=self.message,
            now=self.now or now,
            budget=self.budget,
            session_id=self.session_id,
            explicit=self.explicit,
            full_records=self.full_records,
            last_tool_output=self.last_tool_output,
            as_of=self.as_of,
        )


class ContextPublic(BaseModel):
    """The memory context for one message, ready to put in front of the model."""

    context_text: str = Field(description="the packed context, Markdown, within the budget")
    items: list[ContextItem] = Field(
        description="what was packed: record_id, kind, layer (L0/L1/L2), title, reason_label, "
        "reason_summary, durable_summary, provenance.source_ids (message or external ids), "
        "freshness, score"
    )
    skills: list[RoutedSkill] = Field(description="skill manifests routed to this message")
    skill_routing: SkillRouting = Field(description="intent, mode, triggers and trace")
    request_class: Literal["A", "B", "C"] = Field(
        description="A explicit (always injected), B implicit (injected when confident), C none"
    )
    triggers: list[str] = Field(description="deep-retrieval triggers that fired (spec §5.2)")
    deep: bool = Field(description="deep retrieval ran (K=20, graph expansion, time window)")
    consult: ConsultReport = Field(
        description="confidence, band and its components; personal_request: why the message "
        "is a personal request (advice, a question about the user's own life); raised_by: what "
        "raised the band to its floor (docs/retrieval.md)"
    )
    time_window: WindowPublic | None = Field(description="the time phrase resolved, if any")
    retrieval_signals: dict[str, float] = Field(
        default_factory=dict,
        description="what the low-confidence trigger judged: best_cosine, cosine_margin, "
        "best_text (docs/retrieval.md)",
    )
    degraded: bool = Field(description="the embedder was unavailable: lexical results only")
    trace: list[TraceEntry] | None = Field(
        description="with trace=true: every candidate with score components and decision"
    )
    used_tokens: int
    budget: int
    timings_ms: dict[str, float]

    @classmethod
    def of(cls, result: ContextResult, trace: bool) -> ContextPublic:
        """The answer of a built context: its typed fields as they are (no dump and
        revalidation), the window as the API shows one, the trace only when asked for."""
        fields = {name: getattr(result, name) for name in cls.model_fields}
        window = result.time_window
        fields["time_window"] = WindowPublic.model_validate(window) if window else None
        fields["trace"] = result.trace if trace else None
        return cls.model_construct(**fields)


# -- topics ---------------------------------------------------------------------------------------
class FactCreate(StatementIn):
    """A fact or an open loop (the same model an import's lines use)."""


class NumberCreate(NumberIn):
    """A typed number (the same model an import's lines use)."""


class _TopicFields(_In):
    one_liner: OneLiner | None = None
    aliases: Annotated[list[Name], Field(max_length=100)] | None = None
    facts: Annotated[list[FactCreate], Field(max_length=500)] | None = None
    numbers: Annotated[list[NumberCreate], Field(max_length=200)] | None = None
    open_loops: Annotated[list[FactCreate], Field(max_length=200)] | None = None
    skill_refs: Annotated[list[Ref], Field(max_length=50)] | None = None
    artifact_refs: Annotated[list[Ref], Field(max_length=50)] | None = None


class TopicCreate(_TopicFields):
    name: Name
    first_seen_at: Time | None = Field(default=None, description="default: last_seen_at or now")
    last_seen_at: Time | None = Field(default=None, description="default: first_seen_at")

    @model_validator(mode="after")
    def _ordered(self) -> TopicCreate:
        if self.first_seen_at and self.last_seen_at and self.first_seen_at > self.last_seen_at:
            raise ValueError("first_seen_at must not be after last_seen_at")
        return self


class TopicUpdate(_TopicFields):
    """Fields given replace the stored ones; fields left out (or null) are kept."""

    version: int = Field(ge=0, le=MAX_INT, description="the version you read (409 if it moved)")
    name: Name | None = None
    last_seen_at: Time | None = None


class TopicPublic(_Out):
    topic_id: str
    name: str
    one_liner: str
    aliases: list[str]
    facts: list[Fact]
    numbers: list[TypedNumber]
    open_loops: list[OpenLoop]
    time: TopicTime
    links: TopicLinks
    stats: TopicStats
    embedding_model: str | None
    version: int
    archived_at: datetime | None


class EventPublic(_Out):
    event_id: str
    topic_id: str
    at: datetime
    delta_summary: str
    source_message_ids: list[str]


class EdgePublic(_Out):
    from_topic_id: str
    to_topic_id: str
    type: EdgeType
    weight: float
    last_updated_at: datetime


class TopicDetail(TopicPublic):
    events: list[EventPublic]
    edges: list[EdgePublic]


class TopicSearch(_In):
    query: QueryText
    window: Phrase | None = Field(default=None, description='a time phrase: "last week"')
    from_: Time | None = Field(default=None, alias="from", description="window start (ISO)")
    to: Time | None = Field(default=None, description="window end, exclusive (ISO)")
    k: int = Field(default=8, ge=1, le=50)
    expand: bool | None = Field(default=None, description="1-hop graph expansion; default: "
                                "when a window applies")  # fmt: skip
    now: Time | None = None
    as_of: Time | None = Field(default=None, description="only topics known then (first seen "
                               "before it); ranked as of then")  # fmt: skip


class SearchHitPublic(TopicSummary):
    components: dict[str, float]
    sources: list[str]
    reason: str = Field(description="why it was found")


class SearchPublic(BaseModel):
    query: str
    time_window: WindowPublic | None
    degraded: bool = Field(description="the embedder was unavailable: lexical results only")
    hits: list[SearchHitPublic]


class NeighbourPublic(BaseModel):
    topic_id: str
    name: str
    one_liner: str
    last_seen_at: datetime
    type: EdgeType
    weight: float
    direction: Literal["out", "in"]


class LinkCreate(_In):
    to: TopicId
    type: Edge = EdgeType.RELATES_TO
    weight: LinkWeight = Field(
        default=1.0, description="added to the edge's weight (a new edge starts at it)"
    )


# -- timeline, sleep, wake -------------------------------------------------------------------------
class TimelineEvent(EventPublic):
    topic_name: str | None


class TimelinePublic(BaseModel):
    time_window: WindowPublic | None
    events: list[TimelineEvent]
    truncated: bool


class SleepCreate(_In):
    now: Time | None = Field(default=None, description="the clock (replays); default: now")


class SleepRunList(BaseModel):
    runs: list[SleepRun] = Field(description="sleep attempts, newest first")
    next_before: str | None = Field(
        default=None, description="pass as ?before= for the next page (null: no more)"
    )


class WakeCreate(_In):
    message: LongText
    now: Time | None = None
    k: int = Field(default=8, ge=1, le=50)


# -- skills ---------------------------------------------------------------------------------------
class SkillPublic(BaseModel):
    skill_id: str
    name: str
    description: str
    tags: list[str]
    requires_tools: list[str]
    default_reasoning_effort: str
    has_tests: bool


class SkillProblem(BaseModel):
    path: str
    message: str


class SkillList(BaseModel):
    skills: list[SkillPublic]
    problems: list[SkillProblem]


class SkillSearch(_In):
    query: QueryText
    k: int = Field(default=3, ge=1, le=20)


class SkillHits(BaseModel):
    skills: list[dict[str, Any]]


class SkillRunCreate(_In):
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    args: JsonObject = {}
    timeout_s: float | None = Field(default=None, gt=0, le=900, allow_inf_nan=False)


# -- errors ---------------------------------------------------------------------------------------
class FieldError(BaseModel):
    field: str = Field(description='where: "body.messages.0.role", "query.k", ...')
    message: str
    type: str


class ErrorPublic(BaseModel):
    """Every 4xx/5xx body."""

    error: str = Field(description="the kind: ValidationFailed, NotFound, Unauthorized, ...")
    detail: str = Field(description="what was wrong, in a sentence")
    fields: list[FieldError] | None = Field(
        default=None, description="each bad field (422, and a 409 caused by one field)"
    )
