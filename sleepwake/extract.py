"""Deterministic, LLM-free extraction of memory candidates from one chat message.

:func:`extract` turns a message into an :class:`Extraction`: entity names worth a Topic,
decisions (with the rejected alternatives and the reason), standing constraints and
preferences, open loops, numbers with a short key and a unit, surface time expressions,
references to earlier conversation, dependencies between pieces of work, whether the user
is correcting the assistant, work in progress, and the message's sentences.

Everything is regular expressions over the message after :func:`sleepwake.redact.redact`,
so no secret can leak into a candidate. The rules are tuned for precision on casual chat
(LoCoMo-style) and on engineering chat; see the docstrings of the private rule tables for
what deliberately does *not* fire (e.g. "I never knew that" is not a constraint, "I remember
the 90s" is not a memory reference, "That must be tough" is not a rule).

Every rule is linear-time on any text up to the API's size limits, because an API key must
not be able to stall the server: no two adjacent quantifiers can take the same character, a
whitespace run is only entered at its first character and taken whole (possessive), span
selection is O(k log k), and a sentence longer than :data:`MAX_SENTENCE_CHARS` is read in
windows. ``benchmarks/bench_adversarial.py`` measures it; docs/security.md has the figures.

Pure functions, no I/O, no randomness: the same input always gives the same output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

from pydantic import BaseModel

from graph.errors import ValidationFailed
from sleepwake.extract_dependencies import TRIM, dependencies_in
from sleepwake.extract_models import (
    Decision,
    Dependency,
    Extraction,
    InProgress,
    NumberMention,
)
from sleepwake.extract_numbers import numbers_in
from sleepwake.redact import redact
from text.cues import REFERENCE_PATTERNS
from text.english import (
    MAX_SENTENCE_CHARS,
    MAX_SENTENCES_READ,
    MODIFIERS,
    STOPWORDS,
    Span,
    dedupe,
    is_filler,
    normalise,
    noun_phrases,
    select_spans,
    split_sentences,
    time_expressions,
    word_set,
)
from text.patterns import AnyOf

__all__ = [
    "MAX_MATCHES_PER_MESSAGE",
    "MAX_SENTENCES_READ",
    "MAX_SENTENCE_CHARS",
    "ROLES",
    "Decision",
    "Dependency",
    "Extraction",
    "InProgress",
    "NumberMention",
    "extract",
    "find_in_progress",
    "noun_phrases",
    "split_sentences",
    "time_expressions",
]

ROLES = frozenset({"user", "assistant", "system", "tool"})


# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Subject phrases the noun-phrase finder leaves out
# --------------------------------------------------------------------------------------------

# "Mel's surprise party", "Caroline's adoption plans": a possessive is a determiner, and the
# name is an entity of its own, so what is owned is the phrase
_POSSESSIVE_PHRASE = re.compile(r"\b[A-Z][\w-]*'s\s+((?:[a-z][a-z-]+\s+){0,2}[a-z][a-z-]+)")
# "a book about Roman aqueducts", "a talk on machine learning": what a book, a talk or a class
# is about is the subject (the container noun is not)
_ABOUT_PHRASE = re.compile(
    r"\b(?:about|on|called|titled)\s+(?:(?:the|a|an|my|our|his|her|their|your)\s+)?"
    r"((?:[A-Za-z][\w-]+\s+){0,2}[A-Za-z][\w-]+)"
)
SUBJECT_WORDS = 3


def _leading_content(words: list[str]) -> list[str]:
    """The words before the first stopword or modifier-only tail: "surprise party at" ->
    ["surprise", "party"]."""
    out: list[str] = []
    for word in words:
        low = word.lower()
        if low in STOPWORDS or not re.fullmatch(r"[a-z][a-z-]*", low):
            break
        out.append(word)
    while out and out[-1].lower() in MODIFIERS:
        out.pop()
    return out


def subject_phrases(sentence: str) -> list[str]:
    """Possessive phrases and what something is about: two words or more, or one lower-case
    word of four letters or more (a single capitalised word is a name, found already)."""
    found: list[str] = []
    for pattern in (_POSSESSIVE_PHRASE, _ABOUT_PHRASE):
        for m in pattern.finditer(sentence):
            words = _leading_content(m.group(1).split()[:SUBJECT_WORDS])
            specific = len(words) >= 2 or (words and len(words[0]) >= 4 and words[0].islower())
            if specific and not all(w.lower() in MODIFIERS for w in words):
                found.append(" ".join(words))
    return found


# --------------------------------------------------------------------------------------------
# Sentence classifiers: constraints, open loops, memory references, corrections
# --------------------------------------------------------------------------------------------

_PAST_FORMS = word_set(
    """
    knew thought been had seen saw heard went came did said told felt found got gave made took
    was were ran met left lost bought brought caught taught won wrote written forgot forgotten
    understood realised realized noticed believed known done gone
    """
)
_INVOLUNTARY = word_set(
    "forget lose wonder seem end fail feel get miss realize realise notice know understand"
)
_ALWAYS_NEVER = re.compile(
    r"(?:^|\b(?:i|we|you|please|should|must|will|to|and|'ll|'d|would|do)\s+)"
    r"(?:always|never)\s+(?:ever\s+)?(?P<verb>[a-z']+)",
    re.I,
)
_CONSTRAINT_PATTERNS = AnyOf(
    r"\bmust(?:n't|\s+not)?\s+(?!be\b|have\b|'ve\b)\w",
    r"^(?:(?!(?:that|it|this|you|he|she|they|there|which)\b)[\w' -]+\s)?must\s+be\b",
    r"\b(?:don't|do\s+not|never)\s+ever\b",
    r"^(?:please\s+)?(?:don't|do\s+not)\s+(?!worry|mind|know|think|forget|remember|"
    r"be\s+sorry|feel|get\s+me)\w",
    r"\bprefer(?:s|red|ably|ence|ences)?\b",
    r"\b(?:i|we)(?:'d|\s+would)\s+(?:much\s+)?rather\b",
    r"\b(?:i|we)\s+(?:really\s+|much\s+)?like\s+[^.!?]{1,60}?\s+(?:better|more)\s+than\b",
    r"\b(?:i|we)\s+(?:really\s+|much\s+)?like\s+[^.!?]{1,60}?\s+better\b",
    r"\bmake\s+sure\s+(?:to|that|you|we|it)\b",
    r"\b(?:allergic\s+to|can't\s+eat|cannot\s+eat|i\s+don't\s+eat|intolerant)\b",
    r"\bi(?:'m|\s+am)\s+(?:a\s+)?(?:vegan|vegetarian|pescatarian)\b",
    r"^(?:please\s+)?(?:use|avoid|only\s+use|stick\s+(?:to|with)|format|indent|reply|respond|"
    r"answer|write|keep)\s+(?!up\b|going\b|it\s+up\b|in\s+touch\b|me\s+posted\b)\w",
)
_NOT_CONSTRAINT = re.compile(r"\b(?:never\s+mind|as\s+always|like\s+always)\b", re.I)


def _is_constraint(sentence: str) -> bool:
    """Rules and preferences that should keep applying ("never use tabs", "I prefer pnpm").

    "always"/"never" fire only with a present-tense verb after I/we/you or as an imperative,
    so "I never knew that" and "She always loved dancing" are facts, not constraints.
    Epistemic "must" ("That must be tough", "You must have been tired") does not fire.
    Questions never fire.
    """
    if sentence.rstrip().endswith("?") or _NOT_CONSTRAINT.search(sentence):
        return False
    for m in _ALWAYS_NEVER.finditer(sentence):
        verb = m.group("verb").lower()
        if verb not in _PAST_FORMS | _INVOLUNTARY and not (verb.endswith("ed") and len(verb) > 4):
            return True
    return _CONSTRAINT_PATTERNS.search(sentence)


_OPEN_LOOP_PATTERNS = AnyOf(
    r"\bstill\s+(?:need|have|got|gotta|want)\s+to\b",
    r"\bstill\s+(?:haven't|hasn't|have\s+not|has\s+not|not|need)\b",
    r"\bnext\s+steps?\b",
    r"\b(?:todo|to-do|fixme)\b",
    r"\bto\s+do\s+list\b",
    r"\b(?:we|i)\s+(?:should(?!\s+have\b|'ve\b)|need\s+to|have\s+to|gotta|got\s+to|"
    r"ought\s+to)\b",
    r"\b(?:we|i)(?:'ll|\s+will)\s+(?:need|have)\s+to\b",
    r"\b(?:haven't|have\s+not|hasn't|has\s+not)\b[^.!?]{0,60}\byet\b",
    r"\bnot\s+(?:\w+\s+)?yet\b",
    r"\bhave\s+yet\s+to\b",
    r"\bremind\s+me\b",
    r"\b(?:don't|do\s+not)\s+(?:let\s+me\s+)?forget\b",
    r"\bfollow[\s-]?up\b",
    r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:going|planning|hoping|trying|about)\s+to\b",
    r"\b(?:i|we)\s+(?:plan|intend|hope|want)\s+to\b",
    r"\b(?:pending|outstanding|unresolved|open\s+question)\b",
)
_SMALL_TALK_QUESTION = re.compile(
    r"^(?:and\s+)?(?:how\s+(?:are|about|have)\s+you|what\s+about\s+you|how's\s+it\s+going|"
    r"what's\s+up|right|you\s+know|isn't\s+it|don't\s+you\s+think|wanna\s+hear)\b",
    re.I,
)


def _is_open_loop(sentence: str, role: str) -> bool:
    """Unfinished business: "still need to", "next step", "TODO", "remind me to", plans, and
    questions from the user (small talk such as "How are you?" excluded)."""
    if _OPEN_LOOP_PATTERNS.search(sentence):
        return True
    question = sentence.rstrip().endswith("?") and len(sentence.split()) >= 3
    return role == "user" and question and not _SMALL_TALK_QUESTION.search(sentence)


def _memory_references(sentences: Iterable[str]) -> list[str]:
    """Cue phrases that point at earlier conversation ("last time", "you told me").

    A bare "I remember ..." is the speaker's own memory ("I remember the 90s"), not a
    reference to what the agent was told, so it does not fire; "do you remember",
    "remember when we", and a sentence-initial imperative "Remember ..." do.
    """
    found: list[str] = []
    for sentence in sentences:
        matches = REFERENCE_PATTERNS.finditer(sentence)
        spans = select_spans(Span(0, m.start(), m.end(), m.group(0)) for m in matches)
        found.extend(span.surface for span in spans)
    return dedupe(found)


_CORRECTION_PATTERNS = AnyOf(
    r"^(?:no|nope|wrong)\s*[,.!:;-]+\s*(?:actually|i\s+(?:said|meant)|it(?:'s|\s+is|\s+was)"
    r"(?!\s+(?:fine|ok|okay|alright|all\s+good|cool)\b)|that(?:'s|\s+is|\s+was)|not|it\s+should)\b",
    r"\b(?:no|nope),?\s+actually\b",
    r"\bactually,?\s+(?:no|i\s+meant|i\s+said)\b",
    r"\b(?:that's|that\s+is|that\s+was|this\s+is|it's|it\s+is)\s+(?:not\s+(?:right|correct|"
    r"true|what\s+i\s+(?:said|meant|asked))|wrong|incorrect|inaccurate|false)\b",
    r"\byou(?:'re|\s+are)\s+(?:wrong|mistaken|confusing|mixing)\b",
    r"\byou\s+(?:got\s+(?:it|that|this)\s+wrong|misunderstood|misread|misheard|mixed\s+up)\b",
    r"\bi\s+meant\b(?!\s+to\b)",
    r"\bi\s+didn't\s+(?:mean|say)\b",
    r"\b(?:i\s+said|i\s+meant|i\s+wrote|i\s+asked\s+for|it\s+should\s+be|should\s+be)\s+"
    r"[^.!?]{1,40},?\s+not\s+\w",
    r"^not\s+[^,.!?]{1,40},?\s+but\b",
    r"\b(?:correction|to\s+clarify|let\s+me\s+correct)\b",
)


def _is_correction(sentence: str) -> bool:
    """The user corrects the assistant: "No, actually…", "that's wrong", "I meant…",
    "I said X, not Y", "Not X but Y". "No worries", "No, thanks" and "I meant to call" are
    not corrections."""
    return _CORRECTION_PATTERNS.search(sentence)


# --------------------------------------------------------------------------------------------
# Decisions, dependencies, work in progress
# --------------------------------------------------------------------------------------------

_SUBJECT = r"(?:we|i|they|the\s+team)"
_DECISION_TRIGGER = re.compile(
    rf"\b(?:{_SUBJECT}(?:\s+(?:have|had|finally|just|eventually|ultimately))?\s*"
    r"(?:\s(?:chose|choose|picked(?!\s+up\b)|selected|opted\s+for|settled\s+on|went\s+with|decided\s+on|"
    r"decided\s+to|decided\s+that|(?:will|are\s+going\s+to|am\s+going\s+to)\s+(?:use|go\s+with)|"
    r"(?:are|am)\s+going\s+with)|'ve\s+(?:chosen|picked|decided\s+(?:on|to))|"
    r"'(?:ll|re\s+going\s+to|m\s+going\s+to)\s+(?:use|go\s+with)|'(?:re|m)\s+going\s+with)"
    r"|let's\s+(?:go\s+with|use|pick|choose|stick\s+with)|decision\s*:)\s+",
    re.I,
)
_WEAK_TRIGGER = re.compile(r"went\s+with|picked|(?:will|'ll|going\s+to)\s+use\s+$", re.I)
_FIRM = re.compile(r"\b(?:finally|eventually|ultimately|in\s+the\s+end|decided)\b", re.I)
# "(?<!\s)\s*+": a run of whitespace is entered only at its first character and taken whole.
# The old "\s*,?\s*" tried every split of every suffix of a run: cubic on "a" + 12,000 spaces.
_REASON_SPLIT = re.compile(
    r"(?<!\s)\s*+(?:,\s*+)?\b(?:because|since|due\s+to|given\s+that|"
    r"as\s+(?=(?:it|they|we|this|that|there)\b))\s*+",
    re.I,
)
_REJECT_SPLIT = re.compile(
    r"(?<!\s)\s*+(?:,\s*+)?\b(?:over|instead\s+of|rather\s+than|and\s+not|not)\s+", re.I
)
_LATE_REJECT_SPLIT = re.compile(r"(?<!\s)\s*+,\s*+(?:rather\s+than|instead\s+of)\s+", re.I)
_LIST_SPLIT = re.compile(r"(?<!\s)\s*+(?:,|/|\bor\b|\band\b)\s*+", re.I)
_CLAUSE_END = re.compile(r"[;:]|(?<!\s)\s++(?:-|and\s++then|but)\s+", re.I)


def _split_alternatives(choice: str, why: str) -> tuple[str, list[str], str]:
    """Pull "over/instead of/rather than Y" out of the choice, or out of a trailing
    ", rather than Y" after the reason."""
    chosen, *others = _REJECT_SPLIT.split(choice, maxsplit=1)
    if not others:
        why, *others = _LATE_REJECT_SPLIT.split(why, maxsplit=1)
    rejected = [r.strip(TRIM) for r in _LIST_SPLIT.split(others[0])] if others else []
    return chosen.strip(TRIM), [r for r in rejected if r], why.strip(TRIM)


def _decision(sentence: str) -> Decision | None:
    """ "We chose X over Y because Z", "we decided to X", "let's go with X instead of Y",
    "we'll use X rather than Y". Questions never count as decisions."""
    m = _DECISION_TRIGGER.search(sentence)
    if m is None or sentence.rstrip().endswith("?"):
        return None
    weak = bool(_WEAK_TRIGGER.search(m.group(0))) and not _FIRM.search(sentence)
    rest = _CLAUSE_END.split(sentence[m.end() :], maxsplit=1)[0]
    choice, *why = _REASON_SPLIT.split(rest, maxsplit=1)
    chosen, rejected, reason = _split_alternatives(choice, why[0] if why else "")
    if not chosen or (weak and not rejected):
        return None  # weak: "I went with my mom to the store", "I'll use your advice"
    return Decision(text=sentence, chosen=chosen, rejected=rejected, reason=reason or None)


_PROGRESS = re.compile(
    r"\b(?:(?:halfway|half[\s-]way|partway|part[\s-]way|midway|mostly|\d{1,3}\s?%(?:\s+of\s+the\s+"
    r"way)?)\s+(?:through|into|done\s+with|done|finished\s+with)\s+|in\s+the\s+(?:middle|process|"
    r"midst)\s+of\s+|(?:we|i)(?:'re|'m|\s+are|\s+am)\s+(?:still\s+|currently\s+|now\s+)?"
    r"(?:working\s+on|busy\s+with)\s+|(?:we|i)(?:'ve|\s+have)\s+(?:already\s+)?started\s+(?:on\s+)?"
    r"|(?:we|i)(?:'re|'m|\s+are|\s+am)\s+(?:still|currently|now)\s+(?=\w+ing\b))",
    re.I,
)
_NEXT_STEP = re.compile(
    r"\bnext\s+step\s*(?:is|will\s+be|would\s+be|:|-)?\s*(?:to\s+)?"
    r"|\bnext,?\s+(?:we|i)(?:'ll|\s+will|\s+need\s+to|\s+have\s+to|\s+should)\s+"
    r"|\bthen\s+(?:we|i)(?:'ll|\s+will|\s+need\s+to)\s+"
    r"|\bafter\s+that,?\s+(?:we|i)(?:'ll|\s+will|\s+need\s+to)\s+",
    re.I,
)
_GOAL_END = re.compile(
    r"[;.!?]|,\s*+(?:and|but|so|next|then)\b|(?<!\s)\s++(?:and|but)\s++(?:the\s++)?next\b", re.I
)


def _span_text(text: str) -> str:
    return _GOAL_END.split(text, maxsplit=1)[0].strip(TRIM)


def _in_progress(sentences: list[str]) -> InProgress | None:
    """ "We're halfway through migrating the billing tables; next step is the invoices table"."""
    for i, sentence in enumerate(sentences):
        m = _PROGRESS.search(sentence)
        goal = _span_text(sentence[m.end() :]) if m else ""
        if m is None or not goal:
            continue
        window = [sentence[m.end() :], *sentences[i + 1 : i + 3]]
        for j, part in enumerate(window):
            step = _NEXT_STEP.search(part)
            if step and _span_text(part[step.end() :]):
                text = " ".join(sentences[i : i + j + 1])
                return InProgress(goal=goal, next_step=_span_text(part[step.end() :]), text=text)
        return InProgress(goal=goal, next_step=None, text=sentence)
    return None


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


_M = TypeVar("_M", bound=BaseModel)
# Numbers and dependencies can come many to a sentence ("1 1 1 ..."); past this many per
# message the rest are not read (each one costs key windows and a model; none of a list that
# long is worth a memory).
MAX_MATCHES_PER_MESSAGE = 100


def _unique_models(models: Iterable[_M]) -> list[_M]:
    seen: set[tuple[object, ...]] = set()
    out: list[_M] = []
    for model in models:
        key = tuple(tuple(v) if isinstance(v, list) else v for v in model.__dict__.values())
        if key not in seen:
            seen.add(key)
            out.append(model)
    return out


def find_in_progress(content: str) -> InProgress | None:
    """Only the work-in-progress part of :func:`extract` (the same result as its
    ``in_progress``), for callers that need nothing else: it skips the other rules."""
    sentences = split_sentences(normalise(redact(content)))[:MAX_SENTENCES_READ]
    facts = [s for s in sentences if not is_filler(s)]
    return _in_progress(facts)


def _first(items: Iterable[_M]) -> Iterator[_M]:
    return islice(items, MAX_MATCHES_PER_MESSAGE)


def _entities(text: str, sentences: list[str]) -> list[str]:
    """The noun phrases of ``text`` and the subject phrases they leave out, once each."""
    found = noun_phrases(text)
    seen = {f.lower() for f in found}
    for phrase in (p for s in sentences for p in subject_phrases(s)):
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            found.append(phrase)
    return found


def extract(content: str, role: str = "user", *, entities: bool = True) -> Extraction:
    """Extract memory candidates from one message, deterministically and without an LLM.

    ``content`` is redacted (:func:`sleepwake.redact.redact`) before anything else, so no
    candidate contains a secret. ``role`` is one of :data:`ROLES`; user-only signals
    (corrections, open questions) are only taken from ``"user"`` messages.

    Bounded work on any text: the first :data:`MAX_SENTENCES_READ` sentences are read, a
    sentence over :data:`MAX_SENTENCE_CHARS` in windows, and numbers and dependencies stop at
    :data:`MAX_MATCHES_PER_MESSAGE`.

    ``entities=False`` leaves ``entities`` empty: the sleep finds each sentence's phrases itself
    (``sleepwake.candidates``), so the whole text's would be read for nothing.

    Raises :class:`graph.errors.ValidationFailed` for an unknown role. Never raises on content.
    """
    if role not in ROLES:
        raise ValidationFailed(f"unknown message role {role!r}; expected one of {sorted(ROLES)}")
    text = normalise(redact(content))
    sentences = split_sentences(text)[:MAX_SENTENCES_READ]
    facts = [s for s in sentences if not is_filler(s)]
    decisions = (d for d in map(_decision, facts) if d is not None)
    return Extraction(
        entities=_entities(text, sentences) if entities else [],
        decisions=_unique_models(decisions),
        constraints=list(dict.fromkeys(s for s in facts if _is_constraint(s))),
        open_loops=list(dict.fromkeys(s for s in facts if _is_open_loop(s, role))),
        numbers=_unique_models(_first(n for s in facts for n in numbers_in(s))),
        time_expressions=time_expressions(text),
        memory_references=_memory_references(facts),
        dependencies=_unique_models(_first(d for s in facts for d in dependencies_in(s))),
        is_correction=role == "user" and any(_is_correction(s) for s in facts),
        in_progress=_in_progress(facts),
        sentences=facts,
    )
