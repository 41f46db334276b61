"""English text, without a model or a database: sentence splitting, filler detection, noun
phrases and time expressions (word lists in ``text.words``, the time grammar in
``text.timegrammar``). Sleep (extraction, candidates) and retrieval
(triggers, reintroduced names) read text through here, so both see the same words.

Every rule is linear in its input (docs/security.md, "Adversarial input"): runs are entered at
their first character and taken whole, and a long sentence is read in bounded windows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

from text.spans import DisjointSpans, Span, select_spans
from text.timegrammar import GRAMMAR
from text.words import (
    ABBREVIATIONS,
    CONNECTORS,
    DETERMINERS,
    ELLIPTIC,
    FUNCTION_WORDS,
    GENERIC_NOUNS,
    INTERJECTIONS,
    MODIFIERS,
    STOPWORDS,
    UNITS,
    word_set,
)

__all__ = [
    "MAX_NAME_WORDS",
    "MAX_SENTENCES_READ",
    "MAX_SENTENCE_CHARS",
    "MODIFIERS",
    "STOPWORDS",
    "UNITS",
    "Span",
    "dedupe",
    "drop_names",
    "is_filler",
    "name_candidates",
    "normalise",
    "noun_phrases",
    "select_spans",
    "split_sentences",
    "strip_possessive",
    "time_expressions",
    "time_spans",
    "timed_names",
    "word_set",
]

# --------------------------------------------------------------------------------------------
# Text preparation and sentences
# --------------------------------------------------------------------------------------------

_TRANSLATE = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ", "\u200b": ""}
)
_REDACTION_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
# A run of terminators is only entered at its first character (the lookbehind), so "...."
# x 30,000 is one linear scan instead of one scan per dot.
_BOUNDARY = re.compile(r"(?<![.!?\u2026])[.!?\u2026]++[\"')\]]*+\s+")
_BULLET = re.compile(r"^\s*+(?:[-*\u2022>]++|\d{1,3}[.)])\s+")
_LAST_WORD = re.compile(r"([^\s(\"']+)$")
_TOKEN = re.compile(r"[^\W_](?:[\w'+#&.-]*[\w+#])?")


def normalise(text: str) -> str:
    return text.translate(_TRANSLATE)


_INITIAL = re.compile(r"(?:^|[A-Z][\w.]*\s+)[A-Z]$")


_ABBREVIATION_WINDOW = 40  # characters before a full stop that can hold "Dr", "e.g" or "J. K"
MAX_SENTENCE_CHARS = 2000  # longer "sentences" (logs, pasted blobs) are cut into windows
_NON_SPACE = re.compile(r"\S")
# Sentences a message is read for (entities, facts, rules). 100,000 characters of prose are
# about 1,100 sentences; "Aa. " x 25,000 is 25,000 of them, each a candidate with a time hint.
MAX_SENTENCES_READ = 2000


def _is_abbreviation(before: str) -> bool:
    """Whether the text before a full stop ends in "Dr", "e.g", "U.S" or a name initial."""
    tail = before[-_ABBREVIATION_WINDOW:]
    m = _LAST_WORD.search(tail)
    if m is None:
        return False
    word = m.group(1).rstrip(".")
    dotted = re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word) is not None
    return word.lower() in ABBREVIATIONS or dotted or _INITIAL.search(tail.strip()) is not None


def _lines(text: str) -> Iterator[str]:
    """Physical lines, re-joining hard-wrapped prose (a lower-case continuation line)."""
    parts: list[str] = []  # joined once at the end: repeated concatenation is quadratic
    for raw in text.splitlines():
        line = raw.strip()
        wrapped = parts and line[:1].islower() and not _BULLET.match(raw)
        if wrapped and parts[-1][-1:] not in ".!?:;":
            parts.append(line)
            continue
        if parts:
            yield " ".join(parts)
        parts = [line] if line else []
    if parts:
        yield " ".join(parts)


def _windows(sentence: str) -> Iterator[str]:
    """``sentence`` in pieces of at most :data:`MAX_SENTENCE_CHARS`, cut at a space when one
    is in the second half of the window. Bounds the work any rule does on one "sentence"."""
    start, size = 0, len(sentence)
    while size - start > MAX_SENTENCE_CHARS:
        end = start + MAX_SENTENCE_CHARS
        cut = sentence.rfind(" ", start + MAX_SENTENCE_CHARS // 2, end + 1)
        cut = cut if cut > 0 else end
        yield sentence[start:cut].rstrip()
        nxt = _NON_SPACE.search(sentence, cut)  # indices, not copies of the rest
        start = nxt.start() if nxt else size
    yield sentence[start:]


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into trimmed sentences.

    Splits on ``.``/``!``/``?``/``…`` followed by whitespace and on line breaks (bullets
    become their own sentences, bullet markers are dropped, hard-wrapped lines are re-joined).
    Abbreviations ("Dr.", "e.g.", "vs.") and initials ("J. K.") do not end a sentence;
    dotted identifiers and decimals ("graph.store", "3.5") are never split. A sentence longer
    than :data:`MAX_SENTENCE_CHARS` is cut into windows of at most that size.
    """
    sentences: list[str] = []
    for line in _lines(normalise(text)):
        start = 0
        for m in _BOUNDARY.finditer(line):
            if _is_abbreviation(line[max(start, m.start() - _ABBREVIATION_WINDOW) : m.start()]):
                continue
            sentences.append(line[start : m.end()])
            start = m.end()
        sentences.append(line[start:])
    cleaned = (_BULLET.sub("", s).strip() for s in sentences)
    return [w for s in cleaned if s for w in _windows(s) if w]


_GREETINGS = word_set("hey hi hello hiya howdy yo heya morning evening greetings dear")
_FILLER_WORDS = INTERJECTIONS | word_set(
    """
    you it got sounds good perfect great nice awesome cool amazing wonderful fantastic so very
    much too a lot same me of course gotcha you're youre night morning there all everyone guys
    woohoo hooray ha hah hehe xd that's thats true love this that is was
    """
)
_FILLER_PHRASES = frozenset(
    {
        "how are you",
        "how are you doing",
        "how's it going",
        "how is it going",
        "what's up",
        "how have you been",
        "what about you",
        "how about you",
        "and you",
        "long time no see",
        "good to see you",
        "nice to see you",
        "good to hear from you",
        "talk soon",
        "take care",
        "see you",
        "see you soon",
        "you know",
        "good morning",
        "good night",
        "what's up with you",
        "what's new",
        "anything new",
        "how was your day",
        "how was your weekend",
    }
)


def is_filler(sentence: str) -> bool:
    """Greetings, thanks and acknowledgements carry no fact ("ok", "Thanks!", "Hey Mel!").

    In a short sentence, non-initial capitalised words are taken as the addressee's name.
    """
    words = re.findall(r"[\w']+", sentence)
    if len(words) <= 4:
        words = [w for i, w in enumerate(words) if i == 0 or not w[:1].isupper()]
    lowered = [w.lower() for w in words]
    if lowered and lowered[0] in _GREETINGS:
        lowered = lowered[1:]
    return all(w in _FILLER_WORDS for w in lowered) or " ".join(lowered) in _FILLER_PHRASES


# --------------------------------------------------------------------------------------------
# Noun phrases and entities
# --------------------------------------------------------------------------------------------


class _Token(NamedTuple):
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return strip_possessive(self.text).lower()


_MAX_PHRASE_WORDS = 4
_QUOTED = re.compile(
    r"\"([^\"\n]{1,60})\"|`([^`\n]{1,60})`|(?<![\w'])'([^'\n]{1,40})'(?![\w'])",
)
_CODE_IDENTIFIER = re.compile(
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w])"  # graph.store, Node.js
    r"|(?<![\w])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?![\w])"  # TopicStore
    r"|(?<![\w])[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+(?![\w])"  # getUser, iPhone
    r"|(?<![\w])[a-z0-9]+(?:_[a-z0-9]+)+(?![\w])"  # repo_refactor
)


def strip_possessive(word: str) -> str:
    return word[:-2] if word.lower().endswith("'s") else word


def _tokens(sentence: str) -> list[_Token]:
    return [_Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]


def _adjacent(sentence: str, left: _Token, right: _Token) -> bool:
    """Only whitespace between two tokens (punctuation breaks a phrase)."""
    return sentence[left.end : right.start].isspace() and not left.text.endswith("'s")


def _is_capitalised(tok: _Token) -> bool:
    word = tok.text
    if not word[0].isalpha() or tok.low in STOPWORDS:
        return False
    return word[0].isupper() or any(c.isupper() for c in word[1:])


def _is_plain_word(tok: _Token) -> bool:
    """A Title-case dictionary-looking word ("Went", "Running"), as opposed to "LGBTQ"/"Neo4j"."""
    word = strip_possessive(tok.text)
    return word.isalpha() and word[0].isupper() and word[1:].islower()


_OBJECT_WORDS = DETERMINERS | word_set("me us him her them it you")


def _keep_single(tok: _Token, sentence_initial: bool, following: _Token | None) -> bool:
    """Whether a lone capitalised word is a name. A sentence-initial Title-case word must not
    look like an adverb/gerund/past form and must not be an imperative ("Remind me", "Book
    the venue")."""
    if len(tok.text) < 2 or tok.low in STOPWORDS or tok.low in MODIFIERS or tok.low in UNITS:
        return False
    if not sentence_initial or not _is_plain_word(tok):
        return True
    imperative = following is not None and following.low in _OBJECT_WORDS
    return not imperative and not tok.low.endswith(("ly", "ing", "ed"))


def _run_end(sentence: str, tokens: list[_Token], i: int) -> int:
    """Index after the capitalised run that starts at ``tokens[i]``."""
    j = i + 1
    while j < len(tokens) and _adjacent(sentence, tokens[j - 1], tokens[j]):
        if _is_capitalised(tokens[j]) or tokens[j].text.isdigit():
            j += 1
            continue
        k = j
        while k < len(tokens) and k - j < 2 and tokens[k].low in CONNECTORS:
            k += 1
        linked = k < len(tokens) and k > j and tokens[k].text[0].isupper()
        if (
            not linked
            or tokens[j].low == "the"
            or not _adjacent(sentence, tokens[k - 1], tokens[k])
        ):
            break
        j = k + 1
    return j


def _capitalised_runs(sentence: str, tokens: list[_Token]) -> Iterator[Span]:
    """Proper names: "Sheriff Claw", "Bank of America", "Neo4j Browser", "LGBTQ", "Mel"."""
    i = 0
    while i < len(tokens):
        if not _is_capitalised(tokens[i]) and not (i == 0 and tokens[i].text[0].isupper()):
            i += 1
            continue
        end = _run_end(sentence, tokens, i)
        run = tokens[i:end]
        while run and (run[0].low in STOPWORDS or run[0].low in MODIFIERS):
            run = run[1:]
        while run and run[-1].low in STOPWORDS:
            run = run[:-1]
        following = tokens[end] if end < len(tokens) else None
        if len(run) > 1 or (run and _keep_single(run[0], run[0] is tokens[0], following)):
            surface = strip_possessive(sentence[run[0].start : run[-1].end])
            yield Span(2 if len(run) > 1 else 1, run[0].start, run[-1].end, surface)
        i = end


_VERB_OBJECT = word_set("on the a an my our your their his me us them him it that")


def _phrase_word(tok: _Token, first: bool, following: _Token | None) -> bool:
    low = tok.low
    if not any(c.isalpha() for c in low) or low in STOPWORDS:
        return False
    if first:
        return True
    if low in MODIFIERS or (low.endswith("ed") and len(low) > 4):
        return False
    if following is None or not low.endswith("s") or low.endswith(("ss", "us", "is")):
        return True
    # "the deploy depends on ...", "the sleep job compacts conversations": a verb, not a noun
    return following.low not in _VERB_OBJECT and following.low in STOPWORDS


def _phrase_after(sentence: str, tokens: list[_Token], i: int) -> list[_Token]:
    """Content words following the determiner ``tokens[i]``; stops at stopwords, verbs, punctuation."""
    words: list[_Token] = []
    for j in range(i + 1, min(i + 1 + _MAX_PHRASE_WORDS, len(tokens))):
        tok, prev = tokens[j], tokens[j - 1]
        following = tokens[j + 1] if j + 1 < len(tokens) else None
        if not _adjacent(sentence, prev, tok) or not _phrase_word(tok, not words, following):
            break
        words.append(tok)
    while words and words[0].low in MODIFIERS:
        words = words[1:]
    return words


def _determiner_phrases(sentence: str, tokens: list[_Token]) -> Iterator[Span]:
    """Noun phrases after a determiner: "a LGBTQ support group", "the billing tables"."""
    for i, det in enumerate(tokens):
        relative = det.low == "that" and i > 0 and tokens[i - 1].low not in STOPWORDS
        if det.low not in DETERMINERS or relative:  # "agencies that support ..."
            continue
        words = _phrase_after(sentence, tokens, i)
        while len(words) > 1 and _is_capitalised(words[-1]) and not _is_capitalised(words[0]):
            words = words[:-1]  # "my friend Jolene": the name is its own entity
        if not words or all(w.low in GENERIC_NOUNS | MODIFIERS for w in words):
            continue
        if len(words) == 1 and words[0].low in ELLIPTIC:  # "my favorite": of what?
            continue
        surface = strip_possessive(sentence[words[0].start : words[-1].end])
        yield Span(1, words[0].start, words[-1].end, surface)


def _quoted_terms(sentence: str) -> Iterator[Span]:
    for m in _QUOTED.finditer(sentence):
        group = next(g for g in (1, 2, 3) if m.group(g) is not None)
        inner = m.group(group).strip(" .,;:!?")
        words = inner.lower().split()
        if inner and len(words) <= 6 and not all(w in STOPWORDS for w in words):
            yield Span(3, m.start(group), m.end(group), inner)


def _code_identifiers(sentence: str) -> Iterator[Span]:
    for m in _CODE_IDENTIFIER.finditer(sentence):
        word = m.group(0)
        parts = word.split(".")
        if "." in word and (word.lower() in ABBREVIATIONS or max(map(len, parts)) < 3):
            continue
        yield Span(3, m.start(), m.end(), word)


def dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        clean = " ".join(item.split()).strip(" \"'`.,;:!?()[]")
        if clean and clean.lower() not in seen:
            seen.add(clean.lower())
            out.append(clean)
    return out


def noun_phrases(text: str) -> list[str]:
    """Entity candidates in ``text``, deduplicated case-insensitively, in order of appearance.

    Finds capitalised names ("Neo4j Browser", "Sheriff Claw", "Mel"), quoted terms,
    determiner phrases without the determiner and leading evaluative adjectives ("the party
    planning" -> "party planning", "a great support group" -> "support group") and code
    identifiers ("TopicStore", "repo_refactor", "graph.store"). Stopwords, time words and
    ordinary sentence-initial words ("Hey", "Yesterday", "Thanks") never become phrases.
    Reads the first :data:`MAX_SENTENCES_READ` sentences. The last few results are cached:
    the context path asks twice for the same message.
    """
    return list(_noun_phrases(text))


# a time phrase as a possessive and the words it qualifies ("this month's novel"): up to three
# words, none of them a function word
_POSSESSIVE_WORDS = re.compile(r"'s\s++([A-Za-z][\w-]*+(?:\s++[A-Za-z][\w-]*+){0,2})")


def timed_names(text: str) -> list[str]:
    """Phrases that begin with a time phrase as a possessive ("this month's novel", "last
    week's retro", "yesterday's standup"), each with one, two and three of the words after it
    (function words end it), in order of appearance. :func:`noun_phrases` leaves them out,
    since their words are a time; but a topic may be named or aliased so, and then the phrase
    names the topic, not a time (``retrieval.triggers``). The last few results are cached: the
    context path asks twice for the same message, as for :func:`noun_phrases`."""
    return list(_timed_names(text))


@lru_cache(maxsize=16)
def _timed_names(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for sentence in split_sentences(normalise(text))[:MAX_SENTENCES_READ]:
        for start, end in time_spans(sentence):
            m = _POSSESSIVE_WORDS.match(sentence, end)
            if m is None:
                continue
            words = []
            for word in m.group(1).split():
                if word.lower() in _NO_NAME:
                    break
                words.append(word)
                found.append(f"{sentence[start:end]}'s {' '.join(words)}")
    return tuple(dedupe(found))


MAX_NAME_WORDS = 50  # a participant lookup asks about this many phrases of a message at most
_NO_NAME = FUNCTION_WORDS | DETERMINERS


def name_candidates(text: str) -> list[str]:
    """What in ``text`` may be a person's name: its noun phrases, then every other word that is
    no function word (possessive stripped), distinct case-insensitively, in order, at most
    :data:`MAX_NAME_WORDS`. A participant of a chat is often written in lower case ("what does
    caroline like?"), which :func:`noun_phrases` does not take for a name."""
    words = (strip_possessive(t.text) for t in _tokens(normalise(text)))
    plain = (w for w in words if w.isalpha() and w.lower() not in _NO_NAME)
    return dedupe([*noun_phrases(text), *plain])[:MAX_NAME_WORDS]


def drop_names(text: str, names: Iterable[str]) -> str:
    """``text`` without the given names (case-insensitive, whole words, a possessive "'s"
    with them); ``text`` itself when nothing else would be left."""
    out = text
    for name in sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True):
        out = re.sub(rf"(?<!\w){re.escape(name)}(?:'s)?(?!\w)", " ", out, flags=re.I)
    return out if any(ch.isalnum() for ch in out) else text


@lru_cache(maxsize=16)
def _noun_phrases(text: str) -> tuple[str, ...]:
    masked = _REDACTION_MARKER.sub(", ", normalise(text))
    found: list[str] = []
    for sentence in split_sentences(masked)[:MAX_SENTENCES_READ]:
        tokens = _tokens(sentence)
        times = DisjointSpans(time_spans(sentence))
        spans = [
            *_capitalised_runs(sentence, tokens),
            *_determiner_phrases(sentence, tokens),
            *_quoted_terms(sentence),
            *_code_identifiers(sentence),
        ]
        spans = [s for s in spans if not times.overlaps(s.start, s.end)]
        found.extend(span.surface for span in select_spans(spans))
    return tuple(dedupe(found))


# --------------------------------------------------------------------------------------------
# Time expressions
# --------------------------------------------------------------------------------------------


def time_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the time phrases in ``text``, longest first, no overlaps
    (the detection half of the time grammar, ``text.timegrammar``; cached there)."""
    return GRAMMAR.spans(text)


def time_expressions(text: str) -> list[str]:
    """Surface time expressions ("yesterday", "last week", "on May 8", "next Friday",
    "two weeks ago", "in 2022", "at 3pm"), longest match wins, no resolution to dates.

    "last time" is a memory reference, not a time expression.
    """
    clean = normalise(text)
    return dedupe(clean[start:end] for start, end in time_spans(clean))
