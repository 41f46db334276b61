"""Sleep step 3: turn a slice of messages into topic candidates (spec §4.2). Pure.

A candidate gathers everything the slice said about one entity or noun phrase: the sentences
that mention it (facts, with the message ids they came from), typed numbers, open loops,
decisions (as notable events, keeping the rejected alternative), whether it constrained the
assistant or was the subject of a correction, the entities it was mentioned with, and a time
hint (a resolved time phrase, or the message time for event-like things such as a party).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from graph.models import Fact, Message, NotableEvent, OpenLoop, TypedNumber
from sleepwake.config import DEFAULT, ExtractionConfig
from sleepwake.extract import Extraction, InProgress, extract, noun_phrases, subject_phrases
from sleepwake.policy import ANSWER_ROLES
from sleepwake.redact import redact
from text.english import MODIFIERS, STOPWORDS
from text.gist import semantic_parts, semantic_text
from text.timephrases import resolve
from text.words import DETERMINERS, ELLIPTIC

_DETERMINERS = re.compile(
    r"^(?:the|a|an|my|our|your|his|her|their|its|this|that|these|those|some)\s+", re.I
)
_PUNCT = re.compile(r"[^\w\s'&.+#-]+")
EVENT_NOUNS = frozenset(
    """party parties wedding trip vacation holiday meeting concert dinner lunch birthday game
    match race interview appointment festival conference reunion visit camping hike picnic
    ceremony graduation funeral show gig recital tournament marathon event celebration date
    barbecue bbq class workshop session""".split()
)
MAX_CANDIDATE_FACT_CHARS = 1000
MAX_ONE_LINER = 400
EXTRACTION = DEFAULT.extraction


def normalise_key(phrase: str) -> str:
    """The identity of a phrase: lower case, no leading determiner, tidy spaces."""
    text = _PUNCT.sub(" ", phrase.strip().lower())
    text = _DETERMINERS.sub("", " ".join(text.split()))
    return text.strip(" .'-")


@dataclass
class Candidate:
    key: str
    surfaces: Counter[str] = field(default_factory=Counter)
    user_surfaces: Counter[str] = field(default_factory=Counter)
    facts: list[Fact] = field(default_factory=list)
    numbers: list[TypedNumber] = field(default_factory=list)
    open_loops: list[OpenLoop] = field(default_factory=list)
    events: list[NotableEvent] = field(default_factory=list)
    co_entities: set[str] = field(default_factory=set)
    message_ids: list[str] = field(default_factory=list)
    first_at: datetime | None = None
    last_at: datetime | None = None
    first_seq: int | None = None
    last_seq: int | None = None
    constraint_count: int = 0
    corrected: bool = False
    time_hint: datetime | None = None
    label: str | None = None  # the topic's name when set (episode topics); else the top surface
    # other phrases the topic goes by (an episode's leading phrases): they match existing topics
    alias_keys: list[str] = field(default_factory=list)
    # the time hint is only when it was talked about (not when it happens): it tells a
    # conversation picked up the same day, nothing more (sleepwake/matching.score)
    hint_is_mention: bool = False
    # episode topics: the episodes of the slice it heads (each time the conversation comes
    # back to it); None: a phrase candidate, mentioned once per turn. Utility counts mentions
    # (§8.3): a twenty-turn episode is one visit to its subject, not twenty
    returns: int | None = None
    # the fact that best sums the topic up (episode topics: the one nearest its turns' centroid)
    summary: str | None = None
    # a person of the conversation (sleepwake/people.py): merges only into their own topic
    person: bool = False
    # what a person keeps coming back to (sleepwake/themes.py): merges only into its own topic;
    # "episode" when an episode of the slice is about it, "said" when it was only mentioned
    theme: str = ""
    # the themes this episode is about ("Melanie's pottery"): kept as aliases of its topic
    theme_names: list[str] = field(default_factory=list)
    # the texts in ``facts``, so adding a fact is O(1) instead of a scan of every fact so far
    _fact_texts: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._fact_texts = {f.text for f in self.facts}

    def add_fact(self, fact: Fact) -> None:
        """Append ``fact`` unless a fact with the same text is already there."""
        if fact.text not in self._fact_texts:
            self._fact_texts.add(fact.text)
            self.facts.append(fact)

    def seen_in(self, message: Message) -> None:
        """Count ``message`` as a mention: its id once, and the time and turn span it widens."""
        if message.message_id not in self.message_ids:
            self.message_ids.append(message.message_id)
        self.first_at = min(self.first_at or message.at, message.at)
        self.last_at = max(self.last_at or message.at, message.at)
        if message.seq is not None:
            self.first_seq = (
                message.seq if self.first_seq is None else min(self.first_seq, message.seq)
            )
            self.last_seq = (
                message.seq if self.last_seq is None else max(self.last_seq, message.seq)
            )

    @property
    def name(self) -> str:
        """The label, else the most used surface form, preferring the user's own words."""
        if self.label:
            return self.label
        pool = self.user_surfaces or self.surfaces
        return max(pool.items(), key=lambda kv: (kv[1], kv[0][:1].isupper(), -len(kv[0])))[0]

    @property
    def mentions(self) -> int:
        """Turns of the slice that mention the topic (§8.3: +1 utility each)."""
        if self.returns is not None:
            return max(1, self.returns)
        return len(self.message_ids)

    @property
    def event_like(self) -> bool:
        words = self.key.split()
        return bool(words) and words[-1] in EVENT_NOUNS

    def one_liner(self) -> str:
        """The first informative sentence, preferring one that names the topic: what a new
        topic's one-liner starts as (the chosen summary when there is one)."""
        if self.summary:
            return self.summary[:MAX_ONE_LINER]
        for fact in self.facts:
            if len(fact.text) >= 25 and self.key in fact.text.lower():
                return fact.text[:MAX_ONE_LINER]
        for fact in self.facts:
            if len(fact.text) >= 25:
                return fact.text[:MAX_ONE_LINER]
        return (self.facts[0].text if self.facts else self.name)[:MAX_ONE_LINER]

    def semantic_text(self) -> str:
        """What is embedded; equals ``Topic.semantic_text()`` of the topic it would create."""
        return semantic_text(self.name, self.one_liner(), [f.text for f in self.facts])

    def semantic_parts(self) -> tuple[str, list[Fact]]:
        """The head of ``semantic_text`` and the facts after it (``text.gist.semantic_parts``)."""
        head, texts = semantic_parts(self.name, self.one_liner(), [f.text for f in self.facts])
        by_text = {f.text: f for f in reversed(self.facts)}  # the first fact of a text wins
        return head, [by_text[t] for t in texts]


@dataclass
class SliceCandidates:
    candidates: list[Candidate]
    dependencies: list[tuple[str, str]]
    in_progress: tuple[InProgress, Message] | None
    per_message: dict[str, list[str]]  # message id -> candidate keys, in slice order
    extractions: dict[str, Extraction] = field(default_factory=dict)  # message id -> its own
    # message id -> the unit vector segmentation gave the turn (episode topics; else empty):
    # a long candidate's vector is composed from them (sleepwake.topic_vectors.candidate_vectors)
    turn_vectors: dict[str, Sequence[float]] = field(default_factory=dict)


def fact_text(message: Message, sentence: str) -> str:
    text = sentence if not message.speaker else f"{message.speaker}: {sentence}"
    return text[:MAX_CANDIDATE_FACT_CHARS]


def happened_at(sentence: str, at: datetime, tz: str) -> datetime | None:
    """When a statement about the past became true: "I went there yesterday" said on 8 May 2023
    -> 7 May 2023 (the start of the window its relative time phrase points at). None when the
    sentence has no relative phrase, or the window is not wholly before ``at`` (a plan, "today")
    or is vaguer than a year. Both extraction paths date a fact this way, in ``valid_from``
    beside its verbatim text."""
    try:
        window = resolve(sentence, at, tz)
    except Exception:  # a date is a hint; never let it stop a sleep
        return None
    if window is None or window.kind == "explicit_date" or not (window.start and window.end):
        return None
    if window.end > at or (window.end - window.start).days > 366:
        return None
    return window.start


def build_candidates(
    messages: list[Message],
    tz: str = "UTC",
    extractions: Mapping[str, Extraction] | None = None,
    cfg: ExtractionConfig = EXTRACTION,
) -> SliceCandidates:
    """Group the slice's sentences, numbers, loops and decisions by the entities they mention.
    ``extractions`` (message id -> Extraction, e.g. from the LLM extractor) replaces the
    deterministic extraction of the messages it covers."""
    given = extractions or {}
    by_key: dict[str, Candidate] = {}
    per_message: dict[str, list[str]] = {}
    dependencies: list[tuple[str, str]] = []
    in_progress: tuple[InProgress, Message] | None = None
    previous: Message | None = None
    found: dict[str, Extraction] = {}
    for message in messages:
        extraction = given.get(message.message_id) or extract(
            redact(message.content), message.role, entities=False
        )
        found[message.message_id] = extraction
        if message.message_id in given:  # the LLM's topics and facts, its facts dated here
            entities = extraction.entities
            keys = _absorb_message(by_key, message, extraction, tz, cfg, entities, dated=True)
        else:  # every phrase (sleepwake.episodes makes topics of them, and dates its facts)
            lead = cfg.answer_lead_sentences if message.role in ANSWER_ROLES else None
            keys = _absorb_message(by_key, message, extraction, tz, cfg, lead=lead)
        if not keys and previous is not None and message.at - previous.at <= cfg.continuation_gap:
            keys = per_message.get(previous.message_id, [])
            dated = tz if message.message_id in given else None
            _attach_sentences(by_key, keys, message, extraction.sentences, dated)
            _attach_structure(by_key, keys, message, extraction)
        per_message[message.message_id] = keys
        dependencies.extend(
            (normalise_key(d.dependent), normalise_key(d.dependency))
            for d in extraction.dependencies
        )
        if extraction.in_progress is not None and message.role == "user":
            in_progress = (extraction.in_progress, message)
        previous = message
    ordered = sorted(by_key.values(), key=lambda c: (c.first_seq or 0, c.key))
    return SliceCandidates(ordered, dependencies, in_progress, per_message, found)


_RULE_WORDS = frozenset(
    "always never don't dont do not please we i you must should prefer like use using avoid "
    "keep make sure want would rather let's lets to be a an the our my your it that with "
    "for of in on at and or but than instead around away back along ahead forward together "
    "anytime".split()
)
# after these the next word is the rule's verb ("Don't quit", "never give up"), not its subject
_VERB_LEADS = frozenset("don't dont never always must should to will please not".split())
# a lone word after one of these is the object the rule is about ("use plastic", "avoid
# sugar"); after a preposition it is not ("stands up for justice", "allergic to fur")
_NOUN_LEADS = DETERMINERS | frozenset("use using avoid prefer like".split())


def constraint_phrase(sentence: str) -> str:
    """What a rule with no named entity is about: the longest run of adjacent subject words in
    its first clause ("Never use plastic plates" -> "plastic plates"), else "". A subject word
    is no function word, common verb, pronoun, modifier or adverb; the word after "don't",
    "never", "to"... is the rule's verb; a run ends on a noun, not a participle ("Keep the wiki
    updated" -> "wiki"); a lone word is no gerund and must be the verb's object or follow a
    determiner. Between friends most rules are encouragement ("Keep me updated!", "Keep pushing
    on.", "Don't give up!", "I never want to go through this again."): before, the clause's last
    three words other than rule words named episodes "me updated", "pushing", "through this
    again"."""
    clause = re.split(r"[,;:.!?]", sentence, maxsplit=1)[0]
    runs: list[tuple[str, list[str]]] = []  # (the word before, the run)
    before, prev = "", ""
    run: list[str] = []
    for word in re.findall(r"[A-Za-z][\w'-]*", clause):
        low = word.lower()
        if _subject_word(low) and (run or prev not in _VERB_LEADS):
            before = before if run else prev
            run.append(low)
        elif run:
            runs.append((before, run))
            run = []
        # the verb's object stands where a noun does ("Always format dates as ISO")
        prev = "use" if _subject_word(low) and prev in _VERB_LEADS else low
    if run:
        runs.append((before, run))
    kept = [r for r in (_noun_run(b, r) for b, r in runs) if r]
    return " ".join(max(kept, key=len)[-3:]) if kept else ""


def _subject_word(low: str) -> bool:
    plain = low in _RULE_WORDS or low in STOPWORDS or low in MODIFIERS or low in ELLIPTIC
    plain = plain or "'" in low
    return not plain and not low.endswith("ly")


def _noun_run(before: str, run: list[str]) -> list[str]:
    """``run`` without its trailing participles, or [] when what is left is no noun phrase."""
    while run and run[-1].endswith("ed"):
        run = run[:-1]
    if len(run) == 1 and (run[0].endswith("ing") or before not in _NOUN_LEADS):
        return []
    return run


def _usable(key: str) -> bool:
    """A key worth a topic: has letters and is not a bare number or a single letter."""
    return sum(ch.isalpha() for ch in key) >= 2


def _absorb_message(
    by_key: dict[str, Candidate],
    message: Message,
    extraction: Extraction,
    tz: str,
    cfg: ExtractionConfig,
    extra_entities: list[str] | None = None,
    lead: int | None = None,
    dated: bool = False,
) -> list[str]:
    """Add one message to the candidates of the entities its sentences mention.
    ``extra_entities`` (named by the LLM extractor) take the place of the rule-based noun
    phrases: each joins the sentences it shares a word with, or every sentence when it shares
    none; a sentence no entity joins keeps its noun phrases. With ``lead``, only the first
    ``lead`` sentences are read for phrases; the others attach to what those name. ``dated``:
    a relative date in a fact is resolved into its ``valid_from``."""
    seen: dict[str, None] = {}  # the message's candidate keys, in order
    orphan_sentences: list[str] = []
    placed = _place_entities(extra_entities or [], extraction.sentences)
    rules = set(extraction.constraints)
    for n, sentence in enumerate(extraction.sentences):
        if lead is not None and n >= lead:
            orphan_sentences.append(sentence)
            continue
        found = _sentence_phrases(sentence, placed, sentence in rules)
        phrases = _within_cap(found, seen, cfg.max_entities_per_message)
        if not phrases:
            orphan_sentences.append(sentence)
            continue
        hint = _time_hint(sentence, message, tz)
        since = happened_at(sentence, message.at, tz) if dated else None
        for phrase in phrases:
            cand = _candidate(by_key, phrase, message)
            _add_fact(cand, message, sentence, since)
            if hint is not None:
                cand.time_hint = hint
    keys_in_message = list(seen)
    if not keys_in_message:
        return []
    _attach_sentences(by_key, keys_in_message, message, orphan_sentences, tz if dated else None)
    _attach_structure(by_key, keys_in_message, message, extraction)
    named = keys_in_message[: cfg.max_co_entities]
    for key in keys_in_message:
        by_key[key].co_entities.update(k for k in named if k != key)
    return keys_in_message


def _within_cap(phrases: list[str], seen: dict[str, None], cap: int) -> list[str]:
    """The phrases that are (or, while there is room, become) one of the message's first
    ``cap`` candidates; ``seen`` is updated."""
    kept = []
    for phrase in phrases:
        key = normalise_key(phrase)
        if key in seen or len(seen) < cap:
            seen.setdefault(key)
            kept.append(phrase)
    return kept


def _sentence_phrases(sentence: str, placed: dict[str, list[str]], rule: bool) -> list[str]:
    """What a sentence is about: the LLM's entities placed in it, else its noun phrases, else
    (for a rule that names nothing) what the rule constrains."""
    named = [e for e in placed.get(sentence, []) if _usable(normalise_key(e))]
    found = dict.fromkeys([*noun_phrases(sentence), *subject_phrases(sentence)])
    phrases = named or [p for p in found if _usable(normalise_key(p))]
    if not phrases and rule:
        phrases = [p for p in [constraint_phrase(sentence)] if p]
    return phrases


def _place_entities(entities: list[str], sentences: list[str]) -> dict[str, list[str]]:
    """sentence -> the entities that belong to it (by shared words, else to all)."""
    placed: dict[str, list[str]] = {}
    for entity in entities:
        words = {w.casefold() for w in re.findall(r"\w+", entity) if len(w) > 2}
        hits = [s for s in sentences if words & {w.casefold() for w in re.findall(r"\w+", s)}]
        for sentence in hits or sentences:
            placed.setdefault(sentence, []).append(entity)
    return placed


def _candidate(by_key: dict[str, Candidate], phrase: str, message: Message) -> Candidate:
    key = normalise_key(phrase)
    cand = by_key.setdefault(key, Candidate(key=key))
    cand.surfaces[phrase] += 1
    if message.role == "user":
        cand.user_surfaces[phrase] += 1
    cand.seen_in(message)
    if cand.event_like and cand.time_hint is None:
        cand.time_hint = message.at  # an event is anchored at the time it was talked about
    return cand


def _add_fact(
    cand: Candidate, message: Message, sentence: str, since: datetime | None = None
) -> None:
    text = fact_text(message, sentence)
    cand.add_fact(
        Fact(text=text, at=message.at, valid_from=since, source_message_ids=[message.message_id])
    )


def _attach_sentences(
    by_key: dict[str, Candidate],
    keys: list[str],
    message: Message,
    sentences: list[str],
    tz: str | None = None,
) -> None:
    """Sentences that name no entity belong to what the message (or its predecessor) is about
    (with ``tz``, dated as :func:`happened_at` says)."""
    for sentence in sentences:
        since = happened_at(sentence, message.at, tz) if tz else None
        for key in keys[:3]:
            _add_fact(by_key[key], message, sentence, since)


def _attach_structure(
    by_key: dict[str, Candidate], keys: list[str], message: Message, extraction: Extraction
) -> None:
    """Numbers, open loops and decisions go to the entities of the sentence they came from."""
    source = {"user": "user", "assistant": "assistant", "tool": "tool"}.get(message.role, "doc")
    ids = [message.message_id]
    owners = _Owners(by_key, keys, message)
    for n in extraction.numbers:
        for key in owners.of(n.text):
            by_key[key].numbers.append(
                TypedNumber(
                    key=n.key,
                    value=n.value,
                    unit=n.unit,
                    at=message.at,
                    source=source,
                    confidence=0.8 if source == "user" else 0.6,
                    source_message_ids=ids,
                )
            )
    for loop in extraction.open_loops:
        for key in owners.of(loop):
            by_key[key].open_loops.append(
                OpenLoop(text=loop[:1000], at=message.at, source_message_ids=ids)
            )
    for d in extraction.decisions:
        rejected = f" over {', '.join(d.rejected)}" if d.rejected else ""
        reason = f" because {d.reason}" if d.reason else ""
        event = f"Decided: {d.chosen}{rejected}{reason}"[:1000]
        for key in owners.of(d.text):
            by_key[key].events.append(
                NotableEvent(at=message.at, event=event, source_message_ids=ids)
            )
    for rule in extraction.constraints:
        for key in owners.of(rule):
            by_key[key].constraint_count += 1
    for key in keys:
        by_key[key].corrected = by_key[key].corrected or extraction.is_correction


class _Owners:
    """Which of a message's candidates hold a fact from that message, indexed by the fact's
    text, so a message with thousands of sentences and entities is not thousands squared."""

    def __init__(self, by_key: dict[str, Candidate], keys: list[str], message: Message) -> None:
        self.by_key, self.keys, self.message = by_key, keys, message
        self.exact: dict[str, list[str]] = {}
        for key in keys:
            for fact in reversed(by_key[key].facts):  # this message's facts are the newest
                if message.message_id not in fact.source_message_ids:
                    break
                self.exact.setdefault(fact.text, []).append(key)

    def of(self, text: str) -> list[str]:
        """The candidates with the fact of sentence ``text``; for a text that is no sentence of
        the message (the LLM extractor quotes part of one), those whose fact contains it."""
        exact = self.exact.get(fact_text(self.message, text.strip()))
        if exact:
            return exact
        needle = text.strip().lower()[:80]
        hits = [
            key
            for key in self.keys
            if any(
                self.message.message_id in f.source_message_ids and needle in f.text.lower()
                for f in self.by_key[key].facts
            )
        ]
        return hits or self.keys[:1]


def _time_hint(sentence: str, message: Message, tz: str) -> datetime | None:
    """The middle of the window a time phrase in the sentence points at, if any."""
    try:
        window = resolve(sentence, message.at, tz)
    except Exception:  # time phrases are a hint; never let them stop a sleep
        return None
    if window is None or window.start is None or window.end is None:
        return None
    return window.start + (window.end - window.start) / 2
