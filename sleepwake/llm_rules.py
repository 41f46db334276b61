"""The rules an LLM extractor's answer must keep before it becomes memory (pure).

The prompt asks for them; this module enforces them, because a model's output is input like any
other. The same kind of topics and facts as the deterministic path, and nothing the messages do
not support:

- a **topic name** is a specific phrase: two or more content words ("pottery class", "Caroline's
  adoption plans"), or one word written as a name (capitalised where the conversation writes it:
  "Postgres"); never a weekday, month or other time word, pronoun, contraction, adjective or
  generic word ("people", "life", "Tues", "must've"), and its words occur in the chunk sent;
- a **fact** is a statement (not a question, greeting or filler) of 3 to 60 words whose content
  words mostly occur in its own message (so it cites a turn it shares content with); a turn
  keeps at most two; it keeps its words, and a relative date inside it is resolved against the
  message's time into the fact's ``valid_from`` ("yesterday" said on 8 May 2023 -> 7 May 2023),
  as the deterministic path does (``sleepwake.candidates.happened_at``);
- an **open loop** is a real open item: a stated next step, plan or unresolved problem (the
  deterministic open-loop cues), or a user's question that is not small talk.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sleepwake.extract import extract
from text.english import MODIFIERS, STOPWORDS, is_filler
from text.timephrases import MONTHS, WEEKDAYS, resolve
from text.tokens import stem

MAX_TOPICS_PER_TURN = 3
MAX_FACTS_PER_TURN = 2
MAX_LLM_NAME_WORDS = 6
MAX_LLM_FACT_CHARS = 400
MIN_FACT_WORDS, MAX_FACT_WORDS = 3, 60
GROUNDED_SHARE = 0.5  # of a fact's content words that must occur in its message

_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")
_CONTRACTION = re.compile(r"\w'(?:ve|re|ll|d|m|t)\b|n't\b", re.I)
_EDGES = " \t\n\"'`.,;:!?()[]{}-*"
_TIME_NAMES = frozenset((*WEEKDAYS, *MONTHS)) | {d[:3] for d in (*WEEKDAYS, *MONTHS)} | {
    "tues", "thur", "thurs", "sept"
}  # fmt: skip
_ANY_DAY = datetime(2024, 1, 1, tzinfo=UTC)  # names are checked for time phrases, not dated
_NOT_CONTENT = STOPWORDS | MODIFIERS | _TIME_NAMES


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry meaning (lower-case; function, time and modifier
    words and a possessive "'s" removed)."""
    words = (w.lower().removesuffix("'s") for w in _WORD.findall(text))
    return [w for w in words if w not in _NOT_CONTENT and not w.isdigit()]


def content_stems(text: str) -> set[str]:
    """The stems of :func:`content_words` (what grounding compares)."""
    return {stem(w) for w in content_words(text)}


def topic_name(name: str, chunk_text: str, chunk_stems: set[str] | None = None) -> str | None:
    """``name`` cleaned of quotes and punctuation at its ends, or None when it is not a
    specific phrase grounded in ``chunk_text`` (see the module docstring). ``chunk_stems``:
    ``content_stems(chunk_text)`` when the caller checks many names against one chunk."""
    cleaned = " ".join(name.strip(_EDGES).split())
    words = _WORD.findall(cleaned)
    if not words or len(words) > MAX_LLM_NAME_WORDS or _CONTRACTION.search(cleaned):
        return None
    window = resolve(cleaned, _ANY_DAY)
    if window is not None and window.phrase.lower() == cleaned.lower():
        return None  # "last Tuesday", "May 8": a time, not a subject
    content = content_words(cleaned)
    if not content:
        return None
    if len(content) == 1 and not _written_as_name(content[0], chunk_text):
        return None
    named = content_stems(cleaned)
    known = chunk_stems if chunk_stems is not None else content_stems(chunk_text)
    return cleaned if len(named & known) * 2 >= len(named) else None


def _written_as_name(word: str, text: str) -> bool:
    """``word`` occurs in ``text`` capitalised somewhere other than a sentence start, or is a
    mixed-case or digit-bearing identifier ("iPhone", "S3")."""
    for m in re.finditer(rf"\b{re.escape(word)}\b", text, re.I):
        surface = m.group(0)
        start = text[: m.start()].rstrip()
        sentence_start = not start or start[-1] in ".!?\n"
        mixed = any(c.isupper() for c in surface[1:]) or any(c.isdigit() for c in surface)
        if mixed or (surface[:1].isupper() and not sentence_start):
            return True
    return False


def fact_statement(text: str, message_text: str) -> str | None:
    """``text`` as a fact of ``message_text`` (tidied, its words kept), or None when it is not a
    grounded statement (see the module docstring). Its date is resolved where the fact is made
    (``sleepwake.candidates``), as for the deterministic path's facts."""
    cleaned = _tidy(text)
    words = _WORD.findall(cleaned)
    if not MIN_FACT_WORDS <= len(words) <= MAX_FACT_WORDS or len(cleaned) > MAX_LLM_FACT_CHARS:
        return None
    if cleaned.endswith("?") or is_filler(cleaned):
        return None
    return cleaned if _grounded(cleaned, message_text) else None


def open_item(text: str, message_text: str, role: str) -> str | None:
    """``text`` when it is a real open item of its message (a next step, plan, unresolved
    problem, or a user's question that is not small talk), else None."""
    cleaned = _tidy(text)
    if len(_WORD.findall(cleaned)) < MIN_FACT_WORDS or is_filler(cleaned):
        return None
    if not _grounded(cleaned, message_text):
        return None
    return cleaned if extract(cleaned, role).open_loops else None


def _tidy(text: str) -> str:
    """``text`` on one line, single-spaced, without the quotes a model wraps it in."""
    return " ".join(text.split()).strip(" \t\n\"'`")


def _grounded(cleaned: str, message_text: str) -> bool:
    """At least ``GROUNDED_SHARE`` of the content words of ``cleaned`` occur in its message."""
    own = content_stems(cleaned)
    return bool(own) and len(own & content_stems(message_text)) >= GROUNDED_SHARE * len(own)
