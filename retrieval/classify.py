"""Request classes and the consult-confidence score (seed 003). Pure.

Class A, explicit: the user asks memory for something ("what did we decide", "remember",
"search memory", a past-tense question about what happened); retrieval runs with the larger
budget and the suppression cache does not apply. Class B, implicit: memory may help (continuation,
a known topic named, a bug or design question); inject only when the consult confidence clears
the thresholds. Class C, none: small talk or a self-contained request.

Consult confidence (0..1), seed 003's draft weights: lexical overlap 0.30, semantic similarity
0.25, same-task continuity 0.20, scope proximity 0.10, record-type relevance 0.05, importance and
recency 0.05, provenance 0.05. Thresholds: < 0.55 skip; 0.55-0.72 consult (inject at most one
summary); >= 0.72 normal injection; >= 0.82 also graph neighbours. The numbers live in
``retrieval.config.ConsultConfig``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from retrieval.config import ConsultConfig
from retrieval.message import ParsedMessage, parsed

# Small talk: one or more greeting, thanks or acknowledgement words and nothing else ("thanks!",
# "great, thank you", "ok cool"). Linear: words separated by possessive punctuation runs.
_CASUAL_WORD = (
    r"(?:hi|hello|hey|thanks|thank you(?: so much| very much)?|thx|ok|okay|cool|great|nice|lol"
    r"|good (?:morning|night|evening)|bye|sounds good|got it|perfect|awesome|alright|will do)"
)
_CASUAL = re.compile(rf"^\s*+{_CASUAL_WORD}(?:[\s!.,]++{_CASUAL_WORD})*+[\s!.,]*+$", re.I)


_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:what|when|where|who|whom|which|why|how|would|could|does|do|did|is|are|was"
    r"|were|has|have|can|tell me|remind me)\b",
    re.I,
)


_DEFAULT = ConsultConfig()


class RequestClass(StrEnum):
    EXPLICIT = "A"
    IMPLICIT = "B"
    NONE = "C"


@dataclass(frozen=True)
class ConsultSignals:
    """Each signal in 0..1 before weighting."""

    lexical: float = 0.0
    semantic: float = 0.0
    same_task: float = 0.0
    scope: float = 1.0  # everything searched is the caller's own namespace
    record_type: float = 0.0
    importance_recency: float = 0.0
    provenance: float = 0.0


BANDS = ("skip", "consult", "normal", "related")  # lowest first


@dataclass(frozen=True)
class ConsultDecision:
    confidence: float
    band: str  # "skip" | "consult" | "normal" | "related"
    components: dict[str, float] = field(default_factory=dict)
    raised_by: str = ""  # why the band was raised to a floor above the confidence's own band


def classify(
    message: str | ParsedMessage, memory_triggers: list[str], names_known: bool = False
) -> RequestClass:
    """A when the user asks memory explicitly, a memory-reference trigger fired, or the message
    is a question about something or someone the memory knows by name (a topic, a participant
    of the conversation); C for small talk; else B."""
    msg = parsed(message)
    text = msg.text
    if msg.memory_cue is not None or any(t.startswith("memory_reference") for t in memory_triggers):
        return RequestClass.EXPLICIT
    if names_known and _QUESTION.search(text):
        return RequestClass.EXPLICIT
    if _CASUAL.match(text) or len(text.strip()) < 3:
        return RequestClass.NONE
    return RequestClass.IMPLICIT


def consult(
    signals: ConsultSignals,
    cfg: ConsultConfig | None = None,
    floor: str = "skip",
    why: str = "",
) -> ConsultDecision:
    """Weighted consult confidence and the band it falls in, at least ``floor`` (``why`` says
    what raised it: a personal request consults memory whatever the confidence,
    ``ConsultConfig.personal_floor``)."""
    decision = _banded(signals, cfg or _DEFAULT)
    if BANDS.index(floor) > BANDS.index(decision.band):
        return ConsultDecision(decision.confidence, floor, decision.components, why)
    return decision


def _banded(signals: ConsultSignals, cfg: ConsultConfig) -> ConsultDecision:
    weights = cfg.weights
    parts = {name: weights[name] * min(1.0, max(0.0, getattr(signals, name))) for name in weights}
    confidence = round(sum(parts.values()), 4)
    if confidence >= cfg.related_from:
        band = "related"
    elif confidence >= cfg.normal_from:
        band = "normal"
    elif confidence >= cfg.skip_below:
        band = "consult"
    else:
        band = "skip"
    return ConsultDecision(confidence, band, parts)
