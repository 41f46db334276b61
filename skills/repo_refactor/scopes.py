"""Python scopes for syntax-aware renames: which nodes open a scope, whether a scope binds a
name, and the references to a scope's own binding of a name (nested scopes that bind it
themselves are left out). Pure: ASTs in, nodes out."""

from __future__ import annotations

import ast
from collections.abc import Iterator

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


def binds(scope: ast.AST, name: str) -> bool:
    """Does ``scope`` bind ``name`` locally (parameter, assignment, def, import, loop target)?"""
    declared_global = False
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        a = scope.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        if any(p is not None and p.arg == name for p in params):
            return True
    body: list[ast.AST]
    if isinstance(scope, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        body = list(scope.generators)
    elif isinstance(scope, ast.Lambda):
        body = [scope.body]
    else:
        body = list(getattr(scope, "body", []))
    for node in _walk_scope(body):
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            declared_global = True
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return not declared_global
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
    return False


def _walk_scope(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """Nodes of one scope: nested scopes are yielded but not entered."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def refs_in_scope(root: ast.AST, name: str) -> Iterator[ast.Name]:
    """``Name`` nodes under ``root`` (a module or a function) that refer to ``root``'s own
    binding of ``name``: nested scopes that bind ``name`` themselves are left out."""

    def visit(node: ast.AST, stack: list[tuple[ast.AST, bool]]) -> Iterator[ast.Name]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and child.id == name and not _shadowed(stack):
                yield child
            if isinstance(child, SCOPES):
                for expr in _evaluated_outside(child):
                    yield from visit(_Wrapper(expr), stack)
                inner: list[tuple[ast.AST, bool]] = [(child, binds(child, name))]
                for part in _scope_body(child):
                    yield from visit(_Wrapper(part), stack + inner)
            else:
                yield from visit(child, stack)

    for part in _scope_body(root):
        yield from visit(_Wrapper(part), [])


def _evaluated_outside(scope: ast.AST) -> list[ast.expr]:
    """Decorators, defaults, annotations and bases run in the enclosing scope."""
    outer: list[ast.expr] = []
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        outer += scope.decorator_list
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        a = scope.args
        outer += [*a.defaults, *[d for d in a.kw_defaults if d is not None]]
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        a = scope.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        outer += [p.annotation for p in params if p is not None and p.annotation is not None]
        outer += [scope.returns] if scope.returns is not None else []
    if isinstance(scope, ast.ClassDef):
        outer += [*scope.bases, *[k.value for k in scope.keywords]]
    return outer


class _Wrapper(ast.AST):
    """Lets ``visit`` look at a single expression as a child (so it is checked too)."""

    _fields = ("node",)

    def __init__(self, node: ast.AST) -> None:
        self.node = node


def _scope_body(scope: ast.AST) -> list[ast.AST]:
    if isinstance(scope, ast.Lambda):
        return [scope.body]
    if isinstance(scope, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        return [*scope.generators, scope.elt]
    if isinstance(scope, ast.DictComp):
        return [*scope.generators, scope.key, scope.value]
    return list(getattr(scope, "body", []))


def _shadowed(stack: list[tuple[ast.AST, bool]]) -> bool:
    for depth, (scope, binds) in enumerate(reversed(stack)):
        if isinstance(scope, ast.ClassDef) and depth > 0:
            continue  # a class body's names are not visible in the functions inside it
        if binds:
            return True
    return False
