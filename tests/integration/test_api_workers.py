"""``sheriff up --workers 2`` as an operator runs it: one port served by two worker processes,
each with its own container; migrations ran once in the parent; /mcp needs no session (any
worker answers any request); SIGTERM stops every process.

Each worker loads the real local embedding model (the ONNX all-MiniLM-L6-v2 of
``retrieval/minilm.py``, as ``sheriff up`` does by default): a worker's model is an onnxruntime
session of ~90 MB, loaded in about a second, so two of them cost little.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from neo4j import Driver

from graph.keys import ApiKeyStore
from tests.integration.live_server import free_port

REPO = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == pid and b"spawn_main" in cmd:
            out.append(int(entry.name))
    return out


@pytest.fixture
def up(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    port = free_port()
    env = os.environ | {
        "PYTHONPATH": str(REPO), "SHERIFF_API_PORT": str(port), "SHERIFF_EMBEDDER": "minilm",
        "SHERIFF_EXTRACTOR": "deterministic",
    }  # fmt: skip
    for name in ("SHERIFF_API_WORKERS", "SHERIFF_EMBEDDING_RUNTIME", "OMP_NUM_THREADS"):
        env.pop(name, None)  # the defaults of `sheriff up`: ONNX, the CPUs shared out
    log = tmp_path / "up.log"
    with log.open("wb") as out:
        cmd = [sys.executable, "-c", "from api.cli import main; main()",
               "up", "--workers", "2", "--keep-neo4j"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_ready(proc, f"http://127.0.0.1:{port}", log)
            yield proc, f"http://127.0.0.1:{port}", log
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        if log.read_text().count("Application startup complete") >= 2:
            return
        time.sleep(0.3)
    raise AssertionError(f"not ready in {timeout_s} s:\n{log.read_text()}")


def _mcp(url: str, key: str, payload: dict[str, object]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}  # fmt: skip
    return httpx.post(f"{url}/mcp", json=payload, headers=headers, timeout=30)


def test_two_workers_serve_one_port_and_sigterm_stops_them_all(
    up: tuple[subprocess.Popen[bytes], str, Path], driver: Driver, namespace: str
) -> None:
    proc, url, log = up
    workers = _children(proc.pid)
    assert len(workers) == 2, log.read_text()
    text = log.read_text()
    assert "2 worker process(es)" in text and "Started parent process" in text
    embedding = httpx.get(f"{url}/health", timeout=10).json()["embedding"]
    assert "MiniLM" in embedding["model"] and embedding["dimensions"] == 384  # the real model
    _, key = ApiKeyStore(driver).create(namespace, "workers test", datetime.now(UTC))
    auth = {"Authorization": f"Bearer {key}"}
    for i in range(6):  # fresh connections: the kernel hands them to either worker
        body = {"message": f"what about the lake house party {i}?", "session_id": "s"}
        assert httpx.post(f"{url}/v1/context", json=body, headers=auth, timeout=60).is_success
    init = _mcp(url, key, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})  # fmt: skip
    assert init.status_code == 200 and "mcp-session-id" not in init.headers  # stateless
    listed = _mcp(url, key, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listed.status_code == 200 and "memory_context" in listed.text  # no session needed
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert time.monotonic() - started < 30
    assert not [p for p in workers if Path(f"/proc/{p}").exists()]
