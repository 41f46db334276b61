"""A deterministic ``Embedder`` for unit tests: hashed bag of words, unit length, 384-d.

Texts sharing words get a positive cosine that grows with the share; texts with no word in
common are near-orthogonal (hash collisions aside). It has no notion of meaning, so tests where
semantic quality matters use the real MiniLM model in ``tests/integration/``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from graph.errors import EmbeddingUnavailable
from graph.models import EMBEDDING_DIMENSIONS

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Each lower-cased word adds +-1 to one of ``dimensions`` slots (signed feature hashing)."""

    model_name = "test/hashed-bag-of-words"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self) -> None:
        self.calls: list[list[str]] = []  # every batch asked for, in order

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        self.calls.append(list(texts))
        return [self.vector(t) for t in texts]

    def vector(self, text: str) -> list[float]:
        words = _WORD.findall(text.lower()) or ["(empty)"]
        values = [0.0] * self.dimensions
        for word in words:
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "big") % self.dimensions
            values[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in values))
        if norm == 0.0:  # the words cancelled out in their slots: a fixed unit vector
            values[0] = 1.0
            norm = 1.0
        return [v / norm for v in values]


class DownEmbedder:
    """An embedder whose model is unavailable: every call raises, as an outage would."""

    model_name = "test/unavailable"
    dimensions = EMBEDDING_DIMENSIONS

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingUnavailable("the embedding model is down")
