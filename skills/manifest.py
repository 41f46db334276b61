"""The skill manifest (spec §3.2), validated with pydantic.

A manifest is the ``manifest.json`` of a skill folder. Beyond the spec's fields it may set
``timeout_s`` (capped by ``SkillSettings.max_timeout_s``). Examples are either plain request
strings or ``{"request": ..., "args": {...}}``; both are embedded for retrieval.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from graph.models import Skill, describe_errors
from skills.errors import ManifestInvalid
from skills.schemas import schema_problem
from skills.toolspec import TOOL_SPECS, known_tools

SkillId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Effort = Literal["minimal", "low", "medium", "high"]


class SkillExample(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request: Annotated[str, StringConstraints(min_length=1, max_length=2000, strip_whitespace=True)]
    args: dict[str, Any] = Field(default_factory=dict)


class SkillManifest(BaseModel):
    """What a skill does, what it takes and returns, and which host tools it may call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill_id: SkillId
    name: Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
    description: Annotated[
        str, StringConstraints(min_length=1, max_length=2000, strip_whitespace=True)
    ]
    inputs_schema: dict[str, Any]
    outputs_schema: dict[str, Any]
    requires_tools: list[str] = Field(default_factory=list)
    default_reasoning_effort: Effort = "medium"
    tags: list[str] = Field(default_factory=list, max_length=30)
    examples: list[SkillExample] = Field(default_factory=list, max_length=50)
    timeout_s: float | None = Field(default=None, gt=0, le=3600)

    @field_validator("inputs_schema", "outputs_schema")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        problem = schema_problem(schema)
        if problem:
            raise ValueError(f"not a valid JSON Schema: {problem}")
        if schema.get("type") != "object":
            raise ValueError('must describe an object ("type": "object")')
        return schema

    @field_validator("requires_tools")
    @classmethod
    def _known_tools(cls, tools: list[str]) -> list[str]:
        unknown = [t for t in tools if t not in TOOL_SPECS]
        if unknown:
            raise ValueError(f"unknown tools {unknown}; known: {', '.join(known_tools())}")
        return sorted(set(tools))

    @field_validator("tags")
    @classmethod
    def _clean_tags(cls, tags: list[str]) -> list[str]:
        return list(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))

    @field_validator("examples", mode="before")
    @classmethod
    def _examples(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"request": v} if isinstance(v, str) else v for v in value]
        return value

    def embedding_text(self) -> str:
        """The text embedded for retrieval: description, tags and example requests."""
        parts = [f"{self.name}. {self.description}"]
        if self.tags:
            parts.append("Tags: " + ", ".join(self.tags) + ".")
        if self.examples:
            parts.append("Examples: " + " | ".join(e.request for e in self.examples))
        return " ".join(parts)

    def to_skill(self, namespace: str) -> Skill:
        """The graph model stored as a :Skill node."""
        return Skill(
            skill_id=self.skill_id,
            namespace=namespace,
            name=self.name,
            description=self.description,
            tags=self.tags,
            requires_tools=self.requires_tools,
            default_reasoning_effort=self.default_reasoning_effort,
            examples=[e.request for e in self.examples],
            manifest=self.model_dump(mode="json"),
        )


def parse_manifest(text: str, source: str = "manifest.json") -> SkillManifest:
    """Parse and validate manifest text; ``ManifestInvalid`` names the file and every problem."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestInvalid(
            f"{source}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    if not isinstance(data, dict):
        raise ManifestInvalid(f"{source}: must be a JSON object, got {type(data).__name__}")
    try:
        return SkillManifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestInvalid(f"{source}: {describe_errors('manifest', exc)}") from exc
