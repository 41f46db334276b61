"""Skill routing for one user message (spec §4.1 step 2, §5.3), with a trace of every decision.

Light routing runs on every message and keeps at most two skills that clear ``LIGHT_MIN_SCORE``
(or serve the message's intent). When one of the four §5.3 triggers fires, routing goes deep:
three to six skills, ranked. A skill's score is its search score (embedding similarity + shared
tags) plus ``INTENT_BONUS`` when its tags serve the classified intent; each ranked skill carries
the reasons behind its score, and the route's ``trace`` says why each candidate was kept or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from skills.registry import SkillHit, SkillRegistry
from skills.requests import suggest_args
from skills.routing import INTENT_TAGS, IntentResult, Trigger, classify_intent, deep_triggers

LIGHT_K = 2
DEEP_K = 4
MAX_K = 6
INTENT_BONUS = 0.3
LIGHT_MIN_SCORE = 0.8


@dataclass
class RankedSkill:
    skill_id: str
    name: str
    score: float
    similarity: float | None
    matched_tags: list[str]
    reasons: list[str]
    args_hint: dict[str, Any] | None = None


@dataclass
class RouteResult:
    text: str
    intent: str
    intent_reason: str
    mode: Literal["light", "deep"]
    triggers: list[dict[str, str]]
    skills: list[RankedSkill]
    trace: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rank(
    hits: list[SkillHit], intent: IntentResult, triggers: list[Trigger], text: str
) -> list[RankedSkill]:
    """Score and explain each hit (pure: no I/O)."""
    wanted = INTENT_TAGS[intent.intent]
    ranked = []
    for hit in hits:
        tags = set(hit.package.manifest.tags)
        serves = sorted(tags & wanted)
        score = hit.score + (INTENT_BONUS if serves else 0.0)
        reasons = []
        if serves:
            reasons.append(f"serves intent {intent.intent.value} (tags {serves}; {intent.reason})")
        if hit.similarity is not None:
            reasons.append(f"embedding similarity {hit.similarity:.3f}")
        if hit.matched_tags:
            reasons.append(f"query shares tags {list(hit.matched_tags)}")
        reasons.extend(f"deep trigger {t.name}: {t.reason}" for t in triggers)
        ranked.append(
            RankedSkill(
                skill_id=hit.skill_id,
                name=hit.package.manifest.name,
                score=round(score, 4),
                similarity=None if hit.similarity is None else round(hit.similarity, 4),
                matched_tags=list(hit.matched_tags),
                reasons=reasons,
                args_hint=suggest_args(hit.skill_id, text),
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.skill_id))
    return ranked


def route(
    registry: SkillRegistry,
    text: str,
    last_tool_output: str | None = None,
    k: int | None = None,
    vector: Sequence[float] | None = None,
) -> RouteResult:
    """Rank the skills for ``text`` (and the previous tool output, for the failure trigger);
    ``vector`` is ``text``'s embedding when the caller already computed it."""
    intent = classify_intent(text)
    triggers = deep_triggers(text, last_tool_output)
    mode: Literal["light", "deep"] = "deep" if triggers else "light"
    limit = min(k or (DEEP_K if triggers else LIGHT_K), MAX_K)
    trace = [f"intent {intent.intent.value}: {intent.reason}"]
    trace += [f"trigger {t.name}: {t.reason}" for t in triggers] or ["no deep-skill trigger fired"]
    trace.append(f"mode {mode}: up to {limit} skills")
    hits = registry.search(text, k=max(limit, MAX_K), vector=vector)
    kept: list[RankedSkill] = []
    for ranked in rank(hits, intent, triggers, text):
        serves = ranked.reasons and ranked.reasons[0].startswith("serves intent")
        if len(kept) >= limit:
            trace.append(f"dropped {ranked.skill_id} ({ranked.score:.3f}): over the limit")
        elif mode == "light" and not serves and ranked.score < LIGHT_MIN_SCORE:
            trace.append(
                f"dropped {ranked.skill_id} ({ranked.score:.3f}): light mode needs "
                f"{LIGHT_MIN_SCORE} or the intent's tags"
            )
        else:
            kept.append(ranked)
            trace.append(
                f"kept {ranked.skill_id} ({ranked.score:.3f}): " + "; ".join(ranked.reasons)
            )
    return RouteResult(
        text=text,
        intent=intent.intent.value,
        intent_reason=intent.reason,
        mode=mode,
        triggers=[{"name": t.name, "reason": t.reason} for t in triggers],
        skills=kept,
        trace=trace,
    )
