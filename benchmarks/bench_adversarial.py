"""Adversarial text benchmark: every text path on crafted inputs at 32k and 100k characters.

    .venv/bin/python benchmarks/bench_adversarial.py                   # every path and family
    .venv/bin/python benchmarks/bench_adversarial.py --paths split,routing --families dots,nl
    .venv/bin/python benchmarks/bench_adversarial.py --sizes 8000,32000 --table
    .venv/bin/python benchmarks/bench_adversarial.py --server        # the findings over HTTP

A regex with overlapping quantifiers (``\\s*,?\\s*``, ``^\\s*`` under MULTILINE, a run of
terminators entered at every character) is quadratic or worse on input built to make it
backtrack; one such request held the GIL for 30-130 s and stalled every tenant. Each path below
is run on each input family at each size; printed per path: the worst family's time at the
smallest and the largest size and the ratio largest/smallest. Linear is about the size ratio
(100k/32k = 3.1); quadratic would be ~10, cubic ~30. With --table every (path, family) row is
printed too.

Paths (pure functions, no Neo4j, no model):
  split       text.english.split_sentences
  extract     sleepwake.extract.extract (redaction, sentences, every rule)
  nouns       text.english.noun_phrases (uncached)
  candidates  sleepwake.candidates.build_candidates on one message (the sleep's step 3)
  triggers    retrieval.triggers.fired (memory, time, entities, switch, recurrence)
  classify    retrieval.classify.classify
  routing     skills.routing.classify_intent + deep_triggers(text, last_tool_output=text)
              + skills.requests.suggest_args for the four built-in skills
  timephrases text.timephrases.find_windows (reads the first 20,000 characters)
  redaction   sleepwake.redact's public redaction function (redact_text or redact)
  snippets    retrieval.snippets.terms + best_sentences
  tracebacks  skills.debug.tracebacks.parse_traceback

--server instead runs the issue's findings against a real server (``uvicorn api.app:create_app
--factory`` in a subprocess, the real container and Neo4j, as bench_api_concurrency.py does) with
one key, while two threads poll ``GET /health`` and a second tenant's ``POST /v1/context`` every
0.1 s; printed per request: its status and time, and the slowest /health and other-tenant answer
during it (and /health idle, for scale). The two namespaces are deleted afterwards.

Each call runs under a --limit second alarm; a call that hits it prints as ">LIMIT" (a
regression to super-linear time shows up as that). Times are wall clock of one call (the worst
of --repeat calls), on a shared machine: small times are noisy, the ratio of large ones is not.
"""

from __future__ import annotations

import argparse
import random
import signal
import string
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

from graph.models import Message
from retrieval import classify as classify_mod
from retrieval import snippets, triggers
from skills import requests as skill_requests
from skills import routing
from skills.debug import tracebacks
from sleepwake import extract as extract_mod
from sleepwake import redact as redact_mod
from sleepwake.candidates import build_candidates
from text import english, timephrases

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
KNOWN = frozenset({"billing service", "neo4j", "mel"})
SKILLS = ("write_docs", "repo_refactor", "debug", "plan_and_execute")

Family = Callable[[int], str]


def _repeat(unit: str) -> Family:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


def _names(n: int) -> str:
    rnd = random.Random(7)
    words = (
        "Q" + "".join(rnd.choice(string.ascii_lowercase) for _ in range(5))
        for _ in range(n // 7 + 1)
    )
    return ", ".join(words)[:n]


def _unicode(n: int) -> str:
    rnd = random.Random(11)
    pool = [chr(c) for c in (*range(0x20, 0x2FF), *range(0x400, 0x4FF), 0x2026, 0x201C, 0x2019)]
    pool += [" ", "\n", ".", "?"] * 40
    return "".join(rnd.choice(pool) for _ in range(n))


FAMILIES: dict[str, Family] = {
    "a+spaces+b": lambda n: "a" + " " * (n - 2) + "b",
    "dots": _repeat("."),
    "a+newlines+b": lambda n: "a" + "\n" * (n - 2) + "b",
    "newlines": _repeat("\n"),
    "dashes": _repeat("-"),
    "A": _repeat("A"),
    "a_space": _repeat("a "),
    "ones": _repeat("1"),
    "quotes": _repeat('"'),
    "colons": _repeat(":"),
    "slashes": _repeat("/"),
    "tabs": _repeat("\t"),
    "unicode": _unicode,
    "dot_space": _repeat(". "),
    "Aa._": _repeat("Aa. "),
    "number_space": _repeat("1 "),
    "names": _names,
    "today_": _repeat("today "),
    "nl_indent": _repeat("\n "),
    "file_frames": _repeat('File "'),
    "needs_first": _repeat("x needs y first, "),
    "assign": _repeat("key=value "),
    "docs_": _repeat("docs "),
}


def _redactor() -> Callable[[str], object]:
    """The redaction module's public function (it is being rewritten: accept either name)."""
    for name in ("redact_text", "redact"):
        fn = getattr(redact_mod, name, None)
        if callable(fn):
            return fn
    raise SystemExit("sleepwake.redact has neither redact_text nor redact")


def _candidates(text: str) -> object:
    message = Message(namespace="bench", role="user", content=text, at=NOW, seq=1)
    return build_candidates([message])


def _routing(text: str) -> object:
    args = [skill_requests.suggest_args(s, text) for s in SKILLS]
    return routing.classify_intent(text), routing.deep_triggers(text, text), args


def _snippets(text: str) -> object:
    return snippets.terms(text), snippets.best_sentences(text, frozenset({"billing", "a"}), 3)


def _nouns(text: str) -> object:
    english._noun_phrases.cache_clear()  # measure the work, not the cache
    return english.noun_phrases(text)


def _triggers(text: str) -> object:
    english._noun_phrases.cache_clear()
    ctx = triggers.TriggerContext(now=NOW, known_names=KNOWN)
    return triggers.fired(text, ctx)


PATHS: dict[str, Callable[[str], object]] = {
    "split": english.split_sentences,
    "extract": extract_mod.extract,
    "nouns": _nouns,
    "candidates": _candidates,
    "triggers": _triggers,
    "classify": lambda t: classify_mod.classify(t, [], names_known=True),
    "routing": _routing,
    "timephrases": lambda t: timephrases.find_windows(t, NOW),
    "redaction": _redactor(),
    "snippets": _snippets,
    "tracebacks": tracebacks.parse_traceback,
}


class _Limit(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Limit


def timed(fn: Callable[[str], object], text: str, limit: int, repeat: int) -> float:
    """The worst wall time of ``repeat`` calls, in seconds; inf when one hits ``limit``."""
    worst = 0.0
    for _ in range(repeat):
        signal.alarm(limit)
        started = time.perf_counter()
        try:
            fn(text)
        except _Limit:
            return float("inf")
        finally:
            signal.alarm(0)
        worst = max(worst, time.perf_counter() - started)
    return worst


def _fmt(seconds: float, limit: int) -> str:
    return f">{limit}s" if seconds == float("inf") else f"{seconds * 1000:9.1f}"


def run_path(
    name: str, families: list[str], sizes: list[int], args: argparse.Namespace
) -> tuple[str, list[float], float]:
    """Every family on one path; prints rows with --table; returns the worst family, its
    times per size and the largest ratio seen over all families."""
    fn = PATHS[name]
    worst: tuple[str, list[float]] = ("", [0.0] * len(sizes))
    max_ratio = 0.0
    for family in families:
        times = [timed(fn, FAMILIES[family](n), args.limit, args.repeat) for n in sizes]
        ratio = times[-1] / max(times[0], 1e-4)
        if times[0] > 0.005:  # a ratio of two sub-5 ms times is noise
            max_ratio = max(max_ratio, ratio)
        if times[-1] >= worst[1][-1]:
            worst = (family, times)
        if args.table:
            cells = " ".join(_fmt(t, args.limit) for t in times)
            print(f"  {name:11s} {family:13s} {cells}  ratio {ratio:5.1f}", flush=True)
    return worst[0], worst[1], max_ratio


def _fillers(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"ok, noted {i}"} for i in range(n)]


def _messages(content: str) -> dict[str, Any]:
    """The crafted message, then 14 short turns: a sleep keeps the last 12 verbatim."""
    turns = [{"role": "user", "content": content}, *_fillers(14)]
    return {"messages": turns, "auto_sleep": False}


SERVER_CASES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("context: 32,000 dots", "/v1/context", {"message": "." * 32_000}),
    ("context: a + 31,998 newlines + b", "/v1/context", {"message": "a" + "\n" * 31_998 + "b"}),
    (
        "context: tool output of 32,000 newlines",
        "/v1/context",
        {"message": "why does it fail?", "last_tool_output": "\n" * 32_000},
    ),
    ("context: 6,400 x 'docs '", "/v1/context", {"message": "docs " * 6_400}),
    ("messages: a + 12,000 spaces + b", "/v1/messages", _messages("a" + " " * 12_000 + "b")),
    ("sleep", "/v1/sleep", None),
    ("messages: 100,000 chars of names", "/v1/messages", _messages(_names(100_000))),
    ("sleep", "/v1/sleep", None),
    ("messages: 100,000 chars of 'Aa. '", "/v1/messages", _messages("Aa. " * 25_000)),
    ("sleep", "/v1/sleep", None),
]


def _poll(url: str, key: str, stop: threading.Event, seen: dict[str, list[float]]) -> None:
    """Ask /health and the other tenant's /v1/context in turn until ``stop``."""
    headers = {"Authorization": f"Bearer {key}"}
    while not stop.is_set():
        for kind in ("health", "other"):
            started = time.perf_counter()
            if kind == "health":
                httpx.get(f"{url}/health", timeout=600)
            else:
                body = {"message": "what did we decide about billing last week?"}
                httpx.post(f"{url}/v1/context", json=body, headers=headers, timeout=600)
            seen[kind].append(time.perf_counter() - started)
        time.sleep(0.1)


def _case(url: str, keys: tuple[str, str], path: str, body: dict[str, Any] | None) -> str:
    seen: dict[str, list[float]] = {"health": [], "other": []}
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(url, keys[1], stop, seen))
    poller.start()
    time.sleep(0.3)
    started = time.perf_counter()
    answer = httpx.post(
        f"{url}{path}", json=body, headers={"Authorization": f"Bearer {keys[0]}"}, timeout=900
    )
    took = time.perf_counter() - started
    stop.set()
    poller.join()
    return (
        f"{answer.status_code:6d}  {took * 1000:7.0f}  {max(seen['health']) * 1000:11.0f}"
        f"  {max(seen['other']) * 1000:12.0f}"
    )


def run_server() -> None:
    """The findings over HTTP against a real server, with /health and a neighbour polled."""
    from bench_api_concurrency import ApiServer  # the same server harness

    from api.settings import Settings
    from graph.db import connect
    from graph.keys import ApiKeyStore

    settings = Settings()
    driver = connect(*settings.connection())
    namespaces = [f"bench-adv-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    store = ApiKeyStore(driver, settings.neo4j_database)
    keys = tuple(store.create(ns, "bench_adversarial", datetime.now(UTC))[1] for ns in namespaces)
    log_path = Path(tempfile.mkdtemp()) / "server.log"
    with log_path.open("w") as log:
        server = ApiServer(log, log_path, workers=1)
        try:
            server.start()
            idle = []
            for _ in range(10):
                started = time.perf_counter()
                httpx.get(f"{server.url}/health", timeout=60)
                idle.append(time.perf_counter() - started)
            print(
                f"/health idle: median {sorted(idle)[5] * 1000:.0f} ms, max {max(idle) * 1000:.0f}"
            )
            print(f"{'request (tenant 1)':40s} status  took ms  /health max  tenant 2 max")
            for label, path, body in SERVER_CASES:
                row = _case(server.url, (keys[0], keys[1]), path, body)
                print(f"{label:40s} {row}", flush=True)
        finally:
            server.stop()
            for ns in namespaces:  # the keys are nodes of their namespace
                driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)
            driver.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="32000,100000", help="comma-separated text lengths")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated paths")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated inputs")
    parser.add_argument("--repeat", type=int, default=1, help="calls per cell (the worst counts)")
    parser.add_argument("--limit", type=int, default=120, help="seconds before a call is cut")
    parser.add_argument("--table", action="store_true", help="print every (path, family) row")
    parser.add_argument("--server", action="store_true", help="the findings over real HTTP")
    args = parser.parse_args()
    if args.server:
        run_server()
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    paths, families = args.paths.split(","), args.families.split(",")
    signal.signal(signal.SIGALRM, _alarm)
    print(f"{len(families)} input families x sizes {sizes} chars; times in ms (worst call)")
    head = " ".join(f"{n:>9,}" for n in sizes)
    rows = []
    for name in paths:
        family, times, max_ratio = run_path(name, families, sizes, args)
        rows.append((name, family, times, max_ratio))
        if not args.table:
            print(f"  {name} done", flush=True)
    print(f"\n{'path':11s} {'worst input':13s} {head}  ratio  max ratio (any input)")
    for name, family, times, max_ratio in rows:
        cells = " ".join(_fmt(t, args.limit) for t in times)
        ratio = times[-1] / max(times[0], 1e-4)
        print(f"{name:11s} {family:13s} {cells}  {ratio:5.1f}  {max_ratio:5.1f}")


if __name__ == "__main__":
    main()
