"""The optional LLM extractor (sleep step 3) on the Responses API with structured output.

With an OpenAI key configured, a sleep asks the model to extract memory candidates from the
slice, a chunk of messages per call, with a strict JSON schema (``text.format``) and high
reasoning effort (spec §7.4: sleep compaction). Every answer is validated with pydantic; an
answer that is not JSON, breaks the schema, or names messages that were not sent — and any
API error — makes that chunk fall back to the deterministic extractor, so no fact is ever
dropped because a model misbehaved. Messages the answer leaves out are extracted
deterministically too.

Message text is redacted (:func:`sleepwake.redact.redact`) before it is sent, and the model's
answer is redacted again before it becomes a candidate. Sentence splitting (used for snippets
and provenance) always comes from the deterministic path, so retrieval does not depend on how
the model phrases things.
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
from sleepwake.extract import (
    Decision,
    Dependency,
    Extraction,
    InProgress,
    NumberMention,
    extract,
    noun_phrases,
)
from sleepwake.redact import redact

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
You compact a conversation into durable memory. For each message you are given (id, role, \
content), extract only what the text states:
- entities: names of people, places, projects, products, events (as written, short);
- decisions: "chose X over Y because Z" -> chosen, rejected alternatives, reason;
- constraints: rules and preferences ("always", "never", "prefer", "must");
- open_loops: unfinished work ("still need to", "next step", TODO, open questions);
- numbers: quantities with a short lower-case key ("budget", "context window"), value, unit;
- time_expressions: phrases that name a time ("last Tuesday", "May 8");
- memory_references: sentences that refer to earlier conversation ("as we discussed");
- dependencies: "A cannot proceed before B" -> dependent A, dependency B;
- is_correction: true when the user corrects the assistant;
- in_progress: the task under way and its next step, if the message states one.
Copy wording from the message; never invent facts. Use empty lists when nothing applies. \
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


class _MessageFacts(_Strict):
    id: str
    entities: list[str] = Field(max_length=50)
    decisions: list[_Decision] = Field(max_length=20)
    constraints: list[str] = Field(max_length=20)
    open_loops: list[str] = Field(max_length=20)
    numbers: list[_Number] = Field(max_length=30)
    time_expressions: list[str] = Field(max_length=20)
    memory_references: list[str] = Field(max_length=20)
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
        """``message_id -> Extraction`` for every message, and how each chunk went."""
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
        for chunk, result in zip(chunks, results, strict=True):
            stats.retries += result.retries
            stats.input_tokens += result.input_tokens
            stats.output_tokens += result.output_tokens
            if result.fallback is None:
                stats.llm_chunks += 1
            else:
                stats.fallbacks.append(result.fallback)
            for m in chunk:
                out[m.message_id] = result.answered.get(m.message_id) or extract(m.content, m.role)
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
            {"id": m.message_id, "role": m.role, "content": redact(m.content)} for m in chunk
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
    """Validate a model's answer for ``chunk``; raise ``ExtractionRefused`` when unusable."""
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
    return {f.id: _to_extraction(f, by_id[f.id]) for f in answer.messages}


def _clean(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(redact(s).strip() for s in items if s and s.strip()))


def _to_extraction(facts: _MessageFacts, message: Message) -> Extraction:
    """The model's facts as an ``Extraction``; sentences come from the deterministic path."""
    base = extract(message.content, message.role)
    user = message.role == "user"
    progress = facts.in_progress
    return Extraction(
        entities=_clean(facts.entities) or noun_phrases(redact(message.content)),
        decisions=[
            Decision(text=redact(d.text), chosen=redact(d.chosen),
                     rejected=_clean(d.rejected), reason=redact(d.reason) if d.reason else None)
            for d in facts.decisions if d.chosen.strip()
        ],
        constraints=_clean(facts.constraints),
        open_loops=_clean(facts.open_loops),
        numbers=[
            NumberMention(key=n.key.strip().lower(), value=n.value, unit=n.unit, text=redact(n.text))
            for n in facts.numbers
        ],
        time_expressions=_clean(facts.time_expressions),
        memory_references=_clean(facts.memory_references),
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
        sentences=base.sentences,
    )  # fmt: skip
