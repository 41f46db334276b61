"""Embedding runtime benchmark: ONNX Runtime vs torch (sentence-transformers) for all-MiniLM-L6-v2.

Each runtime and thread count runs in its own fresh process that only loads the embedder, so the
RSS it reports is what the runtime costs a worker. Prints, per run: load time, RSS after load and
after the work, per-call latency of a short query (batch 1, p50/p95), throughput for batches of 32
short texts (< 600 characters), and the cosine of every vector against torch's (the reference the stored vectors came
from) on dev texts: LoCoMo turns, LongMemEval turns and long texts cut at 256 tokens.

    .venv/bin/python benchmarks/bench_embedding.py                 # onnx and torch, 1 thread
    .venv/bin/python benchmarks/bench_embedding.py --threads 1 2 --texts 300

Needs the ONNX graph (`sheriff embedder export`, run by scripts/setup). Figures, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path("/work/shared/data")
LOCOMO = DATA / "locomo" / "locomo-dev.json"
LONGMEMEVAL = DATA / "longmemeval" / "longmemeval-s-dev36.json"
SHORT_QUERY = "What did Caroline do at the support group last week?"


def dev_texts(count: int) -> list[str]:
    """About ``count`` texts: LoCoMo turns, LongMemEval turns, and long turns (> 256 tokens)."""
    locomo = json.loads(LOCOMO.read_text())
    turns = [
        t["text"]
        for sample in locomo
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for t in session
    ]
    lme = json.loads(LONGMEMEVAL.read_text())
    contents = [m["content"] for q in lme for s in q["haystack_sessions"] for m in s]
    n_long = count // 5
    n_each = (count - n_long) // 2
    long = sorted(contents, key=len, reverse=True)[:n_long]  # assistant essays: truncated
    short = [c for c in contents if len(c) < 600]
    return (
        turns[:: max(1, len(turns) // n_each)][:n_each]
        + short[:: max(1, len(short) // n_each)][:n_each]
        + long
    )


def _rss_mb() -> float:
    """Current resident set size of this process in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(runtime: str, threads: int, texts_file: str, vectors_file: str) -> None:
    """Measure one runtime in this (fresh) process and print one JSON line."""
    from retrieval import minilm
    from retrieval.embedding import DEFAULT_HOME

    texts = json.loads(Path(texts_file).read_text())
    mark = time.perf_counter()
    model = minilm.load_runtime(runtime, minilm.onnx_file(DEFAULT_HOME), threads)
    model.encode(["warm-up"])
    load_s = time.perf_counter() - mark
    rss_load = _rss_mb()
    for _ in range(20):
        model.encode([SHORT_QUERY])
    single = []
    for _ in range(200):
        mark = time.perf_counter()
        model.encode([SHORT_QUERY])
        single.append((time.perf_counter() - mark) * 1000)
    short = [t for t in texts if len(t) < 600]  # "sentences": the long essays are measured apart
    batch = short[: 32 * (len(short) // 32)]
    mark = time.perf_counter()
    for start in range(0, len(batch), 32):
        model.encode(batch[start : start + 32])
    per_s = len(batch) / (time.perf_counter() - mark)
    np.save(vectors_file, model.encode(texts))
    cuts = statistics.quantiles(single, n=20)
    print(
        json.dumps(
            {
                "runtime": runtime,
                "threads": threads,
                "load_s": load_s,
                "rss_load_mb": rss_load,
                "rss_end_mb": _rss_mb(),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "single_p50_ms": statistics.median(single),
                "single_p95_ms": cuts[18],
                "batch32_texts_per_s": per_s,
                "torch_imported": "torch" in sys.modules,
            }
        )
    )


def run(runtime: str, threads: int, texts_file: Path, workdir: Path) -> tuple[dict, np.ndarray]:
    """Run one child process; return its figures and vectors."""
    vectors = workdir / f"{runtime}-{threads}.npy"
    cmd = [
        sys.executable,
        __file__,
        "--child",
        runtime,
        str(threads),
        str(texts_file),
        str(vectors),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1]), np.load(vectors)


def main() -> None:
    """Parse arguments, run every (runtime, threads) in its own process, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    # torch is optional (the [torch] extra); without it only the default runtime is measured.
    have_torch = importlib.util.find_spec("sentence_transformers") is not None
    parser.add_argument(
        "--runtimes", nargs="+", default=["onnx", "torch"] if have_torch else ["onnx"]
    )
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        runtime, threads, texts_file, vectors_file = args.child
        child(runtime, int(threads), texts_file, vectors_file)
        return
    texts = dev_texts(args.texts)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        texts_file = workdir / "texts.json"
        texts_file.write_text(json.dumps(texts))
        results = [run(r, t, texts_file, workdir) for t in args.threads for r in args.runtimes]
    report(texts, results)


def report(texts: list[str], results: list[tuple[dict, np.ndarray]]) -> None:
    """Print one row per run and the cosine of each run's vectors against torch's."""
    reference = next((v for f, v in results if f["runtime"] == "torch"), None)
    from tokenizers import Tokenizer

    from retrieval import minilm

    tokenizer = Tokenizer.from_file(str(minilm.weights_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    lengths = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    cut = sum(n > minilm.MAX_SEQ_LENGTH for n in lengths)
    print(f"{len(texts)} dev texts, {cut} longer than {minilm.MAX_SEQ_LENGTH} tokens (truncated)")
    head = "runtime thr  load s  RSS load/end/peak MB  short p50/p95 ms  batch32 texts/s  torch?"
    print(head)
    for figures, _ in results:
        f = figures
        print(
            f"{f['runtime']:<7} {f['threads']:>3} {f['load_s']:>7.2f}"
            f"  {f['rss_load_mb']:>6.0f}/{f['rss_end_mb']:.0f}/{f['peak_rss_mb']:.0f}"
            f"      {f['single_p50_ms']:>6.2f}/{f['single_p95_ms']:.2f}"
            f"  {f['batch32_texts_per_s']:>15.0f}  {f['torch_imported']}"
        )
    if reference is None:
        return
    for figures, vectors in results:
        cosines = (vectors * reference).sum(axis=1)
        print(
            f"cosine vs torch, {figures['runtime']} {figures['threads']} thr: "
            f"min {cosines.min():.6f}, mean {cosines.mean():.6f}"
        )


if __name__ == "__main__":
    main()
