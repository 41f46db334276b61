"""Turn a request into plan steps without an LLM (pure), and check a plan's shape.

A step is ``{"id", "kind", "name", "args", "why"}`` with ``kind`` one of ``skill`` (run a
registered skill), ``tool`` (a read-only host tool or the test runner) or ``analyze`` (work done
by plan_and_execute itself: ``survey`` maps the code relevant to a design question).
"""

from __future__ import annotations

import re
from typing import Any

from skills.requests import docs_args, rename_args
from skills.routing import has_stack_trace, trigger_planning
from skills.toolspec import TOOL_SPECS

STEP_TOOLS = frozenset({"repo.run_tests", "repo.list_files", "repo.read_file", "skills.search"})
ANALYSES = frozenset({"survey"})
SELF = "plan_and_execute"

_I = re.IGNORECASE
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*])\s+(.+)$", re.MULTILINE)
_SPLIT = re.compile(r"\s*;\s*|,?\s+(?:and\s+)?then\s+|\.\s+(?=[A-Z])|,?\s+and\s+(?=run\b)", _I)
_TESTS = re.compile(r"\b(run|rerun|re-run|execute)\b.*\btests?\b|\btests? (pass|again)\b", _I)
_SUBJECT = re.compile(
    r"\b(?:(?:design|architecture) (?:spec|doc|document|proposal|plan) (?:for|of)|"
    r"architect|design|structure|organi[sz]e|approach|build|plan|lay out|split)\s+"
    r"(?:the |a |an |our |this )?(?P<subject>[\w .\-/]+?)\s*(?:\?|$|\.|,| so | to | for )",
    _I,
)


def clauses(request: str) -> list[str]:
    """The request's steps: list items if it has them, else its clauses."""
    if has_stack_trace(request):
        return [request]
    items = _ITEM.findall(request)
    if len(items) >= 2:
        return [i.strip() for i in items]
    return [c.strip(" .") for c in _SPLIT.split(request) if c and c.strip(" .")]


def subject_of(text: str) -> str:
    m = _SUBJECT.search(text)
    return (m["subject"] if m else text).strip(" ?.")[:80]


def step_for(clause: str) -> dict[str, Any] | None:
    """One step for one clause, or None when the clause names nothing we can do."""
    if has_stack_trace(clause):
        return {"kind": "skill", "name": "debug", "args": {"trace": clause}, "why": "a stack trace"}
    rename = rename_args(clause)
    if rename:
        return {"kind": "skill", "name": "repo_refactor", "args": rename, "why": clause}
    docs = docs_args(clause)
    if docs:
        return {"kind": "skill", "name": "write_docs", "args": docs, "why": clause}
    if _TESTS.search(clause):
        return {
            "kind": "tool",
            "name": "repo.run_tests",
            "args": {"preset": "pytest"},
            "why": clause,
        }
    if trigger_planning(clause) or re.search(r"\b(architect|design)\b", clause, _I):
        return {
            "kind": "analyze",
            "name": "survey",
            "args": {"subject": subject_of(clause)},
            "why": clause,
        }
    return None


def heuristic_plan(request: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Steps for the clauses we understand, and the clauses we do not."""
    steps: list[dict[str, Any]] = []
    unresolved: list[str] = []
    for clause in clauses(request):
        step = step_for(clause)
        if step is None:
            unresolved.append(clause)
        else:
            steps.append(step)
    return number(steps), unresolved


def number(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**s, "id": s.get("id") or f"s{i + 1}", "why": s.get("why", ""), "args": s.get("args", {})}
        for i, s in enumerate(steps)
    ]


def shape_problems(index: int, step: dict[str, Any], declared: frozenset[str]) -> list[str]:
    """What is wrong with one step before any registry lookup (kind, name, tool args)."""
    where = f"step {index + 1} ({step.get('name')!r})"
    kind, name, args = step.get("kind"), step.get("name"), step.get("args", {})
    if not isinstance(args, dict):
        return [f"{where}: args must be an object"]
    if kind == "skill":
        return [f"{where}: plan_and_execute cannot run itself"] if name == SELF else []
    if kind == "analyze":
        return [] if name in ANALYSES else [f"{where}: unknown analysis; known: {sorted(ANALYSES)}"]
    if kind != "tool":
        return [f"{where}: kind must be skill, tool or analyze"]
    if name not in STEP_TOOLS or name not in declared:
        return [f"{where}: a plan may call the tools {sorted(STEP_TOOLS)} directly; "
                "changes to files go through skills"]  # fmt: skip
    spec = TOOL_SPECS[str(name)]
    unknown = sorted(set(args) - set(spec.params))
    missing = [p for p in spec.schema["required"] if p not in args]
    problems = [f"{where}: unknown argument {u!r}" for u in unknown]
    return problems + [f"{where}: missing argument {m!r}" for m in missing]
