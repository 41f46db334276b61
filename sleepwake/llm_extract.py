"""The optional LLM extractor (sleep step 3) on the Responses API with structured output.

With an OpenAI key configured, a sleep asks the model to extract memory candidates from the
slice, a chunk of messages per call, with a strict JSON schema (``text.format``) and high
reasoning effort (spec §7.4: sleep compaction). Every answer is validated with pydantic; an
answer that is not JSON, breaks the schema, or names messages that were not sent — and any
API error — makes that chunk fall back to the deterministic extractor, so no fact is ever
dropped because a model misbehaved. Messages the answer leaves out are extracted
deterministically too (they are left out of the result, so the sleep treats them exactly as
it does without a key).

The model is asked for what the deterministic path makes (docs/sleep-and-wake.md, "The LLM
extractor"): per message at most three topics named by specific phrases, at most two facts
that are statements filed under them, and only real open loops. Those rules are enforced on
the answer, not trusted to the prompt (:mod:`sleepwake.llm_rules`): a fact becomes one of the
message's ``sentences`` only if it is a grounded statement, in its own words (the sleep
resolves a relative date in it into the fact's ``valid_from``, as for every fact); time
phrases and memory references are always read from the message by the deterministic path.

Message text is redacted (:func:`sleepwake.redact.redact`) before it is sent, and the model's
answer is redacted again before it becomes a candidate.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graph.models import Message
from graph.strict_schema import tool_parameters
from sleepwake import llm_rules as rules
from sleepwake.extract import (
    Decision,
    Dependency,
    Extraction,
    InProgress,
    NumberMention,
    extract,
)
from sleepwake.redact import redact

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
You are a careful note-taker compacting a conversation into durable memory. You are given \
messages (id, role, at, content). For each message return what is worth remembering from it:
- topics: at most 3 subjects the message is about, each named by a specific phrase of 2-5 \
words from the conversation ("pottery class", "Caroline's adoption plans", "billing \
migration") or a proper name ("Postgres"). Never a generic word ("people", "life", "thing"), \
a weekday, month or date, a pronoun, a contraction or an adjective. Use the same name for the \
same subject in every message. People, places and organisations mentioned in passing are not \
topics; name them inside the topic's facts.
- facts: at most 2 statements worth keeping (first-person statements, decisions, preferences, \
plans, numbers, dates), each filed under one of the message's topics. A fact is a declarative \
sentence close to the message's own words; never a question, greeting, thanks or filler. Keep \
time phrases as written ("yesterday", "next Friday"): they are resolved against the message \
time for you. Most messages have 0 or 1 fact; small talk has none.
- open_loops: only real open items: questions the user asked that stay unanswered, stated \
next steps, unresolved problems. Not rhetorical or small-talk questions.
- decisions: "chose X over Y because Z" -> chosen, rejected alternatives, reason;
- constraints: rules and preferences stated as such ("always", "never", "prefer", "must");
- numbers: quantities with a short lower-case key ("budget", "context window"), value, unit;
- dependencies: "A cannot proceed before B" -> dependent A, dependency B;
- is_correction: true when the user corrects the assistant;
- in_progress: the task under way and its next step, if the message states one.
Copy wording from the messages; never invent facts. Use empty lists when nothing applies. \
Return one entry per message id, in the order given."""


class LLM(Protocol):
    """What the extractor needs of the Responses API client."""

    @property
    def responses(self) -> Any: ...


# -- the answer's shape (also the JSON schema sent as text.format) -----------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Decision(_Strict):
    text: str = Field(max_length=2000)
    chosen: str = Field(max_length=300)
    rejected: list[str] = Field(max_length=10)
    reason: str | None = Field(max_length=1000)


class _Number(_Strict):
    key: str = Field(min_length=1, max_length=120)
    value: float
    unit: str | None = Field(max_length=40)
    text: str = Field(max_length=2000)


class _Dependency(_Strict):
    dependent: str = Field(min_length=1, max_length=300)
    dependency: str = Field(min_length=1, max_length=300)
    text: str = Field(max_length=2000)


class _Progress(_Strict):
    goal: str = Field(min_length=1, max_length=500)
    next_step: str | None = Field(max_length=500)
    text: str = Field(max_length=2000)


class _Fact(_Strict):
    topic: str = Field(max_length=200)
    text: str = Field(max_length=2000)


class _MessageFacts(_Strict):
    id: str
    topics: list[str] = Field(max_length=20)
    facts: list[_Fact] = Field(max_length=20)
    decisions: list[_Decision] = Field(max_length=20)
    constraints: list[str] = Field(max_length=20)
    open_loops: list[str] = Field(max_length=20)
    numbers: list[_Number] = Field(max_length=30)
    dependencies: list[_Dependency] = Field(max_length=20)
    is_correction: bool
    in_progress: _Progress | None


class _Answer(_Strict):
    messages: list[_MessageFacts]


def answer_schema() -> dict[str, Any]:
    """The strict JSON schema of an answer (every property required, no extras, no lengths)."""
    schema, strict = tool_parameters(_Answer)
    assert strict, "the extraction answer must be expressible in strict mode"
    return schema


# -- the extractor ----------------------------------------------------------------------------
@dataclass
class ExtractionStats:
    chunks: int = 0
    llm_chunks: int = 0
    fallbacks: list[str] = field(default_factory=list)  # why each fallen-back chunk fell back
    retries: int = 0  # calls repeated after a 429, a 5xx or a lost connection
    input_tokens: int = 0
    output_tokens: int = 0

    def report(self) -> dict[str, Any]:
        """What a sleep's summary says of its extraction (``SleepSummary.extraction``)."""
        mode = "llm" if not self.fallbacks else "llm+fallback"
        return {
            "mode": mode, "chunks": self.chunks, "fallbacks": self.fallbacks,
            "retries": self.retries, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }  # fmt: skip


@dataclass
class _ChunkResult:
    answered: dict[str, Extraction]
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    fallback: str | None = None


class ResponsesExtractor:
    """Extraction by a model on the Responses API, chunk by chunk, with fallback. Chunks are
    asked ``concurrency`` at a time; a 429, a 5xx or a lost connection is retried up to
    ``max_retries`` times, waiting what the server's Retry-After says (at most ``max_wait``
    seconds), else an exponential backoff with jitter. The client's own retries are turned
    off so every retry is counted here."""

    def __init__(
        self,
        client: OpenAI | LLM,
        model: str,
        chunk_size: int = 20,
        effort: str = "high",
        *,
        concurrency: int = 4,
        max_retries: int = 4,
        max_wait: float = 60.0,
        pause: Callable[[float], None] = time.sleep,
    ) -> None:
        with_options = getattr(client, "with_options", None)
        self.client = with_options(max_retries=0) if callable(with_options) else client
        self.model = model
        self.chunk_size = chunk_size
        self.effort = effort
        self.concurrency = max(1, concurrency)
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.pause = pause
        self._schema = answer_schema()

    def extract_many(
        self, messages: Sequence[Message]
    ) -> tuple[dict[str, Extraction], ExtractionStats]:
        """``message_id -> Extraction`` for every message the model answered for, and how
        each chunk went (a chunk that fell back has no entries: the deterministic path)."""
        chunks = [
            list(messages[i : i + self.chunk_size])
            for i in range(0, len(messages), self.chunk_size)
        ]
        stats = ExtractionStats(chunks=len(chunks))
        if not chunks:
            return {}, stats
        with ThreadPoolExecutor(min(self.concurrency, len(chunks))) as pool:
            results = list(pool.map(self._chunk, chunks))
        out: dict[str, Extraction] = {}
        for result in results:
            stats.retries += result.retries
            stats.input_tokens += result.input_tokens
            stats.output_tokens += result.output_tokens
            if result.fallback is None:
                stats.llm_chunks += 1
            else:
                stats.fallbacks.append(result.fallback)
            out.update(result.answered)  # the rest: the deterministic path, as with no key
        return out, stats

    def _chunk(self, chunk: list[Message]) -> _ChunkResult:
        """One chunk asked (with retries); an unusable answer is a recorded fallback."""
        result = _ChunkResult({})
        try:
            response = self._call(self._request(chunk), result)
            usage = getattr(response, "usage", None)
            result.input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
            result.output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
            result.answered = parse_answer(str(response.output_text), chunk)
        except ExtractionRefused as exc:
            log.warning("LLM extraction fell back to the deterministic path: %s", exc)
            result.fallback = str(exc)
        return result

    def _request(self, chunk: list[Message]) -> dict[str, Any]:
        payload = [
            {
                "id": m.message_id,
                "role": m.role,
                "at": m.at.isoformat(),
                "content": redact(m.content),
            }
            for m in chunk
        ]
        return {
            "model": self.model,
            "instructions": INSTRUCTIONS,
            "input": json.dumps({"messages": payload}, ensure_ascii=False),
            "reasoning": {"effort": self.effort},
            "text": {
                "format": {
                    "type": "json_schema",
                    "name": "memory_extraction",
                    "schema": self._schema,
                    "strict": True,
                }
            },
        }

    def _call(self, request: dict[str, Any], result: _ChunkResult) -> Any:
        """The API call, retried on what is worth retrying; ``ExtractionRefused`` if not."""
        for attempt in range(self.max_retries + 1):
            try:
                return self.client.responses.create(**request)
            except Exception as exc:  # network, auth, quota, refusal
                wait = retry_wait(exc, attempt, self.max_wait)
                if wait is None or attempt == self.max_retries:
                    raise ExtractionRefused(f"Responses API call failed: {exc}") from exc
                log.info("extraction call failed (%s); retry %d in %.1f s", exc, attempt + 1, wait)
                result.retries += 1
                self.pause(wait)
        raise AssertionError("unreachable")  # the loop returns or raises


def retry_wait(exc: Exception, attempt: int, max_wait: float) -> float | None:
    """Seconds to wait before retrying after ``exc`` (None: do not retry). 429, 408, 409 and
    5xx and lost connections are retried; the server's Retry-After (seconds, or -ms) wins over
    the backoff of 1 s x 2^attempt with jitter."""
    status = getattr(exc, "status_code", None)
    connection = type(exc).__name__ in {"APIConnectionError", "APITimeoutError"}
    if not connection and not (status in {408, 409, 429} or (status or 0) >= 500):
        return None
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            if value is not None:
                return min(max_wait, max(0.0, float(value) * scale))
        except ValueError:  # an HTTP date: use the backoff
            pass
    return min(max_wait, 2.0**attempt * random.uniform(0.5, 1.5))


class ExtractionRefused(Exception):
    """An answer that cannot be used; the chunk is extracted deterministically instead."""


def parse_answer(text: str, chunk: Sequence[Message]) -> dict[str, Extraction]:
    """Validate a model's answer for ``chunk``; raise ``ExtractionRefused`` when unusable.
    What the schema cannot say is enforced per item (:mod:`sleepwake.llm_rules`): topics
    that are not specific phrases, facts that are not grounded statements and open loops that
    are not open are dropped, and a turn keeps at most two facts."""
    try:
        answer = _Answer.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise ExtractionRefused(
            f"answer does not match the schema at {where}: {first['msg']}"
        ) from exc
    by_id = {m.message_id: m for m in chunk}
    unknown = [f.id for f in answer.messages if f.id not in by_id]
    if unknown:
        raise ExtractionRefused(f"answer names messages that were not sent: {unknown[:3]}")
    sent = _Chunk("\n".join(redact(m.content) for m in chunk))
    return {f.id: _to_extraction(f, by_id[f.id], sent) for f in answer.messages}


@dataclass
class _Chunk:
    """The redacted text of the messages sent, and its content stems (computed once)."""

    text: str
    stems: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.stems = rules.content_stems(self.text)


def _clean(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(redact(s).strip() for s in items if s and s.strip()))


def _topics(facts: _MessageFacts, chunk: _Chunk) -> list[str]:
    """The message's topic names that pass the rules, those its facts are filed under first."""
    named = [f.topic for f in facts.facts] + list(facts.topics)
    kept = (rules.topic_name(redact(n), chunk.text, chunk.stems) for n in named)
    return list(dict.fromkeys(n for n in kept if n))[: rules.MAX_TOPICS_PER_TURN]


def _statements(facts: _MessageFacts, content: str) -> list[str]:
    """At most two grounded statements, in the model's words (dated where they become facts)."""
    kept = (rules.fact_statement(redact(f.text), content) for f in facts.facts)
    return list(dict.fromkeys(s for s in kept if s))[: rules.MAX_FACTS_PER_TURN]


def _to_extraction(facts: _MessageFacts, message: Message, chunk: _Chunk) -> Extraction:
    """The model's answer for one message as an ``Extraction``: its topics are the entities
    and its facts the sentences that become facts; time phrases and memory references are
    the deterministic path's, read from the message itself."""
    content = redact(message.content)
    base = extract(content, message.role)
    user = message.role == "user"
    progress = facts.in_progress
    loops = (rules.open_item(redact(t), content, message.role) for t in facts.open_loops)
    return Extraction(
        entities=_topics(facts, chunk),
        decisions=[
            Decision(text=redact(d.text), chosen=redact(d.chosen),
                     rejected=_clean(d.rejected), reason=redact(d.reason) if d.reason else None)
            for d in facts.decisions if d.chosen.strip()
        ],
        constraints=_clean(facts.constraints),
        open_loops=list(dict.fromkeys(loop for loop in loops if loop)),
        numbers=[
            NumberMention(key=n.key.strip().lower(), value=n.value, unit=n.unit, text=redact(n.text))
            for n in facts.numbers
        ],
        time_expressions=base.time_expressions,
        memory_references=base.memory_references,
        dependencies=[
            Dependency(dependent=redact(d.dependent), dependency=redact(d.dependency),
                       text=redact(d.text))
            for d in facts.dependencies
        ],
        is_correction=user and facts.is_correction,
        in_progress=(
            InProgress(goal=redact(progress.goal),
                       next_step=redact(progress.next_step) if progress.next_step else None,
                       text=redact(progress.text))
            if progress is not None else None
        ),
        sentences=_statements(facts, content),
    )  # fmt: skip
