"""What a memory context is asked and what it answers: the request, and the result typed to its
leaves (the packed items and the trace are ``retrieval.packer``'s; the API's ``ContextPublic``
is built from these fields as they are)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, Protocol, Required

from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic reads this one on Python 3.11

from graph.skill_vectors import SkillStamp
from retrieval.packer import ContextItem, TraceEntry


class SkillRouter(Protocol):
    """Routes a message to skills (§5.3); ``vector`` is the message's embedding when the topic
    search already computed it (None: the router embeds the message itself); ``stamp`` is the
    routing skills' stamp read before the search (None: not read; the skill store then asks
    the vector index)."""

    def __call__(
        self,
        text: str,
        last_tool_output: str | None,
        vector: list[float] | None = None,
        stamp: SkillStamp | None = None,
    ) -> dict[str, Any]: ...


class ContextRequest(BaseModel):
    namespace: str
    message: str
    now: datetime
    budget: int = 1000
    session_id: str | None = None
    explicit: bool = False  # an explicit search: class A, no suppression
    full_records: bool = False  # L2: the full record of the best topic
    last_tool_output: str | None = None
    as_of: datetime | None = None  # the memory as it stood then (facts valid then, no later)


class ConsultReport(TypedDict):
    """The consult confidence (seed 003), its band and why it was raised, if it was."""

    confidence: float
    band: str
    components: dict[str, float]
    personal_request: NotRequired[str]  # why the message is a personal request
    raised_by: NotRequired[str]  # what raised the band to its floor


class RoutedSkill(TypedDict, total=False):
    """One skill the router kept for the message (``skills.router.RankedSkill``, as a dict):
    its score (search score plus trigger priors), the embedding similarity (None: matched by
    text only), the tags and reasons that matched, suggested arguments and the manifest the
    model sees (``skills.router.model_manifest``). A router may leave out all but the id."""

    skill_id: Required[str]
    name: str
    score: float
    similarity: float | None
    matched_tags: list[str]
    reasons: list[str]
    args_hint: dict[str, Any] | None
    manifest: dict[str, Any]


class SkillRouting(TypedDict, total=False):
    """What the skill router said of the message (no router, or a failed one: mode and trace)."""

    intent: str | None
    intent_reason: str | None
    mode: str | None
    triggers: list[dict[str, str]] | None
    trace: list[str] | None


class WindowReport(TypedDict):
    """The time phrase resolved: phrase, kind and ISO-8601 bounds (None = open)."""

    phrase: str
    kind: str
    start: str | None
    end: str | None


class ContextResult(BaseModel):
    context_text: str
    items: list[ContextItem]
    # light: 0-2 manifests; deep (a §5.3 trigger): 3-6
    skills: list[RoutedSkill] = []
    skill_routing: SkillRouting = {}
    request_class: str
    triggers: list[str]
    deep: bool
    consult: ConsultReport
    time_window: WindowReport | None
    retrieval_signals: dict[str, float] = {}  # what the low-confidence trigger judged
    degraded: bool
    trace: list[TraceEntry]
    used_tokens: int
    budget: int
    timings_ms: dict[str, float]
