"""Loads the Cypher text of ``cypher/queries/*.cypher`` and ``cypher/schema/*.cypher``.

Queries are parameterised; user data never enters the text. The only substitution is a
relationship type taken from the closed ``EdgeType`` enum (Cypher cannot parameterise types).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from graph.models import EdgeType


@cache
def query(name: str) -> str:
    """The text of ``cypher/queries/<name>.cypher``."""
    return (resources.files("cypher") / "queries" / f"{name}.cypher").read_text(encoding="utf-8")


def query_for_edge(name: str, edge: EdgeType) -> str:
    """A query with ``{rel_type}`` replaced by a member of the closed edge enum."""
    if not isinstance(edge, EdgeType):  # defensive: only enum members are ever formatted in
        raise TypeError(f"edge must be an EdgeType, got {type(edge).__name__}")
    return query(name).replace("{rel_type}", edge.value)


def schema_files() -> list[tuple[str, str]]:
    """``(migration_id, text)`` for every ``cypher/schema/NNN_*.cypher``, in order."""
    folder = resources.files("cypher") / "schema"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".cypher"))
    return [(n.removesuffix(".cypher"), (folder / n).read_text(encoding="utf-8")) for n in names]


def split_statements(text: str) -> list[str]:
    """Split a schema file into statements: ``//`` comment lines dropped, ``;`` terminates."""
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("//")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
