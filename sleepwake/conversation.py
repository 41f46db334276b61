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
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from graph.append_plan import AppendState
from graph.clock import Clock, ensure_utc
from graph.errors import AlreadyRunning, ValidationFailed
from graph.models import Message, describe_errors
from graph.protocols import MessageStoreProtocol
from graph.validation import check_time
from sleepwake.policy import (
    SleepPolicy,
    SleepReason,
    budget_sleep_due,
    estimate_tokens,
    tail_length,
)
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
    """Every message asked for, in order (a repeated ``external_id`` gives the stored message),
    how many of them were already stored, and the sleeps the policy ran."""

    messages: list[Message]
    sleeps: list[SleepSummary]
    duplicates: int = 0
    sleep_due: bool = False  # a sleep was queued for the sleep worker (background mode)


class SleepQueue(Protocol):
    """Where a policy sleep is queued when sleeps run in the background
    (``graph.sleep.SleepStore.mark_due``; the sleep worker claims it)."""

    def mark_due(self, namespace: str, now: datetime, reason: str) -> object:
        """Mark ``namespace`` due for a sleep dated ``now`` (what it returns is not used)."""
        ...


@dataclass
class _BufferView:
    messages: int
    tokens: int
    tail: deque[int]
    last_at: datetime | None

    def add(self, tokens: int) -> None:
        self.messages += 1
        self.tokens += tokens
        self.tail.append(tokens)

    def kept(self, policy: SleepPolicy) -> int:
        """How many of the buffer's last turns a sleep now would keep as its tail."""
        return min(self.messages, tail_length(list(self.tail), policy))


@dataclass
class _PolicyRun:
    """The policy's state during one append: the buffer (None: no policy), the sleeps run,
    and whether a background sleep was queued."""

    buf: _BufferView | None
    sleeps: list[SleepSummary] = field(default_factory=list)
    due: bool = False


@dataclass(eq=False)
class Conversation:
    """The append path of every namespace: ``policy`` (the sleeper's, as the composition root
    wires it) decides when a sleep is due; ``queue`` None: the append sleeps itself."""

    messages: MessageStoreProtocol
    sleeper: Sleeper
    clock: Clock
    policy: SleepPolicy
    queue: SleepQueue | None = None

    def to_message(self, namespace: str, item: IncomingMessage) -> Message:
        """Validate one incoming message into a stored-message model (no I/O); a given time
        must be in range once in UTC (``graph.validation.check_time``)."""
        try:
            at = check_time(ensure_utc(item.at, "at")) if item.at else self.clock.now()
        except ValueError as exc:
            raise ValidationFailed(f"invalid message: at: {exc}") from exc
        try:
            return Message(
                namespace=namespace,
                role=item.role,
                speaker=item.speaker,
                content=item.content,
                at=at,
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
        self,
        namespace: str,
        items: Sequence[IncomingMessage],
        auto_sleep: bool = True,
        *,
        where: str = "messages",
        movable: bool = False,
    ) -> AppendResult:
        """Validate every message first (nothing is written if one is bad), then store them
        all in one transaction (all or none) and run the sleep policy over them in order.

        Idempotent by ``external_id``: a message whose id is already stored (or repeated in the
        batch) is not stored again and the stored one is returned; the same id on a different
        message is a ``Conflict``. New messages may not be older than the conversation's newest
        (``Conflict`` naming ``<where>.<i>.at``), except those whose time the server chose (no
        ``at``, or ``movable``: an agent's turn), which move forward to it instead. The store
        decides all this under the conversation's lock (``graph.append_plan.plan_append``)."""
        models = self.validate(namespace, items)
        server_time = {
            m.message_id for m, item in zip(models, items, strict=True) if movable or not item.at
        }
        view = None
        if auto_sleep:  # the buffer as the policy sees it, read once before the write
            turns = self.policy.tail_turns
            view = _state_view(self.messages.append_state(namespace, [], turns), turns)
        return self._append_with_policy(namespace, models, view, server_time, where)

    def _append_with_policy(
        self,
        namespace: str,
        models: list[Message],
        view: _BufferView | None,
        server_time: set[str],
        where: str,
    ) -> AppendResult:
        """Store the batch whole, in one transaction, by the store's append rule
        (``graph.append_plan.plan_append``: a crash or a lost database keeps all of it or none, so
        the client's retry is clean), then run the sleep policy over the messages it wrote from
        ``view`` (the buffer before the batch; None: no policy)."""
        run = _PolicyRun(view)
        last_at = None
        if run.buf is not None:
            last_at = run.buf.last_at or _last_at(self.messages, namespace)
        out = self.messages.append(namespace, models, server_time=server_time, where=where)
        asked = {m.message_id for m in models}  # a repeat stands in with the stored message
        written = list({m.message_id: m for m in out if m.message_id in asked}.values())
        self._run_policy(namespace, written, run, last_at)
        return AppendResult(
            messages=out,
            sleeps=run.sleeps,
            duplicates=len(models) - len(written),
            sleep_due=run.due,
        )

    def _run_policy(
        self, namespace: str, written: list[Message], run: _PolicyRun, last_at: datetime | None
    ) -> None:
        """The sleeps the policy calls for as the batch's messages arrive, in order: before a
        message after a long silence (idle), after one that fills the buffer (budget). Each
        compacts only the messages up to its point, as if the batch had been stored in parts."""
        for message in written:
            if run.buf is None:
                return
            silent = last_at is not None and message.at - last_at >= self.policy.idle_gap
            if last_at is not None and silent and run.buf.messages > run.buf.kept(self.policy):
                self._policy_sleep(namespace, last_at + self.policy.idle_gap, "idle", run, last_at)
            run.buf.add(message.token_estimate)
            last_at = message.at
            kept = run.buf.kept(self.policy)
            tail_tokens = sum(list(run.buf.tail)[len(run.buf.tail) - kept :])
            slice_messages = run.buf.messages - kept
            if budget_sleep_due(run.buf.tokens, tail_tokens, slice_messages, self.policy):
                self._policy_sleep(namespace, message.at, "budget", run, message.at)

    def _policy_sleep(
        self,
        namespace: str,
        now: datetime,
        reason: SleepReason,
        run: _PolicyRun,
        through: datetime,
    ) -> None:
        """Queue the sleep (once per append) or run it here, over the messages up to
        ``through``, and re-read the buffer as it stood then."""
        if self.queue is not None:
            if not run.due:
                self.queue.mark_due(namespace, now, reason)
                run.due = True
            return
        slept = self._sleep(namespace, now, reason, through)
        if slept is not None:
            run.sleeps.append(slept)
            left = slept.buffer_left()  # what the sleep left: no need to read it again
            run.buf = self._buffer_view(namespace, through) if left is None else self._view(left)

    def _buffer_view(self, namespace: str, through: datetime) -> _BufferView:
        """The buffer as the policy tracks it while appending, read again: the messages up to
        ``through`` (the batch's later ones are stored already but, for the policy, have not
        arrived yet)."""
        return self._view([m for m in self.messages.buffer(namespace) if m.at <= through])

    def _view(self, kept: list[Message]) -> _BufferView:
        """The policy's view of a buffer holding ``kept`` (oldest first)."""
        turns = self.policy.tail_turns
        window = deque((m.token_estimate for m in kept[-turns:]), maxlen=turns)
        tokens = sum(m.token_estimate for m in kept)
        return _BufferView(len(kept), tokens, window, kept[-1].at if kept else None)

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
        if self.queue is not None:
            self.queue.mark_due(namespace, last_at + self.policy.idle_gap, "idle")
            return None
        return self._sleep(namespace, last_at + self.policy.idle_gap, "idle")

    def _sleep(
        self, namespace: str, now: datetime, reason: SleepReason, through: datetime | None = None
    ) -> SleepSummary | None:
        """A policy sleep run here (of the messages up to ``through``); ``None`` when another
        sleep of the namespace holds the lease (that one is compacting the buffer, so the append
        goes on instead of failing)."""
        try:
            return self.sleeper.sleep(namespace, now, reason, through=through)
        except AlreadyRunning:
            log.info("policy sleep of %s skipped: another sleep is running", namespace)
            return None


def _state_view(state: AppendState, turns: int) -> _BufferView:
    """The policy's view of the buffer from what an append read (``append_state``)."""
    tail = [m for m in state.tail if not m.compacted_at]
    window = deque((m.token_estimate for m in tail), maxlen=turns)
    return _BufferView(state.stats.messages, state.stats.tokens, window, state.stats.last_at)


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
