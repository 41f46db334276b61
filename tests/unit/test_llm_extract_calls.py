"""How the LLM extractor calls the Responses API (sleepwake/llm_extract.py): chunks at a bounded
concurrency, 429/5xx/lost connections retried honouring Retry-After, other errors not retried,
every retry and token counted. A scripted client stands in for the API (no I/O, no waiting)."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from graph.models import Message
from sleepwake.llm_extract import ResponsesExtractor, retry_wait

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class StatusError(Exception):
    """Shaped like ``openai.APIStatusError``: a status code and a response with headers."""

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"Error code: {status}")
        self.status_code = status
        self.response = SimpleNamespace(headers=headers or {})


class Client:
    """``client.responses.create`` answering from a script of errors, then valid answers."""

    def __init__(self, errors: list[Exception], delay: float = 0.0) -> None:
        self.errors = errors
        self.delay = delay
        self.calls = 0
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()
        self.responses = SimpleNamespace(create=self.create)

    def create(self, **request: Any) -> Any:
        with self.lock:
            self.calls += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
            error = self.errors.pop(0) if self.errors else None
        try:
            time.sleep(self.delay)
            if error is not None:
                raise error
            sent = json.loads(request["input"])["messages"]
            answer = {"messages": [_facts(m["id"]) for m in sent]}
            usage = SimpleNamespace(input_tokens=100, output_tokens=20)
            return SimpleNamespace(output_text=json.dumps(answer), usage=usage)
        finally:
            with self.lock:
                self.active -= 1


def _facts(mid: str) -> dict[str, Any]:
    return {"id": mid, "topics": ["Project Falcon"], "facts": [], "decisions": [],
            "constraints": [], "open_loops": [], "numbers": [], "dependencies": [],
            "is_correction": False, "in_progress": None}  # fmt: skip


def _messages(n: int) -> list[Message]:
    return [
        Message(namespace="ns", role="user", content=f"Project Falcon note {i}.",
                at=T0 + timedelta(minutes=i), token_estimate=4)
        for i in range(n)
    ]  # fmt: skip


def _extractor(client: Client, waits: list[float], **kw: Any) -> ResponsesExtractor:
    return ResponsesExtractor(client, "m", chunk_size=2, pause=waits.append, **kw)


def test_429_twice_then_an_answer_is_two_retries_and_no_fallback() -> None:
    client = Client(
        [StatusError(429, {"retry-after": "0.2"}), StatusError(429, {"retry-after": "0.2"})]
    )
    waits: list[float] = []
    found, stats = _extractor(client, waits).extract_many(_messages(2))
    assert (stats.retries, stats.fallbacks, stats.llm_chunks) == (2, [], 1)
    assert waits == [0.2, 0.2] and client.calls == 3
    assert (stats.input_tokens, stats.output_tokens) == (100, 20)
    assert all(e.entities == ["Project Falcon"] for e in found.values())


def test_5xx_until_the_retries_run_out_falls_back_and_a_400_is_not_retried() -> None:
    waits: list[float] = []
    down = Client([StatusError(503) for _ in range(10)])
    found, stats = _extractor(down, waits, max_retries=3).extract_many(_messages(2))
    assert stats.retries == 3 and len(stats.fallbacks) == 1 and down.calls == 4
    assert found == {}  # no LLM entries: the sleep runs the deterministic path on the chunk
    refused = Client([StatusError(400)])
    _, stats = _extractor(refused, waits).extract_many(_messages(2))
    assert stats.retries == 0 and len(stats.fallbacks) == 1 and refused.calls == 1


def test_chunks_run_concurrently_up_to_the_bound() -> None:
    client = Client([], delay=0.05)
    _, stats = _extractor(client, [], concurrency=3).extract_many(_messages(12))
    assert stats.chunks == 6 and stats.llm_chunks == 6
    assert client.peak == 3


@pytest.mark.parametrize(
    ("headers", "status", "expected"),
    [({"retry-after": "3"}, 429, 3.0), ({"retry-after-ms": "250"}, 500, 0.25),
     ({"retry-after": "600"}, 429, 60.0), ({}, 404, None)],
)  # fmt: skip
def test_retry_wait_honours_retry_after_within_the_cap(
    headers: dict[str, str], status: int, expected: float | None
) -> None:
    assert retry_wait(StatusError(status, headers), 0, max_wait=60.0) == expected
