"""Sleep step 3, second half: from phrases to topics, by the conversation's structure. Pure.

The rule-based extraction (``sleepwake.candidates``) finds every noun phrase of the slice; most
are words, not topics. This module forms the topics a note-taker would keep:

1. **Episodes.** The slice is cut where neighbouring turns stop being about the same thing: a
   TextTiling-style gap score (cosine between the mean vectors of the few turns either side,
   one MiniLM vector per turn, long turns by their lead) is low, or the conversation paused
   (over 30 minutes). Episodes have a minimum and a maximum length. An answer (an assistant's
   or a tool's turn) is never cut from the turn it answers, and is embedded by its opening.
2. **Heads.** Each episode's phrases are ranked KeyBERT-style: cosine of the phrase to the
   episode's centroid, plus how many of its turns repeat it, multi-word and event phrases, minus
   phrases spread over most episodes (generic) and single capitalised words (people and places
   become aliases of the topic, not topics), and phrases only an answer said. The best phrase
   names the topic; phrases that carry a rule or a dependency the user stated head topics of
   their own (they are worth remembering; an answer's "make sure to..." is advice, not a rule).
3. **Facts.** Each turn yields at most one fact (its best one or two sentences: first-person
   statements, decisions, plans, numbers, dates; never questions), filed under the head the turn
   names (else the episode's main head), with relative dates resolved against the turn's time.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from graph.models import Fact, Message
from sleepwake.candidates import (
    Candidate,
    SliceCandidates,
    fact_text,
    happened_at,
    normalise_key,
)
from sleepwake.extract import Extraction
from sleepwake.policy import ANSWER_ROLES
from sleepwake.side_topics import with_assistant
from text.english import STOPWORDS, is_filler, time_spans
from text.gist import central_facts, one_liner_part, speaker_of, unspoken
from text.tokens import stem

Embed = Callable[[list[str]], list[list[float]]]

TURN_LEAD_CHARS = 400  # the lead of a turn whose content words link it to its neighbours
# A turn is embedded by the same lead (cut after a whole word). Turn leads were two fifths of
# what a chat-assistant sleep embedded, and 200 characters made LongMemEval ingest ~7% faster,
# but between people a long turn often says what it is about after 200 characters: on LoCoMo
# it cost topic-only recall (conv-30 0.674 -> 0.580) and coverage (conv-43 0.861 -> 0.846).
EMBEDDED_LEAD_CHARS = TURN_LEAD_CHARS
# ... and an answer by its opening, which says what it answers (its question, which it never
# leaves: sleepwake.policy.ANSWER_ROLES); the rest of a long answer is steps and lists, and
# long answers were two thirds of what a chat-assistant sleep embedded
ANSWER_LEAD_CHARS = 160
LONG_ANSWER_CHARS = 500  # ... and a longer answer by its question's vector (``turn_vectors``)
WINDOW = 2  # turns either side of a gap in the gap score
MIN_TURNS = 4
MAX_TURNS = 14
SAME_SUBJECT = 0.45  # a gap scoring above this never cuts (noise among near-equal turns)
GAP_SIGMA = 0.5  # a gap this many standard deviations under the mean cuts an episode
PAUSE_SECONDS = 30 * 60
LINK_BONUS = 0.15  # per content word two neighbouring turns share (at most two count)
PHRASES_PER_EPISODE = 12  # phrases embedded per episode (the most repeated, longest first)
MAX_HEADS = 3
MAX_TOPIC_FACTS = 12  # a head holding this many facts in a slice heads no further episode
ASIDE_FACTS = 2  # an episode of a long slice with this few facts is an aside of its neighbour
LONG_SLICE = 16  # ... a slice of at least this many turns
MIN_HEAD_FACTS = 2  # a further head of an episode named in fewer turns worth a fact is dropped
SECOND_HEAD_TURNS = 6  # an episode this long may have a second head
SECOND_HEAD_GAP = 0.15  # ... scoring at most this much under the main one
DISTINCT_HEADS = 0.5  # ... and less similar to it than this
ALIASES = 4  # the episode's next-best phrases kept as aliases of its main topic
MAX_FACT_SENTENCES = 2
PAIR_CHARS = 120  # ... the second only when both together are this short
MAX_FACT_CHARS = 400
NAMES_TOPIC = 0.1  # a summary fact that names its topic is worth this much cosine
ECHO_PENALTY = 0.2  # an assistant's turn as the summary costs this much cosine (it restates)
ANSWER_ONLY = 0.2  # a phrase only an assistant's turn said names a topic this much worse
DIRECTIVE_ONLY = 0.3  # chat: a user's phrase no answer of the episode repeats, this much worse
DECISION_BONUS = 0.15  # a turn with a decision or a number sums a topic up better than a remark
CENTRAL_BONUS = 0.25  # the fact sharing most words with the topic's others (text.gist), this much
REACTION_PENALTY = 0.15  # "Love how you got the horse's grace!": about the listener's thing
SHOWN_ONLY = 0.3  # a phrase said only inside an attachment's [description] costs this much
ONE_LINER_PEOPLE = 2  # a one-liner gives the news of at most this many people
PARTS_PER_PERSON = 3  # ... at most this many pieces of news each
MAX_ONE_LINER_CHARS = 400  # ... in at most this many characters (candidates.MAX_ONE_LINER)
NEWS_WEIGHT = 0.2  # choosing a person's part: per point of sentence_weight, against centrality
_BRACKETS = re.compile(r"\[[^\]]*\]")
_CONTRACTION = re.compile(r"\w'(?:ve|re|ll|d|m|t)\b|n't\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've|yours)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|me|we|we're|we've|our|us)\b", re.I)
_FIRST_SINGULAR = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|me)\b")
_NUMBER = re.compile(r"\d")
# "That must feel surreal.", "Having pets must be a wonderful experience.": "must" guessing at
# how something is for the other person, not a rule
_GUESS = re.compile(r"\bmust(?:'ve|\s+have)?\s+(?:be|been|feel|look|sound|seem)\b", re.I)
# "Wow, Caroline, ..." / "Caroline, ...": the listener addressed by name (after an interjection)
_VOCATIVE = re.compile(r"^\W*(?:[A-Za-z]+,\s*)?[A-Z][a-z]+\s*[,!]")
_DECISION_WORDS = re.compile(
    r"\b(?:decided|chose|choose|plan|planning|going to|will|want|prefer|love|hate|never|always|"
    r"started|finished|joined|signed up|bought|moved|adopt\w*|got|made)\b",
    re.I,
)


# --- 1. episodes -----------------------------------------------------------------------------


def gap_scores(vectors: np.ndarray) -> np.ndarray:
    """Cosine between the mean of the ``WINDOW`` turns before each gap and of those after it;
    entry i is the gap between turn i and turn i + 1."""
    n = len(vectors)
    scores = np.ones(max(n - 1, 0))
    for i in range(n - 1):
        left = vectors[max(0, i + 1 - WINDOW) : i + 1].mean(axis=0)
        right = vectors[i + 1 : i + 1 + WINDOW].mean(axis=0)
        denom = float(np.linalg.norm(left) * np.linalg.norm(right)) or 1.0
        scores[i] = float(left @ right) / denom
    return scores


def segment(
    vectors: np.ndarray,
    pauses: Sequence[bool] = (),
    min_turns: int = MIN_TURNS,
    max_turns: int = MAX_TURNS,
    links: Sequence[int] = (),
    joined: Sequence[bool] = (),
) -> list[tuple[int, int]]:
    """Episodes as [start, end) turn ranges. ``pauses[i]`` marks a pause after turn i (always a
    cut); ``links[i]`` counts the phrases turns i and i + 1 share (a lexical chain across the
    gap: TextTiling's original signal), which raises the gap's score; ``joined[i]`` says turn
    i + 1 answers turn i (never cut there unless paused). Deeper topic shifts are cut first,
    keeping every episode at least ``min_turns`` long; then episodes over ``max_turns`` are cut
    at their lowest gap."""
    n = len(vectors)
    if n == 0:
        return []
    scores = gap_scores(vectors)
    for i, shared in enumerate(links[: len(scores)]):
        scores[i] += LINK_BONUS * min(shared, 2)
    # how deep a gap must be is judged among all the slice's gaps, an answer's included (left
    # out, a chat's few other gaps were judged against each other alone: its lowest one cut,
    # nothing else, and "I'm also reading about aqueducts" went under the billing migration)
    limit = min(float(scores.mean() - GAP_SIGMA * scores.std()), SAME_SUBJECT) if n > 1 else 0.0
    for i, answer in enumerate(joined[: len(scores)]):
        if answer:
            scores[i] = np.inf  # an answer is about its question: no episode starts with one
    cuts = {i + 1 for i, p in enumerate(pauses[: n - 1]) if p}
    for i in sorted(range(len(scores)), key=lambda i: (scores[i], i)):
        if scores[i] < limit and _room(cuts, i + 1, n, min_turns):
            cuts.add(i + 1)
    bounds = [0, *sorted(cuts), n]
    out: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(bounds):
        out.extend(_split_long(scores, start, end, min_turns, max_turns))
    return out


def _room(cuts: set[int], at: int, n: int, min_turns: int) -> bool:
    """Whether a cut at ``at`` leaves ``min_turns`` on each side before the next cut."""
    left = max((c for c in cuts if c < at), default=0)
    right = min((c for c in cuts if c > at), default=n)
    return at - left >= min_turns and right - at >= min_turns


def _split_long(
    scores: np.ndarray, start: int, end: int, min_turns: int, max_turns: int
) -> list[tuple[int, int]]:
    if end - start <= max_turns:
        return [(start, end)]
    inner = range(start + min_turns, end - min_turns + 1)
    at = min(inner, key=lambda c: (scores[c - 1], c)) if inner else start + max_turns
    return [
        *_split_long(scores, start, at, min_turns, max_turns),
        *_split_long(scores, at, end, min_turns, max_turns),
    ]


# --- 2. heads ---------------------------------------------------------------------------------


@dataclass
class PhraseStats:
    """What ranking knows of one phrase within one episode."""

    key: str
    turns: int  # turns of the episode that mention it
    words: int
    named: bool  # a single capitalised word: a person or a place
    event: bool
    spread: float  # share of the slice's episodes that mention it
    slice_turns: int  # turns of the whole slice that mention it
    structural: bool  # carries a rule, a decision or a dependency
    shown_only: bool = False  # only ever inside a [description] of what was shared
    user_said: bool = True  # the user said it (not only an assistant's answer)
    user_turns: int = 0  # turns of the episode by the user (not an answer) that mention it
    answered: float = 0.0  # chat with an assistant: what the answers make of it (``answered``)


def eligible(cand: Candidate) -> bool:
    """Phrases that can name a topic: no contraction, no time phrase, some letters."""
    key = cand.key
    if len(key) < 3 or _CONTRACTION.search(cand.name) or not re.search(r"[a-z]{3}", key):
        return False
    return not time_spans(key)


def phrase_score(stats: PhraseStats, centrality: float) -> float:
    """How well a phrase names its episode: central, repeated, specific, not generic."""
    score = centrality
    score += 0.08 * min(stats.turns - 1, 3)
    score += 0.12 * min(stats.words - 1, 2)
    score += 0.25 if stats.event else 0.0
    score -= 0.4 if stats.named else 0.0
    score -= SHOWN_ONLY if stats.shown_only else 0.0
    # an answer's words name what the user asked about less well than the user's own
    score -= ANSWER_ONLY if not stats.user_said else 0.0
    score += stats.answered  # 0 outside a chat with an assistant
    if stats.words == 1:  # a single word all over the slice is generic ("time", "life")
        score -= 0.3 * max(0.0, stats.spread - 0.34)
    else:  # a specific phrase the whole slice keeps coming back to is its subject
        score += 0.05 * min(stats.slice_turns - 1, 4)
    return score


def is_named(cand: Candidate) -> bool:
    """One capitalised word in every surface form: a name (person, place, brand)."""
    return all(len(s.split()) == 1 and s[:1].isupper() for s in cand.surfaces)


# --- 3. facts ---------------------------------------------------------------------------------


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
    if not body.endswith("!") or _FIRST_PERSON.search(body):
        return False
    return bool(_SECOND_PERSON.search(body) or _VOCATIVE.match(body))


def sentence_weight(sentence: str) -> float:
    """How much a sentence is worth keeping; 0 for questions, fragments, fillers and
    exclamations at the listener."""
    words = sentence.split()
    if sentence.rstrip().endswith("?") or len(words) < 4 or not has_content(sentence):
        return 0.0
    if is_exclamation_at_listener(sentence):
        return 0.0
    weight = min(len(words), 25) / 25
    weight += 1.0 if _FIRST_PERSON.search(sentence) else 0.0
    weight += 0.7 if _DECISION_WORDS.search(sentence) else 0.0
    weight += 0.5 if _NUMBER.search(sentence) or time_spans(sentence) else 0.0
    return weight


def select_sentences(sentences: Sequence[str], structural: Sequence[str] = ()) -> list[str]:
    """The one or two sentences of a turn worth a fact, in their order (none for a turn of
    questions and fillers). Sentences carrying a rule or a decision come first. A second
    sentence joins the best one only when both together are short (``PAIR_CHARS``): a fact is
    one statement, and a context shows a found topic's facts one after another, so two long
    sentences per turn (LoCoMo's facts averaged 116 characters) filled a 1,000-token context
    with the first topic's facts (topic-only recall 0.558 -> 0.587 on conv-26 with short pairs)."""
    weights = {s: sentence_weight(s) + (2.0 if s in structural else 0.0) for s in sentences}
    best = sorted((s for s in sentences if weights[s] > 0), key=lambda s: -weights[s])
    chosen = set(best[:1])
    for extra in best[1:MAX_FACT_SENTENCES]:
        if sum(len(s) for s in chosen) + len(extra) + 1 <= PAIR_CHARS:
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


def turn_fact(message: Message, extraction: Extraction, tz: str) -> Fact | None:
    """The single fact a turn contributes; a relative date in it is resolved into
    ``valid_from`` (kept beside the verbatim text)."""
    structural = [*extraction.constraints, *(d.text for d in extraction.decisions)]
    sentences = extraction.sentences
    if message.role in ANSWER_ROLES:
        sentences = not_of_itself(sentences)
    chosen = select_sentences(sentences, structural)
    if not chosen:
        return None
    body = " ".join(chosen)
    if len(body) > MAX_FACT_CHARS:
        body = body[: MAX_FACT_CHARS - 3].rsplit(" ", 1)[0] + "..."
    return Fact(
        text=fact_text(message, body),  # verbatim: every line a context shows is in its turn
        at=message.at,
        valid_from=happened_at(body, message.at, tz),
        source_message_ids=[message.message_id],
    )


# --- putting it together ----------------------------------------------------------------------


@dataclass
class _Episode:
    messages: list[Message]
    vectors: np.ndarray
    phrases: list[PhraseStats] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    head_vectors: dict[str, np.ndarray] = field(default_factory=dict)


def turn_text(message: Message) -> str:
    """What stands for a turn in segmentation: its lead (an answer's opening), speaker
    included."""
    cap = ANSWER_LEAD_CHARS if message.role in ANSWER_ROLES else EMBEDDED_LEAD_CHARS
    lead = _lead(" ".join(message.content.split()), cap)
    return f"{message.speaker}: {lead}" if message.speaker else lead


def _lead(text: str, cap: int) -> str:
    """The first ``cap`` characters of ``text``, cut after a whole word when a cut falls inside
    one (a word's severed half costs word pieces and means nothing)."""
    if len(text) <= cap:
        return text
    cut = text[: cap + 1]
    whole = cut.rsplit(" ", 1)[0] if " " in cut else ""
    return whole if len(whole) > cap // 2 else text[:cap]


def content_stems(text: str) -> set[str]:
    """The stems of a text's content words (four letters or more, no stopwords)."""
    return {stem(w) for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in STOPWORDS}


def _pauses(messages: Sequence[Message]) -> list[bool]:
    return [(b.at - a.at).total_seconds() > PAUSE_SECONDS for a, b in itertools.pairwise(messages)]


def _unit(rows: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def form_topics(
    piece: Sequence[Message],
    cands: SliceCandidates,
    extractions: dict[str, Extraction],
    embed: Embed,
    tz: str = "UTC",
) -> SliceCandidates:
    """Replace the slice's phrase candidates by episode topics (see the module docstring).
    ``extractions`` holds each message's extraction; ``embed`` is one batched embedding call
    (made twice: the turns, then the phrases worth ranking)."""
    if not piece or not cands.candidates:
        return cands
    vectors = turn_vectors(piece, embed)
    # a short slice (a few turns of a quick exchange) changes subject within two or three turns
    words = [content_stems(m.content[:TURN_LEAD_CHARS]) for m in piece]
    links = [len(a & b) for a, b in itertools.pairwise(words)]
    joined = [m.role in ANSWER_ROLES for m in piece[1:]]
    spans = segment(
        vectors, _pauses(piece), min_turns=_min_turns(len(piece)), links=links, joined=joined
    )
    episodes = [_Episode(list(piece[s:e]), vectors[s:e]) for s, e in spans]
    by_key = {c.key: c for c in cands.candidates}
    said = {m.message_id: _BRACKETS.sub(" ", m.content).lower() for m in piece}
    users = {m.message_id for m in piece if m.role == "user"}
    people = {m.speaker for m in piece if m.role == "user" and m.speaker}
    structural = _structural_keys(cands, extractions, users, among_people=len(people) > 1)
    _gather_phrases(episodes, cands, structural, said, users)
    chat = with_assistant(piece)
    if chat:
        _weigh_by_answers(episodes, by_key)
    _choose_heads(episodes, by_key, embed)
    if chat:
        _continue_requests(episodes, _pauses(piece))
    # a chat moves in exchanges: one passing exchange is an aside however short the slice
    return _assemble(episodes, by_key, extractions, cands, tz, asides=chat or None)


def turn_vectors(piece: Sequence[Message], embed: Embed) -> np.ndarray:
    """One unit vector per turn, by its lead (``turn_text``); a long answer (over
    ``LONG_ANSWER_CHARS``) that follows the turn it answers takes that turn's vector instead of
    one of its own. An answer never starts an episode (``segment``) and is about its question;
    a long chat-assistant answer's opening ("Great question! Here are some ideas") says less of
    the subject than the question, and embedding it was two fifths of what a sleep of
    chat-assistant turns embedded for segmentation. A short answer is embedded whole: it may
    carry the subject ("How many guests are you expecting for the party?") and costs little."""
    own = [i for i, m in enumerate(piece) if not _answers_previous(piece, i)]
    embedded = _unit(embed([turn_text(piece[i]) for i in own]))
    rows = np.cumsum([not _answers_previous(piece, i) for i in range(len(piece))]) - 1
    vectors: np.ndarray = embedded[rows]
    return vectors


def _answers_previous(piece: Sequence[Message], i: int) -> bool:
    """Turn ``i`` is a long answer (``ANSWER_ROLES``) to the turn before it (not an answer)."""
    if i == 0 or len(piece[i].content) <= LONG_ANSWER_CHARS:
        return False
    return piece[i].role in ANSWER_ROLES and piece[i - 1].role not in ANSWER_ROLES


def _min_turns(n: int) -> int:
    """Episodes of a long slice last a few turns; a slice of a handful of turns may change
    subject every turn or two (a quick update, then something new)."""
    return 1 if n < 6 else max(2, min(MIN_TURNS, n // 4))


def _structural_keys(
    cands: SliceCandidates,
    extractions: dict[str, Extraction],
    users: set[str],
    among_people: bool = False,
) -> set[str]:
    """Phrases that head a topic of their own: the parties of a dependency and, for each rule,
    its longest phrase (what the rule is about), as the user (``users``: the user's message
    ids) stated them. An assistant's answer is full of imperatives ("Make sure to book ahead",
    "Avoid heavy meals"): advice, not rules anyone set, so they head nothing. Nor, in a talk
    among people (``among_people``: two or more named speakers), does a rule one says to the
    other (``is_said_to_listener``)."""
    said = [e for mid, e in extractions.items() if mid in users]
    keys = {
        normalise_key(p) for e in said for d in e.dependencies for p in (d.dependent, d.dependency)
    }
    known = {c.key for c in cands.candidates}
    parties = {k for k in known if any(k == d or (k and k in d) for d in keys)}
    for extraction in said:
        for rule in extraction.constraints:
            if among_people and is_said_to_listener(rule):
                continue
            inside = [k for k in known if k and re.search(rf"\b{re.escape(k)}\b", rule.lower())]
            if inside:
                parties.add(max(inside, key=lambda k: (len(k.split()), len(k), k)))
    return parties


def is_said_to_listener(rule: str) -> bool:
    """ "Keep on trying and believe in yourself!", "Make sure you watch other videos first",
    "Must feel so liberating!", "That must feel surreal.": a rule-shaped sentence that speaks
    to the listener, or an exclamation or a guess ("must be", "must feel") saying nothing in
    the first person. Between friends it is encouragement or
    advice for the other, not a rule either set; on LoCoMo such sentences made a third of the
    topics citing one message ("trying", "going", "fingers")."""
    if _SECOND_PERSON.search(rule):
        return True
    guess = rule.rstrip().endswith("!") or _GUESS.search(rule)
    return bool(guess) and not _FIRST_PERSON.search(rule)


def _gather_phrases(
    episodes: list[_Episode],
    cands: SliceCandidates,
    structural: set[str],
    said: dict[str, str],
    users: set[str],
) -> None:
    """Each eligible phrase's statistics in every episode that mentions it. ``said``: each
    turn's text without its bracketed descriptions ("[shares a photo: a blue vase]" shows a
    thing; the talk may be about something else); ``users``: the user's message ids (a slice
    with none, an agent's monologue, ranks every phrase alike)."""
    ep_of = {m.message_id: i for i, ep in enumerate(episodes) for m in ep.messages}
    spread_base = len(episodes) if len(episodes) >= 3 else 0
    for cand in cands.candidates:
        if not eligible(cand):
            continue
        turns: dict[int, int] = {}
        by_user: dict[int, int] = {}
        for mid in cand.message_ids:
            if mid in ep_of:
                turns[ep_of[mid]] = turns.get(ep_of[mid], 0) + 1
                if mid in users or not users:
                    by_user[ep_of[mid]] = by_user.get(ep_of[mid], 0) + 1
        spread = len(turns) / spread_base if spread_base else 0.0
        for i, count in turns.items():
            episodes[i].phrases.append(
                PhraseStats(
                    key=cand.key,
                    turns=count,
                    words=len(cand.key.split()),
                    named=is_named(cand),
                    event=cand.event_like,
                    spread=spread,
                    slice_turns=cand.mentions,
                    structural=cand.key in structural,
                    shown_only=not _said_outside_brackets(cand, said),
                    user_said=bool(cand.user_surfaces) or not users,
                    user_turns=by_user.get(i, 0),
                )
            )


def answered(stats: PhraseStats, answers: int, repeated: int) -> float:
    """In a chat with an assistant, how much what the episode's ``answers`` make of a phrase
    the user said moves it as a name: when ``repeated`` of them say it again, it is the
    subject the request and the answer share ("latent conditions" of "Write me the 'V.
    Variation claims for latent conditions' part of the article using 210 words."); when none
    does, it is the form the user asked for, which the answer carries out without naming it
    ("Please write in English language.", "please give it a nice heading", "article using"),
    and names a topic ``DIRECTIVE_ONLY`` worse. A phrase only an answer said has
    ``ANSWER_ONLY`` already."""
    if not answers or not stats.user_turns or repeated:
        return 0.0
    return -DIRECTIVE_ONLY


def _weigh_by_answers(episodes: list[_Episode], by_key: dict[str, Candidate]) -> None:
    """Set ``answered`` on each phrase of each episode of a chat with an assistant (read over
    the answers' whole text, not their lead: a long answer repeats its subject in its body);
    a rule or a dependency whose phrase no answer repeats is the form of a request ("Do not
    write any explanations."), and heads nothing of its own."""
    for ep in episodes:
        answers = [m.content.lower() for m in ep.messages if m.role in ANSWER_ROLES]
        for stats in ep.phrases:
            pattern = _phrase_pattern(by_key[stats.key])
            repeated = sum(1 for text in answers if pattern.search(text))
            stats.answered = answered(stats, len(answers), repeated)
            if stats.answered < 0:
                stats.structural = False


def _continue_requests(episodes: list[_Episode], pauses: list[bool]) -> None:
    """In a chat with an assistant, an episode none of whose phrases its requests and its
    answers share (only the answer names them, or only the request, as the form it asked
    for: ``answered``) has no subject of its own: "ME3.2, and as usual, please give it a
    nice heading.", "No, I need a full name." go on with the request before them. (One
    whose best phrase alone is not shared has a subject: the haystack sessions of one day
    follow each other without a pause, and "heavy metal", named by the user and the answer
    but ranked under an answer's phrase, went on with the talk of a payments roadmap before
    it when this looked at the best phrase only.) Such an episode takes the heads of the one before
    (``_assemble``: an episode naming nothing continues the one before), unless it opens the
    slice or follows a pause (a new session starts a subject of its own)."""
    start, before = 0, False  # ``before``: the episode before has heads, its own or taken
    for i, ep in enumerate(episodes):
        opens = i == 0 or pauses[start - 1]
        start += len(ep.messages)
        if opens or not ep.heads or not before:
            before = bool(ep.heads)
            continue
        main = next((p for p in ep.phrases if p.key == ep.heads[0]), None)
        if main is None or main.structural or any(_shared(p) for p in ep.phrases):
            continue
        ep.heads = []


def _shared(stats: PhraseStats) -> bool:
    """The user said it in the episode and an answer of the episode says it again."""
    return bool(stats.user_turns) and not stats.answered


def _phrase_pattern(cand: Candidate) -> re.Pattern[str]:
    """Any surface form of a phrase as whole words, a plural (``-s``, ``-es``) allowed."""
    forms = sorted({cand.key, *(s.lower() for s in cand.surfaces)}, key=len, reverse=True)
    words = [r"\s+".join(rf"{re.escape(w)}(?:e?s)?" for w in f.split()) for f in forms if f]
    return re.compile(rf"\b(?:{'|'.join(words)})\b")


def _said_outside_brackets(cand: Candidate, said: dict[str, str]) -> bool:
    """Whether some turn says the phrase in its own words (not only in a [description])."""
    forms = {cand.key, *(s.lower() for s in cand.surfaces)}
    return any(f in said.get(mid, "") for mid in cand.message_ids for f in forms)


def _choose_heads(episodes: list[_Episode], by_key: dict[str, Candidate], embed: Embed) -> None:
    """Rank each episode's phrases (one embedding call for all of them) and pick its heads."""
    pools = [
        sorted(ep.phrases, key=lambda p: (not p.structural, -p.turns, -p.words, p.key))[
            :PHRASES_PER_EPISODE
        ]
        for ep in episodes
    ]
    names = sorted({by_key[p.key].name for pool in pools for p in pool})
    vector_of = dict(zip(names, _unit(embed(names)) if names else [], strict=True))
    for ep, pool in zip(episodes, pools, strict=True):
        if not pool:
            continue
        centroid = ep.vectors.mean(axis=0)
        centroid = centroid / (np.linalg.norm(centroid) or 1.0)
        scored = sorted(
            pool,
            key=lambda p: (
                -phrase_score(p, float(vector_of[by_key[p.key].name] @ centroid)),
                p.key,
            ),
        )
        ep.phrases = scored
        main = next((p for p in scored if not p.named), scored[0])
        vec = {p.key: vector_of[by_key[p.key].name] for p in scored}
        second = _second_head(scored, main, vec, centroid, len(ep.messages))
        extra = [p.key for p in scored if p.structural and p.key != main.key]
        ep.heads = list(dict.fromkeys([main.key, *second, *extra]))[:MAX_HEADS]
        # turns naming no head go to the main head, or to the second when more like it
        ep.head_vectors = {k: vec[k] for k in [main.key, *second]}


def _second_head(
    scored: list[PhraseStats],
    main: PhraseStats,
    vec: dict[str, np.ndarray],
    centroid: np.ndarray,
    turns: int,
) -> list[str]:
    """A long episode may hold a second subject: a phrase the user came back to (named in
    two of their turns, not an answer's: "passport" and "trip" said once each beside a long
    answer about travel requirements made side topics of two facts on LongMemEval), nearly
    as good a name as the main one, and unlike it."""
    if turns < SECOND_HEAD_TURNS:
        return []
    best = phrase_score(main, float(vec[main.key] @ centroid))
    for p in scored:
        if p.key == main.key or p.named or p.user_turns < 2:
            continue
        close = float(vec[p.key] @ vec[main.key]) >= DISTINCT_HEADS
        if not close and phrase_score(p, float(vec[p.key] @ centroid)) >= best - SECOND_HEAD_GAP:
            return [p.key]
    return []


def _assemble(
    episodes: list[_Episode],
    by_key: dict[str, Candidate],
    extractions: dict[str, Extraction],
    cands: SliceCandidates,
    tz: str,
    asides: bool | None = None,
) -> SliceCandidates:
    out: dict[str, Candidate] = {}
    per_message: dict[str, list[str]] = {}
    # the people talking are in every episode: as a topic's entities they would tie every
    # topic of the conversation to every other one (and merge them across sessions)
    speakers = {normalise_key(m.speaker) for ep in episodes for m in ep.messages if m.speaker}
    previous: list[str] = []
    counts = [_fact_count(ep, extractions, tz) for ep in episodes]
    long = asides or sum(len(ep.messages) for ep in episodes) >= LONG_SLICE
    aside = ASIDE_FACTS if long else 0  # a short slice may change subject every turn or two
    for i, ep in enumerate(episodes):
        said = counts[i]
        if not said:
            continue  # greetings and sign-offs ("ok, that's all for today"): no topic, no fact
        heads = ep.heads or previous  # an episode naming nothing continues the one before
        joined = False
        if said <= aside:
            # a remark or two between two subjects ("Nature": a photo and a "wow") is an aside
            # of the talk before it (or, first in the slice, after it), not a topic: on LoCoMo
            # such topics were most of those citing one message, and a tenth of all topics
            neighbour = previous or _next_heads(episodes, counts, i, aside)
            heads, joined = neighbour or heads, bool(neighbour)
        if not heads:
            continue
        if not joined:
            # an aside joins its neighbour even when that is full (one or two facts past the
            # cap): renamed by its own phrase it made a topic of one fact ("peaceful presence
            # around", "feel sureal": 7 of LoCoMo conv-42's 84 topics cited one message)
            heads = _room_for(ep, heads, out, by_key)
        heads = _thin_heads(ep, heads, by_key, extractions, tz)
        previous = heads
        phrase_cands = [by_key[p.key] for p in ep.phrases]
        for head in heads:
            if head not in out:
                out[head] = _empty(by_key[head], phrase_cands, heads, speakers)
                out[head].label = owned_name(by_key[head].name, ep.messages)
            target = out[head]
            before = len(target.message_ids)
            _fold_messages(target, ep, heads, head, by_key, extractions, phrase_cands, tz)
            if len(target.message_ids) > before:
                target.returns = (target.returns or 0) + 1
            _add_aliases(target, phrase_cands, heads)
        for message in ep.messages:
            per_message[message.message_id] = [
                h for h in heads if message.message_id in out[h].message_ids
            ]
    turn_vectors = {
        m.message_id: v for ep in episodes for m, v in zip(ep.messages, ep.vectors, strict=True)
    }
    echoes = {m.message_id for ep in episodes for m in ep.messages if m.role != "user"}
    decided = {mid for mid, e in extractions.items() if e.decisions or e.numbers}
    for cand in out.values():
        lead = summary_fact(cand, turn_vectors, echoes, decided)
        facts = [f.text for f in cand.facts]
        cand.summary = compose_one_liner(cand.name, facts, lead) or lead
    ordered = sorted(out.values(), key=lambda c: (c.first_seq or 0, c.key))
    return SliceCandidates(
        ordered,
        cands.dependencies,
        cands.in_progress,
        per_message,
        cands.extractions,
        {mid: v.tolist() for mid, v in turn_vectors.items()},
    )


def _thin_heads(
    ep: _Episode,
    heads: list[str],
    by_key: dict[str, Candidate],
    extractions: dict[str, Extraction],
    tz: str,
) -> list[str]:
    """Of several ``heads``, those that at least ``MIN_HEAD_FACTS`` of the episode's turns worth
    a fact name: a head named once is a remark within the talk of another ("peaceful presence
    around" beside "dog", named in three turns), and its turn goes to the head most like it. A
    head carrying a rule or a dependency stays (worth remembering alone, and DEPENDS_ON needs
    its ends); when none is named twice the first stays; and a kept head that is a part of the
    first one's name ("moments" of "happy moments") gives way to it, the more specific name.
    Named in one turn, such heads made 8 of the 9 topics of one fact on LoCoMo conv-42."""
    if len(heads) < 2:
        return heads
    structural = {p.key for p in ep.phrases if p.structural}
    named = Counter[str]()
    for message in ep.messages:
        extraction = extractions.get(message.message_id)
        if extraction is None or turn_fact(message, extraction, tz) is None:
            continue
        named.update(h for h in heads if message.message_id in by_key[h].message_ids)
    kept = [h for h in heads if named[h] >= MIN_HEAD_FACTS or h in structural]
    first = set(heads[0].split())
    kept = [heads[0] if set(h.split()) <= first else h for h in kept]
    return list(dict.fromkeys(kept)) or heads[:1]


def _next_heads(episodes: list[_Episode], counts: list[int], i: int, aside: int) -> list[str]:
    """The heads of the first episode after ``i`` that is more than an aside, [] if none."""
    later = (
        ep.heads for ep, n in zip(episodes[i + 1 :], counts[i + 1 :], strict=True) if n > aside
    )
    return next((h for h in later if h), [])


def _room_for(
    ep: _Episode, heads: list[str], out: dict[str, Candidate], by_key: dict[str, Candidate]
) -> list[str]:
    """``heads`` with each head that already holds ``MAX_TOPIC_FACTS`` facts in this slice
    replaced by the episode's best other phrase (one that can name a topic and is not itself
    full): a chat that keeps coming back to "game" for an hour makes "game" and then
    "basketball court", not one topic of 30 facts that every question finds and that fills a
    context alone (``sleepwake.matching.full`` keeps the same bound across sleeps)."""
    chosen: list[str] = []
    for head in heads:
        if head in out and len(out[head].facts) >= MAX_TOPIC_FACTS:
            spare = [
                p.key
                for p in ep.phrases
                if not p.named
                and p.key not in heads
                and p.key not in chosen
                and len(out[p.key].facts if p.key in out else ()) < MAX_TOPIC_FACTS
            ]
            if spare:
                if head in ep.head_vectors:  # the new head stands for what the old one did
                    ep.head_vectors[spare[0]] = ep.head_vectors.pop(head)
                head = spare[0]
        chosen.append(head)
    return list(dict.fromkeys(chosen))


def summary_fact(
    cand: Candidate,
    turn_vectors: dict[str, np.ndarray],
    echoes: frozenset[str] | set[str] = frozenset(),
    decided: frozenset[str] | set[str] = frozenset(),
) -> str | None:
    """The fact that sums a topic up: of its informative facts (25 characters or more), the one
    whose turn is nearest the centroid of the topic's turns, a fact naming the topic first and
    a statement before a reaction to the listener's news (``is_reaction``), a fact the user
    stated before one from an assistant's turn (``echoes``: "Good choice for
    the billing migration." restates what the user decided, without the decision), and a turn
    that decided something or gave a number (``decided``) before a remark, and the facts
    sharing most words with the others (``text.gist.central_facts``) before an aside.
    The one-liner is what topic search embeds and what a reader sees first, so the first
    fact said (often an aside) is a poor one."""
    vectors = [turn_vectors[m] for m in cand.message_ids if m in turn_vectors]
    facts = [f for f in cand.facts if len(f.text) >= 25 and f.source_message_ids]
    if not vectors or not facts:
        return None
    centroid = np.mean(vectors, axis=0)
    centroid = centroid / (np.linalg.norm(centroid) or 1.0)
    # a remark near the centroid ("Those moments make me thankful.") says less of the subject
    # than the statement sharing most words with the topic's other facts and its name
    order = central_facts([f.text for f in facts], cand.key, len(facts))
    central = {text: CENTRAL_BONUS * (1 - i / len(order)) for i, text in enumerate(order)}

    def fit(fact: Fact) -> float:
        vector = turn_vectors.get(fact.source_message_ids[0])
        near = float(vector @ centroid) if vector is not None else 0.0
        source = fact.source_message_ids[0]
        echo = ECHO_PENALTY if source in echoes else 0.0
        weight = DECISION_BONUS if source in decided else 0.0
        named = NAMES_TOPIC if cand.key in fact.text.lower() else 0.0
        reaction = REACTION_PENALTY if is_reaction(fact.text) else 0.0
        return near - echo - reaction + weight + named + central.get(fact.text, 0.0)

    return max(facts, key=fit).text


def compose_one_liner(name: str, facts: Sequence[str], lead: str | None = None) -> str:
    """A topic's one-liner from its facts: each person's news (at most ``ONE_LINER_PEOPLE``
    people, the one with most facts first), a ``one_liner_part`` per piece of news
    (``person_news``), first one piece of each person's, then a second, distinct one (sharing
    at most one content word with their first), up to ``PARTS_PER_PERSON`` each and
    ``MAX_ONE_LINER_CHARS`` in all (facts without a speaker's name, a user's chat with an
    assistant, give one part: the lead, as before). ``lead`` (the fact ``summary_fact`` chose) is its
    speaker's first part and comes first. On LoCoMo an episode holds both friends' news ("I
    went to a support group" / "I painted that lake sunrise"), and a one-liner of one fact
    left the rest unsaid: topic search and a reader saw a quarter of what the topic holds.
    "" when no fact is news (all reactions and remarks)."""
    groups: dict[str, list[str]] = {}
    for fact in dict.fromkeys(facts):
        groups.setdefault(speaker_of(fact), []).append(fact)
    first = speaker_of(lead) if lead else None
    people = sorted(groups, key=lambda who: (who != first, -len(groups[who])))
    chosen: dict[str, list[str]] = {who: [] for who in people[:ONE_LINER_PEOPLE]}
    parts: list[str] = []
    for round_ in range(PARTS_PER_PERSON):
        for who in chosen:
            if round_ and not who:
                continue  # turns without a speaker's name (a user and an assistant): one part
            best = _next_news(groups[who], chosen[who], name, own=bool(parts))
            if round_ == 0 and lead and who == first:
                best = lead
            if best is None:
                continue
            part = one_liner_part(best)
            if len(" ".join([*parts, part])) > MAX_ONE_LINER_CHARS:
                return " ".join(parts)
            chosen[who].append(best)
            parts.append(part)
    return " ".join(parts)


def _next_news(facts: list[str], said: list[str], name: str, own: bool) -> str | None:
    """A person's next piece of news: of their facts unlike what ``said`` already holds."""
    seen = {s for fact in said for s in content_stems(unspoken(fact))}
    rest = [f for f in facts if f not in said and len(content_stems(unspoken(f)) & seen) <= 1]
    # the first person's first part sums the topic up; any other must be news of their own
    return person_news(rest, name, own or bool(said)) if rest else None


def person_news(facts: Sequence[str], name: str = "", own: bool = False) -> str | None:
    """Of one person's facts, the one that best says their news: central among them
    (``text.gist.central_facts``) and a statement worth keeping (``sentence_weight``: first
    person, plans, numbers), never a reaction to the listener's news; with ``own``, only a
    statement in the first person ("Ha, a lopsided bowl still counts" is a remark on the
    other's news, not news). None when there is none."""
    order = central_facts(facts, name, len(facts))
    rank = {fact: i / max(len(order), 1) for i, fact in enumerate(order)}
    parts = {f: one_liner_part(unspoken(f)) for f in order}
    weights = {f: sentence_weight(parts[f]) for f in order}
    news = [
        f
        for f in order
        if weights[f] > 0
        and not is_reaction(f)
        and (not own or _FIRST_PERSON.search(parts[f]) is not None)
    ]
    return min(news, key=lambda f: rank[f] - NEWS_WEIGHT * weights[f], default=None)


def is_reaction(text: str) -> bool:
    """A remark on the listener's news ("Glad your son is okay!"): it speaks to "you" and
    says nothing in the first person. The one who did the thing sums it up better."""
    body = re.sub(r"^[^:\n]{1,40}:\s+", "", text)
    return bool(_SECOND_PERSON.search(body)) and not _FIRST_PERSON.search(body)


def _fact_count(ep: _Episode, extractions: dict[str, Extraction], tz: str) -> int:
    """How many turns of the episode are worth a fact."""
    return sum(
        turn_fact(m, extractions[m.message_id], tz) is not None
        for m in ep.messages
        if m.message_id in extractions
    )


def owned_name(name: str, messages: Sequence[Message]) -> str:
    """``name`` as the thing of the one person who calls it theirs in ``messages`` ("my guinea
    pig" said by Caroline -> "Caroline's guinea pig"): a bare "family" or "kids" is every
    family, and both people of a conversation may have one. Unchanged when nobody or more
    than one person says "my ...", or when the name already is a name."""
    if len(name.split()) > 3 or name[:1].isupper():
        return name
    mine = re.compile(rf"\bmy\s+(?:\w+\s+){{0,2}}{re.escape(name.lower())}\b")
    owners = {m.speaker for m in messages if m.speaker and mine.search(m.content.lower())}
    return f"{owners.pop()}'s {name}" if len(owners) == 1 else name


def _empty(
    head: Candidate, phrases: list[Candidate], heads: list[str], speakers: set[str]
) -> Candidate:
    """A topic candidate named by ``head``; the episode's names (not its speakers) and other
    heads are its entities."""
    cand = Candidate(key=head.key, label=head.name, returns=0)
    cand.surfaces.update(head.surfaces)
    cand.user_surfaces.update(head.user_surfaces or head.surfaces)
    cand.co_entities = {p.key for p in phrases if is_named(p)} | set(heads)
    cand.co_entities -= speakers | {head.key}
    return cand


def _fold_messages(
    target: Candidate,
    ep: _Episode,
    heads: list[str],
    head: str,
    by_key: dict[str, Candidate],
    extractions: dict[str, Extraction],
    phrases: list[Candidate],
    tz: str,
) -> None:
    """Give ``target`` the turns of ``ep`` that name it (a turn naming no head goes to the
    head most like it), with their fact and the numbers, loops and decisions they carry."""
    for i, message in enumerate(ep.messages):
        mid = message.message_id
        named = [h for h in heads if mid in by_key[h].message_ids]
        if head not in (named or [_nearest(ep, i, heads)]):
            continue
        _touch(target, message)
        extraction = extractions.get(mid)
        if extraction is None:
            continue
        fact = turn_fact(message, extraction, tz)
        if fact is not None:
            target.add_fact(fact)
        _take_structure(target, mid, phrases)
        target.constraint_count += len(extraction.constraints)
        target.corrected = target.corrected or extraction.is_correction


def _add_aliases(target: Candidate, phrases: list[Candidate], heads: list[str]) -> None:
    """The episode's leading phrases said in the turns ``target`` got become its aliases
    (names stay entities): what else a person would call the topic."""
    owned = set(target.message_ids)
    others = [
        p
        for p in phrases
        if p.key not in heads and not is_named(p) and owned.intersection(p.message_ids)
    ][:ALIASES]
    for other in others:
        target.user_surfaces[other.name] += 0  # an alias, never the name
        if other.key not in target.alias_keys:
            target.alias_keys.append(other.key)


def _nearest(ep: _Episode, turn: int, heads: list[str]) -> str:
    """The head whose phrase is most like turn ``turn`` (heads of a continued episode: the
    first)."""
    scored = [
        (float(ep.head_vectors[h] @ ep.vectors[turn]), h) for h in heads if h in ep.head_vectors
    ]
    return max(scored)[1] if scored else heads[0]


def _touch(cand: Candidate, message: Message) -> None:
    if message.message_id not in cand.message_ids:
        cand.message_ids.append(message.message_id)
    cand.first_at = min(cand.first_at or message.at, message.at)
    cand.last_at = max(cand.last_at or message.at, message.at)
    if message.seq is not None:
        cand.first_seq = message.seq if cand.first_seq is None else min(cand.first_seq, message.seq)
        cand.last_seq = message.seq if cand.last_seq is None else max(cand.last_seq, message.seq)
    if cand.time_hint is None:
        # when it was talked about: a subject picked up the same day (a conversation a sleep
        # cut in two) is the same one; an event is anchored there, for the event veto
        cand.time_hint = message.at
        cand.hint_is_mention = not cand.event_like


def _take_structure(target: Candidate, mid: str, phrases: list[Candidate]) -> None:
    """The numbers, open loops and decisions that message ``mid`` gave any of the episode's
    phrases, once each."""
    numbers = {(n.key, n.value, n.unit) for n in target.numbers}
    loops = {o.text for o in target.open_loops}
    events = {e.event for e in target.events}
    for phrase in phrases:
        for n in phrase.numbers:
            if mid in n.source_message_ids and (n.key, n.value, n.unit) not in numbers:
                numbers.add((n.key, n.value, n.unit))
                target.numbers.append(n)
        for o in phrase.open_loops:
            if mid in o.source_message_ids and o.text not in loops:
                loops.add(o.text)
                target.open_loops.append(o)
        for e in phrase.events:
            if mid in e.source_message_ids and e.event not in events:
                events.add(e.event)
                target.events.append(e)
