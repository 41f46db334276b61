"""When to sleep and what to compact (spec §4.2 trigger conditions and step 1). Pure.

The knobs: ``SleepPolicy`` (sleepwake/config.py), ``SHERIFF_SLEEP__POLICY__...``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from graph.models import Message
from sleepwake.config import SleepPolicy as SleepPolicy  # re-exported: callers import it here

SleepReason = Literal["budget", "explicit", "idle"]
ANSWER_ROLES = frozenset({"assistant", "tool"})  # turns that answer the turn before them


def estimate_tokens(text: str) -> int:
    """Tokens as ceil(chars / 4): no tokenizer is available offline for the target models."""
    return math.ceil(len(text) / 4)


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
