"""The live topic vectors of a few namespaces, held in the API worker's memory and scored there.

Every context searches its namespace's topics by meaning (``search_topics_vector.cypher``): on a
namespace of 10,000 topics the filtered vector index's ``SEARCH ... LIMIT 200`` and the exact
rescoring were the largest single part of a light context beside the floor
(docs/performance.md, "Topic vectors in the worker's memory"). Here a namespace's live topics
(not archived, with an embedding) are one float32 matrix with the times the windowed search
filters on (first and last seen): numpy scores every one of them exactly, and the best are read
from Neo4j by id within the namespace and ordered there by Neo4j's own cosine and the topics'
tie order (``read_topics_by_vector.cypher``), which also returns the namespace's
``TopicStamp``:

- a copy serves a search only when that stamp equals the one it was read under: every write
  that creates, deletes or rewrites a topic of the namespace (create, update with its touches
  and merges, archive, forget, import, the redaction rewrite) draws a new ``epoch`` in its own
  transaction, and dropping the namespace deletes the stamp; a stale copy is dropped (read again
  off the request path) and Neo4j answers;
- a namespace holding topics but no stamp is never held (``stampless``: migration 026 gave
  every namespace that had topics its stamp);
- the rows come from Neo4j by id within the namespace, so a forgotten topic cannot come back
  even from a copy no stamp told of;
- keyed by namespace: one tenant's vectors are never scored for another.

The answer is the exact scan's (``search_topics_vector``'s for a namespace of at most
``EXACT_VECTOR_MAX`` topics, scored the same way for a larger one): the candidates within
``NEAR`` of the k-th best cosine are all read and Neo4j orders them (scores to the last digit,
ties by name, first seen, id). Pure: the store (``graph.topic_search``) does the reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from graph.passage_vectors import DIMENSIONS, VectorCache, best_with_ties

ROW_OVERHEAD = 200  # bytes a row costs beside its vector and times (its id as text in a list)
CANDIDATES_MAX = 400  # a larger group of equal scores is cut here (numpy's order)
LOAD_BLOCK = 1000  # topics converted to float32 at a time while a namespace is read


@dataclass(frozen=True)
class TopicRow:
    """One live topic as the copy holds it: its id, first and last seen (microseconds since the
    epoch) and vector."""

    topic_id: str
    first_us: int
    last_us: int
    vector: Sequence[float]


@dataclass
class TopicEntry:
    """One namespace's live topic vectors (unit float32 rows), ids and times, read under
    ``epoch``; ``total``: the namespace's topics when read, archived ones included (what the
    Cypher path counts to choose the exact scan)."""

    epoch: str | None
    total: int = 0
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, DIMENSIONS), np.float32))
    first_us: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    last_us: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    ids: list[str] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        arrays = self.matrix.nbytes + self.first_us.nbytes + self.last_us.nbytes
        return int(arrays) + ROW_OVERHEAD * len(self.ids)

    @classmethod
    def of(cls, epoch: str | None, total: int, rows: Iterable[TopicRow]) -> TopicEntry:
        """The copy of ``rows`` (vectors made unit length, converted ``LOAD_BLOCK`` at a time:
        the driver's float lists of a whole namespace at once would cost ~12 KB a topic)
        under ``epoch``."""
        blocks: list[np.ndarray] = []
        ids: list[str] = []
        first: list[int] = []
        last: list[int] = []
        block: list[Sequence[float]] = []
        for r in rows:
            ids.append(r.topic_id)
            first.append(r.first_us)
            last.append(r.last_us)
            block.append(r.vector)
            if len(block) >= LOAD_BLOCK:
                blocks.append(_unit(block))
                block = []
        if block:
            blocks.append(_unit(block))
        if not ids:
            return cls(epoch, total)
        return cls(
            epoch,
            total,
            np.concatenate(blocks) if len(blocks) > 1 else blocks[0],
            np.asarray(first, dtype=np.int64),
            np.asarray(last, dtype=np.int64),
            ids,
        )

    def nearest(
        self,
        vector: Sequence[float],
        k: int,
        since_us: int | None = None,
        until_us: int | None = None,
    ) -> list[str]:
        """The ids of the live topics in the window (last seen at or after ``since_us``, first
        seen before ``until_us``) whose cosine to ``vector`` is among the best ``k``, with every
        other within ``NEAR`` of the k-th (Neo4j orders them by its own cosine, then the
        topics' tie order), best first: at most ``CANDIDATES_MAX``."""
        if k <= 0 or not self.ids:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        scores = self.matrix @ (query / norm)
        allowed = np.arange(len(self.ids))
        if since_us is not None or until_us is not None:
            mask = np.ones(len(self.ids), dtype=bool)
            if since_us is not None:
                mask &= self.last_us >= since_us
            if until_us is not None:
                mask &= self.first_us < until_us
            allowed = np.flatnonzero(mask)
            scores = scores[allowed]
        if scores.size == 0:
            return []
        picked = best_with_ties(scores, k)
        order = picked[np.argsort(-scores[picked], kind="stable")][:CANDIDATES_MAX]
        return [self.ids[int(allowed[i])] for i in order]


def _unit(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    block = np.asarray(vectors, dtype=np.float32)
    if block.ndim != 2 or block.shape[1] != DIMENSIONS:
        raise ValueError(f"a topic vector does not have {DIMENSIONS} dimensions")
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    block /= np.where(norms > 0, norms, 1.0)
    return block


class TopicVectors(VectorCache[TopicEntry]):
    """The live topic vectors of the namespaces searched last, within ``budget`` bytes."""


def row_bytes() -> int:
    """What one topic costs the cache (its float32 vector, two times and the rest)."""
    return DIMENSIONS * 4 + 16 + ROW_OVERHEAD
