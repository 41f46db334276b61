"""The API key checked before a single byte of the body is read, on every protected path.

FastAPI resolves a route's dependencies after it has read a JSON body, and an upload route reads
its body itself; either way a caller without a key could make the server take in (and, before
this gate, buffer) up to the size limit before its 401. This pure ASGI middleware sits outside
the body limit: for ``/v1`` and ``/mcp`` it reads the key from the headers (``Authorization:
Bearer`` or ``X-API-Key``), checks it (the process's key cache on the event loop; a cache miss
reads Neo4j in a worker thread) and answers 401 at once, the body untouched, when it is missing,
malformed, unknown or revoked. A caller with a live key goes on, its principal left in the
request state for the routes' ``authenticate`` dependency, which then costs nothing. A 401
answered here never reached a route: the metrics count it under ``<unmatched>`` (and by reason
in ``sheriff_auth_total``).
"""

from __future__ import annotations

from functools import partial

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse

from api.auth import AuthFailed
from api.deps import PRINCIPAL_STATE, cached_principal, key_from_headers, stored_principal
from api.errors import AUTH_HEADERS, error_body, sheriff_error_response
from api.limits import ASGIApp, Receive, Scope, Send
from api.mcp_http import MCP_PATH
from graph.errors import SheriffError

PROTECTED = ("/v1/", MCP_PATH)


class KeyGateMiddleware:
    """401 before the body for a protected path without a live key (module docstring)."""

    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...] = PROTECTED) -> None:
        self.app = app
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path.startswith(self.prefixes) or path == "/v1"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)  # headers only: no receive, so nothing can read the body
        if not _serving(request):
            await self.app(scope, receive, send)
            return
        key = key_from_headers(request)
        try:
            principal = cached_principal(request, key)
            if principal is None:  # not in this process's cache: one Neo4j read, off the loop
                assert key is not None  # the cache refused a missing key
                principal = await anyio.to_thread.run_sync(partial(stored_principal, request, key))
        except AuthFailed as exc:
            body = error_body("AuthFailed", str(exc))
            await JSONResponse(body, 401, headers=AUTH_HEADERS)(scope, receive, send)
            return
        except SheriffError as exc:  # the key store's read failed: Neo4j out of reach is a 503
            await (await sheriff_error_response(request, exc))(scope, receive, send)
            return
        scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.app(scope, receive, send)


def _serving(request: Request) -> bool:
    """The app's lifespan built its key service. Without it (an app whose lifespan did not run:
    the unit tests' routes over fakes) the routes' ``authenticate`` dependency decides alone,
    and fails closed unless a test replaced it."""
    return hasattr(request.app.state, "api_keys")
