"""Query terms and the sentences of a message that answer them. Pure.

The packer carries sentences, not whole turns: a snippet is the sentences of one message that
share a (stemmed, non-stop) word with the question. Denser context: on LoCoMo at 1000 tokens this
alone moved evidence recall from 0.687 (whole turns) to 0.736. A line break ends a sentence
too, so an item of a bulleted or numbered answer is a sentence of its own (its marker dropped)
instead of the whole list up to the next full stop. One regular expression, not
``text.english.split_sentences`` (abbreviations, hard-wrapped lines): a context cuts every
evidence message it reads, and that costs ~6x as much a message.
"""

from __future__ import annotations

import re

from text.tokens import stem

_WORD = re.compile(r"[a-z0-9]+")
# a sentence ends at . ! ? before whitespace, and at every line break
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
# a list item's marker ("* ", "- ", "+ ", "1. ", "2) ") and a bare number left of one
_MARKER = re.compile(r"^(?:[*+\-\u2022]\s+|\d{1,3}[.)](?:\s+|$))")
# the speaker's own person: "I", "I'm" (the apostrophe ends the word), "me", "my", "we", "our"
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours)\b")
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself)\b")
STOP_WORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from about into over after
    before under again further once here there all any both each few more most other some such
    no nor not only own same than too very can will just should now what when where who whom
    which why how did does do doing done was were is are am be been being have has had having
    i me my mine we us our you your yours he him his she her hers it its they them their this
    that these those would could likely might may must shall let lets get got also ever""".split()
)


def terms(text: str) -> frozenset[str]:
    """Stemmed content words (length > 2, stop words removed)."""
    return frozenset(
        stem(w) for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP_WORDS
    )


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (a line break ends one: list items are sentences of their
    own, without their markers)."""
    cut = (_MARKER.sub("", s.strip()).strip() for s in _SENTENCE_END.split(text))
    return [s for s in cut if s]


def overlap(text: str, query_terms: frozenset[str]) -> float:
    """Share of the query's terms found in ``text`` (0..1)."""
    if not query_terms:
        return 0.0
    return len(terms(text) & query_terms) / len(query_terms)


def best_sentences(content: str, query_terms: frozenset[str], limit: int) -> list[str]:
    """Up to ``limit`` sentences sharing the most query terms, kept in their original order."""
    scored = [(len(terms(s) & query_terms), i, s) for i, s in enumerate(sentences(content))]
    chosen = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:limit]
    return [s for _, _, s in sorted(chosen, key=lambda x: x[1])]


def bare_question(text: str) -> bool:
    """Whether ``text`` only asks: every sentence of it a question, and no first-person word
    in it ("Anything fun over the weekend?"; not "Have you seen my new bike?", which says
    the speaker has one)."""
    if not text.rstrip().endswith("?"):  # the last sentence asks, or none is a bare question
        return False
    if not all(s.endswith("?") for s in sentences(text)):
        return False
    return _FIRST_PERSON.search(text.lower()) is None


def about_listener(text: str) -> bool:
    """Whether ``text`` is a remark about the one spoken to: a "you" and no first-person word,
    and not a question ("It must feel great to be recognized for your gaming skills."): what
    the speaker makes of the other's news, which the other's own words state."""
    low = text.lower()
    return (
        _SECOND_PERSON.search(low) is not None
        and _FIRST_PERSON.search(low) is None
        and not bare_question(text)
    )
