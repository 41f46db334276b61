"""Vectors a sleep computes without embedding whole texts again. Pure (numpy only).

In a sleep of a chat with an assistant (``side_topics.with_assistant``), a candidate's or a
changed topic's semantic text longer than ``UtilityConfig.blend_chars`` (~150 word pieces: the
candidates' average) is not embedded whole: the candidate's vector is composed from its head and
its facts' turn vectors (``candidate_vectors``), the topic's blended from its stored one
(``blend``). Candidates' and topics' texts were half the word pieces such a sleep embedded, and
the vectors of their parts were at hand. On the twelve LongMemEval questions of
docs/evaluation.md recall and topics were the same at 1,000 and at 600 characters (word pieces
-22% and -34%). Elsewhere (between people: LoCoMo) texts are embedded whole: composing there cost
topic-only recall (conv-26 0.574 -> 0.561, conv-30 0.674 -> 0.662), and texts of short turns are
cheap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retrieval.embedding import Embedder
from sleepwake.candidates import Candidate, SliceCandidates
from sleepwake.config import DEFAULT
from text.gist import FACT_CHARS, VECTOR_FACTS, unspoken


def candidate_vectors(
    embedder: Embedder,
    cands: SliceCandidates,
    compose: bool = True,
    blend_chars: int = DEFAULT.utility.blend_chars,
) -> list[list[float]]:
    """One unit vector per candidate, in order, in one embedding call. A candidate's
    semantic text is embedded (each distinct text once), unless it is longer than
    ``blend_chars``, ``compose`` is on (a chat with an assistant: ``Sleeper``) and
    segmentation embedded the turns of all its facts: then only its head ("name: lead fact")
    is embedded, and its vector is the mean of the head's and its facts' turns' vectors, each
    weighted by its characters (mean pooling weighs every word piece alike). Candidates' texts
    were a third of the word pieces a sleep of chat-assistant turns embedded
    (docs/evaluation.md)."""
    plans: list[tuple[str, list[tuple[Sequence[float], int]]] | None] = []
    wanted: list[str] = []
    for cand in cands.candidates:
        text = cand.semantic_text()
        plan = _composition(cand, text, cands.turn_vectors, blend_chars) if compose else None
        plans.append(plan)
        wanted.append(text if plan is None else plan[0])
    unique = list(dict.fromkeys(wanted))
    by_text = dict(zip(unique, embedder.embed(unique), strict=True))
    out: list[list[float]] = []
    for text, plan in zip(wanted, plans, strict=True):
        if plan is None:
            out.append(by_text[text])
        else:
            out.append(_weighted_unit([(by_text[text], len(text)), *plan[1]]))
    return out


def _composition(
    cand: Candidate, text: str, turn_vectors: dict[str, Sequence[float]], blend_chars: int
) -> tuple[str, list[tuple[Sequence[float], int]]] | None:
    """(head, [(turn vector, weight) per fact]) when ``cand``'s vector can be composed (see
    ``candidate_vectors``), else None: its text is short, or a fact's turn has no vector."""
    if len(text) <= blend_chars or not turn_vectors:
        return None
    head, facts = cand.semantic_parts()
    parts: list[tuple[Sequence[float], int]] = []
    for fact in facts:
        vector = next((turn_vectors[m] for m in fact.source_message_ids if m in turn_vectors), None)
        if vector is None:
            return None
        parts.append((vector, len(unspoken(fact.text[:FACT_CHARS]))))
    return (head, parts) if parts else None


def _weighted_unit(parts: Sequence[tuple[Sequence[float], float]]) -> list[float]:
    """The unit-length weighted sum of ``parts`` (vector, weight); the first vector when they
    cancel out."""
    total = np.zeros(len(parts[0][0]), dtype=np.float64)
    for vector, weight in parts:
        total += np.asarray(vector, dtype=np.float64) * weight
    norm = float(np.linalg.norm(total))
    if norm == 0.0:
        return [float(x) for x in parts[0][0]]
    return [float(x) for x in total / norm]


def blend(
    stored: list[float], facts_before: int, parts: list[tuple[Candidate, str, list[float]]]
) -> list[float]:
    """A changed topic's new vector without embedding its text again: the unit-length mean of
    its stored vector and the vectors of the candidates folded into it this sleep, each
    weighted by the facts it stands for (at most the ``VECTOR_FACTS`` + 1 a semantic text
    holds, at least one). Mean pooling makes a text's vector close to the length-weighted mean
    of its parts' vectors, and a candidate's vector already embeds its name, lead and facts, so
    the topic's semantic text need not be read again: it was 16% of the word pieces a sleep of
    chat-assistant turns embedded, the longest texts of all (docs/evaluation.md)."""
    cap = VECTOR_FACTS + 1
    weighted: list[tuple[Sequence[float], float]] = [(stored, min(max(facts_before, 1), cap))]
    weighted += [(vector, min(max(len(cand.facts), 1), cap)) for cand, _s, vector in parts]
    return _weighted_unit(weighted)


def similarities(vectors: list[list[float]]) -> np.ndarray:
    """Cosine of every pair of (unit-length) candidate vectors."""
    if not vectors:
        return np.zeros((0, 0))
    matrix = np.asarray(vectors, dtype=np.float64)
    return matrix @ matrix.T
