"""Pure routing signals (spec §4.1 step 2, §5.3): intent classes and the four deep-skill triggers.

Nothing here touches Neo4j or a model. Each trigger returns a one-line explanation when it fires
and None when it does not; the explanation quotes the words that fired it, so a route's trace can
say why deep skill retrieval ran and why a skill was chosen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from text.cues import MEMORY_CUE


class Intent(StrEnum):
    """The request classes of spec §4.1 step 2 (``none`` = small talk, no skill needed)."""

    CODING = "coding"
    DOCS = "docs"
    DEBUG = "debug"
    PLANNING = "planning"
    MEMORY = "memory_reference"
    NONE = "none"


# Skill tags that serve each intent; the router boosts skills carrying one of them.
INTENT_TAGS: dict[Intent, frozenset[str]] = {
    Intent.CODING: frozenset({"refactor", "rename", "code", "coding"}),
    Intent.DOCS: frozenset({"docs", "documentation"}),
    Intent.DEBUG: frozenset({"debug", "stack-trace", "traceback", "errors"}),
    Intent.PLANNING: frozenset({"planning", "plan", "design", "architecture", "multi-step"}),
    Intent.MEMORY: frozenset({"memory"}),
    Intent.NONE: frozenset(),
}

_I = re.IGNORECASE
TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
# Line-anchored patterns take the indentation of their own line only ("[^\S\n]*+", not "\s*"):
# "^\s*" crosses newlines, so 32,000 blank lines were 32,000 scans to the end of the text.
_FRAME = re.compile(r'^[^\S\n]*+File "[^"]+", line \d+', re.MULTILINE)
_EXC_LINE = re.compile(
    r"^[^\S\n]*+(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt)\b:?.*$", re.MULTILINE
)

# (pattern, weight) per intent; a strong phrase weighs 2, a hint 1.
_INTENT_PATTERNS: dict[Intent, list[tuple[re.Pattern[str], float]]] = {
    Intent.DEBUG: [
        (re.compile(r"\b(debug|traceback|stack ?trace|crash(es|ed|ing)?)\b", _I), 2.0),
        (re.compile(r"\bsame (failure|error|crash|bug)\b", _I), 2.0),
        (re.compile(r"\b(\w+Error|exception|fail(s|ing|ure)?|broken|bug)\b", _I), 1.0),
    ],
    Intent.PLANNING: [
        (re.compile(r"\bhow (should|would|could|do) (we|i) (architect|design|structure)", _I), 3.0),
        (re.compile(r"\b(design (spec|doc|document|proposal)|architect(ure)?)\b", _I), 2.0),
        (re.compile(r"\b(plan|roadmap|approach|strategy)\b", _I), 1.0),
    ],
    Intent.DOCS: [
        (
            re.compile(r"\b(docs|documentation|document|docstrings?|readme|api reference)\b", _I),
            2.5,
        ),
    ],
    Intent.CODING: [
        (re.compile(r"\b(refactor(ing)?|rename|implement|migrate|extract|inline)\b", _I), 2.0),
        (re.compile(r"\b(fix|add|change|remove|delete|move|edit|update|write)\b", _I), 0.5),
        (re.compile(r"\b(code|module|function|class|method|tests?|repo|package|file)\b", _I), 0.5),
    ],
    Intent.MEMORY: [
        (MEMORY_CUE, 2.0),  # the one table of memory cues (text/cues.py)
        (re.compile(r"\b(before you slept|yesterday|last week|earlier)\b", _I), 1.0),
    ],
}
_PRIORITY = [Intent.DEBUG, Intent.DOCS, Intent.PLANNING, Intent.CODING, Intent.MEMORY]


@dataclass(frozen=True)
class IntentResult:
    intent: Intent
    score: float
    reason: str


@dataclass(frozen=True)
class Trigger:
    name: str
    reason: str


def has_stack_trace(text: str) -> bool:
    """A Python traceback: the header, or at least one ``File "...", line N`` frame."""
    return bool(TRACEBACK.search(text) or (_FRAME.search(text) and _EXC_LINE.search(text)))


def classify_intent(text: str) -> IntentResult:
    """The request class with the highest weighted evidence; ties go to the more specific."""
    if has_stack_trace(text):
        return IntentResult(Intent.DEBUG, 5.0, "contains a Python stack trace")
    best = IntentResult(Intent.NONE, 0.0, "no coding, docs, debug, planning or memory cue")
    for intent in _PRIORITY:
        score, words = 0.0, []
        for pattern, weight in _INTENT_PATTERNS[intent]:
            found = [m.group(0) for m in pattern.finditer(text)]
            if found:
                score += weight
                words.extend(found)
        if score > best.score:
            quoted = ", ".join(repr(w) for w in dict.fromkeys(w.lower() for w in words))
            best = IntentResult(intent, score, f"{intent.value} cues: {quoted}")
    return best


# -- the four deep-skill triggers (spec §5.3) ------------------------------------------------------
_CHANGE_VERB = re.compile(
    r"\b(write|rewrite|update|change|fix|add|rename|refactor|remove|delete|edit|modify|implement|"
    r"create|move|document|generate|migrate|extract|replace)\b",
    _I,
)
_CHANGE_OBJECT = re.compile(
    r"\b(docs?|documentation|readme|code|tests?|module|modules|function|functions|class|classes|"
    r"methods?|files?|repo|repository|package|api|docstrings?|symbol|imports?)\b",
    _I,
)
_QUESTION_ABOUT = re.compile(r"^\s*(what|why|where|who|when|which|does|do|is|are)\b", _I)


def trigger_change_request(text: str) -> str | None:
    """1. The user asks to change repo, code, docs or tests: a change verb and a repo object."""
    verb, obj = _CHANGE_VERB.search(text), _CHANGE_OBJECT.search(text)
    if not verb or not obj:
        return None
    if _QUESTION_ABOUT.match(text) and verb.start() > obj.start():
        return None  # "what does the module update?" asks about the repo, it does not change it
    return f"asks to change the repo: {verb.group(0)!r} ... {obj.group(0)!r}"


_MULTI_STEP = re.compile(
    r"\b(refactor(ing)?|migrat(e|ion|ing)|across (the |all |several |multiple |many )?"
    r"(modules|files|packages|services|the codebase|the repo)|end[- ]to[- ]end|step by step|"
    r"implement \w+ (across|throughout))\b",
    _I,
)
_NUMBERED = re.compile(r"^[^\S\n]*+(\d+[.)]|[-*])\s++\S", re.MULTILINE)
_THEN = re.compile(r"\b(and then|then|after that|afterwards|finally)\b", _I)


def trigger_multi_step(text: str) -> str | None:
    """2. A multi-step request: refactor / migrate / across modules, a list of steps, or 'then'."""
    m = _MULTI_STEP.search(text)
    if m:
        return f"multi-step request: {m.group(0)!r}"
    if len(_NUMBERED.findall(text)) >= 2:
        return "multi-step request: a list of steps"
    thens = _THEN.findall(text)
    if thens and _CHANGE_VERB.search(text):
        return f"multi-step request: sequenced with {thens[0]!r}"
    return None


_FAILURE = [
    (re.compile(r"Traceback \(most recent call last\)"), "a Python traceback"),
    (re.compile(r"\b[1-9]\d* (failed|errors?)\b", _I), "failed tests"),
    (re.compile(r"\bFAILED\b"), "FAILED"),
    (re.compile(r"^[^\S\n]*+(?:[\w.]+\.)?\w+(?:Error|Exception):", re.MULTILINE), "an exception"),
    (re.compile(r"\bexit (code|status)[ :=]*[1-9]\d*\b", _I), "a non-zero exit code"),
    (re.compile(r"^[^\S\n]*+(error|fatal)\b[:!]", re.MULTILINE | _I), "an error line"),
    (re.compile(r"\b(command not found|segmentation fault|timed out)\b", _I), "a failure"),
]


def trigger_prior_failure(last_tool_output: str | None) -> str | None:
    """3. The previous attempt failed: the last tool output shows an error."""
    if not last_tool_output:
        return None
    for pattern, what in _FAILURE:
        m = pattern.search(last_tool_output)
        if m:
            return f"the last tool output shows {what}: {m.group(0).strip()[:80]!r}"
    return None


_PLANNING = re.compile(
    r"\b(how (should|would|could|do|can) (we|i|you) (architect|design|structure|organi[sz]e|"
    r"approach|plan|split|lay out)|design (spec|doc|document|proposal)|"
    r"(write|draft|make|propose|create|sketch) (a |an |the )?(plan|design|architecture|roadmap)|"
    r"what('s| is| would be) the (best|right|cleanest) (architecture|design|approach|way to structure))",
    _I,
)


def trigger_planning(text: str) -> str | None:
    """4. A planning request: 'how should we architect...', 'design spec', 'draft a plan'."""
    m = _PLANNING.search(text)
    return f"planning request: {m.group(0)!r}" if m else None


def deep_triggers(text: str, last_tool_output: str | None = None) -> list[Trigger]:
    """Every §5.3 trigger that fires, in the spec's order."""
    found = [
        ("change_request", trigger_change_request(text)),
        ("multi_step", trigger_multi_step(text)),
        ("prior_failure", trigger_prior_failure(last_tool_output)),
        ("planning", trigger_planning(text)),
    ]
    return [Trigger(name, reason) for name, reason in found if reason]
