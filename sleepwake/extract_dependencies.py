"""Extraction of dependencies between pieces of work ("the launch depends on the review",
"before we ship we need the audit"): each cue read with a bounded window either side for its
two parties (linear-time on any text; see ``sleepwake.extract``). Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sleepwake.extract_models import Dependency
from text.english import word_set

TRIM = " \t\"'`.,;:!?()"  # what a party, a choice or a goal is trimmed of


_DEPENDENCY_TRIGGER = re.compile(
    r"(?<!\s)\s++(?:(?:depends|depend|relies|rely)\s+on|(?:is|are|was|were|'s|'re)\s+(?:still\s+|"
    r"currently\s+)?(?:blocked|gated)\s+(?:by|on)|(?:is|are|'s|'re)\s+(?:still\s+)?waiting\s+"
    r"(?:on|for)|can(?:'t|not|\s+not)\s+(?:start|begin|happen|proceed|ship|land|go\s+ahead|"
    r"be\s+done)\s+(?:until|before))\s+",
    re.I,
)
_NEEDS_FIRST = re.compile(
    r"(?<!\s)\s++(?:needs|need|requires|require)\s++(?P<b>[^\s,;.!?][^,;.!?]{0,79}?)"
    r"\s++(?:first|beforehand)\b",
    re.I,
)
_BEFORE_WE_NEED = re.compile(
    r"\bbefore\s+(?P<a>[^,;.!?]{1,80}?),?\s+(?:we|i|you)\s+(?:need|have|must|should|'ll\s+need)"
    r"\s+(?:to\s+)?(?P<b>[^,;.!?]{1,80})",
    re.I,
)
_NEED_BEFORE = re.compile(
    r"\b(?:we|i)\s+(?:need|have|must)\s+(?:to\s+)?(?P<b>[^,;.!?]{1,80}?)\s+before\s+"
    r"(?:we\s+can\s+|we\s+|i\s+can\s+|i\s+)?(?P<a>[^,;.!?]{1,80})",
    re.I,
)
_CANT_UNTIL = re.compile(
    r"\b(?:we|i|you|they)\s+(?:can't|cannot|can\s+not|won't|shouldn't)\s+"
    r"(?P<a>\w+\s+[^,;.!?]{1,60}?)\s+(?:until|unless)\s+(?P<b>[^,;.!?]{1,80})",
    re.I,
)
_DONE_SUFFIX = re.compile(
    r"(?<!\s)\s++(?:(?:is|are|has\s+been|have\s+been|gets?)\s+(?:done|finished|complete|"
    r"completed|ready|merged|approved|fixed|signed(?:\s+off)?|in\s+place)|lands|ships|is\s+in)$",
    re.I,
)
_CLAUSE_BREAK = re.compile(
    r"[,;:()]|(?<!\s)\s++(?:-|and|but|so|because|then|which|while|if|when|since)\s+", re.I
)
_CLAUSE_STOP = re.compile(r"[.!?]|(?<!\s)\s++(?:so|because|which)\s+", re.I)
_CLAUSE_WINDOW = 300  # characters either side of a dependency cue read for its two parties
_LEADING_NOISE = re.compile(
    r"^(?:(?:so|and|but|then|also|well|ok|okay|basically|i\s+think|i\s+guess|now)\s+)+", re.I
)
_PRONOUNS = word_set(
    "it this that everything something anything which what all everyone we i you they he she"
)


def _clean_party(text: str) -> str:
    text = _LEADING_NOISE.sub("", text.strip(TRIM))
    text = re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)
    return _DONE_SUFFIX.sub("", text).strip(TRIM)


def _clause_before(text: str) -> str:
    return _clean_party(_CLAUSE_BREAK.split(text)[-1])


def _clause_after(text: str) -> str:
    return _clean_party(_CLAUSE_STOP.split(_CLAUSE_BREAK.split(text, maxsplit=1)[0], maxsplit=1)[0])


def _dependency_pairs(sentence: str) -> Iterator[tuple[str, str]]:
    # each cue reads a bounded window either side: many cues in one long sentence stay linear
    for m in _DEPENDENCY_TRIGGER.finditer(sentence):
        before = sentence[max(0, m.start() - _CLAUSE_WINDOW) : m.start()]
        yield _clause_before(before), _clause_after(sentence[m.end() : m.end() + _CLAUSE_WINDOW])
    for m in _NEEDS_FIRST.finditer(sentence):
        before = sentence[max(0, m.start() - _CLAUSE_WINDOW) : m.start()]
        yield _clause_before(before), _clean_party(m["b"])
    for pattern in (_BEFORE_WE_NEED, _NEED_BEFORE, _CANT_UNTIL):
        for m in pattern.finditer(sentence):
            yield _clean_party(m["a"]), _clean_party(m["b"])


def dependencies_in(sentence: str) -> list[Dependency]:
    """ "X depends on Y", "X is blocked by Y", "X needs Y first", "before X we need Y",
    "we need to Y before X". A pronoun dependent ("it depends on the weather") is dropped."""
    out: list[Dependency] = []
    for dependent, dependency in _dependency_pairs(sentence):
        vague = dependent.lower() in _PRONOUNS or len(dependent.split()) > 8
        if dependent and dependency and not vague:
            out.append(Dependency(dependent=dependent, dependency=dependency, text=sentence))
    return out
