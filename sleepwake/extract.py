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
from functools import lru_cache
from itertools import islice
from typing import NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from graph.errors import ValidationFailed
from retrieval.spans import DisjointSpans
from sleepwake.redact import redact

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


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Decision(_Frozen):
    """A choice that was made: ``chosen`` over ``rejected`` because of ``reason``."""

    text: str
    chosen: str
    rejected: list[str] = Field(default_factory=list)
    reason: str | None = None


class NumberMention(_Frozen):
    """A quantity: ``key`` is a short lower-case noun phrase ("context window", "budget")."""

    key: str
    value: float
    unit: str | None
    text: str


class Dependency(_Frozen):
    """``dependent`` cannot proceed before ``dependency``."""

    dependent: str
    dependency: str
    text: str


class InProgress(_Frozen):
    """Unfinished work: the ``goal`` being worked on and, if stated, the ``next_step``."""

    goal: str
    next_step: str | None
    text: str


class Extraction(_Frozen):
    """Every memory candidate found in one message."""

    entities: list[str]
    decisions: list[Decision]
    constraints: list[str]
    open_loops: list[str]
    numbers: list[NumberMention]
    time_expressions: list[str]
    memory_references: list[str]
    dependencies: list[Dependency]
    is_correction: bool
    in_progress: InProgress | None
    sentences: list[str]


# --------------------------------------------------------------------------------------------
# Word lists
# --------------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DETERMINERS = _words(
    "the a an my our your his her their its this that these those some another every each"
)
_FUNCTION_WORDS = _words(
    """
    i me we us you he him she they them it one ones myself ourselves yourself himself herself
    themselves itself i'm i've i'd i'll we're we've we'd we'll you're you've you'd you'll he's
    she's it's they're they've they'd they'll that's there's here's what's let's who's how's
    and or but nor so yet if then than because since as while when where why how what which
    who whom whose whether though although unless until till of in on at by for with about
    against between into through during before after above below to from up down out off over
    under again further per via any all both either neither no not nothing something anything
    everything someone anyone everyone somebody anybody nobody there here now today tonight
    is am are was were be been being have has had having do does did doing will would shall
    should can could may might must ought don't doesn't didn't won't can't couldn't wouldn't
    shouldn't isn't aren't wasn't weren't haven't hasn't hadn't
    very really just also too quite rather pretty so such much many more most less least only
    even still already almost always never ever often sometimes usually maybe perhaps probably
    """
)
_INTERJECTIONS = _words(
    """
    hey hi hello hiya howdy yo heya thanks thank thx ty cheers bye goodbye wow oh ah aw aww um
    uh hmm haha hahaha lol omg lmao yay ugh oops congrats congratulations sorry please welcome
    dear absolutely definitely totally honestly seriously anyway anyways btw fyi asap tbh imo
    imho ok okay alright right well yes yeah yep yup nope nah sure fine indeed exactly agreed
    todo fixme note tip update edit ps
    """
)
_TIME_WORDS = _words(
    """
    yesterday today tonight tomorrow morning afternoon evening night weekend week month year
    day days weeks months years decade time times hour hours minute minutes recently lately
    soon later earlier currently ago monday tuesday wednesday thursday friday saturday sunday
    mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends
    january february march april may june july august september october november december
    """
)
_COMMON_VERBS = _words(
    """
    go went gone goes going get got gotten gets getting make made makes making take took taken
    takes taking see saw seen sees seeing come came comes coming know knew known knows think
    thought thinks feel felt feels feeling say said says tell told tells give gave given gives
    find found finds leave left leaves keep kept keeps let lets put puts run ran runs bring
    brought buy bought try tried tries want wants need needs like likes love loves hope hopes
    start starts finish work works look looks help helps call calls ask asks meet met become
    became begin began begun show shows hear heard play plays move moves live lives believe
    happen happens remember forget forgot learn learnt decide chose choose chosen pick use
    uses wish wishes mean means meant sounds sound seems seem check guess bet
    """
)
_MODIFIERS = _words(
    """
    good great best better nice amazing awesome cool bad worse worst same other whole entire own
    certain different various several few such lovely beautiful wonderful fantastic incredible
    fun exciting interesting special perfect huge big little small tiny tough hard easy real
    super awful terrible crazy wild new old first last next long short busy quick following
    previous upcoming recent latest current
    """
)
_GENERIC_NOUNS = _words(
    """
    thing things stuff lot lots bit way ways kind sort part end idea point place moment people
    person guy guys one ones fact case question answer reason side number type sense deal
    project plan problem issue stuff news
    """
)
_HONORIFICS = _words("mr mrs ms dr prof sir madam miss")
_STOPWORDS = (
    _FUNCTION_WORDS | _INTERJECTIONS | _TIME_WORDS | _COMMON_VERBS | _DETERMINERS | _HONORIFICS
)
_CONNECTORS = _words("of the de la da del von van & for")
_ABBREVIATIONS = _words(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie approx dept inc ltd co no fig a.m p.m "
    "u.s u.k jan feb mar apr jun jul aug sep sept oct nov dec mt ft"
)

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


def _normalise(text: str) -> str:
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
    return word.lower() in _ABBREVIATIONS or dotted or _INITIAL.search(tail.strip()) is not None


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
    for line in _lines(_normalise(text)):
        start = 0
        for m in _BOUNDARY.finditer(line):
            if _is_abbreviation(line[max(start, m.start() - _ABBREVIATION_WINDOW) : m.start()]):
                continue
            sentences.append(line[start : m.end()])
            start = m.end()
        sentences.append(line[start:])
    cleaned = (_BULLET.sub("", s).strip() for s in sentences)
    return [w for s in cleaned if s for w in _windows(s) if w]


_GREETINGS = _words("hey hi hello hiya howdy yo heya morning evening greetings dear")
_FILLER_WORDS = _INTERJECTIONS | _words(
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


def _is_filler(sentence: str) -> bool:
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
        return _strip_possessive(self.text).lower()


class _Span(NamedTuple):
    priority: int
    start: int
    end: int
    surface: str


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


def _strip_possessive(word: str) -> str:
    return word[:-2] if word.lower().endswith("'s") else word


def _tokens(sentence: str) -> list[_Token]:
    return [_Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]


def _adjacent(sentence: str, left: _Token, right: _Token) -> bool:
    """Only whitespace between two tokens (punctuation breaks a phrase)."""
    return sentence[left.end : right.start].isspace() and not left.text.endswith("'s")


def _is_capitalised(tok: _Token) -> bool:
    word = tok.text
    if not word[0].isalpha() or tok.low in _STOPWORDS:
        return False
    return word[0].isupper() or any(c.isupper() for c in word[1:])


def _is_plain_word(tok: _Token) -> bool:
    """A Title-case dictionary-looking word ("Went", "Running"), as opposed to "LGBTQ"/"Neo4j"."""
    word = _strip_possessive(tok.text)
    return word.isalpha() and word[0].isupper() and word[1:].islower()


_OBJECT_WORDS = _DETERMINERS | _words("me us him her them it you")


def _keep_single(tok: _Token, sentence_initial: bool, following: _Token | None) -> bool:
    """Whether a lone capitalised word is a name. A sentence-initial Title-case word must not
    look like an adverb/gerund/past form and must not be an imperative ("Remind me", "Book
    the venue")."""
    if len(tok.text) < 2 or tok.low in _STOPWORDS or tok.low in _MODIFIERS or tok.low in _UNITS:
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
        while k < len(tokens) and k - j < 2 and tokens[k].low in _CONNECTORS:
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


def _capitalised_runs(sentence: str, tokens: list[_Token]) -> Iterator[_Span]:
    """Proper names: "Sheriff Claw", "Bank of America", "Neo4j Browser", "LGBTQ", "Mel"."""
    i = 0
    while i < len(tokens):
        if not _is_capitalised(tokens[i]) and not (i == 0 and tokens[i].text[0].isupper()):
            i += 1
            continue
        end = _run_end(sentence, tokens, i)
        run = tokens[i:end]
        while run and (run[0].low in _STOPWORDS or run[0].low in _MODIFIERS):
            run = run[1:]
        while run and run[-1].low in _STOPWORDS:
            run = run[:-1]
        following = tokens[end] if end < len(tokens) else None
        if len(run) > 1 or (run and _keep_single(run[0], run[0] is tokens[0], following)):
            surface = _strip_possessive(sentence[run[0].start : run[-1].end])
            yield _Span(2 if len(run) > 1 else 1, run[0].start, run[-1].end, surface)
        i = end


_VERB_OBJECT = _words("on the a an my our your their his me us them him it that")


def _phrase_word(tok: _Token, first: bool, following: _Token | None) -> bool:
    low = tok.low
    if not any(c.isalpha() for c in low) or low in _STOPWORDS:
        return False
    if first:
        return True
    if low in _MODIFIERS or (low.endswith("ed") and len(low) > 4):
        return False
    if following is None or not low.endswith("s") or low.endswith(("ss", "us", "is")):
        return True
    # "the deploy depends on ...", "the sleep job compacts conversations": a verb, not a noun
    return following.low not in _VERB_OBJECT and following.low in _STOPWORDS


def _phrase_after(sentence: str, tokens: list[_Token], i: int) -> list[_Token]:
    """Content words following the determiner ``tokens[i]``; stops at stopwords, verbs, punctuation."""
    words: list[_Token] = []
    for j in range(i + 1, min(i + 1 + _MAX_PHRASE_WORDS, len(tokens))):
        tok, prev = tokens[j], tokens[j - 1]
        following = tokens[j + 1] if j + 1 < len(tokens) else None
        if not _adjacent(sentence, prev, tok) or not _phrase_word(tok, not words, following):
            break
        words.append(tok)
    while words and words[0].low in _MODIFIERS:
        words = words[1:]
    return words


def _determiner_phrases(sentence: str, tokens: list[_Token]) -> Iterator[_Span]:
    """Noun phrases after a determiner: "a LGBTQ support group", "the billing tables"."""
    for i, det in enumerate(tokens):
        relative = det.low == "that" and i > 0 and tokens[i - 1].low not in _STOPWORDS
        if det.low not in _DETERMINERS or relative:  # "agencies that support ..."
            continue
        words = _phrase_after(sentence, tokens, i)
        while len(words) > 1 and _is_capitalised(words[-1]) and not _is_capitalised(words[0]):
            words = words[:-1]  # "my friend Jolene": the name is its own entity
        if not words or all(w.low in _GENERIC_NOUNS | _MODIFIERS for w in words):
            continue
        surface = _strip_possessive(sentence[words[0].start : words[-1].end])
        yield _Span(1, words[0].start, words[-1].end, surface)


def _quoted_terms(sentence: str) -> Iterator[_Span]:
    for m in _QUOTED.finditer(sentence):
        group = next(g for g in (1, 2, 3) if m.group(g) is not None)
        inner = m.group(group).strip(" .,;:!?")
        words = inner.lower().split()
        if inner and len(words) <= 6 and not all(w in _STOPWORDS for w in words):
            yield _Span(3, m.start(group), m.end(group), inner)


def _code_identifiers(sentence: str) -> Iterator[_Span]:
    for m in _CODE_IDENTIFIER.finditer(sentence):
        word = m.group(0)
        parts = word.split(".")
        if "." in word and (word.lower() in _ABBREVIATIONS or max(map(len, parts)) < 3):
            continue
        yield _Span(3, m.start(), m.end(), word)


def _select_spans(spans: Iterable[_Span]) -> list[_Span]:
    """Best non-overlapping spans: higher priority first, then longer, then earlier."""
    chosen: list[_Span] = []
    taken = DisjointSpans()
    for span in sorted(spans, key=lambda s: (-s.priority, s.start - s.end, s.start)):
        if not taken.overlaps(span.start, span.end):
            taken.add(span.start, span.end)
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def _dedupe(items: Iterable[str]) -> list[str]:
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


@lru_cache(maxsize=16)
def _noun_phrases(text: str) -> tuple[str, ...]:
    masked = _REDACTION_MARKER.sub(", ", _normalise(text))
    found: list[str] = []
    for sentence in split_sentences(masked)[:MAX_SENTENCES_READ]:
        tokens = _tokens(sentence)
        times = DisjointSpans(_time_spans(sentence))
        spans = [
            *_capitalised_runs(sentence, tokens),
            *_determiner_phrases(sentence, tokens),
            *_quoted_terms(sentence),
            *_code_identifiers(sentence),
        ]
        spans = [s for s in spans if not times.overlaps(s.start, s.end)]
        found.extend(span.surface for span in _select_spans(spans))
    return tuple(_dedupe(found))


# --------------------------------------------------------------------------------------------
# Time expressions
# --------------------------------------------------------------------------------------------

_NUMW = (
    r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"a\s+few|a\s+couple(?:\s+of)?|several|few|couple\s+of)"
)
_SPAN_UNIT = r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?)"
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
_MONTH = (
    r"(?-i:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)"
)
_PART = (
    r"(?:morning|afternoon|evening|night|weekend|week|month|year|summer|winter|spring|fall|"
    r"autumn|semester|quarter|season)"
)
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
_TIME_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(?:the\s+)?day\s+(?:before|after)\s+(?:yesterday|tomorrow)\b",
        rf"\b(?:earlier|later)\s+(?:today|this\s+{_PART})\b",
        r"\b(?:yesterday|today|tonight|tomorrow)(?:\s+(?:morning|afternoon|evening|night))?\b",
        r"\blast\s+night\b",
        rf"\b(?:(?:this|that)\s+(?:past|coming)|last|next|this|that|past|coming|every|"
        r"(?:the\s+)?(?:following|previous))\s+"
        rf"(?:{_PART}|{_DAY}|{_MONTH})\b",
        rf"\b(?:on\s+)?{_DAY}(?:\s+(?:morning|afternoon|evening|night))?\b",
        rf"\b(?:on\s+)?(?:the\s+)?(?:{_ORD}\s+(?:of\s+)?{_MONTH}|{_MONTH}\s+{_ORD}(?!\d))"
        r"(?:,?\s+\d{4})?\b",
        rf"\b(?:in|since|by|until|till|from|during|early|late|mid|back\s+in)[\s-]+{_MONTH}"
        rf"(?:\s+{_ORD}(?!\d))?(?:,?\s+\d{{4}})?\b",
        rf"\b{_MONTH}\s+\d{{4}}\b",
        r"\b(?:in|since|by|until|till|from|during|around|before|after|back\s+in)\s+(?:the\s+)?"
        r"(?:early\s+|late\s+|mid[\s-]+)?(?:19|20)\d\d(?:'?s)?\b",
        r"\bthe\s+'?\d0'?s\b",
        r"\b\d{4}-\d{2}-\d{2}\b",
        r"\b\d{1,2}/\d{1,2}/\d{2,4}\b",
        rf"\b{_NUMW}\s+{_SPAN_UNIT}\s+(?:ago|later|earlier|back)\b",
        rf"\b(?:in|within|for|after|over)\s+(?:the\s+(?:next|past|last|coming)\s+)?{_NUMW}\s+"
        rf"{_SPAN_UNIT}\b",
        rf"\b(?:the\s+)?(?:last|past|next|coming)\s+(?:few|couple(?:\s+of)?|\d+|two|three|four|"
        rf"five|six|seven|eight|nine|ten)\s+{_SPAN_UNIT}\b",
        r"\b(?:at\s+)?\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?!\w)",
        r"\bat\s+\d{1,2}:\d{2}\b",
        r"\b(?:the\s+other\s+day|recently|lately|a\s+while\s+(?:ago|back)|(?:long|ages)\s+ago|"
        r"these\s+days|nowadays|(?:over|on|during)\s+the\s+weekend)\b",
    )
)


def _time_spans(text: str) -> list[tuple[int, int]]:
    candidates = [
        _Span(0, m.start(), m.end(), m.group(0)) for p in _TIME_PATTERNS for m in p.finditer(text)
    ]
    return [(s.start, s.end) for s in _select_spans(candidates)]


def time_expressions(text: str) -> list[str]:
    """Surface time expressions ("yesterday", "last week", "on May 8", "next Friday",
    "two weeks ago", "in 2022", "at 3pm"), longest match wins, no resolution to dates.

    "last time" is a memory reference, not a time expression.
    """
    clean = _normalise(text)
    return _dedupe(clean[start:end] for start, end in _time_spans(clean))


# --------------------------------------------------------------------------------------------
# Sentence classifiers: constraints, open loops, memory references, corrections
# --------------------------------------------------------------------------------------------

_PAST_FORMS = _words(
    """
    knew thought been had seen saw heard went came did said told felt found got gave made took
    was were ran met left lost bought brought caught taught won wrote written forgot forgotten
    understood realised realized noticed believed known done gone
    """
)
_INVOLUNTARY = _words(
    "forget lose wonder seem end fail feel get miss realize realise notice know understand"
)
_ALWAYS_NEVER = re.compile(
    r"(?:^|\b(?:i|we|you|please|should|must|will|to|and|'ll|'d|would|do)\s+)"
    r"(?:always|never)\s+(?:ever\s+)?(?P<verb>[a-z']+)",
    re.I,
)
_CONSTRAINT_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
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
    return any(p.search(sentence) for p in _CONSTRAINT_PATTERNS)


_OPEN_LOOP_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
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
)
_SMALL_TALK_QUESTION = re.compile(
    r"^(?:and\s+)?(?:how\s+(?:are|about|have)\s+you|what\s+about\s+you|how's\s+it\s+going|"
    r"what's\s+up|right|you\s+know|isn't\s+it|don't\s+you\s+think|wanna\s+hear)\b",
    re.I,
)


def _is_open_loop(sentence: str, role: str) -> bool:
    """Unfinished business: "still need to", "next step", "TODO", "remind me to", plans, and
    questions from the user (small talk such as "How are you?" excluded)."""
    if any(p.search(sentence) for p in _OPEN_LOOP_PATTERNS):
        return True
    question = sentence.rstrip().endswith("?") and len(sentence.split()) >= 3
    return role == "user" and question and not _SMALL_TALK_QUESTION.search(sentence)


_MEMORY_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(?:do|did|can|could|would|will)\s+you\s+(?:still\s+|even\s+)?(?:remember|recall)\b",
        r"\byou\s+(?:may\s+|might\s+|probably\s+)?(?:remember|recall)\b",
        r"^(?:please\s+)?remember\b",
        r"\bplease\s+remember\b",
        r"(?<!\bi\s)\b(?:remember|recall)(?=\s+(?:when|what|how|that)\s+(?:i|we|you)\b)",
        r"\blast\s+time\b",
        r"\b(?:we|you\s+and\s+i)\s+(?:spoke|talked|chatted|discussed|went\s+over)(?:\s+about)?\b",
        r"\bwe(?:'ve|\s+have)\s+(?:spoken|talked|chatted|discussed)(?:\s+about)?\b",
        r"\b(?:as|like)\s+(?:i|we)\s+(?:said|mentioned|discussed|told\s+you)\b",
        r"\bas\s+(?:discussed|mentioned)\b",
        r"\bi\s+(?:already\s+)?(?:told|mentioned\s+to)\s+you\b",
        r"\byou\s+(?:told|reminded)\s+me\b",
        r"\byou\s+(?:said|mentioned|suggested|recommended)\b",
        r"\b(?:did|have)\s+i\s+(?:ever\s+)?(?:tell|told|mention(?:ed)?)\b",
        r"\bour\s+(?:last|previous|earlier)\s+(?:chat|conversation|talk|session|call)\b",
        r"\bremind\s+me\s+what\b",
    )
)


def _memory_references(sentences: Iterable[str]) -> list[str]:
    """Cue phrases that point at earlier conversation ("last time", "you told me").

    A bare "I remember ..." is the speaker's own memory ("I remember the 90s"), not a
    reference to what the agent was told, so it does not fire; "do you remember",
    "remember when we", and a sentence-initial imperative "Remember ..." do.
    """
    found: list[str] = []
    for sentence in sentences:
        matches = (m for p in _MEMORY_PATTERNS for m in p.finditer(sentence))
        spans = _select_spans(_Span(0, m.start(), m.end(), m.group(0)) for m in matches)
        found.extend(span.surface for span in spans)
    return _dedupe(found)


_CORRECTION_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
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
)


def _is_correction(sentence: str) -> bool:
    """The user corrects the assistant: "No, actually…", "that's wrong", "I meant…",
    "I said X, not Y", "Not X but Y". "No worries", "No, thanks" and "I meant to call" are
    not corrections."""
    return any(p.search(sentence) for p in _CORRECTION_PATTERNS)


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
_TRIM = " \t\"'`.,;:!?()"


def _split_alternatives(choice: str, why: str) -> tuple[str, list[str], str]:
    """Pull "over/instead of/rather than Y" out of the choice, or out of a trailing
    ", rather than Y" after the reason."""
    chosen, *others = _REJECT_SPLIT.split(choice, maxsplit=1)
    if not others:
        why, *others = _LATE_REJECT_SPLIT.split(why, maxsplit=1)
    rejected = [r.strip(_TRIM) for r in _LIST_SPLIT.split(others[0])] if others else []
    return chosen.strip(_TRIM), [r for r in rejected if r], why.strip(_TRIM)


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
_PRONOUNS = _words(
    "it this that everything something anything which what all everyone we i you they he she"
)


def _clean_party(text: str) -> str:
    text = _LEADING_NOISE.sub("", text.strip(_TRIM))
    text = re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)
    return _DONE_SUFFIX.sub("", text).strip(_TRIM)


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


def _dependencies(sentence: str) -> list[Dependency]:
    """ "X depends on Y", "X is blocked by Y", "X needs Y first", "before X we need Y",
    "we need to Y before X". A pronoun dependent ("it depends on the weather") is dropped."""
    out: list[Dependency] = []
    for dependent, dependency in _dependency_pairs(sentence):
        vague = dependent.lower() in _PRONOUNS or len(dependent.split()) > 8
        if dependent and dependency and not vague:
            out.append(Dependency(dependent=dependent, dependency=dependency, text=sentence))
    return out


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
    return _GOAL_END.split(text, maxsplit=1)[0].strip(_TRIM)


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
# Numbers
# --------------------------------------------------------------------------------------------

_UNITS: dict[str, str] = {
    **dict.fromkeys(("tokens", "token"), "tokens"),
    **dict.fromkeys(("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms"), "kg"),
    **dict.fromkeys(("g", "gram", "grams"), "g"),
    **dict.fromkeys(("mg",), "mg"),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), "lb"),
    **dict.fromkeys(("oz", "ounce", "ounces"), "oz"),
    **dict.fromkeys(("km", "kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    **dict.fromkeys(("mile", "miles", "mi"), "miles"),
    **dict.fromkeys(("meter", "meters", "metre", "metres"), "m"),
    **dict.fromkeys(("cm",), "cm"),
    **dict.fromkeys(("ft", "feet", "foot"), "ft"),
    **dict.fromkeys(("ms", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(("sec", "secs", "second", "seconds"), "seconds"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "minutes"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "hours"),
    **dict.fromkeys(("day", "days"), "days"),
    **dict.fromkeys(("week", "weeks"), "weeks"),
    **dict.fromkeys(("month", "months"), "months"),
    **dict.fromkeys(("year", "years", "yrs"), "years"),
    **dict.fromkeys(("dollar", "dollars", "usd", "bucks"), "USD"),
    **dict.fromkeys(("euro", "euros", "eur"), "EUR"),
    **dict.fromkeys(("gbp", "quid"), "GBP"),
    **dict.fromkeys(("%", "percent", "per cent"), "%"),
    **{u: u.upper() for u in ("kb", "mb", "gb", "tb")},
    **dict.fromkeys(("ghz",), "GHz"),
    **dict.fromkeys(("kcal", "calories"), "kcal"),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), "l"),
    **dict.fromkeys(("ml",), "ml"),
    **dict.fromkeys(("mph",), "mph"),
    **dict.fromkeys(("degrees",), "degrees"),
}
_CURRENCY = {"$": "USD", "\u20ac": "EUR", "\u00a3": "GBP"}
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9}
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUMBER = re.compile(
    r"(?<![\w.,/:#$\u20ac\u00a3-])(?P<cur>[$\u20ac\u00a3])?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(?P<frac>\d+))?"
    r"(?P<mult>(?-i:[kKMB])(?![\w])|bn(?![\w])|\s+(?:thousand|million|billion)\b)?"
    rf"(?:\s?(?P<unit>{_UNIT_ALT})(?![\w]))?",
    re.I,
)
_UNIT_KEYS = {
    **dict.fromkeys(("USD", "EUR", "GBP"), "cost"),
    **dict.fromkeys(
        ("ms", "seconds", "minutes", "hours", "days", "weeks", "months", "years"), "duration"
    ),
    **dict.fromkeys(("kg", "g", "mg", "lb", "oz"), "weight"),
    **dict.fromkeys(("km", "miles", "m", "cm", "ft"), "distance"),
    "%": "percentage",
}
_LABELS = _words(
    """
    port version v room step page line issue pr ticket bug chapter level floor gate flight bus
    route build release phase sprint table row column item option number episode season gen
    generation python node postgres neo4j model gpt grade size
    """
)
_HEDGES = re.compile(
    r"(?<!\s)(?:\s++(?:about|around|roughly|approximately|approx|only|just|exactly|at\s+least|at\s+most|"
    r"up\s+to|under|over|nearly|almost|like|~))+\s*+$",
    re.I,
)
_LINK = re.compile(
    r"(?<!\s)(?:\s++(?:is|was|are|were|of|to|be|becomes?|equals?|costs?|weighs?|takes?|lasts?|hits?|"
    r"reached|reaches|set\s+to|now)|\s*+[=:~])\s*+$",
    re.I,
)
_TAIL_WORDS = re.compile(r"((?:[^\W_][\w'-]*+\s++){0,3}[^\W_][\w'-]*+)\s*+$")
_LABEL_BEFORE = re.compile(r"([^\W\d_][\w-]*+)\s*+#?\s*+$")
_AFTER_WORDS = re.compile(
    r"^\s*(?:(?:of|for|on)\s+)?(?:(?:the|my|our|your|a|an|his|her|their)\s+)?"
    r"([^\W_][\w'-]*(?:\s+[^\W_][\w'-]*)?)",
    re.I,
)


_KEY_WINDOW = 60  # characters either side of a number searched for its key


def _content_words(words: Iterable[str]) -> Iterator[str]:
    for word in words:
        low = _strip_possessive(word).lower()
        if low in _STOPWORDS or low in _MODIFIERS or not any(c.isalpha() for c in low):
            return
        yield low


def _key_before(before: str) -> str | None:
    """ "the context window is [about] N" -> "context window"."""
    head = _HEDGES.sub("", before)
    link = _LINK.search(head)
    tail = _TAIL_WORDS.search(head[: link.start()]) if link else None
    if tail is None:
        return None
    words = list(_content_words(reversed(tail.group(1).split())))[:3]
    return " ".join(reversed(words)) or None


def _key_label(before: str) -> str | None:
    """ "port 7687", "PR 42", "Python 3" -> the label word."""
    m = _LABEL_BEFORE.search(before)
    if m is None:
        return None
    word = m.group(1)
    acronym = word.isupper() and len(word) >= 2
    return word.lower() if word.lower() in _LABELS or acronym else None


def _key_after(after: str) -> str | None:
    """ "N kg of flour" -> "flour", "N token context window" -> "context window"."""
    m = _AFTER_WORDS.match(after)
    if m is None:
        return None
    return " ".join(_content_words(m.group(1).split())) or None


def _number_value(m: re.Match[str]) -> float:
    value = float(m["num"].replace(",", "") + (f".{m['frac']}" if m["frac"] else ""))
    mult = (m["mult"] or "").strip().lower()
    return value * _MULTIPLIERS.get(mult[:1] if mult in ("k", "m", "b") else mult, 1.0)


def _numbers_in(sentence: str) -> Iterator[NumberMention]:
    busy = DisjointSpans(_time_spans(sentence))
    for m in _NUMBER.finditer(sentence):
        nxt = sentence[m.end() : m.end() + 2]
        if nxt[:1].isalnum() or re.match(r"[-/:.]\d", nxt):
            continue
        unit = _CURRENCY.get(m["cur"] or "") or _UNITS.get((m["unit"] or "").lower())
        if unit is None and busy.overlaps(m.start(), m.end()):
            continue
        before = sentence[max(0, m.start() - _KEY_WINDOW) : m.start()]
        after = sentence[m.end() : m.end() + _KEY_WINDOW]
        key = _key_before(before) or _key_label(before) or _key_after(after)
        key = key or _UNIT_KEYS.get(unit or "", unit or "number")
        yield NumberMention(key=key, value=_number_value(m), unit=unit, text=sentence)


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
    sentences = split_sentences(_normalise(redact(content)))[:MAX_SENTENCES_READ]
    facts = [s for s in sentences if not _is_filler(s)]
    return _in_progress(facts)


def _first(items: Iterable[_M]) -> Iterator[_M]:
    return islice(items, MAX_MATCHES_PER_MESSAGE)


def extract(content: str, role: str = "user") -> Extraction:
    """Extract memory candidates from one message, deterministically and without an LLM.

    ``content`` is redacted (:func:`sleepwake.redact.redact`) before anything else, so no
    candidate contains a secret. ``role`` is one of :data:`ROLES`; user-only signals
    (corrections, open questions) are only taken from ``"user"`` messages.

    Bounded work on any text: the first :data:`MAX_SENTENCES_READ` sentences are read, a
    sentence over :data:`MAX_SENTENCE_CHARS` in windows, and numbers and dependencies stop at
    :data:`MAX_MATCHES_PER_MESSAGE`.

    Raises :class:`graph.errors.ValidationFailed` for an unknown role. Never raises on content.
    """
    if role not in ROLES:
        raise ValidationFailed(f"unknown message role {role!r}; expected one of {sorted(ROLES)}")
    text = _normalise(redact(content))
    sentences = split_sentences(text)[:MAX_SENTENCES_READ]
    facts = [s for s in sentences if not _is_filler(s)]
    decisions = (d for d in map(_decision, facts) if d is not None)
    return Extraction(
        entities=noun_phrases(text),
        decisions=_unique_models(decisions),
        constraints=list(dict.fromkeys(s for s in facts if _is_constraint(s))),
        open_loops=list(dict.fromkeys(s for s in facts if _is_open_loop(s, role))),
        numbers=_unique_models(_first(n for s in facts for n in _numbers_in(s))),
        time_expressions=time_expressions(text),
        memory_references=_memory_references(facts),
        dependencies=_unique_models(_first(d for s in facts for d in _dependencies(s))),
        is_correction=role == "user" and any(_is_correction(s) for s in facts),
        in_progress=_in_progress(facts),
        sentences=facts,
    )
