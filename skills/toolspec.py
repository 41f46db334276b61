"""The closed set of host tools a skill may declare in ``requires_tools`` (spec §7.3).

Pure data, imported by the manifest validator, the skill-side context (to map positional
arguments onto names) and the host (to validate every call's arguments). Each entry is also a
ready OpenAI function-calling ``parameters`` schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[str, ...]  # parameter names, in positional order
    schema: dict[str, Any]  # JSON Schema of the keyword arguments


def _spec(name: str, description: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name, description, tuple(props), schema)


_STR = {"type": "string"}
TOOL_SPECS: dict[str, ToolSpec] = {
    s.name: s
    for s in (
        _spec(
            "repo.list_files",
            "Workspace files matching a glob pattern (relative, e.g. '**/*.py'), sorted.",
            {"pattern": {"type": "string", "default": "**/*"}},
            [],
        ),
        _spec("repo.read_file", "The text of one workspace file.", {"path": _STR}, ["path"]),
        _spec(
            "repo.write_file",
            "Create or replace one workspace file with text content.",
            {"path": _STR, "content": _STR},
            ["path", "content"],
        ),
        _spec(
            "repo.move_file",
            "Rename a workspace file (both paths inside the workspace; refuses to overwrite).",
            {"src": _STR, "dst": _STR},
            ["src", "dst"],
        ),
        _spec(
            "repo.run_tests",
            "Run an allow-listed test preset or command in the workspace; exit code and output tail.",
            {"command": _STR, "preset": _STR},
            [],
        ),
        _spec(
            "topics.search",
            "Topics from memory nearest to a query (vector and full-text).",
            {"query": _STR, "k": {"type": "integer", "minimum": 1, "maximum": 25, "default": 5}},
            ["query"],
        ),
        _spec(
            "skills.search",
            "Skills whose manifest matches a query (tags and embeddings).",
            {"query": _STR, "k": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3}},
            ["query"],
        ),
        _spec(
            "skills.validate",
            "Check args against a skill's inputs_schema; returns the list of violations.",
            {"skill_id": _STR, "args": {"type": "object"}},
            ["skill_id", "args"],
        ),
        _spec(
            "skills.run",
            "Run another skill with args; returns its SkillResult.",
            {"skill_id": _STR, "args": {"type": "object"}},
            ["skill_id", "args"],
        ),
        _spec(
            "llm.complete",
            "Ask the configured LLM (Responses API); unavailable when no key is configured.",
            {
                "prompt": _STR,
                "instructions": {"type": "string", "default": ""},
                "effort": {"enum": ["minimal", "low", "medium", "high"], "default": "medium"},
            },
            ["prompt"],
        ),
    )
}


def known_tools() -> list[str]:
    return sorted(TOOL_SPECS)


def bind_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Map positional ``args`` onto the tool's parameter names; refuse surplus or duplicates."""
    spec = TOOL_SPECS.get(name)
    if spec is None:
        raise KeyError(name)
    if len(args) > len(spec.params):
        raise TypeError(f"{name} takes at most {len(spec.params)} positional arguments")
    bound = dict(zip(spec.params, args, strict=False))
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"{name} got two values for {key!r}")
        bound[key] = value
    return bound
