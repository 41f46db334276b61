"""A stand-in model for the offline demo and ``sheriff chat --offline``: no key, no network.

It is a script for :class:`agent.fake_responses.FakeResponses`, so the real ``openai`` client
and the real awake loop run unchanged. It does what a careful model would do first: search
memory with the user's words (``topics_search``), then answer from what came back, citing
names, dates and why each topic was found. It does not reason or write; it shows the memory.

After a wake it follows the resume line of the memory message (``agent/wake_prompt.py``): a
fresh interrupted task is resumed from its next step, a stale one is put to the user to
confirm. A turn that only picks the conversation up ("ok, where were we?") gets that answer
with no tool call; any other question is searched and answered with the resume line first.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.fake_responses import Item, function_call, function_outputs, last_user_text, message
from agent.wake_prompt import parse_plan

MAX_TOPICS = 3
# A turn that only picks the conversation up again (no question of its own to search for).
PICK_UP = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|right|hi|hello|hey|morning|good morning|back|i'?m back|again)\W*)*"
    r"(?:where (?:were|are) we|let'?s (?:continue|go on|carry on|resume|pick up)|continue|go on|"
    r"carry on|resume|what'?s next|what next|next step|shall we continue)?\W*$",
    re.IGNORECASE,
)


def offline_model(request: dict[str, Any]) -> list[Item]:
    """One step of the stand-in model for a Responses API request body."""
    outputs = function_outputs(request)
    plan = _plan(request)
    asked = last_user_text(request) or ""
    if not outputs:
        if plan is not None and PICK_UP.match(asked):
            return [message(plan_reply(plan))]
        query = asked or "what do you remember?"
        return [function_call("topics_search", {"query": query, "time_window": None, "k": 3})]
    answer = answer_from(list(outputs.values())[-1])
    return [message(f"{plan_reply(plan)}\n{answer}" if plan is not None else answer)]


def _plan(request: dict[str, Any]) -> dict[str, str] | None:
    """The resume line of the request's memory (developer) message, if it has one."""
    for item in request.get("input") or []:
        if isinstance(item, dict) and item.get("role") == "developer":
            found = parse_plan(str(item.get("content") or ""))
            if found is not None:
                return found
    return None


def plan_reply(plan: dict[str, str]) -> str:
    """Resume a fresh task from its next step; ask before continuing a stale one."""
    step = plan["next_step"]
    if plan["action"] == "resume":
        return f"Resuming {plan['goal']}" + (f": next step is {step}." if step else ".")
    then = f" (next step was {step})" if step else ""
    return (
        f"Before I continue {plan['goal']}{then}: {plan['why'].split(';')[0]}. "
        "Shall I carry on, or do you want to re-plan?"
    )


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
