"""Request body size limit as pure ASGI middleware.

A declared ``Content-Length`` over the limit is refused before anything is read. Otherwise the body
is read (chunked bodies included) and counted; past the limit the request is answered 413 and the
application never sees it. Within the limit the buffered body is replayed to the application, so
nothing downstream needs to know about the limit.

Upload paths (``streamed``: the imports) are never buffered here: their body reaches the route
as it arrives, counted on the way, and the message that passes the limit raises
``PayloadTooLarge`` (413) in the route that reads it, which has then read at most the limit.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from typing import Any

from graph.errors import SheriffError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class PayloadTooLarge(SheriffError):
    """A streamed request body passed its size limit while it was read (HTTP 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"request body over the {limit}-byte limit: the request is larger than that"
        )


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        overrides: Mapping[str, int] | None = None,
        streamed: Collection[str] = (),
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.overrides = dict(overrides or {})  # exact path -> its own limit (uploads)
        self.streamed = frozenset(streamed)  # exact paths whose body is counted, not buffered

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.overrides.get(scope.get("path", ""), self.max_bytes)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._too_large(scope, send, limit, f"declares Content-Length {declared}")
            return
        if scope.get("path", "") in self.streamed:
            await self.app(scope, _counted(receive, limit), send)
            return
        messages, size = await self._read(receive, limit)
        if size > limit:
            await self._too_large(scope, send, limit, "is larger than that")
            return
        await self.app(scope, _replay(messages, receive), send)

    async def _read(self, receive: Receive, limit: int) -> tuple[list[Message], int]:
        """Buffer the body's messages, stopping as soon as the limit is passed."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages, size  # a disconnect: pass it on
            size += len(message.get("body", b""))
            if size > limit or not message.get("more_body", False):
                return messages, size

    async def _too_large(self, scope: Scope, send: Send, limit: int, why: str) -> None:
        scope.setdefault("state", {})["body_rejected"] = True
        detail = f"request body over the {limit}-byte limit: the request {why}"
        body = json.dumps({"error": "PayloadTooLarge", "detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _counted(receive: Receive, limit: int) -> Receive:
    """``receive`` that counts the body's bytes and raises ``PayloadTooLarge`` past ``limit``."""
    size = 0

    async def counted() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise PayloadTooLarge(limit)
        return message

    return counted
