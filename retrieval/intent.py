"""What a user's message asks for, read off its words alone. Pure.

A past-tense question (the weak memory cue), a personal request (advice, a question about the
user's own life), a question for the value as it stands now, a question about a decision, and the
coarse fingerprint of the line of work (the session suppression's task). The context reads each
once per request through ``retrieval.message.ParsedMessage``; the triggers, the request class
and the fact ranking read the same functions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from retrieval.snippets import terms
from text.cues import MEMORY_CUE
from text.english import split_sentences

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
# The other side of the chat, in the second person: a question that names it ("Can you remind
# me ...", "the restaurant you recommended") may be answered by what that side said
_SECOND = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)
# A question for the value as it stands now ("Where did I go on my most recent family trip?",
# "Where do I currently keep my old sneakers?"): when a fact was updated, the newest statement
# answers it.
_LATEST = re.compile(
    r"\b(?:most\s++recent(?:ly)?|latest|currently|current|nowadays|these\s++days|"
    r"at\s++the\s++moment|right\s++now|any\s*more|still)\b",
    re.I,
)
_ASKS_DECISION = re.compile(
    r"\b(?:decid\w*|decision\w*|choose|chose|chosen|choice|pick(?:ed)?|settled?\s+on"
    r"|go\s+with|went\s+with|opt(?:ed)?\s+for)\b",
    re.IGNORECASE,
)


def past_question(text: str) -> str | None:
    """The past-tense question ``text`` opens with (the weak memory cue), or None."""
    q = _PAST_QUESTION.search(text)
    return None if q is None else q.group(0)


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
    own = _own_question(text)
    return f"personal_request: about the user's own life '{own[:40]}'" if own else None


def own_life_cue(text: str) -> str | None:
    """Why ``text`` asks about the user's own life and nothing the other side said, or None:
    a question in the first person singular ("How much did I spend on workshops?", "Where do
    I keep my sneakers?") with no second person in the whole message ("Can you remind me ...",
    "the restaurant you recommended" ask what the assistant said) and no reference to a past
    chat ("our previous chat", "remember": ``text.cues.MEMORY_CUE``). What the user said
    answers it; an assistant's reply only echoes it ("Congratulations on attending a vegan
    cuisine class!") or gives advice."""
    if _SECOND.search(text) or MEMORY_CUE.search(text) or _ASKS.search(text) is None:
        return None
    own = _own_question(text)
    return f"own life: '{own[:40]}'" if own else None


def _own_question(text: str) -> str | None:
    """The first-person words of the first question that has them, in the question or in the
    sentence that sets it up ("I noticed my bike ... Could there be a reason?"), not in an aside
    after it ("Any news? I owe Sam 50 euros.")."""
    before = ""
    for sentence in split_sentences(text):
        if _ASKS.search(sentence):
            own = _OWN.search(sentence) or _OWN.search(before)
            if own:
                return own.group(0)
        before = sentence
    return None


def latest_cue(text: str) -> str | None:
    """Why a question asks for the current value of something ("latest: 'most recent'"), or
    None; a statement ("I still have it") asks nothing."""
    if _ASKS.search(text) is None:
        return None
    m = _LATEST.search(text)
    return f"latest: '{m.group(0)}'" if m else None


def asks_decision(question: str) -> bool:
    """Whether ``question`` asks what was decided or chosen."""
    return bool(_ASKS_DECISION.search(question))


def task_fingerprint(message: str, active_task: str = "") -> str:
    """A coarse fingerprint of the line of work: the main terms of the request and task."""
    return fingerprint(terms(f"{message} {active_task}"))


def fingerprint(words: Iterable[str]) -> str:
    """The fingerprint of a line of work's terms (``terms``): the first twelve, sorted, hashed
    (a parsed message passes the terms it already read)."""
    first = sorted(words)[:12]
    return hashlib.sha1(" ".join(first).encode(), usedforsecurity=False).hexdigest()[:12]
