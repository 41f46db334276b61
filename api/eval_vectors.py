"""A persistent cache of sentence vectors for the evaluations' flat baselines.

The flat MiniLM baseline of ``sheriff eval longmemeval`` embeds every sentence of every haystack
(~5,000 per question, ~150,000 for the 36 dev questions): minutes per question on a loaded
2-core machine, every run. LongMemEval's haystacks also draw on one shared pool of sessions, so
the same sentence comes back in many questions. This cache keeps each sentence's vector on disk
(SQLite, under the eval's own cache folder ``<SHERIFF_HOME>/eval-cache/``, never in Neo4j nor in
any product namespace), keyed by the hash of the model's identity and the text: a second run,
another budget or another question holding the same sentence embeds nothing again.

The model's identity is its name, its dimensions and, for MiniLM, the hash of the installed
weights and the sequence length (``retrieval.minilm.expected_stamp``): new weights mean new keys,
never stale vectors. Vectors are stored as float32, which is what the runtimes compute.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from retrieval.embedding import Embedder, MiniLMEmbedder

CACHE_FILE = "sentence-vectors.sqlite"
EMBED_CHUNK = 512  # texts per call to the model (committed after each: an interrupted run resumes)
_LOOKUP_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 999 on old builds)


def model_identity(embedder: Embedder) -> str:
    """What makes two embedders' vectors interchangeable: name, dimensions, weights."""
    name = f"{getattr(embedder, 'model_name', type(embedder).__name__)}:{embedder.dimensions}"
    if isinstance(embedder, MiniLMEmbedder):
        from retrieval import minilm

        stamp = minilm.expected_stamp()
        name += f":{stamp['weights_sha256']}:{stamp['max_seq_length']}"
    return name


class SentenceVectors:
    """Unit-length vectors of texts, from the disk cache when there, else from ``embedder``
    (in chunks of ``EMBED_CHUNK`` sorted by length, each stored as soon as it is computed)."""

    def __init__(self, folder: Path, embedder: Embedder, identity: str | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / CACHE_FILE
        self._embedder = embedder
        self._identity = (identity or model_identity(embedder)).encode("utf-8")
        self._db = sqlite3.connect(self.path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
        )
        self.hits = 0
        self.embedded = 0

    def close(self) -> None:
        self._db.close()

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(self._identity + b"\0" + text.encode("utf-8")).digest()

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in order."""
        keys = [self._key(t) for t in texts]
        found = self._lookup(list(dict.fromkeys(keys)))
        self.hits += sum(1 for k in dict.fromkeys(keys) if k in found)
        missing = sorted({t for t, k in zip(texts, keys, strict=True) if k not in found}, key=len)
        for start in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[start : start + EMBED_CHUNK]
            rows = np.asarray(self._embedder.embed(chunk), dtype=np.float32)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)
            fresh = {self._key(t): row for t, row in zip(chunk, rows, strict=True)}
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                    [(k, v.tobytes()) for k, v in fresh.items()],
                )
            found |= fresh
            self.embedded += len(chunk)
        if not texts:
            return np.zeros((0, self._embedder.dimensions), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        out: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, vector FROM vectors WHERE key IN ({marks})"  # noqa: S608 (marks only)
            for key, blob in self._db.execute(query, chunk):
                out[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return out
