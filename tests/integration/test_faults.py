"""Fault tests: a real ``sheriff up`` against a PRIVATE Neo4j (own home under a tmp path, own
ports), killed and cut off on purpose. The shared Neo4j on 7687 is never touched.

- kill -9 of the serving process in the middle of a large append, then the client's retry:
  every message stored once, in time order (a batch is stored whole or not at all).
- Neo4j stopped and restarted under client load: every answer within 5 s, from the requests in
  flight when Neo4j begins its graceful shutdown to those on the cold restarted Neo4j (a 503
  while Neo4j is out of reach or settling, never a hang: api/deadline.py), /health within 2 s,
  no confirmed (2xx) message lost, and the API recovers by itself.

One Neo4j serves the module (starting one takes 15-30 s). Select them with ``-m faults``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver

from api.settings import Settings
from graph.db import Timeouts, connect
from graph.keys import ApiKeyStore
from graph.migrations import apply_migrations
from graph.server import LocalNeo4j, ServerConfig

pytestmark = pytest.mark.faults

SHERIFF = [sys.executable, "-c", "from api.cli import main; main()"]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ANSWER_S = 5.0  # every answer while Neo4j is down or coming back (on a quiet machine)
# a restarted Neo4j can take ~40 s past Bolt's handshake to serve queries, and on a loaded host
# (load 20 on 2 cores) the API's first minute on it was 503s within the bound (api/deadline.py)
RECOVER_S = 240.0
READY_S = 180.0  # a cold `sheriff up` on a busy machine (model load included)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Private:
    """The private Neo4j and a driver on it (the test's own view of what is stored)."""

    server: LocalNeo4j
    uri: str
    password: str
    driver: Driver


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Private]:
    home = tmp_path_factory.mktemp("faults") / "neo4j"
    home.mkdir()
    shared_lib = (Settings().home / "neo4j" / "lib").resolve()
    if shared_lib.is_dir():  # reuse the jars instead of fetching Neo4j again
        (home / "lib").symlink_to(shared_lib)
    config = ServerConfig(home=home, bolt_port=free_port(), http_port=free_port(), heap="512m")
    server = LocalNeo4j(config)
    server.start()
    try:
        driver = connect(config.uri, "neo4j", server.password(), Timeouts(retry=0.5))
        apply_migrations(driver, datetime.now(UTC))
        yield Private(server, config.uri, server.password(), driver)
        driver.close()
    finally:
        server.stop()


@dataclass
class Api:
    """A `sheriff up` subprocess on the private Neo4j, with a key for one namespace."""

    private: Private
    namespace: str
    key: str
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's output (for failure messages)."""
        return self.log.read_text(errors="replace")[-chars:] if self.log else ""

    def start(self, log: Path) -> None:
        """Start the server and wait until /health says ok."""
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "SHERIFF_"))}
        env.update(
            NEO4J_URI=self.private.uri,
            NEO4J_PASSWORD=self.private.password,
            SHERIFF_API_PORT=str(self.port),
            SHERIFF_EXTRACTOR="deterministic",
            OPENAI_API_KEY="",
        )
        with log.open("ab") as out:
            self.proc = subprocess.Popen(  # its own group: the workers are killed with it
                [*SHERIFF, "up"], env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"sheriff up not ready in {READY_S} s:\n{log.read_text()[-3000:]}")

    def kill(self) -> None:
        """kill -9 of `sheriff up` and its worker processes (they would serve on, orphaned, if
        only the parent died), no clean-up of any kind."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="module")
def api(private: Private, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    namespace = f"faults-{uuid.uuid4().hex[:8]}"
    _, key = ApiKeyStore(private.driver).create(namespace, "fault tests", datetime.now(UTC))
    server = Api(private, namespace, key)
    server.start(tmp_path_factory.mktemp("api") / "api.log")
    yield server
    server.stop()


def stored(private: Private, namespace: str) -> list[dict[str, Any]]:
    """The namespace's messages as Neo4j holds them, in seq order."""
    records, _, _ = private.driver.execute_query(
        "MATCH (m:Message {namespace: $ns}) RETURN m.external_id AS xid, m.seq AS seq, "
        "m.at AS at ORDER BY m.seq",
        ns=namespace,
    )
    return [{"xid": r["xid"], "seq": r["seq"], "at": r["at"].to_native()} for r in records]


def assert_once_in_time_order(rows: list[dict[str, Any]]) -> None:
    xids = [r["xid"] for r in rows]
    assert len(xids) == len(set(xids)), "a message was stored twice"
    times = [r["at"] for r in rows]
    assert times == sorted(times), "seq order is not time order"


def batch(prefix: str, n: int, start: datetime) -> list[dict[str, Any]]:
    text = "We agreed to move the lake house deposit to Friday and to ask Dana for the keys. "
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{i}: {text * 3}",
            "at": (start + timedelta(seconds=i)).isoformat(),
            "external_id": f"{prefix}-{i}",
        }
        for i in range(n)
    ]


def wait_for_append_transaction(private: Private, timeout_s: float) -> bool:
    """True once the private Neo4j runs a transaction writing Message nodes (the append)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        records, _, _ = private.driver.execute_query(
            "SHOW TRANSACTIONS YIELD currentQuery WHERE currentQuery CONTAINS 'CREATE (m:Message)' "
            "RETURN count(*) AS n"
        )
        if records[0]["n"] > 0:
            return True
        time.sleep(0.005)
    return False


def test_kill_9_mid_append_then_the_clients_retry_stores_every_message_once_in_time_order(
    api: Api, private: Private, tmp_path: Path
) -> None:
    messages = batch("kill", 1000, T0)  # the largest batch the API takes
    body = {"messages": messages}  # the sleep policy on, as a client sends it
    outcome: list[Any] = []

    def post() -> None:
        try:
            outcome.append(
                httpx.post(f"{api.url}/v1/messages", json=body, headers=api.headers, timeout=60)
            )
        except httpx.TransportError as exc:
            outcome.append(exc)

    client = threading.Thread(target=post)
    client.start()
    caught = wait_for_append_transaction(private, timeout_s=30)
    api.kill()
    client.join(60)
    assert caught, "the append's write transaction was never seen running"
    # killed inside the transaction, or between its commit and the answer: either way the batch
    # is all there or not at all, never a part of it
    kept = stored(private, api.namespace)
    assert len(kept) in (0, len(messages)), f"{len(kept)} of {len(messages)} stored"
    answered = bool(outcome) and isinstance(outcome[0], httpx.Response)
    if answered:  # a 201 confirms the whole batch
        assert outcome[0].status_code == 201 and len(kept) == len(messages)

    api.start(tmp_path / "api-restarted.log")
    quick = {**body, "auto_sleep": False}  # the same messages; its ~20 sleeps would take a minute
    retry = httpx.post(f"{api.url}/v1/messages", json=quick, headers=api.headers, timeout=120)
    assert retry.status_code == 201, retry.text
    assert retry.json()["appended"] == len(messages) - len(kept)
    assert retry.json()["duplicates"] == len(kept)
    again = httpx.post(f"{api.url}/v1/messages", json=quick, headers=api.headers, timeout=120)
    assert again.status_code == 201 and again.json()["duplicates"] == len(messages)
    rows = stored(private, api.namespace)
    assert [r["xid"] for r in rows] == [m["external_id"] for m in messages]
    assert_once_in_time_order(rows)


@dataclass
class Answer:
    kind: str  # "append", "context" or "health"
    status: int  # 0 when the request failed without an answer
    seconds: float
    xid: str | None = None
    started: float = 0.0  # time.monotonic() when the request was sent


class Load:
    """Clients appending one message at a time (a message that got no 2xx is retried with the
    same external_id, as a client should) and asking for context, until stopped."""

    def __init__(self, api: Api, clients: int = 3) -> None:
        self.api = api
        self.answers: list[Answer] = []
        self.confirmed: set[str] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._client, args=(i,)) for i in range(clients)]

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        for t in self.threads:
            t.join(30)

    def successes(self, kind: str) -> int:
        with self.lock:
            return sum(1 for a in self.answers if a.kind == kind and 200 <= a.status < 300)

    def _client(self, i: int) -> None:
        n = 0
        with httpx.Client(base_url=self.api.url, headers=self.api.headers, timeout=30) as http:
            while not self.done.is_set():
                xid = f"load-{i}-{n}"
                ok = self._ask(http, "append", xid, "/v1/messages", {
                    "messages": [{"role": "user", "content": f"client {i} note {n} on the deposit",
                                  "external_id": xid}],
                    "auto_sleep": False,
                })  # fmt: skip
                n += ok
                self._ask(http, "context", None, "/v1/context", {"message": "the deposit?"})
                time.sleep(0.1)

    def _ask(self, http: httpx.Client, kind: str, xid: str | None, path: str, body: Any) -> bool:
        started = time.monotonic()
        try:
            status = http.post(path, json=body).status_code
        except httpx.TransportError:
            status = 0
        with self.lock:
            self.answers.append(Answer(kind, status, time.monotonic() - started, xid, started))
            if xid is not None and 200 <= status < 300:
                self.confirmed.add(xid)
        return 200 <= status < 300


def answer_bound(warm: list[Answer]) -> float:
    """``ANSWER_S``, or more on a machine so loaded that a normal answer (the warm load's median
    success) already takes over a tenth of it: the test is about hangs of 30-60 s, not about
    a shared CI box's speed."""
    ok = sorted(a.seconds for a in warm[len(warm) // 2 :] if 200 <= a.status < 300)  # warm
    return max(ANSWER_S, 10 * ok[len(ok) // 2]) if ok else ANSWER_S


def health(api: Api) -> tuple[int, float, dict[str, Any]]:
    started = time.monotonic()
    answer = httpx.get(f"{api.url}/health", timeout=10)
    return answer.status_code, time.monotonic() - started, answer.json()


def wait_until(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_neo4j_stopped_and_restarted_under_load_fails_fast_loses_nothing_and_recovers(
    api: Api, private: Private
) -> None:
    healths: list[tuple[int, float, dict[str, Any]]] = []
    with Load(api) as load:
        assert wait_until(lambda: load.successes("append") >= 12, 90), load.answers[-5:]
        down_at = len(load.answers)  # warmed up: a cold start's first answers are not the test
        t0 = time.monotonic()
        private.server.stop()  # graceful: returns once Neo4j is down
        assert wait_until(lambda: any(a.status == 503 for a in load.answers[down_at:]), 30)
        for _ in range(3):  # /health while Neo4j is down: fast, and says which part is down
            healths.append(health(api))
            time.sleep(0.5)
        private.server.start()
        back = load.successes("append")
        recovered = wait_until(lambda: load.successes("append") >= back + 6, RECOVER_S)
        assert recovered, f"{load.answers[-5:]}\n{api.log_tail()}"
        assert wait_until(lambda: load.successes("context") >= 3, 30)
        # /health probes Neo4j within 1.5 s: a restarted server's first probes on a loaded
        # host may miss it, so recovery is its answer turning "up", not the first sample
        back_up: list[tuple[int, float, dict[str, Any]]] = []
        wait_until(lambda: back_up.append(health(api)) or back_up[-1][0] == 200, 30)
        healths.append(back_up[-1])

    warm, during = load.answers[:down_at], load.answers[down_at:]
    bound = answer_bound(warm)
    for a in sorted(during, key=lambda a: -a.seconds)[:5]:  # the slowest, s after the stop
        print(f"{a.kind} {a.status} in {a.seconds:.2f} s, sent at {a.started - t0:+.1f} s")
    print(
        f"{len(during)} answers: max {max(a.seconds for a in during):.2f} s (bound {bound:.1f} s), "
        f"statuses {sorted({a.status for a in during})}, 503s {sum(a.status == 503 for a in during)}"
        f" (max {max((a.seconds for a in during if a.status == 503), default=0):.2f} s)"
    )
    # the fail-fast promise, for requests in flight when Neo4j began its graceful shutdown, sent
    # while it was down, and sent to the cold restarted Neo4j alike: an answer within the bound
    slow = [a for a in during if a.seconds > bound]
    assert slow == [], f"{len(slow)} answers slower than {bound:.1f} s: {slow[:5]}"
    assert {a.status for a in load.answers} <= {200, 201, 503}, {a.status for a in load.answers}
    assert all(seconds < 2.0 for _, seconds, _ in healths), healths
    assert [(s, b["dependencies"]["neo4j"]["state"]) for s, _, b in healths[:3]] == [
        (503, "down")
    ] * 3
    assert healths[-1][0] == 200 and healths[-1][2]["dependencies"]["neo4j"]["state"] == "up"

    rows = stored(private, api.namespace)
    load_rows = [r for r in rows if r["xid"].startswith("load-")]
    assert load.confirmed <= {r["xid"] for r in load_rows}  # no confirmed message lost
    assert_once_in_time_order(rows)
