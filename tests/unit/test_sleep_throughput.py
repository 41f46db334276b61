"""The throughput work on the sleep pipeline keeps its results: one-statement edge writes cover
every edge type, the vector cache is a true LRU that returns what the model computed, and the
matrix-product similarity edges equal the pairwise definition."""

from __future__ import annotations

import itertools
import re

import networkx as nx
import numpy as np
import pytest

from graph.cypher import query
from graph.models import EdgeType
from retrieval.embedding import VectorCache
from sleepwake.subjects import SUBJECTS, _similarity_edges, cosine
from sleepwake.topic_vectors import similarities as _similarities

SIMILARITY_EDGE = SUBJECTS.similarity_edge


def test_the_sleep_link_statement_has_one_branch_per_edge_type_and_no_other() -> None:
    text = query("merge_sleep_links")
    branches = re.findall(r"row\.type = '(\w+)'", text)
    merged = re.findall(r"MERGE \(a\)-\[r:(\w+)\]->\(b\)", text)
    assert sorted(branches) == sorted(e.value for e in EdgeType)
    assert branches == merged  # each branch writes the type it tests


def test_vector_cache_returns_the_model_float32_values_and_evicts_the_least_recent() -> None:
    cache = VectorCache(max_items=2)
    a = np.array([0.1, 0.2], dtype=np.float32)
    cache.put("ns", "a", a)
    cache.put("ns", "b", np.array([0.3, 0.4], dtype=np.float32))
    assert cache.get("ns", "a") == a.astype(float).tolist()  # what a fresh embed would return
    cache.put("ns", "c", np.array([0.5, 0.6], dtype=np.float32))  # "b" is now the least recent
    assert cache.get("ns", "b") is None
    assert cache.get("ns", "a") is not None and cache.get("ns", "c") is not None
    assert cache.get("other", "a") is None  # another namespace's identical text: a miss
    assert (cache.hits, cache.misses) == (3, 2)


def _unit(rng: np.random.Generator, n: int) -> list[list[float]]:
    m = rng.normal(size=(n, 384))
    vectors: list[list[float]] = (m / np.linalg.norm(m, axis=1, keepdims=True)).tolist()
    return vectors


def test_similarity_edges_equal_the_pairwise_definition() -> None:
    rng = np.random.default_rng(7)
    base = _unit(rng, 12)
    # near-copies so that some pairs are over the edge threshold
    vectors = base + [(np.array(v) + 0.05 * rng.normal(size=384)).tolist() for v in base[:6]]
    vectors = [(np.array(v) / np.linalg.norm(v)).tolist() for v in vectors]
    keys = [f"k{i}" for i in range(len(vectors))]
    by_key = dict(zip(keys, vectors, strict=True))
    graph = nx.Graph()
    graph.add_nodes_from(keys)
    _similarity_edges(graph, keys, by_key)
    expected = {
        (a, b): cosine(by_key[a], by_key[b])
        for a, b in itertools.combinations(keys, 2)
        if cosine(by_key[a], by_key[b]) >= SIMILARITY_EDGE
    }
    assert len(expected) >= 6
    got = {tuple(sorted((a, b), key=keys.index)): w for a, b, w in graph.edges(data="weight")}
    assert got.keys() == expected.keys()
    for pair, weight in expected.items():
        assert got[pair] == pytest.approx(weight, abs=1e-12)


def test_candidate_similarities_are_pairwise_cosines_and_empty_is_fine() -> None:
    vectors = _unit(np.random.default_rng(3), 5)
    sims = _similarities(vectors)
    for i, j in itertools.product(range(5), repeat=2):
        assert sims[i, j] == pytest.approx(cosine(vectors[i], vectors[j]), abs=1e-12)
    assert _similarities([]).shape == (0, 0)
