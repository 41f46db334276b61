"""The default embedding runtime (ONNX Runtime) keeps the vectors of the torch reference, is built
without torch, is safe to share between threads, never brings torch into the API process, and
fails clearly when its graph is missing and cannot be built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from api.settings import Settings
from graph.errors import EmbeddingUnavailable
from retrieval import minilm, minilm_export
from retrieval.embedding import MiniLMEmbedder

ROOT = Path(__file__).resolve().parents[2]
LONG = " ".join(
    f"On day {i} Caroline painted another lake at dawn with Melanie." for i in range(40)
)
TEXTS = [
    "hi",
    "What did Caroline do at the LGBTQ support group last week?",
    "Melanie's kids love the camping trips; they roasted marshmallows and told stories.",
    "   padded with spaces   ",
    "Ünïcödé, emoji 🎨 and numbers 3.14 / 2026-11-23",
    LONG,
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """Today's vectors: sentence-transformers on torch, as the stored vectors were made (kept in
    retrieval/minilm_reference.json, so this runs where torch is not installed)."""
    texts, vectors = minilm_export.load_reference()
    return np.vstack([vectors[texts.index(t)] for t in TEXTS])


def test_the_stored_reference_is_what_torch_computes_today(reference: np.ndarray) -> None:
    pytest.importorskip("sentence_transformers")
    live = minilm.TorchMiniLM(threads=1).encode(TEXTS)
    assert (live * reference).sum(axis=1).min() >= 0.99999


def test_the_graph_is_built_and_checked_without_torch(tmp_path: Path) -> None:
    # torch and sentence-transformers are made unimportable in the child, as on a clean set-up.
    script = (
        "import sys, runpy\n"
        "for name in ('torch', 'sentence_transformers', 'transformers'):\n"
        "    sys.modules[name] = None\n"
        f"sys.argv = ['minilm_export', {str(tmp_path / 'model.onnx')!r}]\n"
        "try:\n"
        "    runpy.run_module('retrieval.minilm_export', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    sys.exit(exc.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert minilm.is_current(tmp_path / "model.onnx")
    stamp = json.loads(minilm.stamp_path(tmp_path / "model.onnx").read_text())
    assert stamp["check_cosine"] >= minilm_export.MIN_COSINE


def test_a_graph_that_disagrees_with_the_reference_is_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts, vectors = minilm_export.load_reference()
    rotated = np.roll(vectors, 1, axis=1)  # unit vectors still, but not the model's
    monkeypatch.setattr(minilm_export, "load_reference", lambda: (texts, rotated))
    target = tmp_path / "model.onnx"
    with pytest.raises(EmbeddingUnavailable, match="disagrees"):
        minilm_export.export_onnx(target)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_onnx_vectors_match_torch_batched_and_one_by_one(
    settings: Settings, embedder: MiniLMEmbedder, reference: np.ndarray
) -> None:
    from tokenizers import Tokenizer

    assert embedder.runtime == "onnx"
    tokenizer = Tokenizer.from_file(str(minilm.weights_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    assert len(tokenizer.encode(LONG).ids) > minilm.MAX_SEQ_LENGTH  # so truncation is exercised
    graph = minilm.onnx_file(settings.home)
    runtime = minilm.OnnxMiniLM(graph, threads=1, batch_tokens=256)
    batched = runtime.encode(TEXTS)  # mixed lengths: padding, and one text per batch at 256
    single = np.vstack([runtime.encode([t]) for t in TEXTS])
    through_embedder = np.asarray(embedder.embed(TEXTS))
    for vectors in (batched, single, through_embedder):
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert (vectors * reference).sum(axis=1).min() >= 0.999


def test_concurrent_calls_give_the_vectors_of_sequential_ones(settings: Settings) -> None:
    runtime = minilm.OnnxMiniLM(minilm.onnx_file(settings.home), threads=1)
    short = TEXTS[:-1]
    expected = runtime.encode(short)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: runtime.encode(short), range(8)))
    for got in results:
        assert np.allclose(got, expected, atol=1e-6)


def test_the_api_process_never_imports_torch() -> None:
    script = (
        "import json, sys\n"
        "from fastapi.testclient import TestClient\n"
        "from api.app import create_app\n"
        "with TestClient(create_app()) as client:\n"
        "    health = client.get('/health').json()\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers')\n"
        "print(json.dumps({'embedding': health['embedding'],\n"
        "                  'imported': [m for m in heavy if m in sys.modules]}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SHERIFF_EMBEDDER": "minilm"}
    env.pop("SHERIFF_EMBEDDING_RUNTIME", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["embedding"]["model"].endswith("all-MiniLM-L6-v2")
    assert found["imported"] == []


def test_a_stale_stamp_means_the_graph_is_not_current(settings: Settings, tmp_path: Path) -> None:
    graph = tmp_path / "model.onnx"
    graph.symlink_to(minilm.onnx_file(settings.home).resolve())
    stamp = minilm.expected_stamp()
    minilm.stamp_path(graph).write_text(json.dumps(stamp))
    assert minilm.is_current(graph)
    minilm.stamp_path(graph).write_text(json.dumps(stamp | {"weights_sha256": "0" * 64}))
    assert not minilm.is_current(graph)


def test_a_missing_graph_that_cannot_be_built_names_the_set_up_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An interpreter that cannot export (as in an image without torch): the export child fails.
    monkeypatch.setattr(minilm.sys, "executable", "/bin/false")
    embedder = MiniLMEmbedder(onnx_path=minilm.onnx_file(tmp_path))
    with pytest.raises(EmbeddingUnavailable, match="sheriff embedder export"):
        embedder.embed(["hello"])
    assert not minilm.onnx_file(tmp_path).exists()


def test_a_reference_made_for_other_weights_is_refused_with_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # New weights with the old reference: the check must not pass against the wrong vectors.
    stale = json.loads(minilm_export.REFERENCE_FILE.read_text()) | {"weights_sha256": "0" * 64}
    other = tmp_path / "minilm_reference.json"
    other.write_text(json.dumps(stale))
    monkeypatch.setattr(minilm_export, "REFERENCE_FILE", other)
    target = tmp_path / "model.onnx"
    with pytest.raises(EmbeddingUnavailable, match="--write-reference"):
        minilm_export.export_onnx(target)
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minilm_reference.json"]


def test_the_int8_runtime_is_quantised_once_close_to_the_model_and_named_apart(
    settings: Settings, tmp_path: Path, reference: np.ndarray
) -> None:
    graph = tmp_path / "model.onnx"  # the current fp32 graph, as set-up leaves it
    graph.symlink_to(minilm.onnx_file(settings.home).resolve())
    minilm.stamp_path(graph).write_text(minilm.stamp_path(graph.resolve()).read_text())
    int8 = MiniLMEmbedder("onnx-int8", onnx_path=graph)
    vectors = np.asarray(int8.embed(TEXTS))
    built = minilm.int8_file(graph)
    assert minilm.is_current(built, minilm.expected_int8_stamp())
    assert built.stat().st_size < graph.stat().st_size / 3  # int8 weights, not a copy
    cosines = (vectors * reference).sum(axis=1)
    # close to the model's vectors, yet not the same vectors: hence a model name of its own
    assert cosines.min() >= minilm_export.INT8_MIN_COSINE and cosines.min() < 0.9999
    assert int8.model_name == "sentence-transformers/all-MiniLM-L6-v2#int8"
    assert MiniLMEmbedder("onnx", onnx_path=graph).model_name.endswith("all-MiniLM-L6-v2")
    mtime = built.stat().st_mtime_ns
    again = MiniLMEmbedder("onnx-int8", onnx_path=graph)
    assert again.embed(TEXTS[:2]) == int8.embed(TEXTS[:2])
    assert built.stat().st_mtime_ns == mtime  # loaded, not quantised again


def test_an_int8_graph_below_its_floor_is_not_installed(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = tmp_path / "model.onnx"
    graph.symlink_to(minilm.onnx_file(settings.home).resolve())
    monkeypatch.setattr(minilm_export, "INT8_MIN_COSINE", 0.9999)  # as strict as the fp32 graph
    with pytest.raises(EmbeddingUnavailable, match="disagrees"):
        minilm_export.quantise_int8(graph)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]  # nothing left behind
