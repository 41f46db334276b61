"""OpenTelemetry spans of the product: steps (``traced``, ``span``) and Neo4j queries.

Off unless the composition root installs a tracer (``api.telemetry.setup`` does when an
``OTEL_*`` variable asks for traces; docs/observability.md). While off, a traced function is
called straight through after one ``is None`` test: no span, no context switch, not even the
OpenTelemetry API's no-op tracer; the Neo4j driver is left as it is.

While on:

- ``traced(name)`` / ``span(name)`` make a child span of the current one (a request's, a
  sleep's) for a step; an exception marks the span as failed with the exception's type only
  (its message may quote stored text).
- every Neo4j query (``Session.run``, ``Transaction.run``: the stores' one-query helpers, the
  managed transactions and ``execute_query`` all end there) run inside a recorded span is a
  span named by its ``.cypher`` file (``search_topics.cypher``; a query composed of files:
  theirs joined by ``+``; any other text: ``cypher``), from the RUN until the driver received
  the query's summary (its records all read), so a slow query shows as itself. Its
  parameters, its text and the records are never attributes. A query outside any recorded
  span (a sleep worker's poll for due sleeps, the health probe) makes no span.
- a namespace becomes the attribute ``sheriff.namespace`` only as the installed
  ``namespace_attr`` renders it (hashed with the install's salt by default, or left out).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import resources
from typing import Any, ParamSpec, TypeVar

from opentelemetry import context as otel_context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, get_current_span

from graph.models import EdgeType

P = ParamSpec("P")
R = TypeVar("R")

NAMESPACE = "sheriff.namespace"
INLINE = "cypher"  # the name of a query span whose text is no cypher/queries file

_tracer: Tracer | None = None
_namespace_attr: Callable[[str], str | None] = lambda _ns: None  # noqa: E731
_patched: dict[tuple[type, str], Any] = {}


def install(tracer: Tracer, namespace_attr: Callable[[str], str | None]) -> None:
    """Start tracing with ``tracer``; ``namespace_attr`` renders a namespace as the value of
    ``sheriff.namespace`` (None: the attribute is left out). Instruments the Neo4j driver."""
    global _tracer, _namespace_attr
    _tracer, _namespace_attr = tracer, namespace_attr
    _instrument_neo4j()
    _instrument_threads()


def uninstall() -> None:
    """Stop tracing: traced calls go straight through again, the driver is restored."""
    global _tracer, _namespace_attr
    _tracer, _namespace_attr = None, lambda _ns: None
    for (cls, attr), original in _patched.items():
        setattr(cls, attr, original)
    _patched.clear()


def active() -> bool:
    """Whether a tracer is installed."""
    return _tracer is not None


def tracer() -> Tracer | None:
    """The installed tracer (None while tracing is off)."""
    return _tracer


def namespace_value(namespace: str) -> str | None:
    """What ``sheriff.namespace`` holds for ``namespace`` (None: left out, or tracing off)."""
    return _namespace_attr(namespace) if _tracer is not None else None


def set_namespace(target: Span, namespace: str | None) -> None:
    """Put ``namespace`` (as the install renders it) on ``target``, when it is recorded."""
    if namespace is None or not target.is_recording():
        return
    value = _namespace_attr(namespace)
    if value is not None:
        target.set_attribute(NAMESPACE, value)


@contextmanager
def span(name: str, namespace: str | None = None) -> Iterator[Span | None]:
    """A child span of the current one for the block (None and no span while tracing is off);
    ``namespace`` becomes its ``sheriff.namespace``."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False
    ) as current:
        set_namespace(current, namespace)
        try:
            yield current
        except BaseException as exc:
            _failed(current, exc)
            raise


def traced(name: str, namespace: str | None = None) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so that each call is a span ``name`` (a step of a context or a
    sleep). ``namespace``: where the call's namespace is, as a parameter name or a dotted path
    from one (``"namespace"``, ``"self.req.namespace"``), read only while tracing is on."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        where = _namespace_reader(fn, namespace) if namespace else None

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if _tracer is None:
                return fn(*args, **kwargs)
            ns = where(args, kwargs) if where is not None else None
            with span(name, ns):
                return fn(*args, **kwargs)

        return call

    return decorate


def _namespace_reader(
    fn: Callable[..., Any], path: str
) -> Callable[[tuple[Any, ...], dict[str, Any]], str | None]:
    """A function of a call's arguments that reads ``path`` (``param[.attr...]``)."""
    param, *attrs = path.split(".")
    signature = inspect.signature(fn)
    if param not in signature.parameters:
        raise ValueError(f"{fn.__qualname__} has no parameter {param!r}")

    def read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
        try:
            value = signature.bind_partial(*args, **kwargs).arguments.get(param)
            for attr in attrs:
                value = getattr(value, attr)
        except (TypeError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    return read


def _failed(target: Span, exc: BaseException) -> None:
    """Mark ``target`` failed by the exception's type (never its message: it may quote data)."""
    if target.is_recording():
        kind = type(exc).__name__
        target.set_status(Status(StatusCode.ERROR, kind))
        target.set_attribute("error.type", kind)


# -- Neo4j queries ------------------------------------------------------------------------------


@functools.cache
def query_names() -> dict[str, str]:
    """``{query text: "<name>.cypher"}`` for every ``cypher/queries`` file, each relationship
    type of a ``{rel_type}`` query (``graph.cypher.query_for_edge``) included."""
    names: dict[str, str] = {}
    for path in (resources.files("cypher") / "queries").iterdir():
        if not path.name.endswith(".cypher"):
            continue
        text = path.read_text(encoding="utf-8")
        names[text] = path.name
        if "{rel_type}" in text:
            for edge in EdgeType:
                names[text.replace("{rel_type}", edge.value)] = path.name
    return names


def query_name(text: object) -> str:
    """The span name of a query: its ``.cypher`` file's name; for a query composed of several
    files (``graph.context.finish_query``), theirs in order joined by ``+``; else ``cypher``."""
    if not isinstance(text, str):
        return INLINE
    return query_names().get(text) or _composed_name(text)


@functools.lru_cache(maxsize=256)
def _composed_name(text: str) -> str:
    """The files whose text ``text`` holds, in the order it holds them (computed once per
    text: the composed queries are a few constants)."""
    at = sorted(
        (text.find(body), name)
        for body, name in query_names().items()
        if body.strip() and body in text
    )
    return "+".join(dict.fromkeys(name for _pos, name in at)) or INLINE


class _QuerySpan:
    """One query's span, ended once: by the driver's callback when the query's summary
    arrived, or by the run failing."""

    __slots__ = ("span",)

    def __init__(self, query_span: Span) -> None:
        self.span: Span | None = query_span

    def end(self, exc: BaseException | None = None) -> None:
        current, self.span = self.span, None
        if current is None:
            return
        if exc is not None:
            _failed(current, exc)
        current.end()


def _traced_run(original: Callable[..., Any], database_of: Callable[[Any], Any]) -> Any:
    """``original`` (a ``run`` of the driver) wrapped in a query span."""

    @functools.wraps(original)
    def run(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = _tracer
        # a query outside a traced request or sleep (a worker's poll, the health probe) would
        # be a trace of one span every second: none
        if tracer is None or not get_current_span().is_recording():
            return original(self, query, *args, **kwargs)
        attributes = {"db.system.name": "neo4j"}
        database = database_of(self)
        if isinstance(database, str):
            attributes["db.namespace"] = database
        one = _QuerySpan(
            tracer.start_span(query_name(query), kind=SpanKind.CLIENT, attributes=attributes)
        )
        try:
            result = original(self, query, *args, **kwargs)
        except BaseException as exc:
            one.end(exc)
            raise
        _end_with_summary(result, one)
        return result

    return run


def _end_with_summary(result: Any, one: _QuerySpan) -> None:
    """End ``one`` when the driver closes ``result`` (its summary received: the records are
    all in); a driver without that hook ends it now (the span then covers the RUN only)."""
    if not hasattr(result, "_on_closed"):
        one.end()
        return
    before = result._on_closed

    def closed(*args: Any, **kwargs: Any) -> Any:
        one.end()
        return before(*args, **kwargs) if before is not None else None

    result._on_closed = closed


def _instrument_threads() -> None:
    """Run what a ``ThreadPoolExecutor`` is given in the submitter's trace context (the
    context's parallel searches run in pools: their queries stay children of the step that
    started them instead of starting traces of their own)."""
    key = (ThreadPoolExecutor, "submit")
    if key in _patched:
        return
    original = ThreadPoolExecutor.submit
    _patched[key] = original

    def submit(self: Any, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if _tracer is None:
            return original(self, fn, *args, **kwargs)
        current = otel_context.get_current()

        def in_context(*a: Any, **kw: Any) -> Any:
            token = otel_context.attach(current)
            try:
                return fn(*a, **kw)
            finally:
                otel_context.detach(token)

        return original(self, in_context, *args, **kwargs)

    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]


def _instrument_neo4j() -> None:
    """Wrap the driver's two ``run`` methods (once)."""
    if any(attr == "run" for _cls, attr in _patched):
        return
    from neo4j._sync.work.session import Session
    from neo4j._sync.work.transaction import TransactionBase

    def session_db(s: Any) -> Any:
        return getattr(getattr(s, "_config", None), "database", None)

    def tx_db(tx: Any) -> Any:
        return getattr(tx, "_database", None)

    for cls, database_of in ((Session, session_db), (TransactionBase, tx_db)):
        original = cls.run
        _patched[(cls, "run")] = original
        cls.run = _traced_run(original, database_of)  # type: ignore[method-assign]
