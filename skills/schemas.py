"""JSON Schema checks (Draft 2020-12) with every violation spelled out."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError


def _where(path: Any) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in path]
    return "$" + "".join(parts)


def violations(schema: dict[str, Any], instance: Any) -> list[str]:
    """Every way ``instance`` violates ``schema``, as ``"$.path: message"``, in path order."""
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.path])
    return [f"{_where(e.absolute_path)}: {e.message}" for e in errors]


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None when it is."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"{_where(exc.absolute_path)}: {exc.message}"
    return None
