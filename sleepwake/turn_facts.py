"""Topic formation, job 3: the fact each turn contributes. Pure.

Each turn yields at most one fact (its best one or two sentences: first-person statements,
decisions, plans, numbers, dates; never questions), with relative dates resolved against the
turn's time. Knobs: ``FormationConfig`` (sleepwake/config.py), "turn facts".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph.models import Fact, Message
from sleepwake.candidates import fact_text, happened_at
from sleepwake.config import DEFAULT, FormationConfig
from sleepwake.extract import Extraction
from sleepwake.policy import ANSWER_ROLES
from text.english import STOPWORDS, is_filler, time_spans

FORMATION = DEFAULT.formation
SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've|yours)\b", re.I)
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|me|we|we're|we've|our|us)\b", re.I)
_FIRST_SINGULAR = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|me)\b")
_NUMBER = re.compile(r"\d")
# "Wow, Caroline, ..." / "Caroline, ...": the listener addressed by name (after an interjection)
_VOCATIVE = re.compile(r"^\W*(?:[A-Za-z]+,\s*)?[A-Z][a-z]+\s*[,!]")
_DECISION_WORDS = re.compile(
    r"\b(?:decided|chose|choose|plan|planning|going to|will|want|prefer|love|hate|never|always|"
    r"started|finished|joined|signed up|bought|moved|adopt\w*|got|made)\b",
    re.I,
)


def has_content(sentence: str) -> bool:
    """Whether a sentence names anything: a word of three letters or more that is not a
    stopword, a filler ("ok", "sounds") or part of a time phrase. "ok, that's all for today"
    names nothing; "Good idea to do that early." does."""
    if is_filler(sentence):
        return False
    masked = sentence
    for start, end in sorted(time_spans(sentence), reverse=True):
        masked = masked[:start] + " " + masked[end:]
    words = re.findall(r"[a-z]{3,}", masked.lower().replace("'s", ""))
    return any(w not in STOPWORDS and not is_filler(w) for w in words)


def is_exclamation_at_listener(sentence: str) -> bool:
    """ "Wow, Caroline, that looks amazing!", "Your group sounds awesome!": an exclamation to
    the listener (by name or as "you") saying nothing in the first person. It is applause for
    the other person's news, not news: on LoCoMo such sentences were ~7% of what a context
    showed, and they name nothing a note-taker would keep."""
    body = sentence.strip()
    if not body.endswith("!") or FIRST_PERSON.search(body):
        return False
    return bool(SECOND_PERSON.search(body) or _VOCATIVE.match(body))


def sentence_weight(sentence: str, cfg: FormationConfig = FORMATION) -> float:
    """How much a sentence is worth keeping; 0 for questions, fragments, fillers and
    exclamations at the listener."""
    words = sentence.split()
    if (
        sentence.rstrip().endswith("?")
        or len(words) < cfg.min_sentence_words
        or not has_content(sentence)
    ):
        return 0.0
    if is_exclamation_at_listener(sentence):
        return 0.0
    weight = min(len(words), cfg.full_sentence_words) / cfg.full_sentence_words
    weight += cfg.first_person_weight if FIRST_PERSON.search(sentence) else 0.0
    weight += cfg.decision_weight if _DECISION_WORDS.search(sentence) else 0.0
    dated = _NUMBER.search(sentence) or time_spans(sentence)
    weight += cfg.number_weight if dated else 0.0
    return weight


def select_sentences(
    sentences: Sequence[str], structural: Sequence[str] = (), cfg: FormationConfig = FORMATION
) -> list[str]:
    """The one or two sentences of a turn worth a fact, in their order (none for a turn of
    questions and fillers). Sentences carrying a rule or a decision come first. A second
    sentence joins the best one only when both together are short (``cfg.pair_chars``): a fact is
    one statement, and a context shows a found topic's facts one after another, so two long
    sentences per turn (LoCoMo's facts averaged 116 characters) filled a 1,000-token context
    with the first topic's facts (topic-only recall 0.558 -> 0.587 on conv-26 with short pairs)."""
    weights = {
        s: sentence_weight(s, cfg) + (cfg.structural_weight if s in structural else 0.0)
        for s in sentences
    }
    best = sorted((s for s in sentences if weights[s] > 0), key=lambda s: -weights[s])
    chosen = set(best[:1])
    for extra in best[1 : cfg.max_fact_sentences]:
        if sum(len(s) for s in chosen) + len(extra) + 1 <= cfg.pair_chars:
            chosen.add(extra)
    return [s for s in sentences if s in chosen]


def not_of_itself(sentences: Sequence[str]) -> list[str]:
    """An answer's sentences without those in which the assistant speaks of itself ("As an AI
    language model, I don't have brand or product preferences.", "I'm happy to help you with
    that!"): the first person weighs most in ``sentence_weight`` because a person's "I" is
    their news, but an assistant's "I" is about the assistant, not the subject. All of them
    when every sentence is so."""
    kept = [s for s in sentences if not _FIRST_SINGULAR.search(s)]
    return kept or list(sentences)


def turn_fact(
    message: Message, extraction: Extraction, tz: str, cfg: FormationConfig = FORMATION
) -> Fact | None:
    """The single fact a turn contributes; a relative date in it is resolved into
    ``valid_from`` (kept beside the verbatim text)."""
    structural = [*extraction.constraints, *(d.text for d in extraction.decisions)]
    sentences = extraction.sentences
    if message.role in ANSWER_ROLES:
        sentences = not_of_itself(sentences)
    chosen = select_sentences(sentences, structural, cfg)
    if not chosen:
        return None
    body = " ".join(chosen)
    if len(body) > cfg.turn_fact_chars:
        body = body[: cfg.turn_fact_chars - 3].rsplit(" ", 1)[0] + "..."
    return Fact(
        text=fact_text(message, body),  # verbatim: every line a context shows is in its turn
        at=message.at,
        valid_from=happened_at(body, message.at, tz),
        source_message_ids=[message.message_id],
    )
