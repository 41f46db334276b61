"""Pure helpers over Python source that several skills share: module names, finding a module
by what a user calls it, and a module's public API read from its AST (never imported)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import PurePosixPath

SOURCE_ROOTS = ("src/", "lib/")


def module_name(path: str) -> str:
    """``pkg/parser.py`` -> ``pkg.parser``; ``pkg/__init__.py`` -> ``pkg``; ``src/`` dropped."""
    for root in SOURCE_ROOTS:
        if path.startswith(root):
            path = path[len(root) :]
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_test_file(path: str) -> bool:
    p = PurePosixPath(path)
    return p.name.startswith("test_") or p.name.endswith("_test.py") or "tests" in p.parts[:-1]


@dataclass(frozen=True)
class ModuleMatch:
    name: str  # dotted
    files: tuple[str, ...]  # the module file, or every file of the package
    is_package: bool
    alternatives: tuple[str, ...] = ()


def find_module(target: str, files: list[str]) -> ModuleMatch | None:
    """The module or package ``target`` names: a path, a dotted name or a bare name."""
    py = [f for f in files if f.endswith(".py")]
    by_name: dict[str, list[str]] = {}
    for f in py:
        by_name.setdefault(module_name(f), []).append(f)
    t = target.strip().strip("`").removesuffix("/")
    wanted = module_name(t) if t.endswith(".py") or "/" in t else t
    candidates = [n for n in by_name if n == wanted]
    if not candidates:
        candidates = [n for n in by_name if n.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]]
        candidates = [n for n in candidates if n.endswith(wanted)]
    candidates = sorted(candidates, key=lambda n: (_is_test_module(n, by_name), n.count("."), n))
    if not candidates:
        return None
    best = candidates[0]
    package_files = [f for f in py if module_name(f).startswith(best + ".")]
    is_package = any(f.endswith("__init__.py") for f in by_name[best])
    chosen = sorted({*by_name[best], *(package_files if is_package else [])})
    chosen = [f for f in chosen if f in by_name[best] or not is_test_file(f)]
    return ModuleMatch(best, tuple(chosen), is_package, tuple(candidates[1:]))


def _is_test_module(name: str, by_name: dict[str, list[str]]) -> bool:
    return all(is_test_file(f) for f in by_name[name])


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    signature: str  # "name(a: int, b=2) -> str"
    doc: str
    lineno: int
    is_async: bool = False
    decorators: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    doc: str
    lineno: int
    methods: tuple[FunctionInfo, ...] = ()


@dataclass
class ModuleInfo:
    name: str
    path: str
    doc: str
    functions: list[FunctionInfo] = field(default_factory=list)
    classes: list[ClassInfo] = field(default_factory=list)
    constants: list[tuple[str, str]] = field(default_factory=list)  # (name, value source)
    imports: list[str] = field(default_factory=list)


def _arg(arg: ast.arg, default: ast.expr | None) -> str:
    text = arg.arg
    if arg.annotation is not None:
        text += f": {ast.unparse(arg.annotation)}"
    if default is not None:
        text += (" = " if arg.annotation is not None else "=") + ast.unparse(default)
    return text


def format_args(args: ast.arguments) -> str:
    """Parameters as PEP 8 writes them (``strict: bool = False``, ``n=1``)."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    parts = [_arg(a, d) for a, d in zip(positional, defaults, strict=True)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        parts.append("*" + _arg(args.vararg, None))
    elif args.kwonlyargs:
        parts.append("*")
    parts += [_arg(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg is not None:
        parts.append("**" + _arg(args.kwarg, None))
    return ", ".join(parts)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionInfo:
    sig = f"{node.name}({format_args(node.args)})"
    if node.returns is not None:
        sig += f" -> {ast.unparse(node.returns)}"
    return FunctionInfo(
        name=node.name,
        signature=sig,
        doc=ast.get_docstring(node) or "",
        lineno=node.lineno,
        is_async=isinstance(node, ast.AsyncFunctionDef),
        decorators=tuple(ast.unparse(d) for d in node.decorator_list),
    )


def _public(name: str, exported: set[str] | None, include_private: bool) -> bool:
    if exported is not None:
        return name in exported
    return include_private or not name.startswith("_")


def _dunder_all(tree: ast.Module) -> set[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                return {str(v) for v in ast.literal_eval(node.value)}
            except ValueError:
                return None
    return None


def describe(source: str, path: str, include_private: bool = False) -> ModuleInfo:
    """The public API of one module (honours ``__all__``); ``SyntaxError`` if it does not parse."""
    tree = ast.parse(source, path)
    exported = None if include_private else _dunder_all(tree)
    info = ModuleInfo(module_name(path), path, ast.get_docstring(tree) or "")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if _public(node.name, exported, include_private):
                info.functions.append(_function(node))
        elif isinstance(node, ast.ClassDef) and _public(node.name, exported, include_private):
            methods = tuple(
                _function(m)
                for m in node.body
                if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
                and (m.name == "__init__" or include_private or not m.name.startswith("_"))
            )
            info.classes.append(
                ClassInfo(
                    node.name,
                    tuple(ast.unparse(b) for b in node.bases),
                    ast.get_docstring(node) or "",
                    node.lineno,
                    methods,
                )
            )
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (
                    isinstance(t, ast.Name)
                    and t.id.isupper()
                    and node.value is not None
                    and _public(t.id, exported, include_private)
                ):
                    info.constants.append((t.id, ast.unparse(node.value)[:80]))
        elif isinstance(node, ast.Import):
            info.imports.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            info.imports.append("." * node.level + node.module)
    return info


def enclosing_definition(source: str, line: int) -> tuple[str, int, int] | None:
    """``(qualified name, first line, last line)`` of the innermost def/class holding ``line``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    best: tuple[str, int, int] | None = None

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                end = child.end_lineno or child.lineno
                name = f"{prefix}{child.name}"
                if child.lineno <= line <= end:
                    best = (name, child.lineno, end)
                    visit(child, name + ".")

    visit(tree, "")
    return best
