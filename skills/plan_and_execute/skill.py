"""plan_and_execute: a checked plan of skill and tool calls, run until done or the first failure.

Plan sources, in order: ``resume_state`` (continue a failed run), ``steps`` (given by the
caller, e.g. the model), the LLM (when configured; its JSON plan is checked like any other),
else the heuristic planner (``planner.py``). Every step is checked before any runs: skills must
exist and their args validate (``skills.validate``), tools must be read-only or the test runner.
Execution stops at the first failed step and returns ``resume_state``; passing it back runs the
plan from that step without redoing the ones before.

A design question ("how should we architect the sync service?") becomes a ``survey`` step: the
modules relevant to the subject, their public API and dependencies, the tests that cover them,
and a design outline built on them (with an LLM configured, also a written proposal).
"""

from __future__ import annotations

import json
import re
from typing import Any

from skills.context import SkillContext, ToolError
from skills.plan_and_execute.planner import heuristic_plan, number, shape_problems
from skills.pysource import describe, is_test_file, module_name

MAX_SURVEY_FILES = 40
_STOP = frozenset("the a an our this of for to and or with service services module modules "
                  "system code new should we how".split())  # fmt: skip


def plan_from_llm(ctx: SkillContext, request: str) -> list[dict[str, Any]] | None:
    try:
        skills = ctx.skills.search(query=request, k=5)
        text = ctx.llm.complete(
            prompt=f"Request: {request}\nSkills: {json.dumps(skills)[:6000]}\n"
            'Reply with JSON only: {"steps": [{"kind": "skill"|"tool"|"analyze", "name": ..., '
            '"args": {...}, "why": ...}]}. Tools: repo.run_tests {"preset": "pytest"}; '
            'analysis: survey {"subject": ...}.',
            instructions="You plan tool calls for a coding agent. JSON only.",
            effort=ctx.reasoning_effort,
        )
        steps = json.loads(re.sub(r"^```\w*|```$", "", str(text).strip()))["steps"]
    except (ToolError, ValueError, KeyError, TypeError):
        return None
    return number(steps) if isinstance(steps, list) and steps else None


def make_plan(
    ctx: SkillContext, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], str, list[str]]:
    """(steps, planner, problems)."""
    if args.get("resume_state"):
        return number(args["resume_state"]["plan"]), "resumed", []
    if args.get("steps"):
        return number(args["steps"]), "given", []
    if ctx.llm_available and args.get("use_llm", True):
        steps = plan_from_llm(ctx, args["request"])
        if steps:
            return steps, "llm", []
    steps, unresolved = heuristic_plan(args["request"])
    problems = [f"cannot map {c!r} to a skill or tool; give explicit steps" for c in unresolved]
    if not steps and not problems:
        problems = ["the request names no step to run"]
    return steps, "heuristic", problems


def check(ctx: SkillContext, steps: list[dict[str, Any]]) -> list[str]:
    """Every problem with the plan; an empty list means every step may run."""
    problems: list[str] = []
    for i, step in enumerate(steps):
        shape = shape_problems(i, step, ctx.declared)
        problems += shape
        if not shape and step["kind"] == "skill":
            found = ctx.skills.validate(skill_id=step["name"], args=step["args"])
            problems += [f"step {i + 1} ({step['name']!r}): {v}" for v in found]
    return problems


def survey(ctx: SkillContext, subject: str) -> dict[str, Any]:
    """The code relevant to ``subject``: modules, API, dependencies, tests, and an outline."""
    words = [w for w in re.findall(r"[a-z0-9]+", subject.lower()) if w not in _STOP] or [
        subject.lower()
    ]
    files = ctx.repo.list_files("**/*.py")
    by_path = [f for f in files if any(w in f.lower() for w in words)]
    relevant: list[tuple[str, str]] = []
    tests: list[tuple[str, str]] = []
    for path in (by_path or files)[:MAX_SURVEY_FILES]:
        source = ctx.repo.read_file(path)
        if not by_path and not any(w in source.lower() for w in words):
            continue
        (tests if is_test_file(path) else relevant).append((path, source))
    names = {module_name(f) for f in files}
    modules, deps = [], []
    for path, source in relevant:
        try:
            info = describe(source, path)
        except SyntaxError:
            continue
        internal = sorted(
            {
                i.lstrip(".")
                for i in info.imports
                if i.lstrip(".").split(".")[0] in {n.split(".")[0] for n in names}
            }
        )
        deps += [[info.name, d] for d in internal]
        modules.append({
            "module": info.name, "path": path, "doc": info.doc.split("\n")[0],
            "functions": [f.signature for f in info.functions][:15],
            "classes": [c.name for c in info.classes], "imports": internal,
        })  # fmt: skip
    return {"subject": subject, "keywords": words, "relevant_modules": modules,
            "dependencies": deps, "tests": [p for p, _ in tests],
            "outline": outline(subject, modules, [p for p, _ in tests])}  # fmt: skip


def outline(subject: str, modules: list[dict[str, Any]], tests: list[str]) -> list[str]:
    found = ", ".join(m["module"] for m in modules) or "nothing yet (a new component)"
    api = "; ".join(
        f"{m['module']}: {', '.join(m['functions'][:4] + m['classes'][:3])}" for m in modules[:5]
    )
    return [
        f"1. Scope: what the {subject} owns, and what it leaves to its neighbours.",
        f"2. Build on: {found}.",
        f"3. Interfaces: {api or 'define the public functions first'}; keep them small and typed.",
        "4. Data flow and state: where data enters, where it is stored, who may write it.",
        "5. Failure handling: retries with backoff, idempotent writes, partial failure, timeouts.",
        f"6. Tests: {', '.join(tests) or 'none cover it yet'}; add unit tests per interface and one end-to-end test.",
        "7. Rollout: behind a flag, migrate callers one by one, then remove the old path.",
    ]  # fmt: skip


def execute(ctx: SkillContext, step: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Run one step: (succeeded, what it returned)."""
    kind, name, args = step["kind"], step["name"], step["args"]
    try:
        if kind == "skill":
            result = ctx.skills.run(skill_id=name, args=args)
            kept = ("run_id", "skill_id", "outcome", "output", "error", "violations")
            return bool(result["ok"]), {k: result.get(k) for k in kept}
        if kind == "analyze":
            return True, {"design": survey(ctx, args.get("subject", ""))}
        value = ctx.call(name, **args)
        ok = not (name == "repo.run_tests" and not value["passed"] and value["exit_code"] != 5)
        return ok, {"value": value}
    except ToolError as exc:
        return False, {"error": f"{exc.kind}: {exc}"}


def _propose(ctx: SkillContext, args: dict[str, Any], design: dict[str, Any]) -> bool:
    if not (ctx.llm_available and args.get("use_llm", True)):
        return False
    try:
        design["proposal"] = str(ctx.llm.complete(
            prompt=f"Question: {args['request']}\nWhat the code has:\n{json.dumps(design)[:8000]}",
            instructions="Write a concise design proposal in Markdown.", effort=ctx.reasoning_effort,
        ))  # fmt: skip
    except ToolError:
        return False
    return True


def run(ctx: SkillContext, args: dict[str, Any]) -> dict[str, Any]:
    steps, planner, problems = make_plan(ctx, args)
    problems += check(ctx, steps)
    out: dict[str, Any] = {"planner": planner, "plan": steps, "results": [], "problems": problems,
                           "failed_step": None, "resume_state": None, "design": None, "used_llm": planner == "llm"}  # fmt: skip
    if problems:
        return {**out, "ok": False, "status": "rejected", "error": problems[0]}
    if args.get("dry_run"):
        return {**out, "ok": True, "status": "planned"}
    resume = args.get("resume_state") or {}
    start = int(resume.get("next_step", 0))
    results: list[dict[str, Any]] = list(resume.get("results", []))[:start]
    for i in range(start, len(steps)):
        ok, value = execute(ctx, steps[i])
        results.append({"step": steps[i]["id"], "ok": ok, **value})
        if "design" in value:
            out["design"] = value["design"]
            out["used_llm"] = _propose(ctx, args, value["design"]) or out["used_llm"]
        if not ok:
            state = {"plan": steps, "next_step": i, "results": results[:i]}
            error = (
                value.get("error")
                or (value.get("value") or {}).get("output_tail", "")[-300:]
                or "step failed"
            )
            return {**out, "ok": False, "status": "failed", "results": results, "failed_step": i,
                    "resume_state": state, "error": f"step {i + 1} ({steps[i]['name']}) failed: {error}"}  # fmt: skip
    return {**out, "ok": True, "status": "completed", "results": results}
