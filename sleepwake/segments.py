"""Topic formation, job 1: cut a slice into episodes. Pure.

The slice is cut where neighbouring turns stop being about the same thing: a TextTiling-style
gap score (cosine between the mean vectors of the few turns either side, one MiniLM vector per
turn, long turns by their lead) is low, or the conversation paused (``pause_seconds``).
Episodes have a minimum and a maximum length. An answer (an assistant's or a tool's turn) is
never cut from the turn it answers, and is embedded by its opening. Knobs:
``FormationConfig`` (sleepwake/config.py), "segmentation".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np

from graph.models import Message
from sleepwake.config import DEFAULT, FormationConfig
from sleepwake.policy import ANSWER_ROLES
from text.english import STOPWORDS
from text.tokens import stem

Embed = Callable[[list[str]], list[list[float]]]
FORMATION = DEFAULT.formation


def gap_scores(vectors: np.ndarray, cfg: FormationConfig = FORMATION) -> np.ndarray:
    """Cosine between the mean of the ``cfg.window`` turns before each gap and of those after it;
    entry i is the gap between turn i and turn i + 1."""
    n = len(vectors)
    scores = np.ones(max(n - 1, 0))
    for i in range(n - 1):
        left = vectors[max(0, i + 1 - cfg.window) : i + 1].mean(axis=0)
        right = vectors[i + 1 : i + 1 + cfg.window].mean(axis=0)
        denom = float(np.linalg.norm(left) * np.linalg.norm(right)) or 1.0
        scores[i] = float(left @ right) / denom
    return scores


def segment(
    vectors: np.ndarray,
    pauses: Sequence[bool] = (),
    min_turns: int | None = None,
    max_turns: int | None = None,
    links: Sequence[int] = (),
    joined: Sequence[bool] = (),
    cfg: FormationConfig = FORMATION,
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
    min_turns = cfg.min_turns if min_turns is None else min_turns
    max_turns = cfg.max_turns if max_turns is None else max_turns
    scores = gap_scores(vectors, cfg)
    for i, shared in enumerate(links[: len(scores)]):
        scores[i] += cfg.link_bonus * min(shared, 2)
    # how deep a gap must be is judged among all the slice's gaps, an answer's included (left
    # out, a chat's few other gaps were judged against each other alone: its lowest one cut,
    # nothing else, and "I'm also reading about aqueducts" went under the billing migration)
    limit = 0.0
    if n > 1:
        limit = min(float(scores.mean() - cfg.gap_sigma * scores.std()), cfg.same_subject)
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


def turn_text(message: Message, cfg: FormationConfig = FORMATION) -> str:
    """What stands for a turn in segmentation: its lead (an answer's opening), speaker
    included."""
    return lead_text(message.role, message.speaker, message.content, cfg)


def lead_text(
    role: str, speaker: str | None, content: str, cfg: FormationConfig = FORMATION
) -> str:
    """``turn_text`` of a turn given by its parts (the passage writer has no ``Message``)."""
    cap = cfg.answer_lead_chars if role in ANSWER_ROLES else cfg.turn_lead_chars
    lead = _lead(" ".join(content.split()), cap)
    return f"{speaker}: {lead}" if speaker else lead


def embedded_lead(
    role: str, speaker: str | None, content: str, cfg: FormationConfig = FORMATION
) -> str | None:
    """The text ``turn_vectors`` embeds for a turn, or None for a long answer (which takes the
    vector of the turn it answers): what the passage writer embeds ahead of the sleep
    (``retrieval.passage_index.Leads``). A long answer at a slice's start, or after another
    answer, is embedded by the sleep itself (rare)."""
    if role in ANSWER_ROLES and len(content) > cfg.long_answer_chars:
        return None
    return lead_text(role, speaker, content, cfg)


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


def pauses(messages: Sequence[Message], cfg: FormationConfig = FORMATION) -> list[bool]:
    """Per gap between turns: whether the conversation paused there (always a cut)."""
    pairs = itertools.pairwise(messages)
    return [(b.at - a.at).total_seconds() > cfg.pause_seconds for a, b in pairs]


def unit_rows(rows: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def turn_vectors(
    piece: Sequence[Message], embed: Embed, cfg: FormationConfig = FORMATION
) -> np.ndarray:
    """One unit vector per turn, by its lead (``turn_text``); a long answer (over
    ``cfg.long_answer_chars``) that follows the turn it answers takes that turn's vector instead of
    one of its own. An answer never starts an episode (``segment``) and is about its question;
    a long chat-assistant answer's opening ("Great question! Here are some ideas") says less of
    the subject than the question, and embedding it was two fifths of what a sleep of
    chat-assistant turns embedded for segmentation. A short answer is embedded whole: it may
    carry the subject ("How many guests are you expecting for the party?") and costs little."""
    own = [i for i, m in enumerate(piece) if not _answers_previous(piece, i, cfg)]
    embedded = unit_rows(embed([turn_text(piece[i], cfg) for i in own]))
    rows = np.cumsum([not _answers_previous(piece, i, cfg) for i in range(len(piece))]) - 1
    vectors: np.ndarray = embedded[rows]
    return vectors


def _answers_previous(piece: Sequence[Message], i: int, cfg: FormationConfig) -> bool:
    """Turn ``i`` is a long answer (``ANSWER_ROLES``) to the turn before it (not an answer)."""
    if i == 0 or len(piece[i].content) <= cfg.long_answer_chars:
        return False
    return piece[i].role in ANSWER_ROLES and piece[i - 1].role not in ANSWER_ROLES


def min_turns_for(n: int, cfg: FormationConfig = FORMATION) -> int:
    """Episodes of a long slice last a few turns; a slice of a handful of turns may change
    subject every turn or two (a quick update, then something new)."""
    return 1 if n < 6 else max(2, min(cfg.min_turns, n // 4))
