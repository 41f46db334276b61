"""A fake OpenAI Responses API over real HTTP, scripted per test (and by the offline demo).

The real ``openai`` client talks to it through ``base_url``; nothing in the client is patched.
Every request body is recorded in ``requests`` so a test can check what the host sent (the
tools, the ``function_call_output`` items, the structured-output format).

A reply is produced for each ``POST /v1/responses`` by, in order:

1. the next item of the queue (``enqueue``), or
2. the ``script`` callable given the request body, or
3. a 500 error saying nothing was scripted (a test that under-scripts fails loudly).

A reply is a list of output items (build them with :func:`message` and :func:`function_call`)
or a :class:`Fail` (an HTTP error with the API's error body). Only non-streaming calls are
served; anything else gets a 4xx saying so.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Item = dict[str, Any]


@dataclass(frozen=True)
class Fail:
    """An HTTP error reply, shaped like the API's ``{"error": {...}}`` body."""

    status: int
    message: str
    type: str = "invalid_request_error"
    retry_after: float | None = None  # sent as the Retry-After header (seconds)


Reply = list[Item] | Fail
Script = Callable[[dict[str, Any]], Reply]

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


def message(text: str) -> Item:
    """An assistant message output item holding ``text``."""
    return {
        "type": "message",
        "id": _id("msg"),
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> Item:
    """A ``function_call`` output item; ``arguments`` is JSON-encoded unless already a string."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "type": "function_call",
        "id": _id("fc"),
        "call_id": call_id or _id("call"),
        "name": name,
        "arguments": args,
        "status": "completed",
    }


def response_body(request: dict[str, Any], output: list[Item]) -> dict[str, Any]:
    """A complete ``Response`` object around ``output`` (usage estimated from sizes)."""
    in_tokens = len(json.dumps(request.get("input", ""))) // 4
    out_tokens = len(json.dumps(output)) // 4
    return {
        "id": _id("resp"),
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": request.get("model", "fake"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "usage": {
            "input_tokens": in_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": in_tokens + out_tokens,
        },
    }


def function_outputs(request: dict[str, Any]) -> dict[str, str]:
    """``call_id -> output`` of every ``function_call_output`` item in a request's input."""
    items = request.get("input")
    if not isinstance(items, list):
        return {}
    return {
        str(i["call_id"]): str(i.get("output", ""))
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    }


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the last user message in a request's input ("" when there is none)."""
    items = request.get("input")
    if isinstance(items, str):
        return items
    for item in reversed(items or []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return " ".join(
                str(p.get("text", "")) for p in content or [] if isinstance(p, dict)
            ).strip()
    return ""


class FakeResponses:
    """The fake server; use as a context manager (``with FakeResponses() as fake: ...``)."""

    def __init__(self, script: Script | None = None, host: str = "127.0.0.1", port: int = 0):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server((host, port), _Handler, self)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *replies: Reply | Iterable[Item]) -> None:
        """Replies served in order, before the script is consulted."""
        with self._lock:
            for r in replies:
                self._queue.append(r if isinstance(r, Fail) else list(r))

    def reply_for(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.popleft()
        if self.script is not None:
            try:
                return self.script(body)
            except Exception as exc:  # a broken script is reported, not a dropped connection
                return Fail(500, f"fake Responses script raised {exc!r}", "server_error")
        return Fail(
            500, "fake Responses server: no reply scripted for this request", "server_error"
        )

    def start(self) -> FakeResponses:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeResponses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], fake: FakeResponses
    ) -> None:
        super().__init__(address, handler)
        self.fake = fake


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/responses":
            self._send(404, _error(f"no route {self.path}", "not_found"))
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, UnicodeDecodeError):
            self._send(400, _error("request body is not JSON"))
            return
        if not isinstance(body, dict) or "model" not in body:
            self._send(400, _error("a JSON object with 'model' is required"))
            return
        if body.get("stream"):
            self._send(400, _error("the fake server does not stream"))
            return
        reply = self.server.fake.reply_for(body)
        if isinstance(reply, Fail):
            headers = {} if reply.retry_after is None else {"Retry-After": str(reply.retry_after)}
            self._send(reply.status, _error(reply.message, reply.type), headers)
        else:
            self._send(200, response_body(body, reply))

    def do_GET(self) -> None:
        self._send(404, _error(f"no route {self.path}", "not_found"))

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # quiet: tests read self.requests instead
        pass


def _error(text: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": text, "type": kind, "param": None, "code": None}}
