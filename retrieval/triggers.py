"""Deep-retrieval triggers for topics (spec §5.2). Pure functions: each returns an explanation
("relative_time: 'last week'") when it fires, None otherwise. The four skill triggers of §5.3
live in ``skills.routing`` and are combined by the context builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.config import TriggerConfig
from text.cues import MEMORY_CUE
from text.english import noun_phrases
from text.timephrases import SleepHistory, find_windows

_PAST_QUESTION = re.compile(
    r"^\s*(?:when|what|where|who|which|how|why)\b[^?]*\b(?:did|was|were|had)\b|"
    r"^\s*(?:did|has|had|was|were)\b[^?]*\?",
    re.I,
)
_SWITCH = re.compile(
    r"^\s*(?:anyway|anyhow|separately|unrelated(?:ly)?|on another note|by the way|btw|"
    r"switching gears|new thing|different topic|changing (?:the )?subject)\b",
    re.I,
)
_RECURRENCE = re.compile(
    r"\b(same (?:error|failure|bug|problem|issue|crash) (?:as|again)|happening again|"
    r"fails? again|broke again|still failing|again the same)\b",
    re.I,
)
# "[^\S\n]*+": indentation on the frame's own line. "^\s*" crossed newlines, so 32,000 blank lines
# were 32,000 scans to the end of the text.
_TRACEBACK = re.compile(
    r"Traceback \(most recent call last\)|^[^\S\n]*+File \".+\", line \d+", re.M
)


@dataclass(frozen=True)
class TriggerContext:
    now: datetime
    tz: str = "UTC"
    sleep: SleepHistory | None = None
    tail_text: str = ""
    top_scores: Sequence[float] = ()
    known_names: frozenset[str] = frozenset()
    config: TriggerConfig = field(default_factory=TriggerConfig)


def memory_reference(text: str, ctx: TriggerContext) -> str | None:
    m = MEMORY_CUE.search(text)
    if m:
        return f"memory_reference: '{m.group(0)}'"
    q = _PAST_QUESTION.search(text)
    return f"memory_reference: past-tense question '{q.group(0).strip()[:40]}'" if q else None


def relative_time(text: str, ctx: TriggerContext) -> str | None:
    try:
        windows = find_windows(text, ctx.now, ctx.tz, ctx.sleep)
    except Exception:  # a trigger never breaks a turn
        return None
    return f"relative_time: '{windows[0].phrase}'" if windows else None


def reintroduced_entity(text: str, ctx: TriggerContext) -> str | None:
    """A name the memory knows that is not in the recent tail."""
    tail = ctx.tail_text.lower()
    for phrase in noun_phrases(text):
        key = phrase.lower()
        if key in ctx.known_names and key not in tail:
            return f"reintroduced_entity: '{phrase}'"
    return None


def low_confidence(text: str, ctx: TriggerContext) -> str | None:
    """Top light-retrieval scores are low, or the first two are too close to tell apart."""
    floor, gap = ctx.config.low_confidence_floor, ctx.config.low_confidence_gap
    scores = sorted(ctx.top_scores, reverse=True)
    if not scores:
        return None
    if scores[0] < floor:
        return f"low_confidence: top score {scores[0]:.2f} < {floor}"
    if len(scores) > 1 and scores[0] - scores[1] < gap:
        return f"low_confidence: top scores {scores[0]:.2f} and {scores[1]:.2f} are within {gap}"
    return None


def context_switch(text: str, ctx: TriggerContext) -> str | None:
    m = _SWITCH.search(text)
    return f"context_switch: '{m.group(0).strip()}'" if m else None


def debug_recurrence(text: str, ctx: TriggerContext) -> str | None:
    m = _RECURRENCE.search(text)
    if m:
        return f"debug_recurrence: '{m.group(0)}'"
    return "debug_recurrence: stack trace" if _TRACEBACK.search(text) else None


TOPIC_TRIGGERS: tuple[Callable[[str, TriggerContext], str | None], ...] = (
    memory_reference,
    relative_time,
    reintroduced_entity,
    low_confidence,
    context_switch,
    debug_recurrence,
)


def fired(text: str, ctx: TriggerContext) -> list[str]:
    """Explanations of every topic trigger that fires on ``text``."""
    out = []
    for trigger in TOPIC_TRIGGERS:
        reason = trigger(text, ctx)
        if reason:
            out.append(reason)
    return out
