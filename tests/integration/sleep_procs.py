"""Real processes for the sleep worker fault and scale tests (not collected by pytest).

One interpreter imports everything once, then forks the processes the test needs (a fork
costs milliseconds; a fresh interpreter seconds on a busy 2-core machine). Each child opens
its own Neo4j driver and runs the production code: ``create_app`` under uvicorn for an API
process, ``Container.sleep_worker().run_forever`` for a worker (what ``sheriff up
--no-worker`` and ``sheriff worker`` run). The hashing embedder stands in for MiniLM so no
child loads a model; a recovery in the test process uses the same embedder.

    python -m tests.integration.sleep_procs kill-at NS:STEP [NS:STEP ...]
        a worker per pair that SIGKILLs itself at the end of sleep step STEP of NS;
        prints {"NS": exit signal or code}
    python -m tests.integration.sleep_procs kill-in-passages NS WRITE
        a worker (``run_forever``: its sleeps and its passage thread) that SIGKILLs itself
        when its passage thread is about to write its WRITE-th batch (embedded, not written);
        prints {"NS": exit signal or code}
    python -m tests.integration.sleep_procs serve PORT [PORT ...] --workers N
        API processes on the ports and N workers, until SIGTERM (then stops them all)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from datetime import timedelta

from api.container import Container
from api.settings import Settings
from sleepwake.policy import SleepPolicy
from tests.fakes import HashEmbedder

LEASE = timedelta(seconds=float(os.environ.get("SLEEP_PROCS_LEASE", "1.0")))
POLICY = SleepPolicy(context_budget_tokens=500, buffer_share=0.5, tail_turns=2, lease_ttl=LEASE)


def container(**update: object) -> Container:
    """A background-mode container over a fresh driver, the hashing embedder, POLICY."""
    settings = Settings().model_copy(update={"sleep_mode": "background", **update})
    return Container(settings, embedder=HashEmbedder(), policy=POLICY)


def _kill_at(namespace: str, step: str) -> None:
    """Child: claim the namespace's sleep and die by SIGKILL at the end of ``step``."""
    c = container()

    def die(at: str) -> None:
        if at == step:
            os.kill(os.getpid(), signal.SIGKILL)

    c.sleeper.faults = die
    worker = c.sleep_worker(f"doomed-{step}", namespace)
    run = worker.run_once()
    print(f"{namespace}: step {step} never came ({run})", file=sys.stderr)
    os._exit(3)


def kill_at(pairs: list[str]) -> None:
    """One child per NS:STEP, one after another, each claiming its own namespace; their exit
    statuses as JSON (-9: killed at the step as asked)."""
    out: dict[str, int] = {}
    for pair in pairs:
        namespace, step = pair.split(":", 1)
        pid = os.fork()
        if pid == 0:
            os.environ["SLEEP_PROCS_NS"] = namespace
            _kill_at(namespace, step)
        _, status = os.waitpid(pid, 0)
        out[namespace] = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    print(json.dumps(out))


def kill_in_passages(namespace: str, write: int) -> None:
    """Fork a worker of ``namespace`` that dies by SIGKILL as its passage thread is about to
    write its ``write``-th batch, while its sleep thread works; its exit status as JSON."""
    pid = os.fork()
    if pid == 0:
        c = container()
        store = c.passage_indexer.store
        real, calls = store.write, []

        def doomed(messages: object) -> int:
            calls.append(1)
            if len(calls) == write:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(messages)  # type: ignore[arg-type]

        store.write = doomed  # type: ignore[method-assign]
        c.sleep_worker("doomed-passages", namespace).run_forever(threading.Event(), 0.05)
        os._exit(3)  # never reached: run_forever returns only once stopped
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    print(json.dumps({namespace: code}))


def _api(port: int) -> None:
    import uvicorn

    from api.app import create_app

    c = container()
    uvicorn.run(create_app(c), host="127.0.0.1", port=port, log_level="warning")
    os._exit(0)


def _worker(name: str, poll: float) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    c = container()
    c.sleep_worker(name).run_forever(stop, poll)
    c.close()
    os._exit(0)


def serve(ports: list[int], workers: int, poll: float) -> None:
    """API processes and workers until SIGTERM; then each child gets SIGTERM."""
    children = []
    for port in ports:
        if (pid := os.fork()) == 0:
            _api(port)
        children.append(pid)
    for i in range(workers):
        if (pid := os.fork()) == 0:
            _worker(f"worker-{i}", poll)
        children.append(pid)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(json.dumps({"children": children}), flush=True)
    while not stop.wait(0.2):
        pass
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for pid in children:
        while time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kill-at")
    k.add_argument("pairs", nargs="+")
    p = sub.add_parser("kill-in-passages")
    p.add_argument("namespace")
    p.add_argument("write", type=int)
    s = sub.add_parser("serve")
    s.add_argument("ports", nargs="+", type=int)
    s.add_argument("--workers", type=int, default=2)
    s.add_argument("--poll", type=float, default=0.2)
    args = parser.parse_args()
    if args.cmd == "kill-at":
        kill_at(args.pairs)
    elif args.cmd == "kill-in-passages":
        kill_in_passages(args.namespace, args.write)
    else:
        serve(args.ports, args.workers, args.poll)


if __name__ == "__main__":
    main()
