"""When to sleep and what to compact (spec §4.2 trigger conditions and step 1). Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from graph.models import Message

SleepReason = Literal["budget", "explicit", "idle"]
ANSWER_ROLES = frozenset({"assistant", "tool"})  # turns that answer the turn before them


class SleepPolicy(BaseModel):
    """Tunable sleep and wake policy; the defaults are the production policy."""

    context_budget_tokens: int = Field(default=8000, ge=500)
    buffer_share: float = Field(default=0.6, gt=0.0, le=1.0)
    tail_turns: int = Field(default=12, ge=0, le=200)
    idle_gap: timedelta = timedelta(hours=6)
    fresh_window: timedelta = timedelta(hours=12)
    wake_silence: timedelta = timedelta(hours=6)  # a turn after this long without one wakes
    subject_ttl: timedelta = timedelta(days=7)
    lease_ttl: timedelta = timedelta(seconds=60)  # renewed by a heartbeat while a sleep runs
    max_slice_messages: int = Field(default=2000, ge=1)
    # a budget sleep waits until the part it would compact (the buffer minus the tail) holds
    # this share of the budget threshold, or as many messages as the tail: a tail of long turns
    # over the budget on its own must not make every new message a one-message sleep
    min_slice_share: float = Field(default=0.25, ge=0.0, le=1.0)


def estimate_tokens(text: str) -> int:
    """Tokens as ceil(chars / 4): no tokenizer is available offline for the target models."""
    return math.ceil(len(text) / 4)


def budget_exceeded(buffer: Sequence[Message], policy: SleepPolicy) -> bool:
    """The buffer holds more than ``buffer_share`` of the context budget."""
    used = sum(m.token_estimate or estimate_tokens(m.content) for m in buffer)
    return used > policy.buffer_share * policy.context_budget_tokens


def budget_sleep_due(
    buffer_tokens: int, tail_tokens: int, slice_messages: int, policy: SleepPolicy
) -> bool:
    """A budget sleep is due: the buffer is over its share of the budget and the slice it
    would compact (buffer minus tail) is worth a sleep: not empty, and holding
    ``min_slice_share`` of the threshold or at least ``tail_turns`` messages."""
    threshold = policy.buffer_share * policy.context_budget_tokens
    if buffer_tokens <= threshold or slice_messages <= 0:
        return False
    slice_tokens = buffer_tokens - tail_tokens
    return slice_tokens >= policy.min_slice_share * threshold or slice_messages >= policy.tail_turns


def idle_since(last_at: datetime | None, now: datetime, policy: SleepPolicy) -> bool:
    """Periodic maintenance: nothing was said for at least ``idle_gap``."""
    return last_at is not None and now - last_at >= policy.idle_gap


def select_slice(buffer: Sequence[Message], policy: SleepPolicy) -> list[Message]:
    """Everything before the last ``tail_turns`` turns (which stay verbatim)."""
    keep = policy.tail_turns
    cut = max(0, len(buffer) - keep)
    return list(buffer[: min(cut, policy.max_slice_messages)])
