"""What the model reads after a wake (spec §4.3) and how skills are shown to it (§5.3).

The awake loop puts one ``developer`` message before the user's turn; on the first turn after
a sleep or a long silence it starts with a "Wake" block: when the agent slept, the resume
decision (resume a fresh task from its next step; confirm a stale one first), the open loops and
the wake packet's top topics (by id), subject hints and the recent skills as manifests. The
resume line has a fixed prefix (``RESUME`` / ``CONFIRM``) so a scripted model
(``agent/offline_model.py``) can act on it the way a real model reads it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sleepwake.wake import ResumePlan, WakeResult

RESUME = "Resume now (fresh):"
CONFIRM = "Confirm first (stale):"
MAX_TOP_TOPICS = 5
MAX_RECALLED = 3
NEXT_STEP = "next step:"
_WHY_WOKE = {
    "sleep": "after a sleep",
    "silence": "after a long silence",
    "explicit": "on request",
}


def wake_block(woke: WakeResult, now: datetime) -> str:
    """The "Wake" part of the memory message: what a model needs to pick up where it was."""
    lines = [_header(woke, now)]
    plan = plan_line(woke.resume)
    if plan:
        lines.append(plan)
    if woke.open_loops:
        lines.append("Open loops:")
        lines += [f"- {o.topic}: {o.text}" for o in woke.open_loops]
    if woke.top_topics:
        lines.append("Top topics (by id):")
        lines += [
            f"- {t.topic_id} {t.name} (last seen {t.last_seen_at:%Y-%m-%d}): {t.one_liner}"
            for t in woke.top_topics[:MAX_TOP_TOPICS]
        ]
    shown = {t.topic_id for t in woke.top_topics[:MAX_TOP_TOPICS]}
    recalled = [t for t in woke.topics if t.topic_id not in shown][:MAX_RECALLED]
    if recalled:  # found for the message + resume hint + subject hints (§4.3 step 3)
        lines.append("Recalled for the task:")
        lines += [
            f"- {t.topic_id} {t.name} (last seen {t.last_seen_at:%Y-%m-%d}): {t.one_liner}"
            for t in recalled
        ]
    hints = woke.packet.active_subject_hints if woke.packet else []
    if hints:
        lines.append("Subject hints: " + ", ".join(hints))
    if woke.skills:
        lines.append("Recent skills (run with skills_run):")
        lines += manifest_lines(woke.skills)
    return "\n".join(lines)


def _header(woke: WakeResult, now: datetime) -> str:
    why = _WHY_WOKE.get(woke.reason or "", "")
    if woke.packet is None:
        return f"Wake ({why}; no sleep yet):"
    hours = (now - woke.packet.slept_at).total_seconds() / 3600
    return f"Wake ({why}; slept {woke.packet.slept_at:%Y-%m-%d %H:%M} UTC, {hours:.1f} h ago):"


def plan_line(plan: ResumePlan) -> str:
    """One line saying what to do with the interrupted task; empty when nothing was running.
    Its parts are separated by " | " (``parse_plan`` reads them back)."""
    if plan.action == "none" or not plan.goal:
        return ""
    step = [f"{NEXT_STEP} {plan.next_step}"] if plan.next_step else []
    if plan.action == "resume":
        return " | ".join([f"{RESUME} {plan.goal}", *step, "continue from the next step"])
    return " | ".join([f"{CONFIRM} {plan.goal}", *step, f"{plan.reason}; ask before continuing"])


def parse_plan(text: str) -> dict[str, str] | None:
    """The resume line of a memory message: action, goal, next step and why; None if absent."""
    for line in text.splitlines():
        for prefix, action in ((RESUME, "resume"), (CONFIRM, "confirm")):
            if line.startswith(prefix):
                goal, *rest = line.removeprefix(prefix).strip().split(" | ")
                steps = [r.removeprefix(NEXT_STEP).strip() for r in rest if r.startswith(NEXT_STEP)]
                why = rest[-1] if rest and not rest[-1].startswith(NEXT_STEP) else ""
                return {"action": action, "goal": goal, "next_step": steps[0] if steps else "",
                        "why": why}  # fmt: skip
    return None


def manifest_lines(manifests: list[dict[str, Any]]) -> list[str]:
    """One compact JSON line per skill manifest (the model reads the schema as JSON)."""
    return [
        "- " + json.dumps(m, ensure_ascii=False, separators=(",", ":"), default=str)
        for m in manifests
    ]
