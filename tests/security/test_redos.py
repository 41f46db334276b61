"""No input stalls the server (issue 10, point 4): the inputs that once held the server for
30-130 s, through the real app and Neo4j, and every text path on the input families that made
one of its patterns quadratic or worse.

There is no timed assertion here. Each request or call runs under a hard guard (SIGALRM) far
above what it takes now and far below what it took before, so a regression to super-linear time
fails visibly instead of hanging the suite. ``benchmarks/bench_adversarial.py`` measures the times.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

from graph.models import Message
from retrieval import classify, snippets, triggers
from skills import requests as skill_requests
from skills import routing
from skills.debug import tracebacks
from sleepwake import extract
from sleepwake.candidates import EXTRACTION, build_candidates
from tests.integration.api_support import bearer, new_key
from text import english, timephrases

GUARD_S = 60  # each input below took 30-130 s before the fix and takes seconds now
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
MAX_ENTITIES_PER_MESSAGE = EXTRACTION.max_entities_per_message


class GuardTripped(Exception):
    pass


@contextmanager
def guard(what: str, seconds: int = GUARD_S) -> Iterator[None]:
    """Fail (not hang) when ``what`` runs past ``seconds``: super-linear time is back."""

    def trip(signum: int, frame: FrameType | None) -> None:
        raise GuardTripped(f"{what} still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, trip)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def auth(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


def _fillers(n: int) -> list[dict[str, str]]:
    """Short turns after the big one: the sleep keeps the last 12 turns verbatim."""
    return [{"role": "user", "content": f"ok, noted {i}"} for i in range(n)]


# -- the findings, through the API ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("label", "message", "tool_output"),
    [
        ("32,000 dots (80 s, /health stalled 38 s)", "." * 32_000, None),
        ("a + 31,998 newlines + b (67.5 s)", "a" + "\n" * 31_998 + "b", None),
        ("last_tool_output of 32,000 newlines (132 s)", "why does it fail?", "\n" * 32_000),
        ("a + 31,998 spaces + b", "a" + " " * 31_998 + "b", " " * 32_000),
    ],
)
def test_context_of_a_crafted_message_answers(
    client: TestClient,
    auth: dict[str, str],
    label: str,
    message: str,
    tool_output: str | None,
) -> None:
    body: dict[str, Any] = {"message": message, "trace": True}
    if tool_output is not None:
        body["last_tool_output"] = tool_output
    with guard(f"POST /v1/context with {label}"):
        response = client.post("/v1/context", json=body, headers=auth)
    assert response.status_code == 200, response.text
    assert response.json()["context_text"] is not None


def test_sleep_of_a_message_with_12000_spaces_answers_and_so_does_the_next(
    client: TestClient, auth: dict[str, str]
) -> None:
    """The sleep took 31 s (and every later sleep of the namespace re-ran the extraction)."""
    crafted = {"role": "user", "content": "a" + " " * 12_000 + "b"}
    with guard("POST /v1/messages + /v1/sleep with a + 12,000 spaces + b"):
        stored = client.post(
            "/v1/messages", json={"messages": [crafted, *_fillers(14)]}, headers=auth
        )
        assert stored.status_code == 201, stored.text
        first = client.post("/v1/sleep", headers=auth)
        more = client.post("/v1/messages", json={"messages": _fillers(3)}, headers=auth)
        second = client.post("/v1/sleep", headers=auth)
    assert first.status_code == 200, first.text
    assert first.json()["messages_compacted"] >= 1
    assert more.status_code == 201 and second.status_code == 200, second.text
    listed = client.get("/v1/messages", params={"limit": 1000}, headers=auth).json()["messages"]
    assert crafted["content"] in [m["content"] for m in listed]  # stored as sent


def test_a_pasted_list_of_12000_names_sleeps_into_a_bounded_number_of_topics(
    client: TestClient, auth: dict[str, str]
) -> None:
    """Each name was a candidate: 12,000 embeddings, topics and a 12,000^2 co-mention graph."""
    names = ", ".join(f"Qx{i:05d}" for i in range(12_000))[:100_000]
    crafted = {"role": "user", "content": names}
    with guard("a 100,000-character list of names through messages + sleep", 120):
        stored = client.post(
            "/v1/messages",
            json={"messages": [crafted, *_fillers(14)], "auto_sleep": False},
            headers=auth,
        )
        assert stored.status_code == 201, stored.text
        slept = client.post("/v1/sleep", headers=auth)
    assert slept.status_code == 200, slept.text
    # a list of codes is no subject to keep (issue #12: names are aliases, not topics); what
    # matters here is that the sleep finished in time, compacted it, and stayed bounded
    assert slept.json()["messages_compacted"] >= 1
    assert slept.json()["topics_created"] <= MAX_ENTITIES_PER_MESSAGE


def test_health_answers_while_the_routes_threadpool_is_taken(
    client: TestClient, auth: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that holds the only token of the sync routes' threadpool does not hold up
    /health: it answers while that request is still inside its route."""
    assert client.portal is not None
    limiter = client.portal.call(anyio.to_thread.current_default_thread_limiter)
    tokens = limiter.total_tokens
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()
    builder = client.app.state.container.context  # type: ignore[attr-defined]
    real_build = builder.build

    def held_build(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(GUARD_S)
        return real_build(*args, **kwargs)

    def slow_request() -> None:
        client.post("/v1/context", json={"message": "what did we decide?"}, headers=auth)
        finished.set()

    monkeypatch.setattr(builder, "build", held_build)
    client.portal.call(setattr, limiter, "total_tokens", 1)
    worker = threading.Thread(target=slow_request)
    try:
        worker.start()
        assert entered.wait(GUARD_S), "the held request never reached its route"
        with guard("GET /health while the threadpool's only token is held"):
            health = client.get("/health")
        still_held = not finished.is_set()
    finally:
        release.set()
        worker.join(GUARD_S)
        client.portal.call(setattr, limiter, "total_tokens", tokens)
    assert health.status_code == 200
    assert still_held  # /health did not wait for the held request to leave the threadpool


# -- every text path on the inputs that made one of its patterns backtrack ------------------------
def _candidates(text: str) -> object:
    return build_candidates([Message(namespace="redos", role="user", content=text, at=NOW)])


def _routing(text: str) -> object:
    skills = ("write_docs", "repo_refactor", "debug", "plan_and_execute")
    args = [skill_requests.suggest_args(s, text) for s in skills]
    return routing.classify_intent(text), routing.deep_triggers(text, text), args


def _triggers(text: str) -> object:
    return triggers.fired(text, triggers.TriggerContext(now=NOW, known_names=frozenset({"a"})))


PATHS: dict[str, Callable[[str], object]] = {
    "split": english.split_sentences,
    "extract": extract.extract,
    "candidates": _candidates,
    "triggers": _triggers,
    "classify": lambda t: classify.classify(t, [], names_known=True),
    "routing": _routing,
    "timephrases": lambda t: timephrases.find_windows(t, NOW),
    "snippets": lambda t: snippets.best_sentences(t, snippets.terms("billing plan"), 3),
    "tracebacks": tracebacks.parse_traceback,
}
N = 32_000  # the context message limit; two families below use the 100,000 message limit
INPUTS: dict[str, str] = {
    "a+spaces+b": "a" + " " * N + "b",  # \s*,?\s* in the decision splitters: cubic
    "dots": "." * N,  # the sentence boundary entered at every dot
    "a+newlines+b": "a" + "\n" * N + "b",  # ^\s* under MULTILINE crossing newlines
    "newline+indent": "\n " * (N // 2),
    "dot+space": ". " * (N // 2),  # thousands of sentences and spans
    "numbers": "1 " * (N // 2),  # a number key window per number
    "names": ", ".join(f"Qx{i:05d}" for i in range(N // 9)),  # thousands of entities
    "today": "today " * 16_000,  # thousands of time phrases: k^2 overlap checks
    "dependency cues": "x depends on y, " * (N // 16),  # a clause scan per cue
    "frames": 'File "a.py", line 1, in ' + " " * N + "f",  # lazy name before \s*$
    "docs": "docs " * 20_000,  # an unbounded lazy gap before "for" from every "docs"
}


@pytest.mark.parametrize("family", list(INPUTS))
@pytest.mark.parametrize("path", list(PATHS))
def test_every_text_path_finishes_on_crafted_text(path: str, family: str) -> None:
    english._noun_phrases.cache_clear()
    with guard(f"{path} on {family!r} ({len(INPUTS[family]):,} characters)", 30):
        PATHS[path](INPUTS[family])
