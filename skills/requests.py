"""Pure helpers that read skill arguments out of a request's words (no LLM needed).

Used by the router to suggest args for the built-in skills and by plan_and_execute to turn the
clauses of a multi-step request into steps. Each returns None when the text does not say enough.
"""

from __future__ import annotations

import re
from typing import Any

from skills.routing import has_stack_trace

_I = re.IGNORECASE
_NAME = r"`?([A-Za-z_][\w./-]*?)`?"
# The gap between "docs" and "for" is bounded: an unbounded lazy gap rescanned the rest of the
# line from every "docs" ("docs " x 16,000 took 3 s, x 32,000 would take 12).
_DOCS_FOR = re.compile(
    rf"\b(?:docs?|documentation|api docs|reference)\b[^.;:\n]{{0,80}}?\b(?:for|of|on) (?:the )?"
    rf"{_NAME}"
    r"(?: (?:module|package|file))?(?=$|[\s.,;:!?])",
    _I,
)
_DOCUMENT = re.compile(rf"\bdocument (?:the )?{_NAME} (?:module|package|file)\b", _I)
_RENAME = re.compile(
    rf"\brename (?:the )?(?:(function|class|module|symbol|variable|constant) )?{_NAME}"
    rf" (?:to|->|into|as) {_NAME}(?=$|[\s.,;:!?])",
    _I,
)
_IN_MODULE = re.compile(
    rf"\b(?:in|of|the|inside) (?:the )?{_NAME} (?:module|package|file)\b"
    rf"|\bin {_NAME}\.py\b",
    _I,
)


def docs_args(text: str) -> dict[str, Any] | None:
    """``write docs for the parser module`` -> ``{"target": "parser"}``."""
    m = _DOCS_FOR.search(text) or _DOCUMENT.search(text)
    if not m:
        return None
    target = m.group(1).rstrip(".")
    return {"target": target} if target.lower() not in {"it", "this", "that"} else None


def rename_args(text: str) -> dict[str, Any] | None:
    """``refactor the storage module: rename Loader to Reader`` ->
    ``{"old_name": "Loader", "new_name": "Reader", "module": "storage"}``."""
    m = _RENAME.search(text)
    if not m:
        return None
    kind, old, new = m.group(1), m.group(2), m.group(3)
    args: dict[str, Any] = {"old_name": old, "new_name": new}
    if kind and kind.lower() == "module":
        args["kind"] = "module"
        return args
    where = _IN_MODULE.search(text)
    if where:
        module = where.group(1) or where.group(2)
        if module and module not in (old, new):
            args["module"] = module
    return args


def debug_args(text: str) -> dict[str, Any] | None:
    return {"trace": text} if has_stack_trace(text) else None


def plan_args(text: str) -> dict[str, Any] | None:
    return {"request": text.strip()} if text.strip() else None


_SUGGESTERS = {
    "write_docs": docs_args,
    "repo_refactor": rename_args,
    "debug": debug_args,
    "plan_and_execute": plan_args,
}


def suggest_args(skill_id: str, text: str) -> dict[str, Any] | None:
    """Args for a built-in skill read from ``text``, or None (unknown skill or not enough said)."""
    suggester = _SUGGESTERS.get(skill_id)
    return suggester(text) if suggester else None
