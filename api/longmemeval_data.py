"""The LongMemEval data as `sheriff eval longmemeval` reads it (EVALUATION.md §5): a question, its
haystack sessions in date order, each turn dated and named. A session dated before the end of the
previous one starts 30 s after it, and a session id seen twice gets ``#2``
(``api/eval_longmemeval.py`` runs the evaluation).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graph.errors import ValidationFailed

TURN_GAP = timedelta(seconds=30)


@dataclass
class Turn:
    external_id: str
    role: str
    content: str
    at: datetime
    evidence: bool


@dataclass
class Question:
    question_id: str
    question_type: str
    question: str
    asked_at: datetime
    sessions: list[list[Turn]]

    @property
    def evidence(self) -> set[str]:
        return {t.external_id for s in self.sessions for t in s if t.evidence}

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s]


def parse_date(text: str) -> datetime:
    """ "2023/05/20 (Sat) 00:04" -> 2023-05-20T00:04Z (the dataset gives no zone: UTC)."""
    try:
        day, _weekday, clock = text.split()
        return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
    except ValueError as exc:
        raise ValidationFailed(f"unrecognised LongMemEval date {text!r}") from exc


def load_questions(
    path: Path, limit: int | None = None, only: list[str] | None = None
) -> list[Question]:
    """The questions of a LongMemEval JSON file (``only`` these ids, at most ``limit``)."""
    raw: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    picked = [q for q in raw if not only or q["question_id"] in only]
    if only and len(picked) < len(set(only)):
        missing = sorted(set(only) - {q["question_id"] for q in picked})
        raise ValidationFailed(f"no question with id {', '.join(missing)} in {path}")
    return [to_question(q) for q in picked[:limit]]


def to_question(raw: dict[str, Any]) -> Question:
    """One question with its haystack in date order, turns dated and named as §5 says."""
    parts = (raw["haystack_dates"], raw["haystack_session_ids"], raw["haystack_sessions"])
    if len({len(p) for p in parts}) != 1:
        raise ValidationFailed(f"question {raw['question_id']}: haystack lists differ in length")
    dated = sorted(
        zip(*parts, strict=True),
        key=lambda s: parse_date(s[0]),
    )  # sorted() is stable: sessions of the same minute keep the dataset's order
    seen: dict[str, int] = defaultdict(int)
    sessions: list[list[Turn]] = []
    last: datetime | None = None
    for date, session_id, turns in dated:
        seen[session_id] += 1
        sid = session_id if seen[session_id] == 1 else f"{session_id}#{seen[session_id]}"
        start = parse_date(date)
        if last is not None and start <= last:
            start = last + TURN_GAP
        session = [
            Turn(
                f"{sid}:{i}",
                t["role"],
                t["content"],
                start + i * TURN_GAP,
                bool(t.get("has_answer")),
            )
            for i, t in enumerate(turns)
            if str(t.get("content", "")).strip()
        ]
        if session:
            sessions.append(session)
            last = session[-1].at
    return Question(
        str(raw["question_id"]),
        str(raw["question_type"]),
        str(raw["question"]),
        parse_date(raw["question_date"]),
        sessions,
    )
