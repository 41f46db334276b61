"""The first step of an import: read and validate the whole document, before anything is read
from or written to the store (a dry run too).

Each line of the export format (``service.export_format``) is read under the field types the
REST schemas, the tools and MCP use (``graph.validation``), with REST's limits: times with a zone
and a UTC year in 1900-2999 (an offset that overflows the calendar is refused too), no control,
bidi or ANSI characters where REST refuses them, REST's list limits (50 tool calls per message,
500 facts per topic, ...), finite numbers, integers a 64-bit store holds, ids without a secret
shape, plain JSON at most 32 levels deep, vectors of finite numbers of the header's dimension.
The first bad line is refused with its number and field (``ValidationFailed``, a 422).

The header must come first, kinds in the documented order, the end line last with matching
counts, and no id twice. What a line says about other records (references, ownership) is the
plan's business (``service.importer``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from graph.errors import ValidationFailed
from graph.models import InProgress, TailTurn, describe_errors
from graph.validation import (
    MAX_INT,
    MAX_TOOL_CALLS,
    Ident,
    Key,
    MessageText,
    Name,
    NumberIn,
    OneLiner,
    Reason,
    Ref,
    ShortText,
    SourceIds,
    Speaker,
    StatementIn,
    Time,
    ToolCalls,
    TopicId,
    no_secret,
    text,
    utf8,
)
from service.export_format import (
    KINDS,
    VERSION,
    EdgeRecord,
    EndRecord,
    EventRecord,
    Header,
    MessageRecord,
    SkillRunRecord,
)

# an edge's stored weight is the sum of the links and sleeps that strengthened it: each adds at
# most MAX_LINK_WEIGHT, so a million is far past any real edge and far below a float's range
MAX_EDGE_WEIGHT = 1_000_000.0
UNIT_TOLERANCE = 1e-3  # a vector whose length is further from 1 is embedded again
ID_FIELD = {
    "message": "message_id",
    "topic": "topic_id",
    "event": "event_id",
    "wake_packet": "packet_id",
    "skill_run": "run_id",
}

Count = Annotated[int, Field(ge=0, le=MAX_INT)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
Score = Annotated[float, Field(ge=-1e9, le=1e9, allow_inf_nan=False)]
Vector = Annotated[list[Finite], Field(min_length=1, max_length=4096)]
FreeText = Annotated[str, StringConstraints(max_length=4000), AfterValidator(text)]
TailText = Annotated[str, StringConstraints(max_length=100_000), AfterValidator(utf8)]
Role = Literal["user", "assistant", "system", "tool"]


# Fields only an import sets (a fact's ids, a run's args hash, the vector's model and hash):
# matched, never redacted, so a secret shape is refused as in an id a caller chooses.
GuardedId = Annotated[TopicId, AfterValidator(no_secret)]
GuardedKey = Annotated[Key, AfterValidator(no_secret)]
GuardedName = Annotated[Name, AfterValidator(no_secret)]


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageLine(MessageRecord):
    kind: Literal["message"]
    message_id: Ident
    role: Role
    speaker: Speaker | None = None
    content: MessageText
    at: Time
    seq: Count | None = None
    token_estimate: Count = 0
    tool_calls: ToolCalls = Field(default_factory=list)
    compacted_at: Time | None = None
    external_id: Ident | None = None


class FactLine(StatementIn):
    """A fact: REST's fields, and its identity and validity."""

    fact_id: GuardedId | None = None
    valid_from: Time | None = None
    invalid_at: Time | None = None
    superseded_by: GuardedId | None = None
    invalid_reason: Reason | None = None


class NumberLine(NumberIn):
    invalid_at: Time | None = None


class NotableLine(_Line):
    at: Time
    event: ShortText
    source_message_ids: SourceIds


class TimeLine(_Line):
    first_seen_at: Time
    last_seen_at: Time
    notable_events: list[NotableLine] = Field(default_factory=list, max_length=200)


class StatsLine(_Line):
    utility_score: Score = 0.0
    decay_bucket: Literal["hot", "warm", "cold"] = "hot"
    touch_count: Count = 0
    correction_count: Count = 0
    constraint_count: Count = 0
    usage_count: Count = 0
    last_used_at: Time | None = None


class EmbeddingLine(_Line):
    model: GuardedName
    hash: GuardedKey
    dimensions: int = Field(default=384, ge=1, le=4096)


class TopicLine(_Line):
    kind: Literal["topic"]
    topic_id: Ident
    name: Name
    one_liner: OneLiner = ""
    aliases: list[Name] = Field(default_factory=list, max_length=100)
    facts: list[FactLine] = Field(default_factory=list, max_length=500)
    numbers: list[NumberLine] = Field(default_factory=list, max_length=200)
    open_loops: list[StatementIn] = Field(default_factory=list, max_length=200)
    time: TimeLine
    skill_refs: list[Ref] = Field(default_factory=list, max_length=50)
    artifact_refs: list[Ref] = Field(default_factory=list, max_length=50)
    stats: StatsLine = Field(default_factory=StatsLine)
    embedding: EmbeddingLine | None = None
    version: Count = 1
    archived_at: Time | None = None
    mentioned_in: list[Ident] = Field(default_factory=list, max_length=100_000)
    vector: Vector | None = None


class EventLine(EventRecord):
    kind: Literal["event"]
    event_id: Ident
    topic_id: Ident
    at: Time
    delta_summary: ShortText
    source_message_ids: SourceIds
    first_seq: Count | None = None
    last_seq: Count | None = None
    vector: Vector | None = None


class EdgeLine(EdgeRecord):
    from_topic_id: Ident
    to_topic_id: Ident
    weight: float = Field(gt=0, le=MAX_EDGE_WEIGHT, allow_inf_nan=False)
    last_updated_at: Time | None = None


class TailLine(TailTurn):
    model_config = ConfigDict(extra="forbid")

    role: Role
    content: TailText
    at: Time | None = None
    message_id: Ident | None = None


class ProgressLine(InProgress):
    model_config = ConfigDict(extra="forbid")

    resume_hint: FreeText = ""
    topic_id: Ident | None = None


class WakePacketLine(_Line):
    kind: Literal["wake_packet"]
    packet_id: Ident
    slept_at: Time
    conversation_tail: list[TailLine] = Field(default_factory=list, max_length=200)
    active_subject_hints: list[Name] = Field(default_factory=list, max_length=100)
    top_topic_ids: list[Ident] = Field(default_factory=list, max_length=100)
    recent_skill_refs: list[Ref] = Field(default_factory=list, max_length=50)
    in_progress: ProgressLine = Field(default_factory=ProgressLine)


class SkillRunLine(SkillRunRecord):
    kind: Literal["skill_run"]
    run_id: Ident
    skill_id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    outcome: Literal["success", "failed", "refused", "timeout", "invalid_output"]
    started_at: Time
    finished_at: Time
    duration_ms: Count
    error: FreeText | None = None
    args_hash: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9:_-]{0,128}$"), AfterValidator(no_secret)
    ] = ""
    topic_ids: list[Ident] = Field(default_factory=list, max_length=100)
    tool_calls: list[ShortText] = Field(default_factory=list, max_length=MAX_TOOL_CALLS)
    parent_run_id: Ident | None = None


Line = Annotated[
    Header | MessageLine | TopicLine | EventLine | EdgeLine | WakePacketLine | SkillRunLine
    | EndRecord,
    Field(discriminator="kind"),
]  # fmt: skip
LINE: TypeAdapter[Any] = TypeAdapter(Line)
Body = MessageLine | TopicLine | EventLine | EdgeLine | WakePacketLine | SkillRunLine


@dataclass
class Document:
    """A parsed, validated export: the header and each kind's records with their line."""

    header: Header
    records: dict[str, list[tuple[int, Any]]]

    def count(self) -> int:
        return sum(len(v) for v in self.records.values())


def parse_document(lines: Iterable[str], keep: bool = True) -> Document:
    """Validate a whole document; ``ValidationFailed`` names the first bad line and field.
    ``keep=False`` validates without keeping the records (the document comes back empty): a
    first pass over an upload that holds only its ids in memory, so a file refused at its last
    line never had its records held."""
    header: Header | None = None
    records: dict[str, list[tuple[int, Any]]] = {k: [] for k in KINDS}
    counts: Counter[str] = Counter()
    seen: dict[tuple[str, str], int] = {}
    end: EndRecord | None = None
    order = -1
    number = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if end is not None:
            raise ValidationFailed(f"line {number}: nothing may follow the end line")
        record = read_line(number, raw, header)
        if isinstance(record, Header):
            header = record
        elif isinstance(record, EndRecord):
            end = record
        else:
            kind = record.kind
            if KINDS.index(kind) < order:
                raise ValidationFailed(
                    f"line {number}: kind: a {kind} line after {KINDS[order]} lines; the order is "
                    + ", ".join(KINDS)
                )
            order = KINDS.index(kind)
            _unique(seen, number, kind, record)
            counts[kind] += 1
            if keep:
                records[kind].append((number, record))
    if header is None:
        raise ValidationFailed("line 1: the document is empty (expected a header line)")
    if end is None:
        raise ValidationFailed(f"line {number + 1}: the end line is missing: the file is truncated")
    _check_counts(end, counts)
    return Document(header, records)


def read_line(number: int, raw: str, header: Header | None) -> Any:
    """One line as its record (``header`` is None until the header line was read)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationFailed(f"line {number}: not valid JSON ({exc.msg})") from exc
    except RecursionError as exc:  # json's own guard: far deeper than any field may nest
        raise ValidationFailed(f"line {number}: nests too deep to be a record") from exc
    if not isinstance(data, dict):
        raise ValidationFailed(f"line {number}: must be a JSON object")
    if header is None and data.get("kind") != "header":
        raise ValidationFailed(f"line {number}: kind: the first line must be the header")
    if header is not None and data.get("kind") == "header":
        raise ValidationFailed(f"line {number}: kind: a second header line")
    if data.get("kind") == "header" and data.get("version") != VERSION:
        raise ValidationFailed(
            f"line {number}: version: unsupported export version {data.get('version')!r} "
            f"(this server reads version {VERSION})"
        )
    try:
        record = LINE.validate_python(data)
    except ValidationError as exc:
        raise ValidationFailed(f"line {number}: {describe_errors('record', exc)}") from exc
    vector = getattr(record, "vector", None)
    if vector is not None and header is not None and len(vector) != header.embedding.dimensions:
        raise ValidationFailed(
            f"line {number}: vector: {len(vector)} dimensions, but the header says "
            f"{header.embedding.dimensions}"
        )
    return record


def unit_length(vector: Sequence[float]) -> bool:
    """True when ``vector`` has length 1 within ``UNIT_TOLERANCE`` (what the embedder makes);
    huge values (1e308) overflow to an infinite length and are not."""
    length = math.sqrt(sum(v * v for v in vector))  # overflows to inf, never raises
    return math.isfinite(length) and abs(length - 1.0) <= UNIT_TOLERANCE


def _unique(seen: dict[tuple[str, str], int], number: int, kind: str, record: Any) -> None:
    name = ID_FIELD.get(kind)
    if name is None:
        return
    key = (kind, getattr(record, name))
    if key in seen:
        raise ValidationFailed(f"line {number}: {name}: {key[1]} already on line {seen[key]}")
    seen[key] = number


def _check_counts(end: EndRecord, counts: Counter[str]) -> None:
    for kind in KINDS:
        said, found = end.counts.get(kind, 0), counts[kind]
        if said != found:
            raise ValidationFailed(
                f"end: counts.{kind}: the end line says {said} but the file holds {found}"
            )


def read_lines(data: bytes | str) -> list[str]:
    """The lines of an uploaded document (UTF-8; a BOM is tolerated)."""
    try:
        decoded = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"body: not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    return decoded.splitlines()
