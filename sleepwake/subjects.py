"""Sleep step 2: subjects, the ephemeral clusters of what the slice was about (spec §1.2). Pure.

A weighted graph of the slice's candidates (edges: mentioned in the same message, and embedding
similarity) is split into communities with networkx's Louvain method (seeded, so deterministic).
Subjects are internal hints for ranking and wake; they expire.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from sleepwake.candidates import Candidate
from sleepwake.config import DEFAULT
from sleepwake.config_sections import SubjectsConfig

SUBJECTS = DEFAULT.subjects


@dataclass(frozen=True)
class SubjectHint:
    label: str
    salience: float  # share of the slice's mentions that fall in this subject, 0..1
    keys: tuple[str, ...]  # candidate keys, most mentioned first


def cosine(a: list[float], b: list[float]) -> float:
    return float(sum(x * y for x, y in zip(a, b, strict=True)))  # vectors are unit length


def compute_subjects(
    candidates: list[Candidate],
    per_message: dict[str, list[str]],
    vectors: dict[str, list[float]],
    cfg: SubjectsConfig = SUBJECTS,
) -> list[SubjectHint]:
    """Communities of co-mentioned / similar candidates, most salient first."""
    if not candidates:
        return []
    graph = nx.Graph()
    mentions = {c.key: c.mentions for c in candidates}
    graph.add_nodes_from(mentions)
    for keys in per_message.values():
        named = keys[: cfg.max_co_mentioned]
        for i, a in enumerate(named):
            for b in named[i + 1 :]:
                weight = graph.get_edge_data(a, b, {"weight": 0.0})["weight"]
                graph.add_edge(a, b, weight=weight + 1.0)
    _similarity_edges(graph, [c.key for c in candidates], vectors, cfg)
    communities = nx.community.louvain_communities(graph, weight="weight", seed=42)
    total = sum(mentions.values()) or 1
    hints = []
    for members in communities:
        ranked = sorted(members, key=lambda k: (-mentions.get(k, 0), k))
        weight = sum(mentions.get(k, 0) for k in members)
        if len(members) < 2 and weight < 3:
            continue
        label = ", ".join(ranked[:3])
        hints.append(SubjectHint(label=label[:200], salience=weight / total, keys=tuple(ranked)))
    return sorted(hints, key=lambda h: (-h.salience, h.label))[: cfg.max_subjects]


def _similarity_edges(
    graph: nx.Graph,
    keys: list[str],
    vectors: dict[str, list[float]],
    cfg: SubjectsConfig = SUBJECTS,
) -> None:
    usable = [k for k in keys if k in vectors][: cfg.max_similarity_nodes]  # bound the n^2 pass
    if len(usable) < 2:
        return
    matrix = np.asarray([vectors[k] for k in usable], dtype=np.float64)
    sims = matrix @ matrix.T  # one matrix product instead of n^2 Python dot products
    rows, cols = np.nonzero(np.triu(sims >= cfg.similarity_edge, k=1))
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        a, b = usable[i], usable[j]
        weight = graph.get_edge_data(a, b, {"weight": 0.0})["weight"]
        graph.add_edge(a, b, weight=weight + float(sims[i, j]))
