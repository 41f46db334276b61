"""OpenTelemetry traces: configured by the standard ``OTEL_*`` variables, off when none is set.

``setup(settings)`` runs once in each process that serves or sleeps (an API worker, ``sheriff
worker``, ``sheriff up``'s sleep worker). When the environment asks for traces
(``TracesConfig.from_env``) it installs the SDK's tracer provider with a batch processor and
the exporter named by ``OTEL_TRACES_EXPORTER`` (``otlp``: http/protobuf unless
``OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`` says ``grpc``; ``console``), and hands a tracer to
``graph.tracing``. The exporter itself reads ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``,
``..._HEADERS``, ``..._TIMEOUT``, ``..._COMPRESSION``; the provider ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_TRACES_SAMPLER[_ARG]``. When no variable asks for
traces nothing is installed: the spans of ``graph.tracing`` are skipped and no middleware is
added (docs/observability.md).

``TracingMiddleware`` makes one server span per HTTP request, named by the route template
(``POST /v1/context``, never the concrete path), continuing a caller's ``traceparent``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from api.limits import ASGIApp, Message, Receive, Scope, Send
from api.metrics import _route_template, _state
from graph import tracing
from graph.errors import SheriffError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

    from api.settings import Settings

log = logging.getLogger(__name__)

SERVICE_NAME = "sheriff-claw"
SCOPE = "sheriff_claw"  # the instrumentation scope of every span
EXPORTERS = ("otlp", "console", "none")
PROTOCOLS = ("http/protobuf", "grpc")
SALT_FILE = "otel-namespace-salt"


@dataclass(frozen=True)
class TracesConfig:
    """What the ``OTEL_*`` variables ask for: the exporters (empty: no tracing) and the OTLP
    protocol."""

    exporters: tuple[str, ...] = ()
    protocol: str = "http/protobuf"

    @property
    def enabled(self) -> bool:
        return bool(self.exporters)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TracesConfig:
        """Tracing is on when ``OTEL_TRACES_EXPORTER`` names an exporter, or (it unset) when
        an OTLP endpoint is given; ``OTEL_SDK_DISABLED=true`` turns it off whatever else is
        set. An unknown exporter or protocol is a ``SheriffError`` naming the variable."""
        if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return cls()
        named = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if named:
            exporters = tuple(e.strip() for e in named.split(",") if e.strip())
        elif env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        ):
            exporters = ("otlp",)
        else:
            exporters = ()
        for exporter in exporters:
            if exporter not in EXPORTERS:
                raise SheriffError(
                    f"OTEL_TRACES_EXPORTER={named!r}: each exporter must be one of "
                    f"{', '.join(EXPORTERS)}"
                )
        exporters = tuple(e for e in exporters if e != "none")
        protocol = (
            env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or "http/protobuf"
        ).strip()
        if "otlp" in exporters and protocol not in PROTOCOLS:
            raise SheriffError(
                f"OTLP protocol {protocol!r} is not supported: use {' or '.join(PROTOCOLS)}"
            )
        return cls(exporters, protocol)


def setup(settings: Settings, env: Mapping[str, str] | None = None) -> bool:
    """Install tracing in this process as the ``OTEL_*`` variables ask (once; later calls
    keep the first install); whether tracing is on."""
    if tracing.active():
        return True
    config = TracesConfig.from_env(os.environ if env is None else env)
    if not config.enabled:
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    for exporter in config.exporters:
        provider.add_span_processor(BatchSpanProcessor(_exporter(exporter, config.protocol)))
    trace.set_tracer_provider(provider)
    install(provider, settings)
    log.info("tracing on: %s (%s)", ", ".join(config.exporters), config.protocol)
    return True


def install(provider: TracerProvider, settings: Settings) -> None:
    """Trace with ``provider``'s tracer, the namespace rendered as ``settings`` say (tests
    install an in-memory exporter's provider this way)."""
    tracing.install(provider.get_tracer(SCOPE), namespace_renderer(settings))


def _exporter(name: str, protocol: str) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )
        except ImportError as exc:
            raise SheriffError(
                "OTLP over grpc needs `pip install 'sheriff-claw[otlp-grpc]'`; "
                "or set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"
            ) from exc
        exporter: SpanExporter = GrpcExporter()
        return exporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def namespace_renderer(settings: Settings) -> Any:
    """How a namespace shows on a span: ``hashed`` (HMAC-SHA256 with the install's salt, 16
    hex digits: the same namespace gives the same value across processes of one install, and
    a namespace cannot be read back from it), or ``omitted`` (no attribute)."""
    if settings.otel_namespace == "omitted":
        return lambda _namespace: None
    salt = (
        settings.otel_namespace_salt.get_secret_value().encode()
        if settings.otel_namespace_salt is not None
        else install_salt(settings.home)
    )

    @lru_cache(maxsize=4096)
    def hashed(namespace: str) -> str:
        return hmac.new(salt, namespace.encode(), hashlib.sha256).hexdigest()[:16]

    return hashed


def install_salt(home: Path) -> bytes:
    """The install's salt in ``home`` (made once, readable by its owner only; the first of
    several processes starting together writes it, the others read that one)."""
    path = home / SALT_FILE
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    home.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    salt = secrets.token_hex(32).encode()
    with os.fdopen(fd, "wb") as out:
        out.write(salt)
    return salt


class TracingMiddleware:
    """One server span per HTTP request (outermost: it covers the other middleware). Named
    ``METHOD /route/{template}`` once routing matched (a request no route matched is
    ``METHOD <unmatched>``); attributes: the method, the route template, the status code and
    the key's namespace as ``graph.tracing`` renders it. The concrete path, the query string
    and the body are never attributes."""

    def __init__(self, app: ASGIApp) -> None:
        # imported here: the propagators are looked up (entry points) on import, a start-up
        # cost a server without tracing need not pay
        from opentelemetry import propagate

        self.app = app
        self.extract = propagate.extract

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracer = tracing.tracer()
        if scope["type"] != "http" or tracer is None:
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", ""))
        parent = self.extract(_Headers(scope))
        status = 500  # if the app dies before answering

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        with tracer.start_as_current_span(
            method,
            context=parent,
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                await self.app(scope, receive, send_status)
            finally:
                route = _route_template(scope)
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
                tracing.set_namespace(span, _state(scope).get("namespace"))


class _Headers(dict[str, str]):
    """The request's trace headers as the propagator's carrier (a caller's baggage is not
    taken: nothing a client sends becomes an attribute)."""

    def __init__(self, scope: Scope) -> None:
        super().__init__(
            (bytes(k).decode("latin-1").lower(), bytes(v).decode("latin-1"))
            for k, v in scope.get("headers", [])
            if bytes(k).lower() in (b"traceparent", b"tracestate")
        )
