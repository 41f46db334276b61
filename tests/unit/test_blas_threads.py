"""numpy's OpenBLAS runs on one thread in every process of the product (api/__init__.py): the
worker's vector copies score a namespace with a matrix-vector product per search, and a second
spinning BLAS thread on busy cores cost ~8x the CPU. Set before numpy is loaded (it reads the
variable once), unless the operator set it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import api.cli, os, sys; print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)"
)


def _probe(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-P", "-c", PROBE],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_the_cli_loads_numpy_with_one_blas_thread() -> None:
    assert _probe() == "1 True"  # numpy loaded by the CLI's imports, after the variable


def test_an_operators_own_value_stands() -> None:
    assert _probe(OPENBLAS_NUM_THREADS="2") == "2 True"
