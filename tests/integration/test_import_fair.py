"""An import is one tenant's fair share: the key is checked before a byte of any body is read,
an upload is counted as it streams (413 having read at most the limit), an import is written
in bounded batches (a stop between two is completed exactly once by sending the file again),
and a namespace runs one import at a time.

Bodies go to the real app (real Neo4j, real model) as ASGI messages on the test client's own
event loop, so a test counts the bytes the server pulled from the request stream."""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

from api.container import Container
from api.settings import Settings
from graph.transfer import ImportCommit, TransferStore
from retrieval.embedding import MiniLMEmbedder
from service.import_pacing import Pacing
from service.importer import ImportService, parse_document
from tests.integration.api_support import api_client, bearer, new_key

UPLOAD_LIMIT = 1_048_576
CHUNK = 65_536
DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    ws = tmp_path_factory.mktemp("ws")
    with api_client(settings, embedder, ws, api_max_import_bytes=UPLOAD_LIMIT) as c:
        yield c


@dataclass
class Sent:
    """One request fed to the app chunk by chunk, and what the app did with it."""

    status: int = 0
    body: bytes = b""
    pulled: int = 0  # body bytes the app took from the request stream
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


def _send(
    client: TestClient,
    path: str,
    chunks: Iterator[bytes],
    headers: dict[str, str],
    hold: threading.Event | None = None,
) -> Sent:
    """POST ``chunks`` to ``path`` through the app on the client's event loop, counting what
    the app pulls; ``hold``: after the first chunk, the stream waits until it is set."""
    sent = Sent()
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": raw,
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}  # fmt: skip
    pending = iter(chunks)
    nothing = object()

    async def receive() -> dict[str, Any]:
        if hold is not None and sent.pulled > 0:
            await anyio.to_thread.run_sync(hold.wait)
        chunk = next(pending, nothing)
        if chunk is nothing:
            return {"type": "http.request", "body": b"", "more_body": False}
        assert isinstance(chunk, bytes)
        sent.pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent.status = message["status"]
            sent.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            sent.body += message.get("body", b"")

    assert client.portal is not None  # the client is entered: its loop runs the app
    client.portal.call(client.app, scope, receive, send)
    return sent


def _zeros(total: int) -> Iterator[bytes]:
    for _ in range(total // CHUNK):
        yield b"0" * CHUNK


# -- the key before the body ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/v1/import", {}),
        ("/v1/import", {"Authorization": "Bearer shc_" + "x" * 43}),  # well-formed, unknown
        ("/v1/import/chatgpt", {"X-API-Key": "not-a-key"}),
        ("/v1/messages", {"Authorization": "Basic dXNlcjpwYXNz"}),
        ("/v1/context", {}),
        ("/mcp", {"Authorization": "Bearer shc_" + "y" * 43}),
    ],
)
def test_a_64_mib_body_without_a_live_key_is_401_unread(
    client: TestClient, path: str, headers: dict[str, str]
) -> None:
    sent = _send(client, path, _zeros(64 * 1_048_576), headers)
    assert sent.status == 401, sent.body
    assert sent.json()["error"] == "AuthFailed"
    assert sent.headers["www-authenticate"].startswith("Bearer")
    assert sent.pulled == 0  # not one byte of the body was read


def test_a_revoked_key_is_401_before_the_body(client: TestClient, namespace: str) -> None:
    key = new_key(client, namespace)
    keys = client.app.state.api_keys  # type: ignore[attr-defined]
    keys.revoke(keys.list_keys(namespace)[0].key_id)
    sent = _send(client, "/v1/import", _zeros(8 * CHUNK), bearer(key))
    assert sent.status == 401 and "revoked" in sent.json()["detail"]
    assert sent.pulled == 0


def test_open_routes_stay_open_and_a_401_is_counted_by_reason(client: TestClient) -> None:
    assert client.get("/health").status_code == 200
    assert client.get("/openapi.json").status_code == 200
    before = _auth_count(client, "malformed")
    assert client.get("/v1/topics/x", headers={"X-API-Key": "nope"}).status_code == 401
    assert _auth_count(client, "malformed") == before + 1  # counted once, by the gate


def _auth_count(client: TestClient, reason: str) -> float:
    line = f'sheriff_auth_total{{outcome="{reason}"}} '
    found = [x for x in client.get("/metrics").text.splitlines() if x.startswith(line)]
    return float(found[0].split()[-1]) if found else 0.0


# -- the upload limit while streaming -------------------------------------------------------------
def test_an_oversize_upload_is_413_having_read_at_most_the_limit(
    client: TestClient, namespace: str
) -> None:
    auth = bearer(new_key(client, namespace))
    sent = _send(client, "/v1/import", _zeros(64 * 1_048_576), auth)  # chunked: no length
    assert sent.status == 413, sent.body
    assert sent.json()["error"] == "PayloadTooLarge"
    assert f"{UPLOAD_LIMIT}-byte limit" in sent.json()["detail"]
    assert UPLOAD_LIMIT < sent.pulled <= UPLOAD_LIMIT + CHUNK  # stopped at the chunk past it
    assert client.get("/v1/import/status", headers=auth).json()["running"] is False
    again = client.get("/v1/export", headers=auth).text  # the namespace is still empty
    assert json.loads(again.splitlines()[-1])["counts"]["message"] == 0


def test_a_declared_oversize_upload_is_413_unread(client: TestClient, namespace: str) -> None:
    auth = {**bearer(new_key(client, namespace)), "Content-Length": str(64 * 1_048_576)}
    sent = _send(client, "/v1/import", _zeros(64 * 1_048_576), auth)
    assert sent.status == 413 and sent.pulled == 0


# -- one import per namespace ---------------------------------------------------------------------
def test_a_second_import_of_a_namespace_is_409_while_the_first_runs(
    client: TestClient, namespace: str, other_namespace: str
) -> None:
    auth, other = bearer(new_key(client, namespace)), bearer(new_key(client, other_namespace))
    document = _document(client, other_namespace, topics=2)
    hold, results = threading.Event(), []
    first = threading.Thread(target=lambda: results.append(
        _send(client, "/v1/import", _lines(document), auth, hold=hold)))  # fmt: skip
    first.start()
    try:
        status = _wait_running(client, auth)
        assert status["phase"] == "receiving" and status["received_bytes"] > 0
        second = _send(client, "/v1/import", _lines(document), auth)
        assert second.status == 409, second.body
        assert "already running (receiving" in second.json()["detail"]
        assert second.pulled == 0  # refused before its body was read
        elsewhere = client.post("/v1/import", content=document, headers=other)
        assert elsewhere.status_code == 200, elsewhere.text  # another tenant is not held
    finally:
        hold.set()
        first.join(60)
    assert results[0].status == 200, results[0].body
    assert results[0].json()["counts"]["topic"]["created"] == 2
    assert client.get("/v1/import/status", headers=auth).json() == {
        "running": False, "phase": None, "received_bytes": 0, "written": 0, "total": None}  # fmt: skip


def _wait_running(client: TestClient, auth: dict[str, str]) -> dict[str, Any]:
    for _ in range(200):
        status: dict[str, Any] = client.get("/v1/import/status", headers=auth).json()
        if status["running"] and status["received_bytes"]:
            return status
        threading.Event().wait(0.05)
    raise AssertionError("the first import never started")


def _lines(document: str) -> Iterator[bytes]:
    for line in document.splitlines(keepends=True):
        yield line.encode()


# -- batches --------------------------------------------------------------------------------------
class StopsAfter(TransferStore):
    """The real store, stopping (as a crash would) after ``batches`` committed batches."""

    def __init__(self, inner: TransferStore, batches: int) -> None:
        super().__init__(inner._driver, inner._db)
        self.left = batches

    def commit(self, plan: ImportCommit) -> None:
        if self.left == 0:
            raise ConnectionResetError("the process died between two batches")
        self.left -= 1
        super().commit(plan)


def _importer(client: TestClient, store: TransferStore | None = None) -> ImportService:
    c: Container = client.app.state.container  # type: ignore[attr-defined]
    pauses: list[float] = []
    return ImportService(store or c.transfer_store, c.messages, c.topics, c.sleep_store,
                         c.embedder, c.clock, id_key=c.importer.id_key, redactor=c.redactor,
                         pacing=Pacing(batch=3, sleep=pauses.append))  # fmt: skip


def test_an_import_larger_than_a_batch_lands_whole_and_once(
    client: TestClient, namespace: str, other_namespace: str
) -> None:
    document = _document(client, other_namespace, topics=7)
    progress: list[tuple[int, int]] = []
    first = _importer(client).run(namespace, parse_document(document.splitlines()),
                                  progress=lambda done, total: progress.append((done, total)))  # fmt: skip
    total = first.written
    assert first.batches >= 6 and progress[0] == (0, total) and progress[-1] == (total, total)
    assert [d for d, _ in progress] == sorted(d for d, _ in progress)
    assert first.counts["topic"].created == 7 and first.counts["message"].created == 14
    again = _importer(client).run(namespace, parse_document(document.splitlines()))
    assert again.counts["topic"].unchanged == 7 and again.counts["message"].unchanged == 14
    assert _shape(client, namespace) == _shape(client, other_namespace)


def test_a_stop_between_batches_is_completed_by_a_rerun_exactly_once(
    client: TestClient, namespace: str, other_namespace: str
) -> None:
    document = _document(client, other_namespace, topics=7)
    c: Container = client.app.state.container  # type: ignore[attr-defined]
    crashing = _importer(client, StopsAfter(c.transfer_store, batches=6))
    with pytest.raises(ConnectionResetError):
        crashing.run(namespace, parse_document(document.splitlines()))
    half = _shape(client, namespace)
    assert half["message"] == 14 and 0 < half.get("topic", 0) < 7  # stopped amid the topics
    rerun = _importer(client).run(namespace, parse_document(document.splitlines()))
    assert rerun.counts["message"].refused == 0 and rerun.counts["topic"].refused == 0
    assert _shape(client, namespace) == _shape(client, other_namespace)
    again = client.post("/v1/import", content=document, headers=bearer(new_key(client, namespace)))
    assert again.status_code == 200 and _shape(client, namespace) == _shape(client, other_namespace)


def _document(client: TestClient, namespace: str, topics: int) -> str:
    """``namespace`` filled with 2 messages a topic, ``topics`` topics and links between
    neighbours through the API, then exported (its ids are then owned: an import elsewhere
    remaps every one)."""
    auth = bearer(new_key(client, namespace))
    turns = [{"role": "user", "content": f"Note {i}: errand {uuid.uuid4().hex[:6]} is due.",
              "at": (DAY1 + timedelta(minutes=i)).isoformat()} for i in range(2 * topics)]  # fmt: skip
    client.post("/v1/messages", json={"messages": turns, "auto_sleep": False},
                headers=auth).raise_for_status()  # fmt: skip
    made = []
    for i in range(topics):
        body = {"name": f"Errand {i}", "one_liner": f"Errand number {i} of the week.",
                "facts": [{"text": f"Errand {i} costs {10 + i} euros"}]}  # fmt: skip
        response = client.post("/v1/topics", json=body, headers=auth)
        response.raise_for_status()
        made.append(response.json()["topic_id"])
    for a, b in itertools.pairwise(made):
        client.post(f"/v1/topics/{a}/links", json={"to": b, "type": "NEXT", "weight": 1},
                    headers=auth).raise_for_status()  # fmt: skip
    response = client.get("/v1/export", headers=auth)
    response.raise_for_status()
    return response.text


def _shape(client: TestClient, namespace: str) -> dict[str, Any]:
    """What a namespace holds, without its ids: counts by kind, message seqs and contents,
    topic names with their facts, edge weights by topic names, event counts by topic name."""
    text = client.get("/v1/export", headers=bearer(new_key(client, namespace))).text
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    names = {r["topic_id"]: r["name"] for r in rows if r["kind"] == "topic"}
    of = {kind: [r for r in rows if r["kind"] == kind] for kind in ("message", "topic", "edge")}
    events = Counter(names[r["topic_id"]] for r in rows if r["kind"] == "event")
    return {
        **Counter(r["kind"] for r in rows if r["kind"] not in ("header", "end")),
        "messages": [(r["seq"], r["content"]) for r in of["message"]],
        "topics": sorted((r["name"], sorted(f["text"] for f in r["facts"])) for r in of["topic"]),
        "edges": sorted(
            (names[r["from_topic_id"]], names[r["to_topic_id"]], r["weight"]) for r in of["edge"]
        ),
        "events": sorted(events.items()),
    }
