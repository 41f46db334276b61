"""Helpers for a skill's own tests: run ``run(ctx, args)`` in-process on a temporary workspace.

``local_context`` builds a ``SkillContext`` whose tool calls go straight to a ``ToolHost`` over
``RepoTools(workspace)`` with the same rule as the real runner: a tool missing from the
manifest's ``requires_tools`` is refused. Host errors reach the skill as ``ToolError``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from graph.errors import SheriffError
from skills.config import SkillSettings
from skills.context import SkillContext, ToolError
from skills.errors import ToolRefused, ToolUnavailable
from skills.manifest import SkillManifest, parse_manifest
from skills.tools import LLM, CallInfo, RepoTools, SkillsFacade, ToolHost, TopicSearch


def load_manifest(skill_dir: Path) -> SkillManifest:
    return parse_manifest((skill_dir / "manifest.json").read_text(encoding="utf-8"))


def local_context(
    skill_dir: Path,
    workspace: Path,
    *,
    refs: dict[str, Any] | None = None,
    topics: TopicSearch | None = None,
    skills: SkillsFacade | None = None,
    llm: LLM | None = None,
    settings: SkillSettings | None = None,
    timeout_s: float = 120.0,
) -> SkillContext:
    manifest = load_manifest(skill_dir)
    host = ToolHost(
        RepoTools(workspace, settings or SkillSettings()), topics=topics, skills=skills, llm=llm
    )
    declared = set(manifest.requires_tools)
    call = CallInfo(manifest.skill_id, "local", 0, time.monotonic() + timeout_s)

    def invoke(tool: str, args: dict[str, Any]) -> Any:
        if tool not in declared:
            raise ToolError("refused", f"{tool} is not in requires_tools", tool)
        try:
            return host.call(tool, args, call)
        except ToolRefused as exc:
            raise ToolError("refused", str(exc), tool) from exc
        except ToolUnavailable as exc:
            raise ToolError("unavailable", str(exc), tool) from exc
        except SheriffError as exc:
            raise ToolError("failed", str(exc), tool) from exc

    return SkillContext(
        manifest.skill_id,
        declared,
        invoke,
        refs=refs,
        llm_available=llm is not None,
        reasoning_effort=manifest.default_reasoning_effort,
        timeout_s=timeout_s,
    )
