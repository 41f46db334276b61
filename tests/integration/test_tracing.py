"""OpenTelemetry spans through the real API, Neo4j and embedding model (docs/observability.md).

The SDK's in-memory exporter holds the spans of one sleep and one context request; the tests
read their trees: request span -> sleep / context -> steps -> one span per Neo4j query, named
by its .cypher file; the namespace only as its HMAC; no parameter, message text or stored
text in any attribute. Also: the OTLP http/protobuf exporter, configured by the standard
variables alone, delivers a span to a collector (a local HTTP sink here).
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import SecretStr

from api import telemetry
from api.settings import Settings
from graph import tracing
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key
from tests.integration.dialogues import PARTY_AND_BIKE
from tests.integration.live_server import bearer as live_bearer
from tests.integration.live_server import live_server, mcp_session

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SLEPT = DAY1 + timedelta(hours=2)
LATER = DAY1 + timedelta(days=3)
SALT = "test-salt-of-this-install"
TURNS = PARTY_AND_BIKE
QUESTION = "how much is the caterer's deposit for Mel's party?"
SLEEP_STEPS = [
    "sleep.slice", "sleep.extract", "sleep.embed", "sleep.subjects", "sleep.match",
    "sleep.normalise", "sleep.edges", "sleep.wake_packet", "sleep.commit",
]  # fmt: skip
CONTEXT_STEPS = [
    "context.plan", "context.search", "context.expand", "context.decide", "context.pack",
    "context.finish",
]  # fmt: skip
# words of the stored text and the question: none may show in an attribute
PRIVATE = ["Mel", "Rosa", "caterer", "deposit", "lake house", "brake"]


@pytest.fixture
def spans(settings: Settings) -> Iterator[InMemorySpanExporter]:
    """Tracing on for the test, into memory (synchronously: every span ended is there)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.install(
        provider, settings.model_copy(update={"otel_namespace_salt": SecretStr(SALT)})
    )
    try:
        yield exporter
    finally:
        tracing.uninstall()
        provider.shutdown()


@pytest.fixture
def client(
    settings: Settings,
    embedder: MiniLMEmbedder,
    tmp_path: Path,
    spans: InMemorySpanExporter,
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path, tail_turns=2) as c:
        yield c


def _hashed(namespace: str) -> str:
    return hmac.new(SALT.encode(), namespace.encode(), hashlib.sha256).hexdigest()[:16]


def _talk(client: TestClient, auth: dict[str, str]) -> None:
    messages = [
        {"role": role, "content": text, "at": (DAY1 + timedelta(minutes=i)).isoformat()}
        for i, (role, text) in enumerate(TURNS)
    ]
    client.post(
        "/v1/messages", json={"messages": messages, "auto_sleep": False}, headers=auth
    ).raise_for_status()


class Tree:
    """The spans of one trace, by id, with their children in start order."""

    def __init__(self, spans: tuple[ReadableSpan, ...], root: ReadableSpan) -> None:
        assert root.context is not None
        self.trace_id = root.context.trace_id
        self.spans = [s for s in spans if s.context and s.context.trace_id == self.trace_id]
        self.root = root

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        found = [s for s in self.spans if s.parent and s.parent.span_id == parent.context.span_id]
        return sorted(found, key=lambda s: s.start_time or 0)

    def only(self, parent: ReadableSpan, name: str) -> ReadableSpan:
        named = [s for s in self.children(parent) if s.name == name]
        assert len(named) == 1, (name, [s.name for s in self.children(parent)])
        return named[0]

    def queries(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The query spans under ``parent``, at any depth."""
        found, todo = [], [parent]
        while todo:
            for child in self.children(todo.pop()):
                todo.append(child)
                if (child.attributes or {}).get("db.system.name") == "neo4j":
                    found.append(child)
        return found


def _request(spans: InMemorySpanExporter, name: str) -> Tree:
    roots = [s for s in spans.get_finished_spans() if s.name == name]
    assert len(roots) == 1, [s.name for s in spans.get_finished_spans() if s.parent is None]
    root = roots[0]
    assert root.parent is None and root.kind is SpanKind.SERVER
    return Tree(spans.get_finished_spans(), root)


QUERY_FILES = {p.name for p in (resources.files("cypher") / "queries").iterdir()}


def _check_queries(tree: Tree, namespace: str) -> None:
    """Every query span of the trace: a client span named by a cypher/queries file (none
    inline), timed, and with no attribute but the database system and name."""
    queries = tree.queries(tree.root)
    assert queries
    for q in queries:
        assert q.name and set(q.name.split("+")) <= QUERY_FILES, q.name
        assert q.kind is SpanKind.CLIENT
        assert set(q.attributes or {}) <= {"db.system.name", "db.namespace"}
        assert q.end_time is not None and q.start_time is not None and q.end_time >= q.start_time


def _check_private(tree: Tree, namespace: str, extra: list[str]) -> None:
    """No attribute value in the trace holds the namespace or a word of the conversation."""
    for s in tree.spans:
        for key, value in (s.attributes or {}).items():
            text = str(value)
            assert namespace not in text, (s.name, key)
            for word in [*PRIVATE, *extra]:
                assert word.lower() not in text.lower(), (s.name, key, word)


def test_one_sleep_is_a_span_tree_down_to_its_queries(
    client: TestClient, namespace: str, spans: InMemorySpanExporter
) -> None:
    auth = bearer(new_key(client, namespace))
    _talk(client, auth)
    spans.clear()
    slept = client.post("/v1/sleep", json={"now": SLEPT.isoformat()}, headers=auth)
    assert slept.status_code == 200 and slept.json()["messages_compacted"] > 0

    tree = _request(spans, "POST /v1/sleep")
    attrs = tree.root.attributes or {}
    assert attrs["http.route"] == "/v1/sleep" and attrs["http.response.status_code"] == 200
    assert attrs[tracing.NAMESPACE] == _hashed(namespace)
    sleep = tree.only(tree.root, "sleep")
    assert (sleep.attributes or {})[tracing.NAMESPACE] == _hashed(namespace)
    assert [s.name for s in tree.children(sleep)] == SLEEP_STEPS
    # the reads of the slice and of the match, the writes of the commit: each its own span
    assert [q.name for q in tree.queries(tree.only(sleep, "sleep.slice"))] == [
        "buffer_messages.cypher"
    ]
    assert tree.queries(tree.only(sleep, "sleep.match"))
    committed = {q.name for q in tree.queries(tree.only(sleep, "sleep.commit"))}
    assert {"create_topics.cypher", "create_sleep_events.cypher"} <= committed
    _check_queries(tree, namespace)
    _check_private(tree, namespace, [])


def test_one_context_request_is_a_span_tree_down_to_its_queries(
    client: TestClient, namespace: str, spans: InMemorySpanExporter
) -> None:
    auth = bearer(new_key(client, namespace))
    _talk(client, auth)
    client.post("/v1/sleep", json={"now": SLEPT.isoformat()}, headers=auth).raise_for_status()
    spans.clear()
    body = {"message": QUESTION, "now": LATER.isoformat(), "session_id": "s-1", "trace": True}
    answered = client.post("/v1/context", json=body, headers=auth)
    assert answered.status_code == 200 and "Rosa" in answered.json()["context_text"]

    tree = _request(spans, "POST /v1/context")
    attrs = tree.root.attributes or {}
    assert attrs["http.route"] == "/v1/context" and attrs["http.request.method"] == "POST"
    assert attrs[tracing.NAMESPACE] == _hashed(namespace)
    context = tree.only(tree.root, "context")
    assert (context.attributes or {})[tracing.NAMESPACE] == _hashed(namespace)
    assert [s.name for s in tree.children(context)] == CONTEXT_STEPS
    # the reads before the search, the searches, the one write
    assert [q.name for q in tree.queries(tree.only(context, "context.plan"))] == [
        "read_context_start.cypher"
    ]
    # the vector search runs in a pool's thread: still in this trace, under the search
    searched = {q.name for q in tree.queries(tree.only(context, "context.search"))}
    # in Neo4j, or from the worker's copy of the topic vectors once its load thread read it
    assert {"search_topics_vector.cypher", "read_topics_by_vector.cypher"} & searched, searched
    finished = {q.name for q in tree.queries(tree.only(context, "context.finish"))}
    assert "mark_topics_used.cypher+record_suppression_turn.cypher" in finished
    _check_queries(tree, namespace)
    _check_private(tree, namespace, [QUESTION, "s-1"])


def test_a_workers_sleep_is_a_trace_of_its_own(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path: Path, namespace: str,
    spans: InMemorySpanExporter,
) -> None:  # fmt: skip
    with api_client(settings, embedder, tmp_path, sleep_mode="background", tail_turns=2) as c:
        auth = bearer(new_key(c, namespace))
        _talk(c, auth)
        queued = c.post("/v1/sleep", params={"wait": "false"}, headers=auth)
        assert queued.status_code == 202
        spans.clear()
        ran = c.app.state.container.sleep_worker().run_once()  # type: ignore[attr-defined]
        assert ran is not None and ran.outcome == "done"
    roots = [s for s in spans.get_finished_spans() if s.parent is None]
    # the claim and the run records are outside the sleep: no trace of their own either
    assert [s.name for s in roots] == ["sleep"]
    tree = Tree(spans.get_finished_spans(), roots[0])
    assert [s.name for s in tree.children(tree.root)] == SLEEP_STEPS
    assert (tree.root.attributes or {})[tracing.NAMESPACE] == _hashed(namespace)
    _check_queries(tree, namespace)
    _check_private(tree, namespace, [])


def test_a_route_with_a_parameter_is_named_by_its_template(
    client: TestClient, namespace: str, spans: InMemorySpanExporter
) -> None:
    auth = bearer(new_key(client, namespace))
    spans.clear()
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"  # a caller's trace, continued
    headers = {**auth, "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
    assert client.get("/v1/topics/no-such-topic", headers=headers).status_code == 404
    [root] = [s for s in spans.get_finished_spans() if s.name == "GET /v1/topics/{topic_id}"]
    assert root.context is not None and f"{root.context.trace_id:032x}" == trace_id
    assert root.parent is not None and root.parent.span_id == 0x00F067AA0BA902B7
    assert (root.attributes or {})["http.response.status_code"] == 404
    assert all("no-such-topic" not in str(v) for v in (root.attributes or {}).values())


def test_the_namespace_can_be_left_out(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path: Path, namespace: str
) -> None:
    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.install(provider, settings.model_copy(update={"otel_namespace": "omitted"}))
    try:
        with api_client(settings, embedder, tmp_path) as client:
            auth = bearer(new_key(client, namespace))
            body = {"message": QUESTION, "now": LATER.isoformat()}
            client.post("/v1/context", json=body, headers=auth).raise_for_status()
    finally:
        tracing.uninstall()
    finished = exporter.get_finished_spans()
    assert {s.name for s in finished} >= {"POST /v1/context", "context", "context.plan"}
    assert all(tracing.NAMESPACE not in (s.attributes or {}) for s in finished)


def test_an_mcp_tool_call_is_a_span_over_the_context_it_builds(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path: Path, namespace: str,
    spans: InMemorySpanExporter,
) -> None:  # fmt: skip
    async def run(url: str, key: str) -> None:
        async with mcp_session(url, live_bearer(key)) as session:
            built = await session.call_tool("memory_context", {"message": QUESTION})
            assert not built.is_error
            assert (await session.call_tool("no such <tool>", {})).is_error

    with live_server(settings, embedder, tmp_path) as server:
        anyio.run(run, server.mcp_url, server.new_key(namespace))
    finished = spans.get_finished_spans()
    [tool] = [s for s in finished if s.name == "mcp.tool memory_context"]
    assert (tool.attributes or {})[tracing.NAMESPACE] == _hashed(namespace)
    tree = Tree(finished, tool)
    context = tree.only(tool, "context")
    assert [s.name for s in tree.children(context)] == CONTEXT_STEPS
    [unknown] = [s for s in finished if s.name == "mcp.tool <unknown>"]
    assert unknown.status.status_code is StatusCode.ERROR
    assert all("such" not in s.name for s in finished)


class _Collector(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: keeps each request's path, content type and body."""

    received: list[tuple[str, str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_the_otlp_variables_alone_export_http_protobuf(tmp_path: Path) -> None:
    _Collector.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    script = (
        "from api import telemetry\nfrom api.settings import Settings\nfrom graph import tracing\n"
        "from opentelemetry import trace\n"
        "assert telemetry.setup(Settings())\n"
        "with tracing.span('step', namespace='secret-ns'):\n    pass\n"
        "trace.get_tracer_provider().force_flush()\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "SHERIFF_HOME": str(tmp_path),
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
        "OTEL_SERVICE_NAME": "sheriff-test",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    [(path, content_type, body)] = _Collector.received
    assert path == "/v1/traces" and content_type == "application/x-protobuf"
    request = ExportTraceServiceRequest.FromString(body)
    [resource] = request.resource_spans
    service = {a.key: a.value.string_value for a in resource.resource.attributes}
    assert service["service.name"] == "sheriff-test"
    [span] = [s for scope in resource.scope_spans for s in scope.spans]
    assert span.name == "step"
    [ns] = [a.value.string_value for a in span.attributes if a.key == tracing.NAMESPACE]
    salt = (tmp_path / telemetry.SALT_FILE).read_bytes()
    assert ns == hmac.new(salt, b"secret-ns", hashlib.sha256).hexdigest()[:16]
