"""The skills of a few namespaces with their embeddings, cached in process and checked by stamp.

Skill routing runs on every context request. A namespace holds a few skills, so ranking them
here costs microseconds where a vector-index query costs 7-10 ms of Neo4j's CPU and a round
trip (docs/performance.md, fifth pass). The cache is keyed by namespace, bounded, and used only
under a stamp of the namespace's skill nodes read in the same request (``read_context_start``):
a worker whose skills were changed by another process reads them again, and a namespace's
skills are never served for another.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graph.models import Skill

STAMP_CAP = 256  # a namespace with more skill nodes is searched through the vector index
CACHED_NAMESPACES = 8  # namespaces one store keeps (least recent dropped): <= 6.3 MB of vectors


@dataclass(frozen=True)
class ScoredSkill:
    skill: Skill
    score: float
    source: str  # "vector" | "vector-scan" | "tags"
    matched_tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkillStamp:
    """What a namespace's skill nodes look like now (one entry per node: id, embedding hash,
    updated and retired times; ``read_context_start`` reads it beside the context's other
    reads): the skill store's cached vectors serve a search only under the same stamp."""

    namespace: str
    entries: tuple[str, ...]


@dataclass(frozen=True)
class CachedSkill:
    skill: Skill
    unit: np.ndarray | None  # the embedding scaled to length 1 (None: no embedding)


class SkillVectors:
    """The live skills of a few namespaces with their embeddings, each under the stamp it was
    read with (bounded: ``CACHED_NAMESPACES``, least recently used dropped). Skills are few per
    namespace, so ranking them here costs microseconds where a vector-index query cost 7-10 ms
    of Neo4j's CPU and a round trip per context request. Keyed by namespace and checked against
    a stamp read in the same request, so a worker never serves another worker's stale skills nor
    another namespace's."""

    def __init__(self, limit: int = CACHED_NAMESPACES) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[tuple[str, ...], list[CachedSkill]]] = OrderedDict()

    def get(self, stamp: SkillStamp) -> list[CachedSkill] | None:
        """The namespace's skills if they were read under ``stamp``, else None."""
        with self._lock:
            found = self._entries.get(stamp.namespace)
            if found is None or found[0] != stamp.entries:
                return None
            self._entries.move_to_end(stamp.namespace)
            return found[1]

    def put(self, stamp: SkillStamp, skills: list[CachedSkill]) -> None:
        with self._lock:
            self._entries[stamp.namespace] = (stamp.entries, skills)
            self._entries.move_to_end(stamp.namespace)
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)

    def drop(self, namespace: str) -> None:
        with self._lock:
            self._entries.pop(namespace, None)


def unit(embedding: Sequence[float] | None) -> np.ndarray | None:
    if not embedding:
        return None
    v = np.asarray(embedding, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else None


def nearest(skills: list[CachedSkill], vector: Sequence[float], k: int) -> list[ScoredSkill]:
    """The ``k`` skills nearest ``vector``, scored as the index scores them: (1 + cos) / 2,
    best first (equal scores by skill id)."""
    query = unit(vector)
    if query is None:
        return []
    scored = [
        (0.5 * (1.0 + float(np.dot(s.unit, query))), s.skill) for s in skills if s.unit is not None
    ]
    scored.sort(key=lambda p: (-p[0], p[1].skill_id))
    return [ScoredSkill(skill, score, "vector") for score, skill in scored[:k]]


def tagged(skills: list[CachedSkill], wanted: Sequence[str], k: int) -> list[ScoredSkill]:
    """Skills sharing tags with ``wanted``, as ``find_skills_by_tags`` ranks them: most shared
    tags first, then by skill id."""
    found = []
    for s in skills:
        matched = tuple(t for t in s.skill.tags if t in wanted)
        if matched:
            found.append(ScoredSkill(s.skill, float(len(matched)), "tags", matched))
    found.sort(key=lambda h: (-h.score, h.skill.skill_id))
    return found[:k]
