"""A topic's gist: the few facts that say what it is about, for topic search. Pure.

Topic search finds a topic by one vector and one full-text entry. "name: one-liner" alone is a
poor key once a topic holds a dozen facts (a question about any other of them finds nothing), and
all of its facts would be a poor one too (the embedding model reads 256 word pieces; a long
topic's vector would be the mean of everything). So a topic is found by its name, its one-liner
and its most *central* facts: those sharing the most content words with the topic's other facts
and its name (a lexical centroid, so it is computed from the topic alone, with no vectors and
the same on every sleep). The vector takes the first ``VECTOR_FACTS`` of them, the full-text
index ``GIST_FACTS``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from text.english import STOPWORDS
from text.tokens import stem

VECTOR_FACTS = 3  # central facts in the embedded text (with name and one-liner: ~200 words)
GIST_FACTS = 8  # central facts in the full-text entry
GIST_CHARS = 2000  # ... at most this many characters of them
FACT_CHARS = 300  # a long fact counts by its lead
MIN_CONTENT_WORDS = 2  # a fact with fewer content words says too little to stand for a topic
NAME_WEIGHT = 2.0  # a content word of the topic's name counts this much more than another
_SPEAKER = re.compile(r"^[^:\n]{1,40}:\s+")
_WORD = re.compile(r"[a-z]{3,}")


def content_stems(text: str) -> set[str]:
    """The stems of a fact's content words, its speaker prefix ("Melanie: ") left out: the
    speakers are in every topic and say nothing about what one is about."""
    body = _SPEAKER.sub("", text[:FACT_CHARS]).lower().replace("'s", "")
    return {stem(w) for w in _WORD.findall(body) if w not in STOPWORDS}


def central_facts(facts: Sequence[str], name: str = "", limit: int = GIST_FACTS) -> list[str]:
    """Up to ``limit`` of ``facts``, most central first: a fact scores the number of the other
    facts sharing each of its content words (the topic's name words counting ``NAME_WEIGHT``
    more), over the square root of its word count, so a long fact does not win by length
    alone. Ties go to the earlier fact. Facts saying too little come last."""
    unique = list(dict.fromkeys(f for f in facts if f.strip()))
    bags = [content_stems(f) for f in unique]
    df = Counter(s for bag in bags for s in bag)
    named = {stem(w) for w in _WORD.findall(name.lower()) if w not in STOPWORDS}

    def score(i: int) -> float:
        bag = bags[i]
        if len(bag) < MIN_CONTENT_WORDS:
            return -1.0
        shared = sum(df[s] - 1 + (NAME_WEIGHT if s in named else 0.0) for s in bag)
        return shared / math.sqrt(len(bag))

    order = sorted(range(len(unique)), key=lambda i: (-score(i), i))
    return [unique[i] for i in order[:limit]]


def unspoken(fact: str) -> str:
    """A fact without its speaker prefix ("Melanie: I ran a race." -> "I ran a race.")."""
    return _SPEAKER.sub("", fact)


def gist(name: str, one_liner: str, facts: Sequence[str]) -> str:
    """The full-text entry of a topic beside its name, aliases and one-liner: its central facts
    (not the one-liner again) without their speaker prefixes (the people talking are in every
    topic: "caroline" would match them all), joined, at most ``GIST_CHARS`` characters."""
    chosen = [f for f in central_facts(facts, name, GIST_FACTS + 1) if f != one_liner]
    text = " ".join(unspoken(f[:FACT_CHARS]) for f in chosen[:GIST_FACTS])
    return text[:GIST_CHARS]


def semantic_text(name: str, one_liner: str, facts: Sequence[str]) -> str:
    """What a topic's vector embeds: "name: one-liner" and its ``VECTOR_FACTS`` most central
    facts (the one-liner not twice), without speaker prefixes: with them every topic of a
    conversation between two people reads alike to the model."""
    head = f"{name}: {unspoken(one_liner)}" if one_liner and one_liner != name else name
    chosen = [f for f in central_facts(facts, name, VECTOR_FACTS + 1) if f != one_liner]
    return " ".join([head, *(unspoken(f[:FACT_CHARS]) for f in chosen[:VECTOR_FACTS])])
