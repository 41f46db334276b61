"""The layers of docs/architecture.md, checked on the source: no upward import, no circle.

Every ``import`` of the product's packages is read with ``ast`` (including imports under
``TYPE_CHECKING`` and inside functions: a deferred import is still a dependency). A package may
import its own modules and the packages of lower layers only; packages of one layer do not import
each other; and no two modules import each other, directly or round a longer circle. The same
scan keeps the rooms small: no product module over 500 lines, no function over 60 (decorators
and nested functions counted).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]

# Lower number = lower layer. A package may import packages of a strictly lower layer.
# The foundation: the one error hierarchy and the clock, importable from every layer (they
# import nothing of ours themselves, checked below).
FOUNDATION = frozenset({"graph.errors", "graph.clock"})
LAYERS: dict[str, int] = {
    "text": 0,
    "cypher": 0,
    "graph": 1,
    "retrieval": 2,
    "skills": 2,
    "sleepwake": 3,
    "service": 4,
    "agent": 5,
    "api": 6,
}


def _modules() -> Iterator[tuple[str, Path]]:
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if "tests" in rel.parts:  # a skill's own tests are not product code
                continue
            parts = rel.with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, path


def _imports(name: str, path: Path) -> set[str]:
    """The product modules ``name`` imports, absolute, resolved to module or package names."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in LAYERS}


def _graph() -> nx.DiGraph:
    modules = dict(_modules())
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target in _imports(name, path):
            while target and target not in modules:  # "pkg.mod.Class" -> "pkg.mod"
                target = target.rpartition(".")[0]
            if target and target != name:
                graph.add_edge(name, target)
    return graph


GRAPH = _graph()


def test_the_scan_sees_the_product() -> None:
    assert GRAPH.number_of_nodes() > 100
    assert GRAPH.has_edge("retrieval.search", "graph.topics")  # a known downward import


def test_no_import_runs_upward_or_sideways() -> None:
    bad = []
    for source, target in GRAPH.edges:
        if target in FOUNDATION:
            continue
        src, dst = source.split(".")[0], target.split(".")[0]
        if src != dst and LAYERS[dst] >= LAYERS[src]:
            bad.append(f"{source} -> {target} ({src} layer {LAYERS[src]}, {dst} {LAYERS[dst]})")
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(bad))


def test_the_foundation_imports_nothing_of_ours() -> None:
    outside = {m: sorted(set(GRAPH.successors(m)) - FOUNDATION) for m in FOUNDATION}
    assert outside == {m: [] for m in FOUNDATION}


def test_no_circle_of_modules() -> None:
    # A package's __init__ importing its own modules is how a package exports names: leave out
    # edges into an __init__ from inside its own package, which every such export would close.
    graph = GRAPH.copy()
    graph.remove_edges_from(
        [(s, t) for s, t in GRAPH.edges if s.startswith(t + ".") and t in LAYERS]
    )
    circles = [c for c in nx.simple_cycles(graph) if len(c) > 1]
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles[:20])


@pytest.mark.parametrize("package", ["text", "retrieval", "sleepwake"])
def test_pure_layers_import_no_driver_where_they_should_not(package: str) -> None:
    """text/ imports neither Neo4j nor a model; nothing above graph/ touches the driver."""
    banned = {"neo4j"} if package != "text" else {"neo4j", "sentence_transformers", "torch"}
    offenders = []
    for name, path in _modules():
        if name.split(".")[0] != package:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{name} imports {m}" for m in mods if m.split(".")[0] in banned]
    assert not offenders, "\n".join(offenders)


# -- sizes: rooms a reader takes in at once (issue #29) ------------------------------------------
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def _long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every function or method of ``source``, nested ones too,
    longer than ``limit`` lines, counted from its first decorator to its last line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - start + 1
            if lines > limit:
                found.append((node.name, node.lineno, lines))
    return found


def test_the_length_check_sees_nested_functions_and_decorators() -> None:
    inner = "\n".join(f"        x{i} = {i}" for i in range(58))
    source = f"@decorated\ndef outer():\n    def inner():\n{inner}\n    return inner\n"
    assert _long_functions(source) == [("outer", 2, 62)]  # inner: 59 lines, outer: 62
    assert _long_functions(source, limit=58) == [("outer", 2, 62), ("inner", 3, 59)]


def test_no_product_module_is_longer_than_the_limit() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for _, path in _modules()
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split by job):\n" + "\n".join(long)


def test_no_product_function_is_longer_than_the_limit() -> None:
    long = [
        f"{path.relative_to(ROOT)}:{line} {name}: {n} lines"
        for _, path in _modules()
        for name, line, n in _long_functions(path.read_text())
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)
