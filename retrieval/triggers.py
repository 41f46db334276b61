"""Deep-retrieval triggers for topics (spec §5.2). Pure functions: each returns an explanation
("relative_time: 'last week'") when it fires, None otherwise. The four skill triggers of §5.3
live in ``skills.routing`` and are combined by the context builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.config import TriggerConfig
from text.cues import MEMORY_CUE
from text.english import drop_names, noun_phrases, split_sentences, time_spans, timed_names
from text.timephrases import SleepHistory, find_windows

_PAST_QUESTION = re.compile(
    r"^\s*(?:when|what|where|who|which|how|why)\b[^?]*\b(?:did|was|were|had)\b|"
    r"^\s*(?:did|has|had|was|were)\b[^?]*\?",
    re.I,
)
# A request for advice, a recommendation or suggestions: the user's stated preferences and
# situation are what make the answer theirs ("Any tips for keeping my kitchen clean?"). Linear:
# each alternative starts at a word boundary, runs are possessive and the one gap is bounded.
_ADVICE = re.compile(
    r"\b(?:can|could|would|will)\s++you\s++(?:please\s++)?(?:suggest|recommend|advise)\b|"
    r"\bwhat\s++(?:do|would|can|could)\s++you\s++(?:suggest|recommend|advise)\b|"
    r"\b(?:any|some|a\s++few|your)\s++(?:[a-z]{1,20}+\s++)?"
    r"(?:tips|recommendations?|suggestions?|advice|ideas|pointers)\b|"
    r"\b(?:what|which|where|how|when)\s++(?:should|could|can)\s++i\b|"
    r"\bshould\s++i\b|"
    r"\bhelp\s++me\s++(?:choose|pick|decide|plan|find|figure\s++out)\b|"
    r"^[^\S\n]*+(?:please\s++)?(?:suggest|recommend)\b",
    re.I,
)
# A question (a question mark, or an interrogative first word) ...
_ASKS = re.compile(
    r"\?|^[^\S\n]*+(?:what|when|where|who|which|why|how|would|could|does|do|did|is|are|was|"
    r"were|has|have|can|should)\b",
    re.I,
)
# ... about the user's own life: the first person singular ("my bike", "I", "I'm")
_OWN = re.compile(r"\b(?:my|mine|myself|i)\b(?:\s++[\w'’-]{1,30}+)?", re.I)
# A question for the value as it stands now ("Where did I go on my most recent family trip?",
# "Where do I currently keep my old sneakers?"): when a fact was updated, the newest statement
# answers it.
_LATEST = re.compile(
    r"\b(?:most\s++recent(?:ly)?|latest|currently|current|nowadays|these\s++days|"
    r"at\s++the\s++moment|right\s++now|any\s*more|still)\b",
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


def memory_reference(text: str, ctx: TriggerContext) -> str | None:
    """Memory words ("remember", "what did we", "last time") always fire. A bare past-tense
    question ("How much did the laptop cost?") is a weak cue: it fires unless the light search
    vouches for a topic (``clear``), since a question the light search answers clearly needs no
    wider search; before the search (``search_pending``) it waits for the signals."""
    m = MEMORY_CUE.search(text)
    if m:
        return f"memory_reference: '{m.group(0)}'"
    q = _PAST_QUESTION.search(text)
    if q is None:
        return None
    reason = f"memory_reference: past-tense question '{q.group(0).strip()[:40]}'"
    if ctx.signals is None:
        return None if ctx.search_pending else reason
    if clear(ctx.signals, ctx.config):
        return None
    return f"{reason} and {_not_clear(ctx)}"


def personal_cue(text: str) -> str | None:
    """Why ``text`` asks for something the user's own memory shapes, or None: a request for
    advice, a recommendation or suggestions ("Can you suggest ...", "Any tips for ..."), or a
    question about the user's own life in the first person ("I noticed my bike ... Could there
    be a reason?"). Such a message consults memory even when its consult confidence is low
    (``ConsultConfig.personal_floor``); small talk ("thanks!", "ok") is neither."""
    m = _ADVICE.search(text)
    if m:
        return f"personal_request: advice '{m.group(0).strip()[:40]}'"
    if _ASKS.search(text) is None:
        return None
    # the first person in a question or in the sentence that sets it up ("I noticed my bike
    # ... Could there be a reason?"), not in an aside after it ("Any news? I owe Sam 50 euros.")
    before = ""
    for sentence in split_sentences(text):
        if _ASKS.search(sentence):
            own = _OWN.search(sentence) or _OWN.search(before)
            if own:
                return f"personal_request: about the user's own life '{own.group(0)[:40]}'"
        before = sentence
    return None


def latest_cue(text: str) -> str | None:
    """Why a question asks for the current value of something ("latest: 'most recent'"), or
    None; a statement ("I still have it") asks nothing."""
    if _ASKS.search(text) is None:
        return None
    m = _LATEST.search(text)
    return f"latest: '{m.group(0)}'" if m else None


def personal_request(text: str, ctx: TriggerContext) -> str | None:
    """A personal request (``personal_cue``) widens to a deep search when the light search found
    no clear topic: what the user said about themselves may be filed under a topic the message
    does not name. Like the past-tense question, it waits for the signals before the search."""
    cue = personal_cue(text)
    if cue is None:
        return None
    if ctx.signals is None:
        return None if ctx.search_pending else cue
    if clear(ctx.signals, ctx.config):
        return None
    return f"{cue} and {_not_clear(ctx)}"


def _not_clear(ctx: TriggerContext) -> str:
    """The explanation of a weak cue's firing: the light search vouched for no topic."""
    assert ctx.signals is not None
    values = ", ".join(f"{k} {v:.3f}" for k, v in ctx.signals.as_dict().items())
    cfg = ctx.config
    return (
        f"no clear topic (best_cosine < {cfg.cosine_clear} and best_text < "
        f"{cfg.text_floor}: {values})"
    )


def past_question(text: str) -> bool:
    """Whether ``text`` is a past-tense question (the weak memory cue; for the request class)."""
    return _PAST_QUESTION.search(text) is not None


def clear(sig: RetrievalSignals, cfg: TriggerConfig) -> bool:
    """The light search vouches for a topic: one shares the message's rarer words (best BM25 at
    least ``text_floor``) or one is near (best cosine at least ``cosine_clear``)."""
    if sig.best_text >= cfg.text_floor:
        return True
    return sig.best_cosine is not None and sig.best_cosine >= cfg.cosine_clear


def time_text(text: str, known_names: Collection[str]) -> str:
    """``text`` as its time phrases are read: without the names the memory knows, so that a
    topic named or aliased with a time phrase ("this month's novel", "last week's retro") is a
    name, not a window (the name finds its topic; its words say nothing of when the message
    is looking)."""
    timed = [n for n in known_names if time_spans(n)]  # only those: the rest read as before
    return drop_names(text, timed) if timed else text


def relative_time(text: str, ctx: TriggerContext) -> str | None:
    """A time phrase whose window has begun: what was said then is worth a windowed search. A
    window still ahead ("What's the plan for the roof repair this weekend?" on a Monday,
    "tomorrow") names when a plan happens, not when anything was said: no trigger; nor is a
    time phrase inside a name the memory knows ("Any news on this month's novel?" when the
    book club's topic is aliased so: ``time_text``)."""
    try:
        windows = find_windows(time_text(text, ctx.known_names), ctx.now, ctx.tz, ctx.sleep)
    except Exception:  # a trigger never breaks a turn
        return None
    begun = [w for w in windows if not w.ahead(ctx.now)]
    return f"relative_time: '{begun[0].phrase}'" if begun else None


def reintroduced_entity(text: str, ctx: TriggerContext) -> str | None:
    """A name the memory knows that is neither in the recent tail nor held by the session (a
    topic so named was injected into it within the suppression cool-down, 5 turns or 15
    minutes: the agent has it in front of it, and nothing was re-introduced)."""
    tail = ctx.tail_text.lower()
    for phrase in [*noun_phrases(text), *timed_names(text)]:
        key = phrase.lower()
        if key in ctx.known_names and key not in tail and key not in ctx.held_names:
            return f"reintroduced_entity: '{phrase}'"
    return None


def low_confidence(text: str, ctx: TriggerContext) -> str | None:
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


def context_switch(text: str, ctx: TriggerContext) -> str | None:
    m = _SWITCH.search(text)
    return f"context_switch: '{m.group(0).strip()}'" if m else None


def debug_recurrence(text: str, ctx: TriggerContext) -> str | None:
    m = _RECURRENCE.search(text)
    if m:
        return f"debug_recurrence: '{m.group(0)}'"
    return "debug_recurrence: stack trace" if _TRACEBACK.search(text) else None


def after_search(text: str, ctx: TriggerContext) -> str | None:
    """The triggers that judge the light search's signals (``ctx.signals``), run when none fired
    before it: a past-tense question with no clear topic, low confidence, then a personal
    request with no clear topic (low confidence names the vaguest searches itself)."""
    return memory_reference(text, ctx) or low_confidence(text, ctx) or personal_request(text, ctx)


TOPIC_TRIGGERS: tuple[Callable[[str, TriggerContext], str | None], ...] = (
    memory_reference,
    personal_request,
    relative_time,
    reintroduced_entity,
    low_confidence,
    context_switch,
    debug_recurrence,
)


def fired(text: str, ctx: TriggerContext) -> list[str]:
    """Explanations of every topic trigger that fires on ``text`` (with ``ctx.search_pending``:
    those that need no search signals; ``after_search`` judges the rest)."""
    out = []
    for trigger in TOPIC_TRIGGERS:
        reason = trigger(text, ctx)
        if reason:
            out.append(reason)
    return out
