"""What the rule-based extraction finds in one message (``sleepwake.extract``). Pure."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Decision(_Frozen):
    """A choice that was made: ``chosen`` over ``rejected`` because of ``reason``."""

    text: str
    chosen: str
    rejected: list[str] = Field(default_factory=list)
    reason: str | None = None


class NumberMention(_Frozen):
    """A quantity: ``key`` is a short lower-case noun phrase ("context window", "budget")."""

    key: str
    value: float
    unit: str | None
    text: str


class Dependency(_Frozen):
    """``dependent`` cannot proceed before ``dependency``."""

    dependent: str
    dependency: str
    text: str


class InProgress(_Frozen):
    """Unfinished work: the ``goal`` being worked on and, if stated, the ``next_step``."""

    goal: str
    next_step: str | None
    text: str


class Extraction(_Frozen):
    """Every memory candidate found in one message."""

    entities: list[str]
    decisions: list[Decision]
    constraints: list[str]
    open_loops: list[str]
    numbers: list[NumberMention]
    time_expressions: list[str]
    memory_references: list[str]
    dependencies: list[Dependency]
    is_correction: bool
    in_progress: InProgress | None
    sentences: list[str]
