"""The append rule of a conversation, decided without I/O: ``plan_append`` (docs/architecture.md,
"The append rule"), and the values an append reads before it writes (``AppendState``). Pure:
``MessageStore.append`` runs it under the conversation's lock, the in-memory fake likewise.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.errors import Conflict
from graph.models import Message


@dataclass(frozen=True)
class BufferStats:
    """The buffer as the sleep policy sees it: size, token estimate, newest message time."""

    messages: int
    tokens: int
    last_at: datetime | None


@dataclass(frozen=True)
class AppendState:
    """What an append reads before it writes, in one read transaction (``append_state``)."""

    stored: dict[str, Message]  # external id -> the stored message carrying it
    newest_at: datetime | None  # the latest stored message's time
    stats: BufferStats
    tail: list[Message]  # the last messages (as many as asked), oldest first


@dataclass(frozen=True)
class AppendPlan:
    """What an append writes: ``new`` messages (time order kept), and for every message asked
    for, in order, either the stored message it repeats or its position in ``new``."""

    new: list[Message]
    slots: list[Message | int]


def plan_append(
    messages: Sequence[Message],
    stored: Mapping[str, Message],
    newest: datetime | None,
    server_time: Collection[str] = (),
    *,
    where: str = "messages",
) -> AppendPlan:
    """The append rule, decided without I/O (the store runs it under the conversation's lock,
    on the messages as stored, i.e. redacted). ``where`` prefixes the field an error names
    (``<where>.<i>.external_id``, ``<where>.<i>.at``).

    - A message whose ``external_id`` is stored (``stored``: external id -> message) or repeats
      one earlier in the batch is not written again: the stored (or earlier) message stands in.
      The same external id on a different message (role or text) is a ``Conflict``.
    - New messages keep time order among themselves and may not be older than ``newest`` (the
      latest stored time): ``Conflict``. Messages whose id is in ``server_time`` had their time
      set by the server, not the caller; they move forward to ``newest`` instead of failing
      (two requests stamped a microsecond apart may commit in either order)."""
    repeats = _repeats(messages, stored, where)
    new: list[Message] = []
    slots: list[Message | int] = []
    position: dict[int, int] = {}  # index in ``messages`` -> index in ``new``
    floor = newest
    for i, (message, repeat) in enumerate(zip(messages, repeats, strict=True)):
        if repeat is not None:
            slots.append(repeat if isinstance(repeat, Message) else position[repeat])
            continue
        if floor is not None and message.at < floor:
            if message.message_id not in server_time:
                raise _out_of_order(f"{where}.{i}.at", message.at, floor, newest)
            message = message.model_copy(update={"at": floor})
        floor = message.at
        position[i] = len(new)
        slots.append(len(new))
        new.append(message)
    return AppendPlan(new, slots)


def _repeats(
    messages: Sequence[Message], stored: Mapping[str, Message], where: str
) -> list[Message | int | None]:
    """Per message: the stored message it repeats, the index of an earlier one in the batch it
    repeats, or None (new). The same ``external_id`` on a different message is a ``Conflict``."""
    repeats: list[Message | int | None] = []
    first: dict[str, int] = {}
    for i, m in enumerate(messages):
        xid = m.external_id
        if xid is not None and xid in stored:
            _same_or_conflict(m, stored[xid], f"{where}.{i}.external_id")
            repeats.append(stored[xid])
        elif xid is not None and xid in first:
            _same_or_conflict(m, messages[first[xid]], f"{where}.{i}.external_id")
            repeats.append(first[xid])
        else:
            if xid is not None:
                first[xid] = i
            repeats.append(None)
    return repeats


def _same_or_conflict(incoming: Message, known: Message, field: str) -> None:
    """A repeated external id must be the same message (a retry), not a different one."""
    if incoming.role != known.role or incoming.content != known.content:
        raise Conflict(
            f"{field}: {incoming.external_id!r} already names a different message "
            f"({known.role}, {known.at.isoformat()}); use a new external_id",
            field=field,
        )


def _out_of_order(field: str, at: datetime, floor: datetime, newest: datetime | None) -> Conflict:
    if newest is not None and floor == newest:
        return Conflict(
            f"{field}: {at.isoformat()} is older than the newest message of this "
            f"conversation ({newest.isoformat()}); messages are appended in time order",
            field=field,
        )
    return Conflict(
        f"{field}: {at.isoformat()} comes after {floor.isoformat()}: not in time order",
        field=field,
    )
