"""The JSON ``/v1/context`` answers, byte for byte, for fixed requests over the in-memory memory
of tests/unit/test_context_unit.py: the same as the recording made from the code before the
context became a run of steps over a parsed message with typed results (issue 29), ids renamed
in order of appearance (the fakes' ids are new each run) and the timings left out (wall clock).
Recorded again when a topic block's header lost its dates and bare questions came to weigh 0.3
(docs/retrieval.md, "Bare questions and headers"): those two changes are the whole difference.

Run as a script (``python tests/unit/test_context_response.py OUT``) it writes the answers,
which is how the recording was made (from the earlier code's checkout)."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.routers.context import memory_context
from api.schemas import ContextCreate, ContextPublic
from service.memory import ContextService
from tests.unit.test_context_unit import NOW, remembered

RECORDED = Path(__file__).parent / "data" / "context_responses.txt"
MESSAGES = [
    "how's the party planning going?",
    "I should book the caterer for the lake house party soon",
    "hi",
    "thanks!",
    "What did we decide about the caterer?",
    "remember the bike?",
    "What did we talk about last week?",
    "Any tips for my spring ride?",
    "What is the most recent deposit date?",
    "anyway, what about Rosa's Kitchen?",
    "When did Anna mention the guests?",
    "How much was the deposit?",
    "Can you suggest a caterer for my party?",
    "I should book the caterer for the lake house party soon",
    "I should book the caterer for the lake house party soon",
    "Any tips for keeping my garden tidy?",
    "Can you suggest a good book for me?",
]
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMINGS = re.compile(r'"timings_ms":\{[^}]*\}')
_NO_TIMINGS = '"timings_ms":{}'


def _router(text: str, last: str | None, vector: Any = None, **_: Any) -> dict[str, Any]:
    return {"skills": [{"skill_id": "plan_party", "score": 0.5}], "intent": "plan",
            "mode": "light", "triggers": [{"kind": "intent"}], "trace": ["plan intent"],
            "ignored": "not passed on"}  # fmt: skip


def answers() -> str:
    """Every answer's status and body, one a line, ids renamed and timings left out."""
    m = remembered()
    app = FastAPI()

    @app.post("/context")
    def context(body: ContextCreate) -> ContextPublic:
        return memory_context(ContextService(m.context), m.namespace, body, NOW)

    lines = []
    with TestClient(app) as client:
        for i, text in enumerate(MESSAGES * 2):
            m.context.skill_router = _router if i >= len(MESSAGES) else None
            body: dict[str, Any] = {"message": text, "trace": i % 3 != 2}
            body["now"] = (NOW + timedelta(minutes=i)).isoformat()
            body |= {"session_id": "s1"} if i % 4 == 1 or i % len(MESSAGES) in (13, 14) else {}
            body |= {"explicit": True} if i % 5 == 2 else {}
            body |= {"full_records": True} if i % 6 == 3 else {}
            body |= {"budget": 120} if i % 7 == 4 else {}
            body |= {"as_of": (NOW - timedelta(days=8, hours=12)).isoformat()} if i % 8 == 5 else {}
            response = client.post("/context", json=body)
            lines.append(f"{response.status_code} {_TIMINGS.sub(_NO_TIMINGS, response.text)}")
    seen: dict[str, str] = {}
    text = "\n".join(lines) + "\n"
    return _UUID.sub(lambda u: seen.setdefault(u.group(0), f"id{len(seen)}"), text)


def test_the_context_answers_are_the_recorded_ones_byte_for_byte() -> None:
    got = answers().splitlines()
    recorded = RECORDED.read_text().splitlines()
    assert len(got) == len(recorded) == 2 * len(MESSAGES)
    for i, (new, old) in enumerate(zip(got, recorded, strict=True)):
        assert new == old, f"request {i}: {MESSAGES[i % len(MESSAGES)]!r}"


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(answers())
