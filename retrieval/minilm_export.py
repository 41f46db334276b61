"""Build the ONNX graph of all-MiniLM-L6-v2 from the installed weights (set-up time only).

This is the one module that imports torch for the ONNX runtime: ``sheriff embedder export`` (run by
``scripts/setup``) calls :func:`export_onnx`, and an API process that finds the file missing runs
``python -m retrieval.minilm_export PATH`` in a subprocess, so torch never enters the serving process.

The graph is the whole sentence-transformers pipeline after tokenisation: BERT, mean pooling over
the attention mask, L2 normalisation. It is checked against sentence-transformers before it is
moved into place; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from graph.errors import EmbeddingUnavailable
from retrieval import minilm

# Texts that exercise padding inside a batch and truncation at 256 tokens.
CHECK_TEXTS = [
    "hi",
    "What did Caroline do at the LGBTQ support group last week?",
    "I moved to Lisbon in 2021 and started a small pottery studio near the river.",
    " ".join(f"token{i} of a very long note that must be cut" for i in range(120)),
]
MIN_COSINE = 0.9999  # the export is exact up to float rounding; anything less is a broken graph
OPSET = 17


def _pooled_module(weights: Path) -> Any:
    """BERT + mean pooling + L2 normalisation as one torch module (what sentence-transformers does)."""
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(weights))

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    return Pooled().eval()


def _write_graph(weights: Path, target: Path) -> None:
    """Trace the pooled module with dynamic batch and sequence axes into ``target``."""
    import warnings

    import torch

    module = _pooled_module(weights)
    ids = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in minilm.INPUT_NAMES}
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about shape-dependent Python branches in BERT's mask code; with
        # an explicit attention mask they take the same path for every shape (checked below).
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (ids, ids, torch.zeros_like(ids)),
            str(target),
            dynamo=False,
            input_names=list(minilm.INPUT_NAMES),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=OPSET,
        )


def _check_against_torch(weights: Path, graph: Path) -> float:
    """The lowest cosine between the graph's vectors and sentence-transformers' on CHECK_TEXTS."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(weights), device="cpu").encode(
        CHECK_TEXTS, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    runtime = minilm.OnnxMiniLM(graph, threads=1)
    batched = runtime.encode(CHECK_TEXTS)
    single = np.vstack([runtime.encode([t]) for t in CHECK_TEXTS])
    lowest = min(
        float((batched * reference).sum(1).min()), float((single * reference).sum(1).min())
    )
    if lowest < MIN_COSINE:
        raise EmbeddingUnavailable(
            f"the exported ONNX graph disagrees with sentence-transformers (cosine {lowest:.6f})"
        )
    return lowest


def export_onnx(target: Path) -> float:
    """Export, check and atomically install the graph and its stamp; returns the check's cosine.

    The graph is written to a temporary file beside ``target`` and moved into place only after it
    matches sentence-transformers, then the stamp is written: a crash at any point leaves either
    the previous complete pair or a missing/stale stamp, which the loader rebuilds."""
    weights = minilm.weights_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".model-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.chmod(0o644)  # mkstemp makes it private; workers may run as another user
    try:
        _write_graph(weights, tmp)
        cosine = _check_against_torch(weights, tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    stamp = minilm.stamp_path(target)
    stamp_tmp = stamp.with_suffix(".tmp")
    stamp_tmp.write_text(json.dumps(minilm.expected_stamp() | {"check_cosine": cosine}))
    os.replace(stamp_tmp, stamp)
    return cosine


def main(argv: list[str]) -> int:
    """``python -m retrieval.minilm_export PATH``: build the graph at PATH (used by the loader)."""
    if len(argv) != 1:
        print("usage: python -m retrieval.minilm_export PATH", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        cosine = export_onnx(Path(argv[0]))
    except Exception as exc:  # torch missing, bad weights, failed check: one line for the parent
        print(f"ONNX export failed: {exc}", file=sys.stderr)
        return 1
    print(f"exported {argv[0]} (cosine vs sentence-transformers >= {cosine:.6f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
