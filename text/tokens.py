"""Words and stems for matching names and questions. Pure.

``stem`` is a light suffix stripper ("migrating" and "migration" -> "migrat"): matching names of
topics (sleepwake/matching.py) and the terms of a question against the sentences of a message
(retrieval/snippets.py) need the same stems, so both take them from here. The retrieval figures in
docs/retrieval.md were measured with it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_SUFFIXES = ("ings", "ing", "ions", "ion", "ed", "es", "s")
_STOP = frozenset("of for and or to in on at with the a an my our your his her their".split())
_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1 << 15)  # a context stems ~700 words, most of them seen before (<= ~7 MB)
def stem(word: str) -> str:
    """The word without its commonest English suffix (lower-case input)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("y"):
        word = word[:-1] + "i"
    return word.rstrip("e") or word


def stems(phrase: str) -> frozenset[str]:
    """The stems of a phrase's words, short function words left out."""
    return frozenset(stem(w) for w in _WORD.findall(phrase.lower()) if w not in _STOP)
