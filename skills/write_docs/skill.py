"""write_docs: Markdown API docs for a Python module or package, from its AST.

Reads the module (never imports it), collects public functions, classes, methods and constants
with their signatures and docstrings, looks at the repo's existing Markdown docs for conventions
(docs folder, member heading level, backticked names, code-fence language) and writes
``docs/<module>.md`` (or ``docs/api/...`` when the repo has that). Regenerated content sits
between markers, so hand-written text around it survives updates. With an LLM configured it adds
a short overview paragraph; without one the docs are complete all the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skills.context import SkillContext, ToolError
from skills.pysource import ClassInfo, FunctionInfo, ModuleInfo, describe, find_module, module_name

START = "<!-- sheriff:write_docs:start -->"
END = "<!-- sheriff:write_docs:end -->"
_MEMBER_HEADING = re.compile(r"^(#{2,4}) (`?)[A-Za-z_][\w.]*(\(|`|$)", re.MULTILINE)
_FENCE = re.compile(r"^```(\w*)\s*$", re.MULTILINE)


@dataclass
class Conventions:
    docs_dir: str = "docs"
    member_level: int = 3
    code_names: bool = True
    fence: str = "python"
    source: str = "defaults"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def detect_conventions(files: list[str], read: Any) -> Conventions:
    """Where docs live and how existing Markdown docs name members and fence code."""
    conv = Conventions()
    md = [f for f in files if f.endswith(".md") and f.startswith("docs/")]
    if any(f.startswith("docs/api/") for f in md):
        conv.docs_dir = "docs/api"
        md = [f for f in md if f.startswith("docs/api/")] or md
    examples = []
    for path in md[:10]:
        text = read(path)
        headings = _MEMBER_HEADING.findall(text)
        fences = [f for f in _FENCE.findall(text) if f]
        if headings or fences:
            examples.append(path)
        if headings:
            levels = [len(h[0]) for h in headings]
            conv.member_level = max(set(levels), key=levels.count)
            conv.code_names = sum(1 for h in headings if h[1]) * 2 >= len(headings)
        if fences:
            conv.fence = max(set(fences), key=fences.count)
    if examples:
        conv.source = ", ".join(examples[:3])
    return conv


def _h(level: int, text: str) -> str:
    return "#" * min(max(level, 1), 6) + " " + text


def _name(conv: Conventions, text: str) -> str:
    return f"`{text}`" if conv.code_names else text


def render_function(
    fn: FunctionInfo, conv: Conventions, level: int, path: str, owner: str = ""
) -> list[str]:
    shown = f"{owner}.{fn.signature}" if owner else fn.signature
    prefix = "async def " if fn.is_async else "def "
    lines = [_h(level, _name(conv, shown)), "", f"```{conv.fence}"]
    lines += [f"@{d}" for d in fn.decorators] + [prefix + fn.signature, "```", ""]
    lines += [fn.doc or "_No docstring._", "", f"*Defined in `{path}`, line {fn.lineno}.*", ""]
    return lines


def render_class(cls: ClassInfo, conv: Conventions, level: int, path: str) -> list[str]:
    bases = f"({', '.join(cls.bases)})" if cls.bases else ""
    lines = [_h(level, _name(conv, f"class {cls.name}{bases}")), ""]
    lines += [cls.doc or "_No docstring._", "", f"*Defined in `{path}`, line {cls.lineno}.*", ""]
    for method in cls.methods:
        lines += render_function(method, conv, level + 1, path, owner=cls.name)
    return lines


def render_module(info: ModuleInfo, conv: Conventions, level: int) -> list[str]:
    """Sections for one module: docstring, constants, functions, classes."""
    lines = [info.doc, ""] if info.doc else []
    member = (
        max(level + 1, conv.member_level) if level >= conv.member_level - 1 else conv.member_level
    )
    if info.constants:
        lines += [_h(level, "Constants"), ""]
        lines += [f"- `{name} = {value}`" for name, value in info.constants] + [""]
    if info.functions:
        lines += [_h(level, "Functions"), ""]
        for fn in info.functions:
            lines += render_function(fn, conv, member, info.path)
    if info.classes:
        lines += [_h(level, "Classes"), ""]
        for cls in info.classes:
            lines += render_class(cls, conv, member, info.path)
    if not (info.functions or info.classes or info.constants):
        lines += ["_No public functions or classes._", ""]
    return lines


def render(modules: list[ModuleInfo], conv: Conventions, overview: str) -> str:
    """The generated block (between the markers)."""
    lines = [START, "", "> Generated from the source by the `write_docs` skill; text outside "
             "the markers is kept on update.", ""]  # fmt: skip
    if overview:
        lines += [_h(2, "Overview"), "", overview.strip(), ""]
    if len(modules) == 1:
        lines += render_module(modules[0], conv, 2)
    else:
        for info in modules:
            lines += [_h(2, _name(conv, info.name)), ""]
            lines += render_module(info, conv, 3)
    lines += [END]
    return "\n".join(lines).rstrip() + "\n"


def merge(existing: str | None, title: str, block: str) -> str:
    """Replace the generated block in ``existing``, append it, or start a new file."""
    if existing is None:
        return f"# {title}\n\n{block}"
    if START in existing and END in existing:
        head, rest = existing.split(START, 1)
        tail = rest.split(END, 1)[1]
        return head + block.rstrip("\n") + tail
    return existing.rstrip("\n") + "\n\n" + block


def _overview(ctx: SkillContext, modules: list[ModuleInfo], args: dict[str, Any]) -> str:
    if not (ctx.llm_available and args.get("use_llm", True) and ctx.has_tool("llm.complete")):
        return ""
    api = "\n".join(
        f"{m.name}: {m.doc[:300]}\n" + "\n".join(f"  {f.signature}: {f.doc[:200]}" for f in m.functions)
        + "\n" + "\n".join(f"  class {c.name}: {c.doc[:200]}" for c in m.classes)
        for m in modules
    )  # fmt: skip
    try:
        text = ctx.llm.complete(
            prompt=f"Write a 2-4 sentence overview for the API docs of this Python code:\n{api}",
            instructions="Plain Markdown prose, no headings, no code blocks.",
            effort=ctx.reasoning_effort,
        )
    except ToolError as exc:
        ctx.log(f"no overview: {exc}")
        return ""
    return str(text)


def run(ctx: SkillContext, args: dict[str, Any]) -> dict[str, Any]:
    files = ctx.repo.list_files("**/*")
    match = find_module(args["target"], files)
    if match is None:
        modules = sorted({module_name(f) for f in files if f.endswith(".py")})[:30]
        return {"ok": False, "error": f"no module or package {args['target']!r} in the workspace",
                "alternatives": modules}  # fmt: skip
    infos = []
    for path in match.files:
        try:
            infos.append(
                describe(ctx.repo.read_file(path), path, args.get("include_private", False))
            )
        except SyntaxError as exc:
            return {"ok": False, "error": f"{path} does not parse: {exc.msg} (line {exc.lineno})"}
    conv = detect_conventions(files, ctx.repo.read_file)
    docs_path = args.get("output") or f"{conv.docs_dir}/{match.name}.md"
    existing = ctx.repo.read_file(docs_path) if docs_path in files else None
    overview = _overview(ctx, infos, args)
    content = merge(existing, f"`{match.name}`", render(infos, conv, overview))
    ctx.repo.write_file(docs_path, content)
    return {
        "ok": True,
        "docs_path": docs_path,
        "module": match.name,
        "files": list(match.files),
        "created": existing is None,
        "functions": [f.name for m in infos for f in m.functions],
        "classes": [c.name for m in infos for c in m.classes],
        "methods": [f"{c.name}.{f.name}" for m in infos for c in m.classes for f in c.methods],
        "conventions": conv.as_dict(),
        "alternatives": list(match.alternatives),
        "used_llm": bool(overview),
    }
