"""Syntax-aware renames over a set of Python sources (pure: sources in, new sources out).

Symbols (module-level functions, classes, variables): the definition, every reference bound to
the module-level name (a local of the same name in a function shadows it and is left alone),
``from m import Old`` in every importer (and the importer's own references when it binds the
name), ``m.Old`` attribute access through ``import m`` / ``import m as x``, re-exports through
packages, and ``__all__`` entries. Modules and packages: the file or folder moves and every
``import``, ``from ... import`` (absolute or relative) and ``pkg.old.attr`` reference follows.

Edits are made at the positions the AST reports, checked against the source text before they
are applied; comments and strings are never edited, but mentions left in them are listed.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field

from skills.pysource import find_module, module_name
from skills.repo_refactor.scopes import SCOPES, binds, refs_in_scope

_DEF = re.compile(rb"(?:async\s+)?(?:def|class)\s+")


@dataclass(frozen=True)
class Edit:
    line: int  # 1-based
    col: int  # UTF-8 byte offset, as the AST reports
    old: str
    new: str


@dataclass
class RenamePlan:
    kind: str  # "symbol" | "module"
    old_name: str
    new_name: str
    defined_in: list[str] = field(default_factory=list)  # dotted modules
    edits: dict[str, list[Edit]] = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)  # (src path, dst path)
    new_sources: dict[str, str] = field(default_factory=dict)  # keyed by the *old* path
    mentions_left: list[str] = field(default_factory=list)  # "path:line: text"
    problems: list[str] = field(default_factory=list)
    word: str = ""  # the identifier whose leftover mentions are listed


class _Module:
    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source
        self.name = module_name(path)
        self.is_package = path.endswith("__init__.py")
        self.tree = ast.parse(source, path)
        self.lines = source.encode("utf-8").splitlines(keepends=True)
        self.parents = {c: p for p in ast.walk(self.tree) for c in ast.iter_child_nodes(p)}

    def enclosing_scope(self, node: ast.AST) -> ast.AST:
        """The function, class or module whose namespace a statement binds into."""
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, SCOPES):
            parent = self.parents.get(parent)
        return parent if parent is not None else self.tree

    def text_at(self, line: int, col: int, length: int) -> str:
        return self.lines[line - 1][col : col + length].decode("utf-8", errors="replace")

    def resolve(self, node: ast.ImportFrom) -> str:
        """The absolute module an ``ImportFrom`` names (relative levels resolved)."""
        if not node.level:
            return node.module or ""
        package = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        return ".".join([*base, *([node.module] if node.module else [])])


def is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def apply_edits(source: str, edits: list[Edit]) -> str:
    """Apply edits (from the end backwards); each must find its ``old`` text where it says."""
    lines = source.encode("utf-8").splitlines(keepends=True)
    for e in sorted(set(edits), key=lambda e: (e.line, e.col), reverse=True):
        raw = lines[e.line - 1]
        old = e.old.encode("utf-8")
        if raw[e.col : e.col + len(old)] != old:
            raise ValueError(f"line {e.line} col {e.col}: expected {e.old!r}")
        lines[e.line - 1] = raw[: e.col] + e.new.encode("utf-8") + raw[e.col + len(old) :]
    return b"".join(lines).decode("utf-8")


# -- symbols ----------------------------------------------------------------------------------
def _defines(mod: _Module, name: str) -> ast.stmt | None:
    for node in mod.tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node
    return None


def _def_name_edit(mod: _Module, node: ast.stmt, old: str, new: str) -> Edit | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        raw = mod.lines[node.lineno - 1]
        m = _DEF.match(raw, node.col_offset)
        if m and raw[m.end() : m.end() + len(old.encode())] == old.encode():
            return Edit(node.lineno, m.end(), old, new)
    return None  # assignments are renamed through their Name (Store) nodes


def plan_symbol_rename(
    sources: dict[str, str], old: str, new: str, module: str | None = None
) -> RenamePlan:
    """Plan renaming module-level symbol ``old`` to ``new`` everywhere it is referenced."""
    plan = RenamePlan("symbol", old, new)
    mods = _parse_all(sources, plan)
    if not is_identifier(new):
        plan.problems.append(f"{new!r} is not a valid Python identifier")
        return plan
    defining = [m for m in mods.values() if _defines(m, old) is not None]
    if module:
        match = find_module(module, list(mods))
        defining = [m for m in defining if match and m.path in match.files]
    if not defining:
        where = f" in module {module!r}" if module else ""
        plan.problems.append(f"{old!r} is not defined at module level{where}")
        return plan
    if len(defining) > 1:
        plan.problems.append(
            f"{old!r} is defined in {', '.join(m.name for m in defining)}; say which module"
        )
        return plan
    home = defining[0]
    plan.defined_in = [home.name]
    exporters = _exporters(mods, home.name, old)
    for mod in mods.values():
        edits = _symbol_edits(mod, home, exporters, old, new, plan)
        if edits:
            plan.edits[mod.path] = edits
    _finish(plan, mods)
    return plan


def _exporters(mods: dict[str, _Module], home: str, name: str) -> set[str]:
    """Modules from which ``name`` can be imported: home plus re-exporters, to a fixed point."""
    exporters = {home}
    changed = True
    while changed:
        changed = False
        for mod in mods.values():
            if mod.name in exporters:
                continue
            for node in mod.tree.body:
                if (
                    isinstance(node, ast.ImportFrom)
                    and mod.resolve(node) in exporters
                    and any(a.name == name and a.asname in (None, name) for a in node.names)
                ):
                    exporters.add(mod.name)
                    changed = True
    return exporters


def _symbol_edits(
    mod: _Module, home: _Module, exporters: set[str], old: str, new: str, plan: RenamePlan
) -> list[Edit]:
    edits: list[Edit] = []
    binding_scopes: list[ast.AST] = [mod.tree] if mod is home else []
    definition = _defines(mod, old) if mod is home else None
    edit = _def_name_edit(mod, definition, old, new) if definition is not None else None
    if edit:
        edits.append(edit)
    module_aliases = _module_aliases(mod)
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.ImportFrom) and mod.resolve(node) in exporters:
            for alias in node.names:
                if alias.name == old:
                    edits.append(Edit(alias.lineno, alias.col_offset, old, new))
                if (alias.name == old and alias.asname is None) or alias.name == "*":
                    binding_scopes.append(mod.enclosing_scope(node))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == old
            and module_aliases.get(_dotted(node.value) or "") in exporters
        ):
            edits.append(_attr_edit(node, new))
    for scope in dict.fromkeys(binding_scopes):
        edits += [Edit(n.lineno, n.col_offset, old, new) for n in refs_in_scope(scope, old)]
        if binds(scope, new):
            plan.problems.append(f"{mod.path} already binds {new!r}; renaming would collide")
    if mod.tree in binding_scopes:
        edits += _string_annotation_edits(mod, old, new)
    if mod.name in exporters:
        edits += _dunder_all_edits(mod, old, new)
    return edits


def _module_aliases(mod: _Module) -> dict[str, str]:
    """Local dotted expressions that stand for a module: ``import a.b`` binds ``a`` and ``a.b``,
    ``import a.b as x`` binds ``x``, ``from a import b`` binds ``b`` (possibly a module)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                    continue
                parts = alias.name.split(".")
                for i in range(1, len(parts) + 1):
                    aliases[".".join(parts[:i])] = ".".join(parts[:i])
        elif isinstance(node, ast.ImportFrom):
            source = mod.resolve(node)
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{source}.{alias.name}".lstrip(".")
    return aliases


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _attr_edit(node: ast.Attribute, new: str) -> Edit:
    line, end = node.end_lineno or node.lineno, node.end_col_offset or 0
    col = end - len(node.attr.encode("utf-8"))
    return Edit(line, col, node.attr, new)


def _string_annotation_edits(mod: _Module, old: str, new: str) -> list[Edit]:
    """Forward references written as strings: ``def make() -> "Old":``, ``x: "Old"``."""
    annotations: list[ast.expr | None] = []
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            annotations.append(node.annotation)
    return [
        Edit(a.lineno, a.col_offset + 1, old, new)
        for a in annotations
        if isinstance(a, ast.Constant) and a.value == old
    ]


def _dunder_all_edits(mod: _Module, old: str, new: str) -> list[Edit]:
    """The ``"Old"`` entry of ``__all__`` (the text after the opening quote)."""
    edits = []
    for node in mod.tree.body:
        if not isinstance(node, ast.Assign):
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            for const in ast.walk(node.value):
                if isinstance(const, ast.Constant) and const.value == old:
                    edits.append(Edit(const.lineno, const.col_offset + 1, old, new))
    return edits


# -- modules ----------------------------------------------------------------------------------
def plan_module_rename(
    sources: dict[str, str], old: str, new: str, all_files: list[str] | None = None
) -> RenamePlan:
    """Plan renaming module or package ``old`` (path, dotted or bare name) to ``new``
    (a new last component, or a dotted name with the same parent). A package's folder moves
    whole: ``all_files`` (default: the sources) says what is in it."""
    plan = RenamePlan("module", old, new)
    mods = _parse_all(sources, plan)
    match = find_module(old, list(sources))
    if match is None:
        plan.problems.append(f"no module or package {old!r} in the workspace")
        return plan
    old_dotted = match.name
    parent, _, leaf = old_dotted.rpartition(".")
    new_leaf = new.rsplit(".", 1)[-1]
    if "." in new and new.rsplit(".", 1)[0] != parent:
        plan.problems.append(
            "only the last part of a module name can change (no moves across packages)"
        )
    if not is_identifier(new_leaf):
        plan.problems.append(f"{new_leaf!r} is not a valid module name")
    new_dotted = f"{parent}.{new_leaf}" if parent else new_leaf
    if any(m.name == new_dotted for m in mods.values()):
        plan.problems.append(f"module {new_dotted} already exists")
    if plan.problems:
        return plan
    plan.defined_in = [old_dotted]
    plan.moves = _module_moves(
        match.files, match.is_package, leaf, new_leaf, all_files or list(sources)
    )
    plan.word = leaf
    for mod in mods.values():
        edits = _module_edits(mod, old_dotted, leaf, new_leaf)
        if edits:
            plan.edits[mod.path] = edits
    _finish(plan, mods)
    return plan


def _module_moves(
    files: tuple[str, ...], is_package: bool, leaf: str, new_leaf: str, all_files: list[str]
) -> list[tuple[str, str]]:
    if not is_package:
        src = files[0]
        return [(src, src[: -len(f"{leaf}.py")] + f"{new_leaf}.py")]
    init = next(f for f in files if f.endswith(f"{leaf}/__init__.py"))
    folder = init[: -len("__init__.py")]
    new_folder = folder[: -len(f"{leaf}/")] + f"{new_leaf}/"
    return [(f, new_folder + f[len(folder) :]) for f in sorted(all_files) if f.startswith(folder)]


def _renamed(dotted: str, old: str) -> bool:
    return dotted == old or dotted.startswith(old + ".")


def _module_edits(mod: _Module, old: str, leaf: str, new_leaf: str) -> list[Edit]:
    edits: list[Edit] = []
    depth = old.count(".")  # index of the component that changes
    parent = old.rpartition(".")[0]
    binding_scopes: list[ast.AST] = []  # scopes where ``leaf`` is bound to the module itself
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _renamed(alias.name, old):
                    edits.append(_component_edit(alias, alias.name, depth, leaf, new_leaf))
                    if alias.asname is None and depth == 0:
                        binding_scopes.append(mod.enclosing_scope(node))
        elif isinstance(node, ast.ImportFrom):
            source = mod.resolve(node)
            if node.module and _renamed(source, old):
                edit = _from_module_edit(mod, node, source, old, leaf, new_leaf)
                edits += [edit] if edit is not None else []
            elif depth and source == parent:
                for alias in node.names:
                    if alias.name == leaf:
                        edits.append(Edit(alias.lineno, alias.col_offset, leaf, new_leaf))
                        if alias.asname is None:
                            binding_scopes.append(mod.enclosing_scope(node))
    if depth:  # pkg.old.attr, p.old.attr through names bound to the parent package
        aliases = _module_aliases(mod)
        for node in ast.walk(mod.tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == leaf
                and aliases.get(_dotted(node.value) or "") == parent
            ):
                edits.append(_attr_edit(node, new_leaf))
    for scope in dict.fromkeys(binding_scopes):
        edits += [Edit(n.lineno, n.col_offset, leaf, new_leaf) for n in refs_in_scope(scope, leaf)]
    return edits


def _component_edit(alias: ast.alias, dotted: str, index: int, leaf: str, new_leaf: str) -> Edit:
    """Edit the ``index``-th component of a dotted name written at the alias's position."""
    offset = len(".".join(dotted.split(".")[:index]).encode()) + (1 if index else 0)
    return Edit(alias.lineno, alias.col_offset + offset, leaf, new_leaf)


def _from_module_edit(
    mod: _Module, node: ast.ImportFrom, source: str, old: str, leaf: str, new_leaf: str
) -> Edit | None:
    """Position of the changing component in ``from <module> import ...`` (found by tokens)."""
    written = node.module or ""
    absolute_parts = source.split(".")
    index_in_source = old.count(".")
    index_in_written = index_in_source - (len(absolute_parts) - len(written.split(".")))
    if index_in_written < 0:
        return None  # relative import from inside the renamed package: the dots still hold
    tokens = _statement_tokens(mod, node)
    names = []
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string == "import":
            break
        if tok.type == tokenize.NAME and tok.string != "from":
            names.append(tok)
    tok = names[index_in_written]
    line_bytes = mod.lines[tok.start[0] - 1]
    col = len(line_bytes.decode("utf-8")[: tok.start[1]].encode("utf-8"))
    return Edit(tok.start[0], col, leaf, new_leaf)


def _statement_tokens(mod: _Module, node: ast.stmt) -> Iterator[tokenize.TokenInfo]:
    """Tokens of one statement (what precedes it on its first line blanked out)."""
    lines = mod.lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
    first = lines[0][: node.col_offset].decode("utf-8")
    text = b"".join(lines).decode("utf-8")
    text = " " * len(first) + text[len(first) :]
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        yield tok._replace(start=(tok.start[0] + node.lineno - 1, tok.start[1]))


# -- shared -----------------------------------------------------------------------------------
def _parse_all(sources: dict[str, str], plan: RenamePlan) -> dict[str, _Module]:
    mods = {}
    for path, source in sorted(sources.items()):
        try:
            mods[path] = _Module(path, source)
        except SyntaxError as exc:
            plan.problems.append(
                f"{path} does not parse ({exc.msg}, line {exc.lineno}); fix it first"
            )
    return mods


def _finish(plan: RenamePlan, mods: dict[str, _Module]) -> None:
    """Apply the edits in memory, check they compile, and list mentions left in text."""
    old = plan.word or plan.old_name
    for path, edits in plan.edits.items():
        mod = mods[path]
        for e in edits:
            if mod.text_at(e.line, e.col, len(e.old.encode())) != e.old:
                plan.problems.append(f"{path}:{e.line}: expected {e.old!r} at column {e.col}")
        plan.edits[path] = sorted(set(edits), key=lambda e: (e.line, e.col))
    if plan.problems:
        return
    for path, edits in plan.edits.items():
        new_source = apply_edits(mods[path].source, edits)
        try:
            compile(new_source, path, "exec")
        except SyntaxError as exc:
            plan.problems.append(f"{path} would not compile after the rename: {exc.msg}")
        plan.new_sources[path] = new_source
    for path, mod in mods.items():
        source = plan.new_sources.get(path, mod.source)
        plan.mentions_left += _mentions(path, source, old)


def _mentions(path: str, source: str, name: str) -> list[str]:
    word = re.compile(rf"\b{re.escape(name)}\b")
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING) and word.search(tok.string):
                found.append(f"{path}:{tok.start[0]}: {tok.line.strip()[:120]}")
    except (tokenize.TokenError, SyntaxError):
        pass
    return found
