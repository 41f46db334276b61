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

from graph.skill_vectors import SkillStamp
from skills.loader import SkillPackage
from skills.registry import SkillHit, SkillRegistry
from skills.requests import suggest_args
from skills.routing import (
    INTENT_TAGS,
    Intent,
    IntentResult,
    Trigger,
    classify_intent,
    deep_triggers,
)

LIGHT_K = 2
DEEP_K = 4
MAX_K = 6
INTENT_BONUS = 0.3
LIGHT_MIN_SCORE = 0.8
WHEN_TO_USE = 3  # example requests a manifest shows
DOCS_CHARS = 1500  # the README excerpt a deep manifest carries
FAILURE_QUERY_CHARS = 300  # of the failing tool output, added to the skill search query


@dataclass
class RankedSkill:
    skill_id: str
    name: str
    score: float
    similarity: float | None
    matched_tags: list[str]
    reasons: list[str]
    args_hint: dict[str, Any] | None = None
    manifest: dict[str, Any] = field(default_factory=dict)  # what the model sees (model_manifest)


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


def model_manifest(
    package: SkillPackage, *, template: bool = False, docs: bool = False
) -> dict[str, Any]:
    """What the model sees of a skill (spec §3.2, §4.1 step 2, §5.3): its id, name,
    description, arguments schema and when to use it (example requests); ``template`` adds a
    ready ``skills_run`` call and the host tools it needs, ``docs`` an excerpt of its README."""
    m = package.manifest
    out: dict[str, Any] = {
        "skill_id": m.skill_id,
        "name": m.name,
        "description": m.description,
        "arguments": m.inputs_schema,
        "when_to_use": [e.request for e in m.examples[:WHEN_TO_USE]],
    }
    if template:
        args = next((e.args for e in m.examples if e.args), None)
        out["template"] = {"skill_id": m.skill_id, "args": args or _skeleton(m.inputs_schema)}
        out["requires_tools"] = list(m.requires_tools)
    if docs and package.readme.strip():
        out["docs"] = _excerpt(package.readme, DOCS_CHARS)
    return out


def _skeleton(schema: dict[str, Any]) -> dict[str, Any]:
    """Placeholder arguments: each required property named by its type."""
    props = schema.get("properties", {})
    return {k: f"<{props.get(k, {}).get('type', 'value')}>" for k in schema.get("required", [])}


def _excerpt(text: str, limit: int) -> str:
    """The start of ``text`` up to ``limit`` characters, cut at a paragraph when one fits."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind("\n\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + " ..."


def rank(
    hits: list[SkillHit], intent: IntentResult, triggers: list[Trigger], text: str
) -> list[RankedSkill]:
    """Score and explain each hit (pure: no I/O). Deep routing (a trigger fired) gives each
    skill the manifest with template and docs; a failed previous attempt also counts as the
    debug intent."""
    wanted, why = INTENT_TAGS[intent.intent], intent.reason
    failed = next((t for t in triggers if t.name == "prior_failure"), None)
    if failed is not None:
        wanted, why = wanted | INTENT_TAGS[Intent.DEBUG], f"{why}; {failed.reason}"
    deep = bool(triggers)
    ranked = []
    for hit in hits:
        tags = set(hit.package.manifest.tags)
        serves = sorted(tags & wanted)
        score = hit.score + (INTENT_BONUS if serves else 0.0)
        reasons = []
        if serves:
            reasons.append(f"serves intent {intent.intent.value} (tags {serves}; {why})")
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
                manifest=model_manifest(hit.package, template=deep, docs=deep),
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.skill_id))
    return ranked


def _query(text: str, triggers: list[Trigger], last_tool_output: str | None) -> str:
    """The skill search query: the message, plus the end of a failed tool output (where the
    error is) when that output fired the prior-failure trigger."""
    if last_tool_output and any(t.name == "prior_failure" for t in triggers):
        return f"{text}\n{last_tool_output[-FAILURE_QUERY_CHARS:]}"
    return text


def route(
    registry: SkillRegistry,
    text: str,
    last_tool_output: str | None = None,
    k: int | None = None,
    vector: Sequence[float] | None = None,
    stamp: SkillStamp | None = None,
) -> RouteResult:
    """Rank the skills for ``text`` (and the previous tool output, for the failure trigger);
    ``vector`` is ``text``'s embedding when the caller already computed it; ``stamp`` the
    skills' stamp when the caller read it (``SkillRegistry.search``)."""
    intent = classify_intent(text)
    triggers = deep_triggers(text, last_tool_output)
    mode: Literal["light", "deep"] = "deep" if triggers else "light"
    limit = min(k or (DEEP_K if triggers else LIGHT_K), MAX_K)
    trace = [f"intent {intent.intent.value}: {intent.reason}"]
    trace += [f"trigger {t.name}: {t.reason}" for t in triggers] or ["no deep-skill trigger fired"]
    trace.append(f"mode {mode}: up to {limit} skills")
    query = _query(text, triggers, last_tool_output)
    # the message's vector serves the search only when the query is the message itself
    hits = registry.search(
        query, k=max(limit, MAX_K), vector=vector if query == text else None, stamp=stamp
    )
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
