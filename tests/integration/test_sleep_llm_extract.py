"""Sleep with the LLM extractor: the real ``openai`` client over HTTP to the fake Responses
server, structured output, validation, and the fallback to the deterministic path."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

from agent.fake_responses import Fail, FakeResponses, message
from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from retrieval.embedding import MiniLMEmbedder
from sleepwake.conversation import IncomingMessage
from sleepwake.sleep import SleepSummary

DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
TURNS = [
    ("user", "ok so the falcon thing slips to friday, ugh."),
    ("assistant", "Understood, the rollout moves to Friday."),
    ("user", f"We chose Postgres over MongoDB because we need joins. My key is {KEY}"),
    ("assistant", "Noted: Postgres, not MongoDB."),
    ("user", "Next step is the invoices table; we still need to backfill March."),
    ("assistant", "I'll start with the invoices table."),
    ("user", "thanks"),
    ("assistant", "You're welcome."),
]


def _facts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A well-formed answer: one entry per message sent, 'Project Falcon' for the first."""
    sent = json.loads(body["input"])["messages"]
    out = []
    for m in sent:
        falcon = "falcon" in m["content"]
        fact = {"topic": "Project Falcon", "text": "the falcon thing slips to friday"}
        out.append(
            {"id": m["id"], "topics": ["Project Falcon"] if falcon else [],
             "facts": [fact] if falcon else [], "decisions": [], "constraints": [],
             "open_loops": [], "numbers": [], "dependencies": [], "is_correction": False,
             "in_progress": None}
        )  # fmt: skip
    return out


@pytest.fixture
def twin(other_namespace: str) -> str:
    """The namespace the same conversation is slept in with the rules only."""
    return other_namespace


@pytest.fixture
def fake() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


def _container(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, fake: FakeResponses, llm: bool
) -> Container:
    update: dict[str, Any] = {"tail_turns": 2, "extractor": "llm" if llm else "deterministic"}
    if llm:
        update |= {"openai_api_key": "sk-test", "openai_base_url": fake.base_url}
    c = Container(
        settings.model_copy(update=update), clock=FixedClock(DAY), driver=driver, embedder=embedder
    )
    if llm:
        c.openai_client.max_retries = 0  # a scripted failure is answered once, not retried
    return c


def _sleep(c: Container, namespace: str) -> SleepSummary:
    items = [
        IncomingMessage(role=r, content=t, at=DAY + timedelta(minutes=i))  # type: ignore[arg-type]
        for i, (r, t) in enumerate(TURNS)
    ]
    c.conversation.append(namespace, items, auto_sleep=False)
    return c.sleeper.sleep(namespace, DAY + timedelta(hours=1), "explicit")


def _memory(c: Container, namespace: str) -> list[tuple[str, int, int]]:
    return sorted((t.name, len(t.facts), len(t.open_loops)) for t in c.topics.list_live(namespace))


def test_a_valid_structured_answer_becomes_topics(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
) -> None:
    fake.script = lambda body: [message(json.dumps({"messages": _facts(body)}))]
    c = _container(settings, driver, embedder, fake, llm=True)
    summary = _sleep(c, namespace)

    assert summary.extraction == {"mode": "llm", "chunks": 1, "fallbacks": [], "retries": 0,
                                  "input_tokens": summary.extraction["input_tokens"],
                                  "output_tokens": summary.extraction["output_tokens"]}  # fmt: skip
    assert summary.extraction["input_tokens"] > 0 and summary.extraction["output_tokens"] > 0
    (request,) = fake.requests
    assert request["reasoning"] == {"effort": "high"}
    fmt = request["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True
    assert fmt["schema"]["additionalProperties"] is False
    assert KEY not in json.dumps(request)  # secrets are redacted before they leave
    assert len(json.loads(request["input"])["messages"]) == len(TURNS) - 2  # the tail stays
    topics = {t.name: t for t in c.topics.list_live(namespace)}
    assert "Project Falcon" in topics  # only the model could name it so
    falcon = topics["Project Falcon"]
    assert any("slips to friday" in f.text for f in falcon.facts)
    assert all(f.source_message_ids for t in topics.values() for f in t.facts)
    assert KEY not in json.dumps([t.model_dump(mode="json") for t in topics.values()])


@pytest.mark.parametrize(
    "reply",
    [
        [message("Sure! Here is the extraction: {messages: []")],  # not JSON
        [message(json.dumps({"messages": [{"id": "x", "entities": "Falcon"}]}))],  # schema
        Fail(400, "Invalid schema for response_format"),  # an API error (429s are retried)
    ],
    ids=["not-json", "bad-schema", "api-400"],
)
def test_a_bad_answer_falls_back_and_keeps_every_fact(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
    twin: str,
    reply: Any,
) -> None:
    fake.enqueue(reply)
    llm = _container(settings, driver, embedder, fake, llm=True)
    summary = _sleep(llm, namespace)
    plain = _container(settings, driver, embedder, fake, llm=False)
    expected = _sleep(plain, twin)

    assert summary.extraction["mode"] == "llm+fallback"
    assert len(summary.extraction["fallbacks"]) == 1
    assert _memory(llm, namespace) == _memory(plain, twin)
    assert (summary.topics_created, summary.events) == (expected.topics_created, expected.events)
    assert len(fake.requests) == 1


def test_an_answer_naming_messages_that_were_not_sent_is_refused(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
    twin: str,
) -> None:
    def invented(body: dict[str, Any]) -> list[dict[str, Any]]:
        facts = _facts(body)
        facts[0]["id"] = "not-a-message-of-this-slice"
        return [message(json.dumps({"messages": facts}))]

    fake.script = invented
    llm = _container(settings, driver, embedder, fake, llm=True)
    summary = _sleep(llm, namespace)
    assert "not sent" in summary.extraction["fallbacks"][0]
    plain = _container(settings, driver, embedder, fake, llm=False)
    _sleep(plain, twin)
    assert _memory(llm, namespace) == _memory(plain, twin)


def test_rate_limits_are_retried_after_retry_after_and_the_run_records_them(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
) -> None:
    """A 429 twice (Retry-After: 0.2 s), then an answer: one sleep in the background worker,
    two retries on its run, no fallback, the tokens counted."""
    calls: list[float] = []

    def limited(body: dict[str, Any]) -> Any:
        calls.append(time.monotonic())
        if len(calls) <= 2:
            return Fail(429, "rate limited", "rate_limit_error", retry_after=0.2)
        return [message(json.dumps({"messages": _facts(body)}))]

    fake.script = limited
    c = _container(settings, driver, embedder, fake, llm=True)
    items = [
        IncomingMessage(role=r, content=t, at=DAY + timedelta(minutes=i))  # type: ignore[arg-type]
        for i, (r, t) in enumerate(TURNS)
    ]
    c.conversation.append(namespace, items, auto_sleep=False)
    c.services.sleepwake.queue_sleep(namespace, DAY + timedelta(hours=1))
    run = c.sleep_worker().run_once()
    assert run is not None and run.outcome == "done"
    assert run.extraction["mode"] == "llm" and run.extraction["fallbacks"] == []
    assert run.extraction["retries"] == 2 and run.extraction["chunks"] == 1
    assert run.extraction["input_tokens"] > 0
    assert len(calls) == 3 and calls[1] - calls[0] >= 0.18  # Retry-After was honoured
    assert [r.run_id for r in c.services.sleepwake.runs(namespace, 10)] == [run.run_id]
    assert "Project Falcon" in {t.name for t in c.topics.list_live(namespace)}


def test_a_noisy_answer_is_held_to_the_deterministic_rules(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
) -> None:
    """Generic names, questions as facts, invented facts and small talk as an open loop are
    dropped from the model's answer; what is left is named and dated as the rules say."""

    def noisy(body: dict[str, Any]) -> list[dict[str, Any]]:
        answer = _facts(body)
        for entry, m in zip(answer, json.loads(body["input"])["messages"], strict=True):
            entry["topics"] += ["Friday", "thing", "you"]
            entry["facts"] += [
                {"topic": "thing", "text": "Is that OK?"},
                {"topic": "thing", "text": "The user owns a yacht in Monaco."},
            ]
            entry["open_loops"] = ["It's just great, you know?"]
            if "invoices" in m["content"]:
                entry["open_loops"].append("we still need to backfill March")
        return [message(json.dumps({"messages": answer}))]

    fake.script = noisy
    c = _container(settings, driver, embedder, fake, llm=True)
    summary = _sleep(c, namespace)

    assert summary.extraction["mode"] == "llm"
    topics = {t.name: t for t in c.topics.list_live(namespace)}
    names = {n.lower() for n in topics}
    assert "project falcon" in names and not names & {"friday", "thing", "you"}
    facts = [f.text for t in topics.values() for f in t.facts]
    assert not [f for f in facts if f.rstrip().endswith("?") or "yacht" in f]
    falcon = topics["Project Falcon"]
    # resolved against the message's time (Monday 2 March 2026) as text/timephrases reads a
    # bare weekday: the most recent one; the fact keeps the model's words, the date goes in
    # valid_from as on the deterministic path
    slips = [f for f in falcon.facts if "slips to friday" in f.text]
    assert slips and all(f.valid_from == datetime(2026, 2, 27, tzinfo=UTC) for f in slips)
    assert not [f for f in facts if "[" in f]
    loops = [loop.text for t in topics.values() for loop in t.open_loops]
    assert not [loop for loop in loops if "you know" in loop]


def test_both_paths_date_a_fact_alike(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    fake: FakeResponses,
    namespace: str,
    twin: str,
) -> None:
    """ "slips to friday" said on Monday 2 March: with a key or without, the fact citing that
    turn keeps its words and has valid_from Friday 27 February, in the same field."""
    fake.script = lambda body: [message(json.dumps({"messages": _facts(body)}))]
    llm = _container(settings, driver, embedder, fake, llm=True)
    plain = _container(settings, driver, embedder, fake, llm=False)
    _sleep(llm, namespace)
    _sleep(plain, twin)

    def dated(c: Container, ns: str) -> set[tuple[str, datetime | None]]:
        first = c.messages.in_range(ns, None, None, limit=1)[0].message_id
        topics = c.topics.list_live(ns)
        return {
            (f.text, f.valid_from) for t in topics for f in t.facts if first in f.source_message_ids
        }

    friday = datetime(2026, 2, 27, tzinfo=UTC)
    assert {when for _, when in dated(llm, namespace)} == {friday}
    assert {when for _, when in dated(plain, twin)} == {friday}
    assert all("friday" in text and "[" not in text for text, _ in dated(llm, namespace))
