"""The text -> vector cache is kept apart per namespace (issue 33, part 4): a text another tenant
sent is embedded afresh (no faster answer that tells one tenant what another asked), and outside
any namespace's scope nothing is cached."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retrieval.embedding import MiniLMEmbedder, cache_scope, current_scope


class CountingEncoder:
    """Stands in for the ONNX runtime: a vector per text, and every text it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.asked += list(texts)
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


def embedder() -> tuple[MiniLMEmbedder, CountingEncoder]:
    model = MiniLMEmbedder()
    encoder = CountingEncoder()
    model._model = encoder  # type: ignore[assignment]  # the runtime's seam: encode(texts)
    return model, encoder


def test_a_namespace_reuses_its_own_vectors_but_never_another_s() -> None:
    model, encoder = embedder()
    with cache_scope("alice"):
        first = model.embed(["the zanzibar plan"])
        again = model.embed(["the zanzibar plan"])
    with cache_scope("bob"):
        bobs = model.embed(["the zanzibar plan"])
    assert first == again == bobs  # the same vector either way
    assert encoder.asked == ["the zanzibar plan", "the zanzibar plan"]  # bob's was computed


def test_outside_a_scope_nothing_is_cached_or_read() -> None:
    model, encoder = embedder()
    with cache_scope("alice"):
        model.embed(["seen by alice"])
    assert current_scope() is None
    model.embed(["seen by alice", "seen by alice"])  # repeated in one call: embedded once
    model.embed(["fresh text"])
    model.embed(["fresh text"])
    assert encoder.asked == ["seen by alice", "seen by alice", "fresh text", "fresh text"]
    with cache_scope("alice"):
        model.embed(["fresh text"])  # not kept by the unscoped calls
    assert encoder.asked[-1] == "fresh text" and len(encoder.asked) == 5
