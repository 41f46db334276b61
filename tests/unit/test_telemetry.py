"""Tracing's configuration and its parts without I/O (the span trees through the API and
Neo4j: tests/integration/test_tracing.py).

With no ``OTEL_*`` variable nothing is installed: no SDK provider, the driver and the thread
pools as they were, no middleware, and a traced step is its function called straight through.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from neo4j._sync.work.session import Session
from neo4j._sync.work.transaction import TransactionBase
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import ProxyTracerProvider, StatusCode
from pydantic import SecretStr

from api import telemetry
from api.app import create_app
from api.logs import JsonFormatter
from api.settings import Settings
from api.telemetry import TracesConfig, TracingMiddleware
from graph import tracing
from graph.context import finish_query
from graph.cypher import query, query_for_edge
from graph.errors import SheriffError
from graph.models import EdgeType


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider.get_tracer("test"), lambda ns: f"h({ns})")
    try:
        yield exporter
    finally:
        tracing.uninstall()


def test_no_otel_variable_installs_nothing(tmp_path: Path) -> None:
    run, tx_run, submit = Session.run, TransactionBase.run, ThreadPoolExecutor.submit
    assert TracesConfig.from_env({}).enabled is False
    assert telemetry.setup(Settings(home=tmp_path), env={"SHERIFF_HOME": "x"}) is False
    assert not tracing.active() and tracing.tracer() is None
    assert isinstance(trace.get_tracer_provider(), ProxyTracerProvider)  # the API's no-op
    assert (Session.run, TransactionBase.run, ThreadPoolExecutor.submit) == (run, tx_run, submit)
    app = create_app()  # the environment of the test run sets no OTEL_* variable
    assert TracingMiddleware not in [m.cls for m in app.user_middleware]
    assert list(tmp_path.iterdir()) == []  # no salt made either


def test_a_traced_step_is_its_function_while_tracing_is_off() -> None:
    def step(x: int) -> int:
        return x + 1

    traced = tracing.traced("step", namespace="x")(step)
    assert traced(1) == 2 and traced.__wrapped__ is step  # type: ignore[attr-defined]
    with tracing.span("block", "ns") as current:
        assert current is None
    assert tracing.namespace_value("ns") is None


@pytest.mark.parametrize(
    ("env", "exporters", "protocol"),
    [
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://jaeger:4318"}, ("otlp",), "http/protobuf"),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://j:4318/v1/traces"}, ("otlp",), "http/protobuf"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ("otlp",), "grpc"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
          "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, ("otlp",), "http/protobuf"),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, ("console", "otlp"), "http/protobuf"),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://j:4318"}, (), "http/protobuf"),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, (), "http/protobuf"),
        ({"OTEL_SERVICE_NAME": "memory"}, (), "http/protobuf"),
    ],
)  # fmt: skip
def test_the_standard_variables_say_what_is_exported(
    env: dict[str, str], exporters: tuple[str, ...], protocol: str
) -> None:
    assert TracesConfig.from_env(env) == TracesConfig(exporters, protocol)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER='zipkin'"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "http/json"),
    ],
)
def test_an_unsupported_exporter_or_protocol_is_refused(env: dict[str, str], named: str) -> None:
    with pytest.raises(SheriffError, match=named.replace("/", ".")):
        TracesConfig.from_env(env)


def test_the_namespace_is_an_hmac_with_the_install_salt(tmp_path: Path) -> None:
    hashed = telemetry.namespace_renderer(Settings(home=tmp_path))
    value = hashed("alice")
    assert len(value) == 16 and "alice" not in value and value == hashed("alice")
    assert value != hashed("bob")
    salt = tmp_path / telemetry.SALT_FILE
    assert salt.stat().st_mode & 0o777 == 0o600
    # another process of the install reads the same salt: the same value
    assert telemetry.namespace_renderer(Settings(home=tmp_path))("alice") == value
    # another install (its own salt) cannot be matched against this one
    other = telemetry.namespace_renderer(Settings(home=tmp_path / "other"))
    assert other("alice") != value
    given = Settings(home=tmp_path, otel_namespace_salt=SecretStr("shared"))
    assert telemetry.namespace_renderer(given)("alice") not in (value, other("alice"))
    omitted = Settings(home=tmp_path / "none", otel_namespace="omitted")
    assert telemetry.namespace_renderer(omitted)("alice") is None
    assert not (tmp_path / "none").exists()


def test_traced_steps_nest_and_a_failure_names_only_its_kind(
    spans: InMemorySpanExporter,
) -> None:
    class Run:
        namespace = "alice"

        @tracing.traced("outer", namespace="self.namespace")
        def outer(self, secret: str) -> None:
            self.inner(secret)

        @tracing.traced("inner")
        def inner(self, secret: str) -> None:
            raise ValueError(f"refused {secret}")

    with pytest.raises(ValueError, match="refused hunter2"):
        Run().outer("hunter2")
    inner, outer = spans.get_finished_spans()
    assert (inner.name, outer.name) == ("inner", "outer")
    assert inner.parent is not None and outer.context is not None
    assert inner.parent.span_id == outer.context.span_id
    assert dict(outer.attributes or {}) == {
        "sheriff.namespace": "h(alice)",
        "error.type": "ValueError",
    }
    for s in (inner, outer):
        assert s.status.status_code is StatusCode.ERROR and s.status.description == "ValueError"
        assert not s.events  # no exception event: its message may quote stored text


def test_a_namespace_path_must_name_a_parameter() -> None:
    with pytest.raises(ValueError, match="no parameter 'ns'"):
        tracing.traced("x", namespace="ns.id")(lambda namespace: namespace)


def test_a_pool_runs_work_in_the_submitters_trace(spans: InMemorySpanExporter) -> None:
    def work() -> None:
        with tracing.span("in-pool"):
            pass

    with ThreadPoolExecutor(1) as pool, tracing.span("step"):
        pool.submit(work).result()
    pooled, step = spans.get_finished_spans()
    assert pooled.parent is not None and step.context is not None
    assert pooled.parent.span_id == step.context.span_id


def test_a_query_span_is_named_by_its_file() -> None:
    assert tracing.query_name(query("search_topics_vector")) == "search_topics_vector.cypher"
    edge = query_for_edge("link_topics", EdgeType.RELATES_TO)
    assert tracing.query_name(edge) == "link_topics.cypher"
    composed = tracing.query_name(finish_query())
    assert composed == "mark_topics_used.cypher+record_suppression_turn.cypher"
    assert tracing.query_name("MATCH (n) RETURN n") == "cypher"
    assert tracing.query_name(None) == "cypher"


def test_json_log_lines_carry_the_trace_ids(spans: InMemorySpanExporter) -> None:
    record = logging.LogRecord("api.access", logging.INFO, "f", 1, "%s done", ("POST",), None)
    record.route, record.duration_ms = "/v1/context", 12.5
    outside = json.loads(JsonFormatter().format(record))
    assert outside["message"] == "POST done" and outside["route"] == "/v1/context"
    assert outside["duration_ms"] == 12.5 and "trace_id" not in outside
    with tracing.span("request") as current:
        assert current is not None
        inside = json.loads(JsonFormatter().format(record))
    ctx = current.get_span_context()
    assert (
        inside["trace_id"] == f"{ctx.trace_id:032x}" and inside["span_id"] == f"{ctx.span_id:016x}"
    )
    assert inside["level"] == "INFO" and inside["logger"] == "api.access"
