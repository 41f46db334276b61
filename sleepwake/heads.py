"""Topic formation, job 2: name each episode by its best phrases (its heads). Pure.

Each episode's phrases are ranked KeyBERT-style: cosine of the phrase to the episode's
centroid, plus how many of its turns repeat it, multi-word and event phrases, minus phrases
spread over most episodes (generic) and single capitalised words (people and places become
aliases of the topic, not topics), and phrases only an answer said. The best phrase names the
topic; phrases that carry a rule or a dependency the user stated head topics of their own
(they are worth remembering; an answer's "make sure to..." is advice, not a rule). Knobs:
``FormationConfig`` (sleepwake/config.py), "heads".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from graph.models import Message
from sleepwake.candidates import Candidate, SliceCandidates, normalise_key
from sleepwake.config import FormationConfig
from sleepwake.extract import Extraction
from sleepwake.policy import ANSWER_ROLES
from sleepwake.segments import FORMATION, Embed, unit_rows
from sleepwake.turn_facts import FIRST_PERSON, SECOND_PERSON
from text.english import time_spans

_CONTRACTION = re.compile(r"\w'(?:ve|re|ll|d|m|t)\b|n't\b", re.I)
# "That must feel surreal.", "Having pets must be a wonderful experience.": "must" guessing at
# how something is for the other person, not a rule
_GUESS = re.compile(r"\bmust(?:'ve|\s+have)?\s+(?:be|been|feel|look|sound|seem)\b", re.I)


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


def phrase_score(stats: PhraseStats, centrality: float, cfg: FormationConfig = FORMATION) -> float:
    """How well a phrase names its episode: central, repeated, specific, not generic."""
    score = centrality
    score += cfg.repeat_weight * min(stats.turns - 1, cfg.repeats_counted)
    score += cfg.word_weight * min(stats.words - 1, cfg.words_counted)
    score += cfg.event_bonus if stats.event else 0.0
    score -= cfg.named_penalty if stats.named else 0.0
    score -= cfg.shown_only if stats.shown_only else 0.0
    # an answer's words name what the user asked about less well than the user's own
    score -= cfg.answer_only if not stats.user_said else 0.0
    score += stats.answered  # 0 outside a chat with an assistant
    if stats.words == 1:  # a single word all over the slice is generic ("time", "life")
        score -= cfg.generic_penalty * max(0.0, stats.spread - cfg.generic_spread)
    else:  # a specific phrase the whole slice keeps coming back to is its subject
        score += cfg.slice_weight * min(stats.slice_turns - 1, cfg.slice_turns_counted)
    return score


def is_named(cand: Candidate) -> bool:
    """One capitalised word in every surface form: a name (person, place, brand)."""
    return all(len(s.split()) == 1 and s[:1].isupper() for s in cand.surfaces)


@dataclass
class Episode:
    messages: list[Message]
    vectors: np.ndarray
    phrases: list[PhraseStats] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    head_vectors: dict[str, np.ndarray] = field(default_factory=dict)


def structural_keys(
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
    if SECOND_PERSON.search(rule):
        return True
    guess = rule.rstrip().endswith("!") or _GUESS.search(rule)
    return bool(guess) and not FIRST_PERSON.search(rule)


def gather_phrases(
    episodes: list[Episode],
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


def answered(
    stats: PhraseStats, answers: int, repeated: int, cfg: FormationConfig = FORMATION
) -> float:
    """In a chat with an assistant, how much what the episode's ``answers`` make of a phrase
    the user said moves it as a name: when ``repeated`` of them say it again, it is the
    subject the request and the answer share ("latent conditions" of "Write me the 'V.
    Variation claims for latent conditions' part of the article using 210 words."); when none
    does, it is the form the user asked for, which the answer carries out without naming it
    ("Please write in English language.", "please give it a nice heading", "article using"),
    and names a topic ``cfg.directive_only`` worse. A phrase only an answer said has
    ``cfg.answer_only`` already."""
    if not answers or not stats.user_turns or repeated:
        return 0.0
    return -cfg.directive_only


def weigh_by_answers(
    episodes: list[Episode], by_key: dict[str, Candidate], cfg: FormationConfig = FORMATION
) -> None:
    """Set ``answered`` on each phrase of each episode of a chat with an assistant (read over
    the answers' whole text, not their lead: a long answer repeats its subject in its body);
    a rule or a dependency whose phrase no answer repeats is the form of a request ("Do not
    write any explanations."), and heads nothing of its own."""
    for ep in episodes:
        answers = [m.content.lower() for m in ep.messages if m.role in ANSWER_ROLES]
        for stats in ep.phrases:
            repeated = answers_saying(by_key[stats.key], answers)
            stats.answered = answered(stats, len(answers), repeated, cfg)
            if stats.answered < 0:
                stats.structural = False


def continue_requests(episodes: list[Episode], pauses: list[bool]) -> None:
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


def answers_saying(cand: Candidate, answers: list[str]) -> int:
    """How many of ``answers`` (lower-cased) say the phrase (``_phrase_pattern``). The pattern
    is compiled only for the answers holding every word of some form at all (a match needs
    them, verbatim): compiling one pattern per phrase of a sleep was ~1 ms each."""
    forms = [f.split() for f in {cand.key, *(s.lower() for s in cand.surfaces)} - {""}]
    if not forms or not all(forms):  # no form, or one of spaces: no word to look for
        maybe = answers
    else:
        maybe = [t for t in answers if any(all(w in t for w in words) for words in forms)]
    if not maybe:
        return 0
    pattern = _phrase_pattern(cand)
    return sum(1 for text in maybe if pattern.search(text))


def _phrase_pattern(cand: Candidate) -> re.Pattern[str]:
    """Any surface form of a phrase as whole words, a plural (``-s``, ``-es``) allowed."""
    forms = sorted({cand.key, *(s.lower() for s in cand.surfaces)}, key=len, reverse=True)
    words = [r"\s+".join(rf"{re.escape(w)}(?:e?s)?" for w in f.split()) for f in forms if f]
    return re.compile(rf"\b(?:{'|'.join(words)})\b")


def _said_outside_brackets(cand: Candidate, said: dict[str, str]) -> bool:
    """Whether some turn says the phrase in its own words (not only in a [description])."""
    forms = {cand.key, *(s.lower() for s in cand.surfaces)}
    return any(f in said.get(mid, "") for mid in cand.message_ids for f in forms)


def choose_heads(
    episodes: list[Episode],
    by_key: dict[str, Candidate],
    embed: Embed,
    cfg: FormationConfig = FORMATION,
) -> None:
    """Rank each episode's phrases (one embedding call for all of them) and pick its heads."""
    pools = [
        sorted(ep.phrases, key=lambda p: (not p.structural, -p.turns, -p.words, p.key))[
            : cfg.phrases_per_episode
        ]
        for ep in episodes
    ]
    names = sorted({by_key[p.key].name for pool in pools for p in pool})
    vector_of = dict(zip(names, unit_rows(embed(names)) if names else [], strict=True))
    for ep, pool in zip(episodes, pools, strict=True):
        if not pool:
            continue
        centroid = ep.vectors.mean(axis=0)
        centroid = centroid / (np.linalg.norm(centroid) or 1.0)
        scored = sorted(
            pool,
            key=lambda p: (
                -phrase_score(p, float(vector_of[by_key[p.key].name] @ centroid), cfg),
                p.key,
            ),
        )
        ep.phrases = scored
        main = next((p for p in scored if not p.named), scored[0])
        vec = {p.key: vector_of[by_key[p.key].name] for p in scored}
        second = _second_head(scored, main, vec, centroid, len(ep.messages), cfg)
        extra = [p.key for p in scored if p.structural and p.key != main.key]
        ep.heads = list(dict.fromkeys([main.key, *second, *extra]))[: cfg.max_heads]
        # turns naming no head go to the main head, or to the second when more like it
        ep.head_vectors = {k: vec[k] for k in [main.key, *second]}


def _second_head(
    scored: list[PhraseStats],
    main: PhraseStats,
    vec: dict[str, np.ndarray],
    centroid: np.ndarray,
    turns: int,
    cfg: FormationConfig = FORMATION,
) -> list[str]:
    """A long episode may hold a second subject: a phrase the user came back to (named in
    two of their turns, not an answer's: "passport" and "trip" said once each beside a long
    answer about travel requirements made side topics of two facts on LongMemEval), nearly
    as good a name as the main one, and unlike it."""
    if turns < cfg.second_head_turns:
        return []
    best = phrase_score(main, float(vec[main.key] @ centroid), cfg)
    for p in scored:
        if p.key == main.key or p.named or p.user_turns < 2:
            continue
        close = float(vec[p.key] @ vec[main.key]) >= cfg.distinct_heads
        score = phrase_score(p, float(vec[p.key] @ centroid), cfg)
        if not close and score >= best - cfg.second_head_gap:
            return [p.key]
    return []
