"""The conversation and its memory context as callers use them: append messages (the sleep
policy runs between them), read messages by time, build the context of one user message, sleep
and wake."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from graph.clock import Clock
from graph.errors import NotFound
from graph.models import Message, WakePacket
from graph.protocols import SleepQueueProtocol
from graph.redaction import Redactor
from graph.sleep import SleepStore
from graph.sleep_queue import SleepRun
from retrieval.context import ContextBuilder, ContextRequest, ContextResult
from retrieval.context_result import RoutedSkill
from retrieval.embedding import cache_scope
from sleepwake.conversation import Conversation
from sleepwake.policy import SleepReason
from sleepwake.sleep import Sleeper, SleepSummary
from sleepwake.wake import Waker, WakeResult
from sleepwake.worker import SleepScheduler, run_explicit
from text.timephrases import TimeWindow


@dataclass(frozen=True)
class MessagePage:
    messages: list[Message]
    truncated: bool


@dataclass(eq=False)
class ConversationService(Conversation):
    """The one continuous conversation of each namespace: the append path (``Conversation``:
    validation, the store's append rule, the sleep policy) and its reads by time."""

    def in_window(self, namespace: str, window: TimeWindow | None, limit: int) -> MessagePage:
        """Messages in the window (all when None), oldest first, at most ``limit``."""
        since, until = (window.start, window.end) if window else (None, None)
        found = self.messages.in_range(namespace, since, until, limit=limit + 1)
        return MessagePage(found[:limit], len(found) > limit)

    def tail(self, namespace: str, n: int) -> list[Message]:
        return self.messages.tail(namespace, n)


class ContextService:
    """The memory context of one user message (light retrieval always, deep on a trigger)."""

    def __init__(self, builder: ContextBuilder, redactor: Redactor | None = None) -> None:
        self.builder = builder
        # a session id is a key of the suppression cache, stored: the surfaces refuse the
        # built-in secret shapes in it, and the operator's patterns are applied here
        self.redact = (redactor or Redactor()).text

    def build(self, req: ContextRequest) -> ContextResult:
        """Packed context with its trace. Sessions are the caller's names, kept apart per
        namespace (the suppression cache is keyed by session): the request's ``session_id``
        is keyed here, its secrets redacted."""
        if req.session_id:
            key = f"{req.namespace}/{self.redact(req.session_id)}"
            req = req.model_copy(update={"session_id": key})
        with cache_scope(req.namespace):  # its vectors cached for this namespace only
            return self.builder.build(req)

    def route_skills(self, message: str, last_tool_output: str | None) -> list[RoutedSkill]:
        """The skills routed for ``message`` after a tool output (a failed run routes to
        ``debug``, spec §5.3 trigger 3); [] when no skill router is configured."""
        router = self.builder.skill_router
        if router is None:
            return []
        return list(router(message, last_tool_output).get("skills") or [])


@dataclass(eq=False)
class SleepWakeService:
    """Sleep (compact the buffer into topics, write a wake packet), wake (restore), and the
    record of every sleep attempt."""

    sleeper: Sleeper
    waker: Waker
    store: SleepStore
    queue: SleepQueueProtocol
    clock: Clock

    def sleep(
        self, namespace: str, now: datetime, reason: SleepReason = "explicit"
    ) -> SleepSummary:
        """Sleep now, recorded as a run; ``AlreadyRunning`` (409) while another sleep of the
        namespace runs."""
        if reason != "explicit":
            return self.sleeper.sleep(namespace, now, reason)
        return run_explicit(self.queue, self.sleeper, self.clock, namespace, now)

    def queue_sleep(self, namespace: str, now: datetime) -> SleepRun:
        """Queue a sleep for the sleep workers and return its run as recorded (``queued``
        until a worker claims it). A sleep already queued is that one."""
        scheduler = SleepScheduler(self.queue, self.clock)
        run_id = scheduler.mark_due(namespace, now, "explicit")
        found = self.queue.get_run(namespace, run_id)
        if found is not None:
            return found
        run = SleepRun(run_id=run_id, namespace=namespace, reason="explicit", trigger="explicit",
                       holder="", started_at=self.clock.now(), slept_at=now, outcome="queued")  # fmt: skip
        self.queue.start_run(run)
        return run

    def runs(self, namespace: str, limit: int, before: str | None = None) -> list[SleepRun]:
        """Sleep runs, newest first; ``before`` is the run id the previous page ended with
        (``NotFound`` when this namespace has no such run)."""
        after = self.run(namespace, before) if before else None
        return self.queue.list_runs(namespace, limit, after)

    def run(self, namespace: str, run_id: str) -> SleepRun:
        """One sleep run by id; ``NotFound`` when this namespace has none such."""
        found = self.queue.get_run(namespace, run_id)
        if found is None:
            raise NotFound(f"no sleep run {run_id!r} in this namespace")
        return found

    def wake(self, namespace: str, message: str, now: datetime, k: int = 8) -> WakeResult:
        """Wake now: the packet, whether to resume, the topics the message recalls; records
        ``woke_at`` (so "since you woke" starts here and the loop does not wake again)."""
        return self.waker.wake(namespace, message, now, k=k)

    def wake_if_due(
        self, namespace: str, message: str, now: datetime, k: int = 8
    ) -> WakeResult | None:
        """The awake loop's wake: once per sleep or after a long silence (claimed in the
        graph, so API workers sharing the namespace wake it once); None when not due."""
        return self.waker.wake_if_due(namespace, message, now, k=k)

    def release_wake(self, namespace: str, woke: WakeResult) -> None:
        """Give back a wake whose turn failed, so the next turn wakes instead."""
        self.waker.release(namespace, woke)

    def latest_packet(self, namespace: str) -> WakePacket:
        """The newest wake packet; ``NotFound`` before the first sleep."""
        packets = self.store.wake_packets(namespace, limit=1)
        if not packets:
            raise NotFound("no wake packet yet: this namespace has never slept")
        return packets[0]
