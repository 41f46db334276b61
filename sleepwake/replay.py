"""Replaying dated multi-session conversations (LoCoMo format) through the real ingestion path.

LoCoMo (snap-research/LoCoMo) stores each conversation as ``session_N`` turn lists with a
``session_N_date_time`` such as "1:56 pm on 8 May, 2023"; turns have ``speaker``, ``dia_id``
("D3:12") and ``text`` (plus ``blip_caption`` when a photo was shared). Both speakers are people,
so both are replayed as ``user`` messages with their names as ``speaker``; ``dia_id`` becomes the
message's ``external_id`` so provenance can be reported in the dataset's own ids.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.errors import ValidationFailed
from sleepwake.conversation import IncomingMessage

TURN_GAP = timedelta(seconds=30)
_SESSION = re.compile(r"^session_(\d+)$")


def parse_session_date(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" -> 2023-05-08T13:56Z (the dataset gives no zone: UTC)."""
    cleaned = " ".join(text.replace(",", ", ").split()).replace(" ,", ",")
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValidationFailed(f"unrecognised LoCoMo session date {text!r}")


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def locomo_sessions(sample: dict[str, Any]) -> list[tuple[datetime, list[IncomingMessage]]]:
    """The conversation's sessions in order, each with its start time and its messages."""
    conv = sample["conversation"]
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
    sessions = []
    for n in numbers:
        start = parse_session_date(conv[f"session_{n}_date_time"])
        messages = [
            IncomingMessage(
                role="user",
                speaker=str(turn["speaker"]),
                content=turn_text(turn),
                at=start + i * TURN_GAP,
                external_id=str(turn["dia_id"]),
            )
            for i, turn in enumerate(conv[f"session_{n}"])
            if turn_text(turn)
        ]
        sessions.append((start, messages))
    return sessions
