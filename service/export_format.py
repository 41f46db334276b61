"""The export format: one JSON object per line, versioned, described by a JSON Schema.

A document is a ``header`` line, then ``message``, ``topic``, ``event``, ``edge``,
``wake_packet`` and ``skill_run`` lines (in that order, so every reference points backwards),
then an ``end`` line with the count of each kind (a truncated file is refused on import). The
namespace is recorded in the header for information only: an import always writes into the
namespace of whoever imports. ``docs/export-schema.json`` is generated from these models
(``python -m service.export_format > docs/export-schema.json``) and a unit test keeps it equal.

Version history: 1 (first version).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from graph.models import (
    EdgeType,
    EmbeddingMeta,
    Fact,
    InProgress,
    OpenLoop,
    TailTurn,
    TopicStats,
    TopicTime,
    TypedNumber,
    UtcDatetime,
)

FORMAT = "sheriff-claw-export"
VERSION = 1
KINDS = ("message", "topic", "event", "edge", "wake_packet", "skill_run")
Id = Annotated[str, Field(min_length=1, max_length=200)]
Vector = Annotated[list[float], Field(min_length=1, max_length=4096)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbeddingInfo(_Record):
    model: str = Field(description="the embedding model of the exporting server")
    dimensions: int = Field(ge=1, le=4096)


class Header(_Record):
    """First line: what this document is."""

    kind: Literal["header"]
    format: Literal["sheriff-claw-export"]
    version: Literal[1] = Field(description="format version; importers refuse unknown ones")
    namespace: str = Field(description="where it was exported from (information only)")
    exported_at: UtcDatetime
    embedding: EmbeddingInfo
    vectors: bool = Field(description="topic and event lines carry their vectors")


class MessageRecord(_Record):
    kind: Literal["message"]
    message_id: Id
    role: Literal["user", "assistant", "system", "tool"]
    speaker: str | None = Field(default=None, max_length=100)
    content: str = Field(max_length=100_000)
    at: UtcDatetime
    seq: int | None = Field(default=None, ge=0)
    token_estimate: int = Field(default=0, ge=0)
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    compacted_at: UtcDatetime | None = None
    external_id: str | None = Field(default=None, max_length=200)


class TopicRecord(_Record):
    """A topic with every fact, current or not (``valid_from`` / ``invalid_at`` /
    ``superseded_by``), and the ids of the messages it is mentioned in."""

    kind: Literal["topic"]
    topic_id: Id
    name: str = Field(min_length=1, max_length=200)
    one_liner: str = Field(default="", max_length=500)
    aliases: list[str] = Field(default_factory=list, max_length=100)
    facts: list[Fact] = Field(default_factory=list, max_length=5000)
    numbers: list[TypedNumber] = Field(default_factory=list, max_length=500)
    open_loops: list[OpenLoop] = Field(default_factory=list, max_length=200)
    time: TopicTime
    skill_refs: list[str] = Field(default_factory=list)
    artifact_refs: list[str] = Field(default_factory=list)
    stats: TopicStats = Field(default_factory=TopicStats)
    embedding: EmbeddingMeta | None = None
    version: int = Field(default=1, ge=0)
    archived_at: UtcDatetime | None = None
    mentioned_in: list[Id] = Field(default_factory=list)
    vector: Vector | None = None


class EventRecord(_Record):
    kind: Literal["event"]
    event_id: Id
    topic_id: Id
    at: UtcDatetime
    delta_summary: str = Field(min_length=1, max_length=2000)
    source_message_ids: list[str] = Field(default_factory=list, max_length=500)
    first_seq: int | None = None
    last_seq: int | None = None
    vector: Vector | None = None


class EdgeRecord(_Record):
    kind: Literal["edge"]
    from_topic_id: Id
    to_topic_id: Id
    type: EdgeType
    weight: float = Field(allow_inf_nan=False)
    last_updated_at: UtcDatetime | None = None


class WakePacketRecord(_Record):
    kind: Literal["wake_packet"]
    packet_id: Id
    slept_at: UtcDatetime
    conversation_tail: list[TailTurn] = Field(default_factory=list)
    active_subject_hints: list[str] = Field(default_factory=list)
    top_topic_ids: list[str] = Field(default_factory=list)
    recent_skill_refs: list[str] = Field(default_factory=list)
    in_progress: InProgress = Field(default_factory=InProgress)


class SkillRunRecord(_Record):
    kind: Literal["skill_run"]
    run_id: Id
    skill_id: str = Field(min_length=1, max_length=64)
    outcome: Literal["success", "failed", "refused", "timeout", "invalid_output"]
    started_at: UtcDatetime
    finished_at: UtcDatetime
    duration_ms: int = Field(ge=0)
    error: str | None = None
    args_hash: str = ""
    topic_ids: list[str] = Field(default_factory=list)
    tool_calls: list[str] = Field(default_factory=list)
    parent_run_id: str | None = None


class EndRecord(_Record):
    """Last line: how many lines of each kind came before (a truncated file is refused)."""

    kind: Literal["end"]
    counts: dict[str, int]


Record = Annotated[
    Header
    | MessageRecord
    | TopicRecord
    | EventRecord
    | EdgeRecord
    | WakePacketRecord
    | SkillRunRecord
    | EndRecord,
    Field(discriminator="kind"),
]
RECORD = TypeAdapter(Record)
Body = MessageRecord | TopicRecord | EventRecord | EdgeRecord | WakePacketRecord | SkillRunRecord


def dump_line(record: BaseModel) -> str:
    """One record as one line of JSON (UTF-8, no NaN, nulls kept so the shape is stable)."""
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, allow_nan=False) + "\n"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one line (draft 2020-12), with the format's name and version."""
    schema = RECORD.json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://sheriff-claw.local/schemas/export-v{VERSION}.json",
        "title": f"Sheriff Claw export, version {VERSION}: one line of the JSON Lines document",
        "description": (
            "A JSON Lines document: a header line, then message, topic, event, edge, "
            "wake_packet and skill_run lines in that order, then an end line counting each "
            "kind. Times are ISO-8601 UTC. See docs/export.md."
        ),
        **schema,
    }


def main() -> None:
    """Print the JSON Schema (docs/export-schema.json is this output)."""
    sys.stdout.write(json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
