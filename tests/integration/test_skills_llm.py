"""The optional LLM path: the real ``openai`` client against a fake Responses API on loopback,
used by a skill through the ``llm.complete`` tool; an API error falls back to the plain path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skills.config import SkillSettings
from skills.llm import build_llm
from skills.service import SkillService


class FakeResponses(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.status = 200

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeResponses

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, **body})
        if self.server.status != 200:
            payload: dict[str, Any] = {
                "error": {"message": "bad request", "type": "invalid_request_error"}
            }
        else:
            text = {
                "type": "output_text",
                "text": "Parses config lines into tokens.",
                "annotations": [],
            }
            payload = {
                "id": "resp_1", "object": "response", "created_at": 0, "status": "completed",
                "model": body["model"], "output": [{"type": "message", "id": "m1", "status": "completed",
                                                     "role": "assistant", "content": [text]}],
            }  # fmt: skip
        data = json.dumps(payload).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake() -> Iterator[FakeResponses]:
    server = FakeResponses()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def service_for(tmp_path: Path, fake: FakeResponses) -> SkillService:
    (tmp_path / "parser.py").write_text("def parse(text: str) -> list[str]:\n    return []\n")
    llm = build_llm("sk-test", fake.base_url, "gpt-5.2-codex")
    return SkillService(SkillSettings(workspace=tmp_path), llm=llm)


def test_a_skill_uses_the_llm_through_its_declared_tool(
    tmp_path: Path, fake: FakeResponses
) -> None:
    result = service_for(tmp_path, fake).run("write_docs", {"target": "parser"})
    assert result.ok and result.output is not None and result.output["used_llm"] is True
    assert "llm.complete:ok" in result.tool_calls
    [request] = fake.requests
    assert request["path"] == "/v1/responses" and request["model"] == "gpt-5.2-codex"
    assert request["reasoning"] == {"effort": "medium"} and "parse(text: str)" in request["input"]
    assert (
        "## Overview\n\nParses config lines into tokens."
        in (tmp_path / "docs/parser.md").read_text()
    )


def test_an_llm_error_falls_back_to_the_plain_path(tmp_path: Path, fake: FakeResponses) -> None:
    fake.status = 400
    result = service_for(tmp_path, fake).run("write_docs", {"target": "parser"})
    assert result.ok and result.output is not None and result.output["used_llm"] is False
    assert "llm.complete:failed" in result.tool_calls
    assert "Overview" not in (tmp_path / "docs/parser.md").read_text()


def test_no_key_means_no_llm() -> None:
    assert build_llm(None, None, "gpt-5.2-codex") is None
