"""debug: read a stack trace, the failing code, and what memory knows about this failure.

1. Parse the trace (``tracebacks.py``): exception type and message, chained exceptions, frames.
2. Map frames onto workspace files (absolute paths by their longest workspace suffix); frames in
   site-packages or the standard library are kept but not read.
3. Read the failing frames: the lines around each, and for the deepest workspace frame the
   whole enclosing function.
4. Ask memory (``topics.search``) about the failure; a topic that names the same exception type
   and the same function, file or key is "the same failure as before" and is marked as used.
5. Suggest causes from the exception type (and, with an LLM configured, ask it too).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from skills.context import SkillContext, ToolError
from skills.debug.tracebacks import Frame, ParsedTrace, parse_traceback, workspace_path
from skills.pysource import enclosing_definition

MAX_FUNCTION_LINES = 60
_QUOTED = re.compile(r"""['"]([^'"]{2,60})['"]""")

HINTS: list[tuple[str, str, str]] = [  # (exception type, message contains, hint)
    ("AttributeError", "'NoneType'", "a value is None where an object was expected: the call "
     "that produced it returned None (a missing row, an unset field, a function without return)"),
    ("AttributeError", "", "the object has no such attribute: a typo, an API change or a rename "
     "that missed this spot"),
    ("KeyError", "", "the key {key} is missing from the mapping read at {where}: check what fills "
     "it (config, input, an earlier step) or read it with .get() and a default"),
    ("ModuleNotFoundError", "", "the module is not importable: not installed, renamed or moved"),
    ("ImportError", "", "the name is not in that module any more: renamed, moved or a circular import"),
    ("NameError", "", "the name is not defined here: a typo, a missing import or an incomplete rename"),
    ("TypeError", "argument", "the call does not match the signature: wrong number or names of arguments"),
    ("TypeError", "", "an operation got a value of the wrong type (None, str vs int, ...)"),
    ("ValueError", "", "the value has the right type but the wrong content: validate it at the boundary"),
    ("IndexError", "", "the sequence is shorter than expected (an empty result?) at {where}"),
    ("ZeroDivisionError", "", "a divisor is zero at {where}: guard the empty case"),
    ("FileNotFoundError", "", "the path does not exist relative to the working directory"),
    ("AssertionError", "", "an assertion failed at {where}: compare the expected and actual values"),
    ("RecursionError", "", "unbounded recursion: a base case is missing or never reached"),
    ("TimeoutError", "", "an operation timed out: a slow dependency or a deadlock"),
]  # fmt: skip


def hypotheses(parsed: ParsedTrace, where: str) -> list[str]:
    key = (_QUOTED.findall(parsed.message) or [parsed.message])[0]
    out = []
    for exc, contains, hint in HINTS:
        if parsed.short_type == exc and contains in parsed.message:
            out.append(hint.format(key=repr(key), where=where))
            break
    out.append(f"read the failing line at {where} and the values it uses")
    return out


def frame_report(frame: Frame, files: list[str]) -> dict[str, Any]:
    path = None if frame.external else workspace_path(frame.path, files)
    return {
        "path": frame.path,
        "line": frame.line,
        "function": frame.function,
        "code": frame.code,
        "in_workspace": path is not None,
        "workspace_path": path,
    }


def read_frame(ctx: SkillContext, report: dict[str, Any], context: int, deep: bool) -> None:
    """Add the excerpt (and for the failing frame, the enclosing function) to ``report``."""
    try:
        source = ctx.repo.read_file(report["workspace_path"])
    except ToolError as exc:
        report["read_error"] = str(exc)
        return
    lines = source.splitlines()
    n = report["line"]
    lo, hi = max(1, n - context), min(len(lines), n + context)
    report["excerpt"] = "\n".join(
        f"{'>' if i == n else ' '} {i:4d} | {lines[i - 1]}" for i in range(lo, hi + 1)
    )
    if deep:
        found = enclosing_definition(source, n)
        if found:
            name, start, end = found
            end = min(end, start + MAX_FUNCTION_LINES - 1)
            report["definition"] = {"name": name, "start": start, "end": end}
            report["source"] = "\n".join(lines[start - 1 : end])


def same_failure(
    topic: dict[str, Any], parsed: ParsedTrace, frame: dict[str, Any] | None
) -> str | None:
    """Why ``topic`` is about this very failure, or None."""
    text = " ".join(
        [
            topic.get("name", ""),
            topic.get("one_liner", ""),
            *topic.get("facts", []),
            *topic.get("aliases", []),
        ]
    ).lower()
    if parsed.short_type.lower() not in text:
        return None
    clues = []
    if frame:
        clues.append(frame["function"].rsplit(".", 1)[-1])
        clues.append(PurePosixPath(frame["workspace_path"] or frame["path"]).stem)
    clues += _QUOTED.findall(parsed.message)
    for clue in clues:
        if (
            clue
            and clue.lower() not in {"<module>", "__init__"}
            and re.search(rf"\b{re.escape(clue.lower())}\b", text)
        ):
            return f"mentions {parsed.short_type} and {clue!r}"
    return None


def recall(
    ctx: SkillContext, parsed: ParsedTrace, frame: dict[str, Any] | None
) -> tuple[list[dict[str, Any]], str]:
    where = f" in {frame['function']} ({frame['workspace_path']})" if frame else ""
    query = f"{parsed.short_type}: {parsed.message}{where}"
    try:
        topics = ctx.topics.search(query=query, k=5)
    except ToolError as exc:
        return [], f"memory not searched: {exc}"
    found = []
    for topic in topics:
        why = same_failure(topic, parsed, frame)
        found.append({
            "topic_id": topic["topic_id"], "name": topic.get("name", ""),
            "one_liner": topic.get("one_liner", ""), "last_seen_at": topic.get("last_seen_at"),
            "score": topic.get("score"), "same_failure": why is not None, "why": why or "",
        })  # fmt: skip
    found.sort(key=lambda t: not t["same_failure"])
    ctx.use_topics(t["topic_id"] for t in found if t["same_failure"])
    return found, f"searched memory for {query!r}"


def _llm_analysis(
    ctx: SkillContext, args: dict[str, Any], parsed: ParsedTrace, failing: dict[str, Any] | None
) -> str:
    if not (ctx.llm_available and args.get("use_llm", True)):
        return ""
    code = (failing or {}).get("source") or (failing or {}).get("excerpt") or ""
    prompt = (
        f"{parsed.exception_type}: {parsed.message}\n\nFailing code:\n{code}\n\nMost likely cause?"
    )
    try:
        return str(
            ctx.llm.complete(
                prompt=prompt, instructions="Answer in two sentences.", effort=ctx.reasoning_effort
            )
        )
    except ToolError:
        return ""


def run(ctx: SkillContext, args: dict[str, Any]) -> dict[str, Any]:
    parsed = parse_traceback(args["trace"])
    if parsed is None:
        return {"ok": False, "error": "no Python stack trace found (expected 'Traceback (most "
                "recent call last):' or pytest's 'path.py:N: in func' lines)"}  # fmt: skip
    files = ctx.repo.list_files("**/*.py")
    frames = [frame_report(f, files) for f in parsed.frames]
    inside = [f for f in frames if f["in_workspace"]]
    failing = inside[-1] if inside else None
    for frame in inside:
        read_frame(ctx, frame, args.get("context_lines", 3), deep=frame is failing)
    prior, memory = (
        recall(ctx, parsed, failing)
        if args.get("search_memory", True)
        else ([], "memory not searched")
    )
    where = f"{failing['workspace_path']}:{failing['line']}" if failing else "the innermost frame"
    summary = f"{parsed.exception_type}: {parsed.message} raised in {failing['function'] if failing else frames[-1]['function']} ({where})"
    if failing and failing["code"]:
        summary += f": `{failing['code']}`"
    same = [t for t in prior if t["same_failure"]]
    if same:
        summary += f". Same failure as before: topic {same[0]['name']!r} (last seen {same[0]['last_seen_at']})."
    analysis = _llm_analysis(ctx, args, parsed, failing)
    return {
        "ok": True,
        "exception": {"type": parsed.exception_type, "message": parsed.message},
        "chain": [{"type": t, "message": m} for t, m in parsed.chain],
        "frames": frames,
        "failing_frame": failing,
        "prior_topics": prior,
        "same_failure_as_before": bool(same),
        "memory": memory,
        "summary": summary,
        "hypotheses": ([analysis] if analysis else []) + hypotheses(parsed, where),
        "used_llm": bool(analysis),
    }
