"""Prometheus metrics: one registry per app (so several apps in one process never collide).

Requests are counted and timed by route *template* (``/v1/topics/{topic_id}``, never the concrete
path, so label cardinality stays bounded); requests that matched no route are labelled
``<unmatched>``. Also exported: requests in flight, authentication outcomes, the API-key cache's
hits and misses, and the process's CPU, memory and file descriptors.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from api.limits import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("api.access")

UNMATCHED = "<unmatched>"
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """The app's collectors."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self.requests = Counter(
            "sheriff_http_requests",
            "HTTP requests by method, route template and status code.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "sheriff_http_request_duration_seconds",
            "Time from request start to the end of the response, by method and route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "sheriff_http_requests_in_flight", "Requests being served.", registry=self.registry
        )
        self.auth = Counter(
            "sheriff_auth",
            "API-key checks by outcome (ok, missing, malformed, unknown, revoked).",
            ["outcome"],
            registry=self.registry,
        )
        self.key_cache = Counter(
            "sheriff_api_key_cache",
            "API-key cache lookups by result (hit, miss).",
            ["result"],
            registry=self.registry,
        )

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class MetricsMiddleware:
    """Counts, times and logs every HTTP request; adds an ``X-Request-ID`` response header."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        status = 500  # if the app dies before answering
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.in_flight.dec()
            self._observe(scope, status, time.perf_counter() - started, request_id)

    def _observe(self, scope: Scope, status: int, seconds: float, request_id: str) -> None:
        route = _route_template(scope)
        method = str(scope.get("method", ""))
        self.metrics.requests.labels(method, route, str(status)).inc()
        self.metrics.latency.labels(method, route).observe(seconds)
        log.info(
            "%s %s %d %.1fms",
            method,
            route,
            status,
            seconds * 1000,
            extra={"request_id": request_id, "route": route, "status": status,
                   "duration_ms": round(seconds * 1000, 1),
                   "namespace": _state(scope).get("namespace")},
        )  # fmt: skip


def _route_template(scope: Scope) -> str:
    """The matched route's template with its router prefix: ``/v1/topics/{topic_id}``.

    A route included from a router knows its template without the prefix the router was
    mounted at; the prefix is static, so it is the concrete path's leading segments."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return UNMATCHED
    concrete = str(scope.get("path", "")).split("/")
    keep = len(concrete) - len(template.split("/")) + 1
    return "/".join(concrete[:keep]) + template if keep > 0 else template


def _state(scope: Scope) -> dict[str, Any]:
    state = scope.get("state")
    return state if isinstance(state, dict) else {}


def _request_id(scope: Scope) -> str:
    """The caller's ``X-Request-ID`` when it is sane, else a fresh one."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"x-request-id":
            text = bytes(value).decode("latin-1")
            if _REQUEST_ID.fullmatch(text):
                return text
    return uuid.uuid4().hex
