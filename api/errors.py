"""Every error the API returns, as one JSON shape: ``{"error": <kind>, "detail": <what was wrong>}``.

``SheriffError`` subclasses map to their status here (one table); request validation errors list
each bad field as ``location.path: message``; 401 carries ``WWW-Authenticate: Bearer``; anything
unexpected is logged with its traceback and answered 500 without internals. Driver errors never
reach this module: graph/ raises the product's errors for them (``graph.db.translate``). A
database that cannot be reached (or whose commit outcome is unknown) is 503 with ``Retry-After``,
its detail saying which, and trips the app's probe; only that is a 503. A write Neo4j kept
refusing as transient (a deadlock retried past its window) is 409 ``Contended`` with
``Retry-After``; anything else the database refused is 500 ``DatabaseFailed``. Appends are
idempotent by ``external_id``, so retrying one is safe.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from agent.loop import AgentUnavailable, LoopError
from api.auth import AuthFailed
from api.limits import PayloadTooLarge
from api.probe import RETRY_AFTER_S
from graph.errors import (
    AlreadyRunning,
    Conflict,
    Contended,
    DatabaseFailed,
    EmbeddingUnavailable,
    Neo4jUnavailable,
    NotFound,
    SheriffError,
    ValidationFailed,
    VersionConflict,
)
from skills.errors import ToolFailed, ToolRefused, ToolUnavailable

log = logging.getLogger(__name__)

STATUS: dict[type[SheriffError], int] = {
    AuthFailed: 401,
    PayloadTooLarge: 413,
    ValidationFailed: 422,
    NotFound: 404,
    VersionConflict: 409,
    Contended: 409,
    Conflict: 409,
    AlreadyRunning: 409,
    Neo4jUnavailable: 503,
    EmbeddingUnavailable: 503,
    AgentUnavailable: 503,
    LoopError: 502,
    ToolRefused: 403,
    ToolFailed: 422,
    ToolUnavailable: 503,
    DatabaseFailed: 500,
}
_HTTP_KINDS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    413: "PayloadTooLarge",
    415: "UnsupportedMediaType",
    422: "ValidationFailed",
    503: "ServiceUnavailable",
}
AUTH_HEADERS = {"WWW-Authenticate": 'Bearer realm="sheriff"'}
RETRY_HEADERS = {"Retry-After": str(RETRY_AFTER_S)}  # the driver gives up in ~3 s


def error_body(kind: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"error": kind, "detail": detail, **extra}


def status_of(exc: SheriffError) -> int:
    return next((s for t, s in STATUS.items() if isinstance(exc, t)), 500)


def field_errors(exc: RequestValidationError) -> list[dict[str, str]]:
    """``[{"field": "body.messages.0.role", "message": ..., "type": ...}]`` (JSON-safe)."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(request)"
        out.append({"field": loc, "message": str(err.get("msg", "")), "type": str(err["type"])})
    return out


async def sheriff_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The answer to a ``SheriffError`` (the app's handler, and the key gate's, which runs
    outside the app's handlers): its status, body and headers; a ``Neo4jUnavailable`` trips the
    probe."""
    assert isinstance(exc, SheriffError)
    status = status_of(exc)
    if status >= 500:
        log.error("request failed: %s", exc, exc_info=exc)
    if isinstance(exc, Neo4jUnavailable):  # later requests fail fast until Neo4j answers
        probe = getattr(request.app.state, "neo4j_probe", None)
        if probe is not None:
            probe.trip()
    extra: dict[str, Any] = {}
    field = getattr(exc, "field", None)
    if field is not None:  # the input at fault, named as schema errors name it
        extra["fields"] = [{"field": field, "message": str(exc), "type": type(exc).__name__}]
    body = error_body(type(exc).__name__, str(exc), **extra)
    return JSONResponse(body, status, headers=headers_of(exc, status))


def headers_of(exc: SheriffError, status: int) -> dict[str, str] | None:
    """``WWW-Authenticate`` on a 401, ``Retry-After`` on a 503 or a ``Contended`` 409."""
    if status == 401:
        return AUTH_HEADERS
    return RETRY_HEADERS if status == 503 or isinstance(exc, Contended) else None


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = field_errors(exc)
    detail = "; ".join(f"{f['field']}: {f['message']}" for f in fields)
    return JSONResponse(
        jsonable_encoder(error_body("ValidationFailed", detail, fields=fields)), 422
    )


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if isinstance(exc.__cause__, UnicodeDecodeError):  # FastAPI's 400 for undecodable bodies
        return _not_utf8(exc.__cause__)
    kind = _HTTP_KINDS.get(exc.status_code, "HTTPError")
    headers = dict(exc.headers or {})
    if exc.status_code == 401:
        headers.update(AUTH_HEADERS)
    return JSONResponse(error_body(kind, str(exc.detail)), exc.status_code, headers=headers)


def _not_utf8(cause: UnicodeDecodeError) -> JSONResponse:
    """A body that is not UTF-8 is invalid JSON: 422 like any other JSON syntax error."""
    message = f"the body is not valid UTF-8 JSON (byte {cause.start}: {cause.reason})"
    field = {"field": "body", "message": message, "type": "json_invalid"}
    return JSONResponse(error_body("ValidationFailed", f"body: {message}", fields=[field]), 422)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error", exc_info=exc)
    return JSONResponse(error_body("InternalError", "internal error; see the server log"), 500)


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""
    app.add_exception_handler(SheriffError, sheriff_error_response)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
