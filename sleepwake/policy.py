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
    # the tail is counted in tokens too: it keeps the last ``tail_turns`` turns only while they
    # hold at most this share of the budget threshold (and never fewer than ``min_tail_turns``).
    # Twelve chat-assistant answers of ~2,000 characters fill two thirds of the threshold on
    # their own, so each sleep compacted a few turns and a sleep came every ~5-7 messages;
    # capped, a sleep compacts three quarters of the threshold whatever the turns' length
    tail_share: float = Field(default=0.25, gt=0.0, le=1.0)
    min_tail_turns: int = Field(default=2, ge=0, le=200)


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


def tail_length(tokens: Sequence[int], policy: SleepPolicy, roles: Sequence[str] = ()) -> int:
    """How many of the last turns (``tokens``: their token estimates, oldest first) stay
    verbatim as the tail: the last ``tail_turns``, fewer when they hold more than
    ``tail_share`` of the budget threshold, but at least ``min_tail_turns`` (capped by
    ``tail_turns``). With ``roles`` (the same turns' roles), a tail the token limit shortened
    never starts with an answer (``ANSWER_ROLES``): the question it answers stays with it."""
    limit = policy.tail_share * policy.buffer_share * policy.context_budget_tokens
    floor = min(policy.min_tail_turns, policy.tail_turns)
    window = list(tokens[max(0, len(tokens) - policy.tail_turns) :])
    kept = used = 0
    for count in reversed(window):
        if kept >= floor and used + count > limit:
            break
        kept += 1
        used += count
    if roles and 0 < kept < len(window):  # cut by tokens: the cut falls between exchanges
        first = len(roles) - kept  # the tail's first turn
        while kept < len(tokens) and roles[first] in ANSWER_ROLES:
            kept, first = kept + 1, first - 1
    return kept


def select_slice(buffer: Sequence[Message], policy: SleepPolicy) -> list[Message]:
    """Everything before the tail (``tail_length``: the last turns, which stay verbatim)."""
    tokens = [m.token_estimate or estimate_tokens(m.content) for m in buffer]
    keep = tail_length(tokens, policy, [m.role for m in buffer])
    cut = max(0, len(buffer) - keep)
    return list(buffer[: min(cut, policy.max_slice_messages)])
