"""The continuous conversation of a namespace: append, ingest, and the sleep policy that follows.

Timestamps come from the caller's clock when given (a conversation can be replayed with its real
dates), else from the injected clock. After each append the policy may start a sleep: when the
buffer exceeds its share of the context budget, or (before a message that arrives after a long
silence) when the conversation was idle for ``idle_gap`` — that sleep is dated at the moment the
idle maintenance would have run, last message + idle_gap.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from graph.clock import Clock, ensure_utc
from graph.errors import AlreadyRunning, ValidationFailed
from graph.messages import BufferStats
from graph.models import Message, describe_errors
from graph.protocols import MessageStoreProtocol
from sleepwake.policy import SleepPolicy, estimate_tokens
from sleepwake.sleep import Sleeper, SleepSummary

log = logging.getLogger(__name__)


class IncomingMessage(BaseModel):
    """One line of an ingest file / one API append: {"role", "content", "at"?, ...}."""

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    at: datetime | None = None
    speaker: str | None = None
    tool_calls: list[dict[str, Any]] = []
    external_id: str | None = None


class AppendResult(BaseModel):
    messages: list[Message]
    sleeps: list[SleepSummary]


class Conversation:
    def __init__(
        self,
        messages: MessageStoreProtocol,
        sleeper: Sleeper,
        clock: Clock,
        policy: SleepPolicy | None = None,
    ) -> None:
        self.messages = messages
        self.sleeper = sleeper
        self.clock = clock
        self.policy = policy or sleeper.policy

    def to_message(self, namespace: str, item: IncomingMessage) -> Message:
        """Validate one incoming message into a stored-message model (no I/O)."""
        try:
            return Message(
                namespace=namespace,
                role=item.role,
                speaker=item.speaker,
                content=item.content,
                at=ensure_utc(item.at, "at") if item.at else self.clock.now(),
                token_estimate=estimate_tokens(item.content),
                tool_calls=item.tool_calls,
                external_id=item.external_id,
            )
        except ValidationError as exc:
            raise ValidationFailed(describe_errors("message", exc)) from exc

    def validate(self, namespace: str, items: Sequence[IncomingMessage]) -> list[Message]:
        """Every message as a stored-message model, in time order, or ``ValidationFailed``
        naming the first bad one (no I/O): callers appending in parts check the whole first."""
        models = [self.to_message(namespace, item) for item in items]
        _check_order(models)
        return models

    def append(
        self, namespace: str, items: Sequence[IncomingMessage], auto_sleep: bool = True
    ) -> AppendResult:
        """Validate every message first (nothing is written if one is bad), then append them
        in order, running the sleep policy between them."""
        models = self.validate(namespace, items)
        return self._append_with_policy(namespace, models, auto_sleep)

    def _append_with_policy(
        self, namespace: str, models: list[Message], auto_sleep: bool
    ) -> AppendResult:
        written: list[Message] = []
        sleeps: list[SleepSummary] = []
        stats = self.messages.buffer_stats(namespace) if auto_sleep else BufferStats(0, 0, None)
        tokens = stats.tokens
        last_at = stats.last_at or _last_at(self.messages, namespace)
        pending: list[Message] = []
        for message in models:
            if auto_sleep and last_at and message.at - last_at >= self.policy.idle_gap:
                written += self.messages.append(namespace, pending)
                pending = []
                if stats.messages + len(written) > self.policy.tail_turns:
                    slept = self._sleep(namespace, last_at + self.policy.idle_gap, "idle")
                    sleeps += [slept] if slept else []
                    tokens = self._buffer_tokens(namespace)
            pending.append(message)
            tokens += message.token_estimate
            last_at = message.at
            if auto_sleep and tokens > self.policy.buffer_share * self.policy.context_budget_tokens:
                written += self.messages.append(namespace, pending)
                pending = []
                slept = self._sleep(namespace, message.at, "budget")
                sleeps += [slept] if slept else []
                tokens = self._buffer_tokens(namespace)
        written += self.messages.append(namespace, pending)
        return AppendResult(messages=written, sleeps=sleeps)

    def maintain(self, namespace: str, now: datetime) -> SleepSummary | None:
        """Periodic maintenance: if the conversation has been idle for ``idle_gap`` and the
        buffer holds more than the tail, sleep as of last message + idle_gap (``None`` when
        there is nothing to do or another sleep is running)."""
        stats = self.messages.buffer_stats(namespace)
        if stats.messages <= self.policy.tail_turns or stats.last_at is None:
            return None
        last_at = stats.last_at
        if ensure_utc(now) - last_at < self.policy.idle_gap:
            return None
        return self._sleep(namespace, last_at + self.policy.idle_gap, "idle")

    def _sleep(self, namespace: str, now: datetime, reason: str) -> SleepSummary | None:
        """A policy sleep; ``None`` when another sleep of the namespace holds the lease (that
        one is compacting the buffer, so the append goes on instead of failing half-way)."""
        try:
            return self.sleeper.sleep(namespace, now, reason)  # type: ignore[arg-type]
        except AlreadyRunning:
            log.info("policy sleep of %s skipped: another sleep is running", namespace)
            return None

    def _buffer_tokens(self, namespace: str) -> int:
        return self.messages.buffer_stats(namespace).tokens


def parse_jsonl(lines: Iterable[str]) -> list[IncomingMessage]:
    """Parse JSON Lines of messages; a bad line raises with its line number, nothing is kept."""
    out: list[IncomingMessage] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            item = IncomingMessage.model_validate(data)
        except json.JSONDecodeError as exc:
            raise ValidationFailed(f"line {number}: not valid JSON ({exc.msg})") from exc
        except ValidationError as exc:
            raise ValidationFailed(f"line {number}: {describe_errors('message', exc)}") from exc
        if item.at is None:
            raise ValidationFailed(f"line {number}: 'at' is required (ISO-8601 with a zone)")
        if item.at.tzinfo is None:
            raise ValidationFailed(f"line {number}: 'at' must carry a timezone")
        out.append(item)
    return out


def _check_order(models: list[Message]) -> None:
    for before, after in itertools.pairwise(models):
        if after.at < before.at:
            raise ValidationFailed(
                f"messages must be in time order: {after.at.isoformat()} comes after "
                f"{before.at.isoformat()}"
            )


def _last_at(messages: MessageStoreProtocol, namespace: str) -> datetime | None:
    tail = messages.tail(namespace, 1)
    return tail[-1].at if tail else None
