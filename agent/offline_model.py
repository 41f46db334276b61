"""A stand-in model for the offline demo and ``sheriff chat --offline``: no key, no network.

It is a script for :class:`agent.fake_responses.FakeResponses`, so the real ``openai`` client
and the real awake loop run unchanged. It does what a careful model would do first: search
memory with the user's words (``topics_search``), then answer from what came back, citing
names, dates and why each topic was found. It does not reason or write; it shows the memory.
"""

from __future__ import annotations

import json
from typing import Any

from agent.fake_responses import Item, function_call, function_outputs, last_user_text, message

MAX_TOPICS = 3


def offline_model(request: dict[str, Any]) -> list[Item]:
    """One step of the stand-in model for a Responses API request body."""
    outputs = function_outputs(request)
    if not outputs:
        query = last_user_text(request) or "what do you remember?"
        return [function_call("topics_search", {"query": query, "time_window": None, "k": 3})]
    return [message(answer_from(list(outputs.values())[-1]))]


def answer_from(output: str) -> str:
    """A plain-text answer from a ``topics_search`` output (or its error)."""
    try:
        found = json.loads(output)
    except json.JSONDecodeError:
        return "I could not read what memory returned."
    if "error" in found:
        return f"I could not search memory: {found['error']}"
    topics = found.get("topics", [])[:MAX_TOPICS]
    if not topics:
        return "I have nothing in memory about that."
    window = found.get("time_window")
    lines = []
    if window:
        start = (window.get("start") or "…")[:10]
        end = (window.get("end") or "now")[:10]
        lines.append(f'"{window["phrase"]}" = {start} to {end}.')
    lines.append("From memory:")
    for t in topics:
        facts = "; ".join(t.get("facts", [])[-2:])
        lines.append(
            f"- {t['name']} (last seen {t['last_seen_at'][:10]}): {t['one_liner']}"
            + (f" [{facts}]" if facts else "")
        )
    return "\n".join(lines)
