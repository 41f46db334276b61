"""What the best topics' own passages cost a context (``context.scoped_evidence``, docs/retrieval.md,
"The best topics' own passages").

    PYTHONPATH=.:benchmarks .venv/bin/python benchmarks/bench_scoped_evidence.py \
        --reuse KEPT.json [--questions 200] [--rounds 3] [--neo4j-pid PID] [--against N]

``KEPT.json``: the ``--json`` output of ``sheriff eval locomo ... --keep`` on this server. In
process, on the kept memories: the LoCoMo questions' contexts (budget 1000, a day after each
conversation, as the eval asks them) built with the scoped search off (or at
``--against`` passages) and on (the settings' ``scoped_evidence``), alternated question by
question in the same process (this machine's speed drifts within minutes, so the two
are measured side by side), each round over the same questions. Printed per setting: wall p50 /
p95 of ``ContextBuilder.build``, this process's CPU per context and, with ``--neo4j-pid`` (a
private server's), Neo4j's CPU per context; then the on / off ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from api.cli_shared import settings as load_settings
from api.container import Container
from api.eval_locomo import replay_end
from retrieval.config import ContextConfig
from retrieval.context_result import ContextRequest

LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")


def _cpu_of(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _container(base: Any, scoped: int | None) -> Container:
    """A container with the settings' ``scoped_evidence``, or ``scoped`` passages instead."""
    ctx = base.retrieval.context
    cfg = ctx if scoped is None else ctx.model_copy(update={"scoped_evidence": scoped})
    retrieval = base.retrieval.model_copy(update={"context": ContextConfig(**cfg.model_dump())})
    return Container(base.model_copy(update={"retrieval": retrieval}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reuse", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=LOCOMO)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--neo4j-pid", type=int)
    ap.add_argument(
        "--against", type=int, default=0, help="scoped_evidence to compare with (0: the search off)"
    )
    args = ap.parse_args()
    kept = {
        c["sample_id"]: c["namespace"]
        for c in json.loads(args.reuse.read_text())[0]["conversations"]
    }
    samples = {s["sample_id"]: s for s in json.loads(args.data.read_text())}
    asks = [
        (kept[sid], str(qa["question"]), replay_end(samples[sid]))
        for sid in kept
        for qa in samples[sid]["qa"]
    ][: args.questions]
    base = load_settings()
    if base.retrieval.context.scoped_evidence == args.against:
        raise SystemExit(f"scoped_evidence is {args.against} in these settings: nothing to compare")
    containers = {"off": _container(base, args.against), "on": _container(base, None)}
    for c in containers.values():  # warm: model, drivers, caches of the first requests
        c.context.build(
            ContextRequest(namespace=asks[0][0], message=asks[0][1], now=asks[0][2], budget=1000)
        )
    wall: dict[str, list[float]] = {k: [] for k in containers}
    cpu = dict.fromkeys(containers, 0.0)
    neo = dict.fromkeys(containers, 0.0)
    for _ in range(args.rounds):
        for ns, question, now in asks:
            for label, c in containers.items():
                req = ContextRequest(namespace=ns, message=question, now=now, budget=1000)
                n0, c0, t0 = _cpu_of(args.neo4j_pid), time.process_time(), time.perf_counter()
                c.context.build(req)
                wall[label].append((time.perf_counter() - t0) * 1000)
                cpu[label] += time.process_time() - c0
                neo[label] += _cpu_of(args.neo4j_pid) - n0
    n = len(asks) * args.rounds
    for label in containers:
        w = sorted(wall[label])
        print(
            f"{label:>3}: {n} contexts, wall p50 {statistics.median(w):.1f} ms, "
            f"p95 {w[int(0.95 * len(w)) - 1]:.1f} ms, process CPU {1000 * cpu[label] / n:.1f} ms"
            + (f", Neo4j CPU {1000 * neo[label] / n:.1f} ms" if args.neo4j_pid else "")
            + " per context"
        )
    p50 = {k: statistics.median(v) for k, v in wall.items()}
    print(
        f"on / off: wall p50 {p50['on'] / p50['off']:.2f}, process CPU "
        f"{cpu['on'] / max(cpu['off'], 1e-9):.2f}"
        + (f", Neo4j CPU {neo['on'] / max(neo['off'], 1e-9):.2f}" if args.neo4j_pid else "")
    )


if __name__ == "__main__":
    main()
