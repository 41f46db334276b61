"""A topic's gist: the few facts that say what it is about, for topic search. Pure.

Topic search finds a topic by one vector and one full-text entry. "name: one-liner" alone is a
poor key once a topic holds a dozen facts (a question about any other of them finds nothing), and
all of its facts would be a poor one too (the embedding model reads 256 word pieces; a long
topic's vector would be the mean of everything). So a topic is found by its name, its one-liner
and its most *central* facts: those sharing the most content words with the topic's other facts
and its name (a lexical centroid, so it is computed from the topic alone, with no vectors and
the same on every sleep). The vector takes the first ``VECTOR_FACTS`` of them, the full-text
index ``GIST_FACTS``.

A one-liner the sleep composed is made of *parts*, one fact each (``one_liner_part``), one per
person whose news the topic holds ("Caroline: I went to a support group yesterday. Melanie: I
painted that lake sunrise last year!"); both texts here leave every speaker prefix out of it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from text.english import STOPWORDS
from text.tokens import stem

# central facts in the embedded text: with a topic of at most a dozen facts
# (sleepwake.matching.full) nearly all of it, within the model's 256 word pieces
VECTOR_FACTS = 10
GIST_FACTS = 8  # central facts in the full-text entry
GIST_CHARS = 2000  # ... at most this many characters of them
FACT_CHARS = 300  # a long fact counts by its lead
MIN_CONTENT_WORDS = 2  # a fact with fewer content words says too little to stand for a topic
NAME_WEIGHT = 2.0  # a content word of the topic's name counts this much more than another
PART_CHARS = 100  # a fact as part of a one-liner: at most this long (three fit in 300 characters)
_SPEAKER = re.compile(r"^([^:\n]{1,40}):\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
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


def speaker_of(fact: str) -> str:
    """The speaker prefix of a fact ("Melanie: I ran a race." -> "Melanie"), "" without one."""
    match = _SPEAKER.match(fact)
    return match.group(1) if match else ""


def one_liner_part(fact: str) -> str:
    """A fact as one part of a one-liner, verbatim: whole when short, else its first sentence,
    else that sentence's lead cut at a word (with "...")."""
    if len(fact) <= PART_CHARS:
        return fact
    first = _SENTENCE_END.split(fact, 1)[0]
    if len(first) <= PART_CHARS:
        return first
    return first[: PART_CHARS - 3].rsplit(" ", 1)[0] + "..."


def lead_fact(one_liner: str, facts: Sequence[str]) -> str | None:
    """The fact a composed one-liner's first part quotes (the one that sums the topic up);
    None for a one-liner someone wrote."""
    starts = [f for f in facts if quoted(f, one_liner) and one_liner.startswith(one_liner_part(f))]
    return max(starts, key=len) if starts else None


def quoted(fact: str, one_liner: str) -> bool:
    """Whether ``one_liner`` says ``fact`` (as one of its parts, or whole)."""
    return fact == one_liner or one_liner_part(fact) in one_liner


def gist(name: str, one_liner: str, facts: Sequence[str]) -> str:
    """The full-text entry of a topic beside its name, aliases and one-liner: its central facts
    (not the one-liner again) without their speaker prefixes (the people talking are in every
    topic: "caroline" would match them all), joined, at most ``GIST_CHARS`` characters."""
    chosen = [f for f in central_facts(facts, name, GIST_FACTS + 2) if not quoted(f, one_liner)]
    text = " ".join(unspoken(f[:FACT_CHARS]) for f in chosen[:GIST_FACTS])
    return text[:GIST_CHARS]


def semantic_text(name: str, one_liner: str, facts: Sequence[str]) -> str:
    """What a topic's vector embeds: "name: one-liner" and its ``VECTOR_FACTS`` most central
    facts (the one-liner's not twice), without speaker prefixes: with them every topic of a
    conversation between two people reads alike to the model."""
    head, chosen = semantic_parts(name, one_liner, facts)
    return " ".join([head, *(unspoken(f[:FACT_CHARS]) for f in chosen)])


def semantic_parts(name: str, one_liner: str, facts: Sequence[str]) -> tuple[str, list[str]]:
    """The parts of ``semantic_text``: its head ("name: lead fact") and the facts after it,
    as given (speaker prefix and all), most central first."""
    # the lead fact whole, not the other parts: they are facts of their own, below, and with
    # them the vector of every topic of two friends leaned to the mean of their talk
    lead = lead_fact(one_liner, facts)
    said = unspoken(lead or one_liner)[:FACT_CHARS]
    head = f"{name}: {said}" if one_liner and one_liner != name else name
    # the facts below the head: any but the lead (the other parts are not in the head)
    chosen = [f for f in central_facts(facts, name, VECTOR_FACTS + 1) if f not in (lead, one_liner)]
    return head, chosen[:VECTOR_FACTS]
