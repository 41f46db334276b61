"""The passage vectors of a few namespaces, held in the API worker's memory and scored there.

A context searches its conversation's passages by meaning one to three times. Scored in Cypher,
a namespace of 2,000 passages cost ~40 ms of Neo4j's CPU per search, and a larger one took the
filtered HNSW index, whose walk returns other near neighbours when other tenants crowd the index
(docs/performance.md, "Passage vectors in the worker's memory"). Here a namespace's vectors are
one float32 matrix: numpy scores every one of them exactly (39,000 passages in a few
milliseconds), and only the best rows are read from Neo4j, by key and within the namespace
(``read_passages_by_key.cypher``), which also returns the namespace's ``PassageStamp``:

- the cache serves a search only when that stamp equals the one it was loaded under, so a
  passage written or removed since is never missed or served from here (a stale entry is read
  again: the passages past its ``gen`` when the ``epoch`` is the same, the namespace whole when
  a removal drew a new ``epoch``);
- the rows themselves come from Neo4j by key within the namespace, so a forgotten message's
  passage cannot come back even from a stale entry;
- keyed by namespace: one tenant's vectors are never scored for another.

Bounded by bytes (``Settings.passage_cache_mb`` per worker process, least recently used
namespace dropped first); a namespace larger than the whole budget keeps the index path. In the
API worker a copy is read off the request path (``graph.vector_loads``): Neo4j answers a
namespace's searches until its copy is in.
Pure: the store (``graph.passages``) does the reads.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import numpy as np

DIMENSIONS = 384
ROW_OVERHEAD = (
    480  # bytes a row costs beside its vector (its key as text in a list and a set; measured)
)
# candidates whose cosine is within this of the k-th best are all read and ordered by Neo4j's own
# cosine (float32 numpy against Cypher's arithmetic differs in the 7th digit): the same passages
# and order as the exact scan in Cypher, ties included
NEAR = 1e-5


def best_with_ties(scores: np.ndarray, k: int) -> np.ndarray:
    """The indices of the ``k`` best ``scores`` and of every score within ``NEAR`` of the k-th
    (a tie the caller orders by its own key), in no particular order."""
    if scores.size <= k:
        return np.arange(scores.size)
    kth = float(np.partition(scores, scores.size - k)[scores.size - k])
    return np.flatnonzero(scores >= kth - NEAR)


LOAD_STRIPES = 32  # locks the loads of namespaces share (by a hash of the name)
CANDIDATES_MAX = 400  # a larger group of equal scores is cut here (numpy's order, then time, key)


@dataclass(frozen=True)
class Stamp:
    """A namespace's ``PassageStamp``: ``epoch`` changes when a passage is removed, ``gen``
    grows with every message whose passages are written (``epoch`` None: no stamp node, i.e. the
    namespace holds no conversation)."""

    epoch: str | None
    gen: int


@dataclass(frozen=True)
class Row:
    """One passage as the cache holds it: its key (message id, seq), time (microseconds since
    the epoch) and vector."""

    message_id: str
    seq: int
    at_us: int
    vector: Sequence[float]


@dataclass
class Entry:
    """One namespace's passages: their unit vectors (float32, rows ``[:size]`` used), keys and
    times, under ``stamp``."""

    stamp: Stamp
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, DIMENSIONS), np.float32))
    at_us: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    keys: list[tuple[str, int]] = field(default_factory=list)
    size: int = 0
    known: set[tuple[str, int]] = field(default_factory=set)
    # held while rows are added or scored: a refresh of one request never tears another's search
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.at_us.nbytes) + ROW_OVERHEAD * self.size

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` passages in all (a load that counted them first: the matrix
        is allocated once, to size)."""
        with self.lock:
            self._grow(rows, exact=True)

    def _grow(self, need: int, exact: bool = False) -> None:
        if need <= self.matrix.shape[0]:
            return
        # grow by half again (appends stay amortised), or to ``need`` exactly when told
        capacity = need if exact else max(need, self.matrix.shape[0] * 3 // 2, 16)
        matrix = np.zeros((capacity, DIMENSIONS), np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        at_us = np.zeros(capacity, np.int64)
        at_us[: self.size] = self.at_us[: self.size]
        self.matrix, self.at_us = matrix, at_us

    def add(self, rows: Sequence[Row], stamp: Stamp) -> None:
        """Append ``rows`` (those already held skipped) and move to ``stamp``."""
        with self.lock:
            self._add(rows, stamp)

    def _add(self, rows: Sequence[Row], stamp: Stamp) -> None:
        fresh = [r for r in rows if (r.message_id, r.seq) not in self.known]
        if fresh:
            need = self.size + len(fresh)
            self._grow(need)
            block = np.asarray([r.vector for r in fresh], dtype=np.float32)
            if block.shape[1] != DIMENSIONS:
                raise ValueError(f"a passage vector has {block.shape[1]} dimensions")
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            block /= np.where(norms > 0, norms, 1.0)
            self.matrix[self.size : need] = block
            self.at_us[self.size : need] = [r.at_us for r in fresh]
            for r in fresh:
                key = (r.message_id, r.seq)  # one tuple in both
                self.keys.append(key)
                self.known.add(key)
            self.size = need
        self.stamp = stamp

    def nearest(
        self, vector: Sequence[float], k: int, until_us: int | None = None
    ) -> list[tuple[str, int]]:
        """The keys of the passages said before ``until_us`` whose cosine to ``vector`` is
        among the best ``k``, with every other passage within ``NEAR`` of the k-th (Neo4j orders
        them by its own cosine, then time, seq and message id), best first: at most
        ``CANDIDATES_MAX``."""
        with self.lock:
            return self._nearest(vector, k, until_us)

    def _nearest(
        self, vector: Sequence[float], k: int, until_us: int | None
    ) -> list[tuple[str, int]]:
        if k <= 0 or self.size == 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        scores = self.matrix[: self.size] @ (query / norm)
        allowed = np.arange(self.size)
        if until_us is not None:
            allowed = np.flatnonzero(self.at_us[: self.size] < until_us)
            scores = scores[allowed]
        if scores.size == 0:
            return []
        picked = best_with_ties(scores, k)
        rows = allowed[picked]
        order = sorted(
            range(len(rows)),
            key=lambda i: (-float(scores[picked[i]]), int(self.at_us[rows[i]]),
                           self.keys[rows[i]][1], self.keys[rows[i]][0]),
        )  # fmt: skip
        return [self.keys[rows[i]] for i in order[:CANDIDATES_MAX]]


def incremental(held: Stamp, seen: Stamp) -> bool:
    """Whether a copy loaded under ``held`` is brought to ``seen`` by reading the passages
    written past its ``gen`` (no passage removed since: the same ``epoch``); else it is read
    whole (a removal, a namespace deleted or created again, a copy newer than ``seen``)."""
    return seen.epoch is not None and seen.epoch == held.epoch and seen.gen >= held.gen


def row_bytes() -> int:
    """What one passage costs the cache (its float32 vector and the rest)."""
    return DIMENSIONS * 4 + 8 + ROW_OVERHEAD


class Weighed(Protocol):
    """A cached copy: what it costs the budget."""

    @property
    def nbytes(self) -> int: ...


E = TypeVar("E", bound=Weighed)


class VectorCache(Generic[E]):
    """The copies of the namespaces searched last, within ``budget`` bytes (least recently used
    dropped first). Keyed by namespace; a copy serves a search only under the stamp it holds
    (its store compares it with the one its read returns). The passages' and the topics'
    (``graph.topic_vectors``) caches are two of these."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, E] = OrderedDict()
        self._loading = [threading.Lock() for _ in range(LOAD_STRIPES)]

    def get(self, namespace: str) -> E | None:
        with self._lock:
            found = self._entries.get(namespace)
            if found is not None:
                self._entries.move_to_end(namespace)
            return found

    def put(self, namespace: str, entry: E) -> None:
        """Hold ``entry`` for ``namespace`` (replacing any), then drop the least recently used
        others until the whole fits ``budget`` (an entry larger than the budget is not held)."""
        with self._lock:
            self._entries[namespace] = entry
            self._entries.move_to_end(namespace)
            self._trim()

    def resized(self, namespace: str) -> None:
        """``namespace``'s entry grew in place: drop others (or it) until the whole fits."""
        with self._lock:
            if namespace in self._entries:
                self._entries.move_to_end(namespace)
            self._trim()

    def drop(self, namespace: str, entry: E | None = None) -> None:
        """Drop ``namespace``'s copy (only if it is still ``entry``, when given)."""
        with self._lock:
            if entry is None or self._entries.get(namespace) is entry:
                self._entries.pop(namespace, None)

    def loading(self, namespace: str) -> threading.Lock:
        """The lock one namespace's loads take, so two requests of one worker read it once."""
        return self._loading[zlib.crc32(namespace.encode()) % LOAD_STRIPES]

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def namespaces(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    def _trim(self) -> None:
        total = sum(e.nbytes for e in self._entries.values())
        while self._entries and total > self.budget:
            _, dropped = self._entries.popitem(last=False)
            total -= dropped.nbytes


class PassageVectors(VectorCache[Entry]):
    """The passages of the namespaces searched last, within ``budget`` bytes."""

    def fits(self, rows: int) -> bool:
        """Whether a namespace of ``rows`` passages may be held at all."""
        return rows * row_bytes() <= self.budget
