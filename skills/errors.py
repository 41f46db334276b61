"""Exceptions of the skills framework.

Hierarchy (all under the product's root ``SheriffError``)::

    SkillError
    ├── ManifestInvalid     a manifest.json that does not parse or validate (reported by the loader)
    ├── SkillNotFound       no skill with that id was discovered (also a ``NotFound``)
    ├── SkillArgsInvalid    args violate the skill's inputs_schema; lists every violation
    │                       (also a ``ValidationFailed``)
    ├── ToolRefused         a tool call that is not allowed: undeclared tool, path outside the
    │   │                   workspace, command not allow-listed, size limit, recursion limit
    │   └── PathInvalid     a path or pattern that is malformed (too long, control characters,
    │                       '**' inside a name...): also a ``ValidationFailed``, so HTTP 422
    ├── ToolUnavailable     a declared tool that this host cannot provide now (no LLM, no memory)
    ├── ToolFailed          a tool ran and failed (e.g. a file that does not exist)
    └── WorkspaceInvalid    the operator's workspace configuration is unsafe (checked at start-up)
"""

from __future__ import annotations

from graph.errors import NotFound, SheriffError, ValidationFailed


class SkillError(SheriffError):
    """Root of the skills framework's errors."""


class ManifestInvalid(SkillError):
    """A skill's manifest.json cannot be used; the message names the file and every problem."""


class SkillNotFound(SkillError, NotFound):
    """No skill with this id is registered."""


class SkillArgsInvalid(SkillError, ValidationFailed):
    """Arguments refused before the skill ran; ``violations`` lists each JSON Schema error."""

    def __init__(self, skill_id: str, violations: list[str]) -> None:
        self.skill_id = skill_id
        self.violations = violations
        super().__init__(f"invalid args for skill {skill_id!r}: " + "; ".join(violations))


class ToolRefused(SkillError):
    """A tool call that the policy does not allow."""


class PathInvalid(ToolRefused, ValidationFailed):
    """A workspace path or list pattern that is malformed; the message says what is wrong."""


class ToolUnavailable(SkillError):
    """A tool that is declared but not configured on this host."""


class ToolFailed(SkillError):
    """A tool that ran and failed."""


class WorkspaceInvalid(SkillError):
    """A workspace root that overlaps the code, the skill folders or the state folder."""
