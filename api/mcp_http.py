"""``/mcp``: the MCP server over streamable HTTP, inside the API app.

Every request (POST, the GET event stream, DELETE) is authenticated like a ``/v1`` route, with
the same keys, headers, cache and metrics; no key, a malformed, unknown or revoked one gets the
same 401 body as REST. The key's namespace travels with the request to the tool handlers
(:func:`api.mcp_server.namespace_from_key`), and the SDK's session manager binds each MCP
session to the key that opened it: another key presenting that session id gets 404.

With several API worker processes (``sheriff up --workers N``) a session opened on one worker
is unknown to the others, so the endpoint then runs stateless (``SHERIFF_MCP_STATELESS``,
default: stateless exactly when there is more than one worker): every request is complete in
itself, no ``Mcp-Session-Id`` is issued, and no server-initiated stream is offered.

The session manager runs for the app's lifetime: :meth:`McpHttp.running` is entered inside the
app's lifespan, after the container is ready.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from api.deps import PRINCIPAL_STATE, Principal, check_key, key_from_headers
from api.errors import error_body
from api.mcp_server import build_server, namespace_from_key

if TYPE_CHECKING:
    from api.admission import ContextGate
    from api.container import Container

MCP_PATH = "/mcp"


class McpHttp:
    """The ASGI endpoint mounted at ``/mcp``."""

    def __init__(self, stateless: bool = False) -> None:
        self.stateless = stateless  # no session ids: any worker can serve any request
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self, c: Container, gate: ContextGate | None = None) -> AsyncIterator[None]:
        """Serve MCP sessions over ``c`` until the block ends (a fresh manager each time: the
        SDK's manager runs once); ``memory_context`` calls queue at ``gate`` with the REST
        route's builds."""
        manager = StreamableHTTPSessionManager(
            app=build_server(c, namespace_from_key, gate), stateless=self.stateless
        )
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        checked = getattr(request.state, PRINCIPAL_STATE, None)  # the app's key gate's
        if isinstance(checked, Principal):
            principal = checked
        else:
            # a key lookup may reach Neo4j (cache miss): off the event loop, like a /v1
            # dependency; AuthFailed propagates to the app's handler: 401 as for /v1
            principal = await anyio.to_thread.run_sync(
                partial(check_key, request, key_from_headers(request))
            )
        if self.manager is None:
            body = error_body("ServiceUnavailable", "the MCP endpoint is not running")
            await JSONResponse(body, 503)(scope, receive, send)
            return
        token = AccessToken(
            token=principal.key_id,  # an id, never the key itself
            client_id=principal.key_id,
            scopes=[],
            subject=principal.namespace,
        )
        scope["user"] = AuthenticatedUser(token)
        await self.manager.handle_request(scope, receive, send)
