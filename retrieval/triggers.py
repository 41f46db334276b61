"""Deep-retrieval triggers for topics (spec §5.2). Pure functions: each returns an explanation
("relative_time: 'last week'") when it fires, None otherwise. The four skill triggers of §5.3
live in ``skills.routing`` and are combined by the context builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.config import TriggerConfig
from retrieval.message import ParsedMessage, parsed
from retrieval.message import time_text as time_text  # read here by callers and tests
from text.timephrases import SleepHistory

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
class RetrievalSignals:
    """What the light search found, on scales that mean the same in every namespace: the best
    vector cosine of a topic to the message, its margin over the second best, and the best
    full-text BM25 of a topic's name, aliases and one-liner (namespace-local statistics,
    ``graph/lexical.py``; 0 when no topic shares a word with the message). ``best_cosine`` is
    None when there was no vector search (no embedder, or the model is down)."""

    best_cosine: float | None = None
    second_cosine: float | None = None
    best_text: float = 0.0

    @classmethod
    def of(cls, cosine: Mapping[str, float], text: Mapping[str, float]) -> RetrievalSignals:
        """The signals of a search's per-topic cosines and full-text scores."""
        top = sorted(cosine.values(), reverse=True)[:2]
        return cls(
            best_cosine=top[0] if top else None,
            second_cosine=top[1] if len(top) > 1 else None,
            best_text=max(text.values(), default=0.0),
        )

    @property
    def margin(self) -> float | None:
        """Best cosine minus the second best (None with fewer than two)."""
        if self.best_cosine is None or self.second_cosine is None:
            return None
        return self.best_cosine - self.second_cosine

    def as_dict(self) -> dict[str, float]:
        """The signals rounded for a trace (missing ones left out)."""
        out = {"best_cosine": self.best_cosine, "cosine_margin": self.margin}
        out["best_text"] = self.best_text
        return {k: round(v, 4) for k, v in out.items() if v is not None}


@dataclass(frozen=True)
class TriggerContext:
    now: datetime
    tz: str = "UTC"
    sleep: SleepHistory | None = None
    tail_text: str = ""
    signals: RetrievalSignals | None = None  # the light search's, once it ran
    known_names: frozenset[str] = frozenset()
    # known names whose topic this session was given within the suppression cool-down
    held_names: frozenset[str] = frozenset()
    config: TriggerConfig = field(default_factory=TriggerConfig)
    # before the light search, when it will run: the weak cues that defer to its signals (a bare
    # past-tense question) wait for them instead of firing blind
    search_pending: bool = False


def memory_reference(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    """Memory words ("remember", "what did we", "last time") always fire. A bare past-tense
    question ("How much did the laptop cost?") is a weak cue: it fires unless the light search
    vouches for a topic (``clear``), since a question the light search answers clearly needs no
    wider search; before the search (``search_pending``) it waits for the signals."""
    msg = parsed(text)
    if msg.memory_cue is not None:
        return f"memory_reference: '{msg.memory_cue}'"
    q = msg.past_question
    if q is None:
        return None
    return _weak(f"memory_reference: past-tense question '{q.strip()[:40]}'", ctx)


def personal_request(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    """A personal request (``personal_cue``) widens to a deep search when the light search found
    no clear topic: what the user said about themselves may be filed under a topic the message
    does not name. Like the past-tense question, it waits for the signals before the search."""
    cue = parsed(text).personal
    return None if cue is None else _weak(cue, ctx)


def _weak(cue: str, ctx: TriggerContext) -> str | None:
    """A weak cue's firing: unless the light search vouches for a topic (``clear``), with why
    not; before that search (``search_pending``) it waits for its signals, and with no search
    to come it fires alone."""
    if ctx.signals is None:
        return None if ctx.search_pending else cue
    if clear(ctx.signals, ctx.config):
        return None
    return f"{cue} and {_not_clear(ctx.signals, ctx.config)}"


def _not_clear(signals: RetrievalSignals, cfg: TriggerConfig) -> str:
    """The explanation of a weak cue's firing: the light search vouched for no topic."""
    values = ", ".join(f"{k} {v:.3f}" for k, v in signals.as_dict().items())
    return (
        f"no clear topic (best_cosine < {cfg.cosine_clear} and best_text < "
        f"{cfg.text_floor}: {values})"
    )


def clear(sig: RetrievalSignals, cfg: TriggerConfig) -> bool:
    """The light search vouches for a topic: one shares the message's rarer words (best BM25 at
    least ``text_floor``) or one is near (best cosine at least ``cosine_clear``)."""
    if sig.best_text >= cfg.text_floor:
        return True
    return sig.best_cosine is not None and sig.best_cosine >= cfg.cosine_clear


def relative_time(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    """A time phrase whose window has begun: what was said then is worth a windowed search. A
    window still ahead ("What's the plan for the roof repair this weekend?" on a Monday,
    "tomorrow") names when a plan happens, not when anything was said: no trigger; nor is a
    time phrase inside a name the memory knows ("Any news on this month's novel?" when the
    book club's topic is aliased so: ``time_text``)."""
    try:  # the windows the context's plan found, when it did (``ParsedMessage.windows``)
        begun = parsed(text).windows(ctx.now, ctx.tz, ctx.sleep, ctx.known_names)
    except Exception:  # a trigger never breaks a turn
        return None
    return f"relative_time: '{begun[0].phrase}'" if begun else None


def reintroduced_entity(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    """A name the memory knows that is neither in the recent tail nor held by the session (a
    topic so named was injected into it within the suppression cool-down, 5 turns or 15
    minutes: the agent has it in front of it, and nothing was re-introduced)."""
    tail = ctx.tail_text.lower()
    for phrase in parsed(text).names:
        key = phrase.lower()
        if key in ctx.known_names and key not in tail and key not in ctx.held_names:
            return f"reintroduced_entity: '{phrase}'"
    return None


def low_confidence(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    """The light search found no topic it can vouch for (docs/retrieval.md, "Low confidence"):
    no topic is near the message (best cosine below ``cosine_floor``) and none shares its words
    (best BM25 below ``text_floor``); or the nearest topics are only moderately near (below
    ``cosine_clear``) and too close to tell apart (margin below ``margin_gap``) while full text
    does not single one out. No opinion before the light search has run."""
    sig, cfg = ctx.signals, ctx.config
    if sig is None:
        return None
    values = ", ".join(f"{k} {v:.3f}" for k, v in sig.as_dict().items())
    if sig.best_text >= cfg.text_floor:
        return None  # a topic shares the message's rare words: lexically clear
    if sig.best_cosine is None:
        return f"low_confidence: no vector search and best_text < {cfg.text_floor} ({values})"
    if sig.best_cosine < cfg.cosine_floor:
        return (
            f"low_confidence: best_cosine < {cfg.cosine_floor} and best_text < "
            f"{cfg.text_floor} ({values})"
        )
    margin = sig.margin
    if sig.best_cosine < cfg.cosine_clear and margin is not None and margin < cfg.margin_gap:
        return (
            f"low_confidence: best_cosine < {cfg.cosine_clear} with cosine_margin < "
            f"{cfg.margin_gap} and best_text < {cfg.text_floor} ({values})"
        )
    return None


def context_switch(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    m = _SWITCH.search(parsed(text).text)
    return f"context_switch: '{m.group(0).strip()}'" if m else None


def debug_recurrence(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    said = parsed(text).text
    m = _RECURRENCE.search(said)
    if m:
        return f"debug_recurrence: '{m.group(0)}'"
    return "debug_recurrence: stack trace" if _TRACEBACK.search(said) else None


def after_search(text: str | ParsedMessage, ctx: TriggerContext) -> str | None:
    """The triggers that judge the light search's signals (``ctx.signals``), run when none fired
    before it: a past-tense question with no clear topic, low confidence, then a personal
    request with no clear topic (low confidence names the vaguest searches itself)."""
    msg = parsed(text)
    return memory_reference(msg, ctx) or low_confidence(msg, ctx) or personal_request(msg, ctx)


TOPIC_TRIGGERS: tuple[Callable[[ParsedMessage, TriggerContext], str | None], ...] = (
    memory_reference,
    personal_request,
    relative_time,
    reintroduced_entity,
    low_confidence,
    context_switch,
    debug_recurrence,
)


def fired(text: str | ParsedMessage, ctx: TriggerContext) -> list[str]:
    """Explanations of every topic trigger that fires on ``text`` (with ``ctx.search_pending``:
    those that need no search signals; ``after_search`` judges the rest)."""
    msg, out = parsed(text), []
    for trigger in TOPIC_TRIGGERS:
        reason = trigger(msg, ctx)
        if reason:
            out.append(reason)
    return out
