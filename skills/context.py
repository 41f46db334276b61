"""What a skill's ``run(ctx, args)`` receives: ``SkillContext``, its only door to the host.

A skill calls host tools through the context, by name or through a group attribute::

    text = ctx.repo.read_file("pkg/parser.py")       # same as ctx.call("repo.read_file", ...)
    ctx.repo.write_file("docs/parser.md", markdown)
    hits = ctx.topics.search("KeyError in load_config", k=5)

Only the tools listed in the manifest's ``requires_tools`` are honoured; calling any other stops
the run with outcome ``refused``. Tool errors reach the skill as ``ToolError`` (with ``kind``
``refused``, ``unavailable`` or ``failed``) and may be caught. This module is imported inside the
skill's process, so it stays free of pydantic, Neo4j and the embedding model.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from skills.toolspec import TOOL_SPECS, bind_args

Invoke = Callable[[str, dict[str, Any]], Any]


class ToolError(Exception):
    """A tool call that did not succeed; ``kind`` is refused | unavailable | failed."""

    def __init__(self, kind: str, message: str, tool: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.tool = tool


class _ToolGroup:
    """``ctx.repo``, ``ctx.topics``...: attribute access builds ``ctx.call("group.name", ...)``."""

    def __init__(self, ctx: SkillContext, group: str) -> None:
        self._ctx = ctx
        self._group = group

    def __getattr__(self, name: str) -> Callable[..., Any]:
        tool = f"{self._group}.{name}"
        if tool not in TOOL_SPECS:
            raise AttributeError(f"no tool {tool}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._ctx.call(tool, *args, **kwargs)

        return call


class SkillContext:
    """Tools (declared ones only), context refs, LLM availability and the time left."""

    def __init__(
        self,
        skill_id: str,
        declared: Iterable[str],
        invoke: Invoke,
        *,
        refs: dict[str, Any] | None = None,
        llm_available: bool = False,
        reasoning_effort: str = "medium",
        timeout_s: float = 60.0,
    ) -> None:
        self.skill_id = skill_id
        self.declared = frozenset(declared)
        self.refs: dict[str, Any] = dict(refs or {})
        self.llm_available = llm_available
        self.reasoning_effort = reasoning_effort
        self._invoke = invoke
        self._deadline = time.monotonic() + timeout_s
        self.topics_used: list[str] = []
        self.repo = _ToolGroup(self, "repo")
        self.topics = _ToolGroup(self, "topics")
        self.skills = _ToolGroup(self, "skills")
        self.llm = _ToolGroup(self, "llm")

    def call(self, tool: str, *args: Any, **kwargs: Any) -> Any:
        """Call host tool ``tool``; raises ``ToolError`` when it is refused or fails."""
        if tool not in TOOL_SPECS:
            raise ToolError("refused", f"unknown tool {tool!r}", tool)
        try:
            bound = bind_args(tool, args, kwargs)
        except TypeError as exc:
            raise ToolError("refused", str(exc), tool) from exc
        return self._invoke(tool, bound)

    def has_tool(self, tool: str) -> bool:
        return tool in self.declared

    def use_topics(self, topic_ids: Iterable[str]) -> None:
        """Mark topics as used by this run (a successful run adds utility to them)."""
        for topic_id in topic_ids:
            if topic_id and topic_id not in self.topics_used:
                self.topics_used.append(topic_id)

    def remaining_s(self) -> float:
        return self._deadline - time.monotonic()

    def log(self, message: str) -> None:
        """A line in the run's log (kept with the result, not sent to the model)."""
        print(f"[{self.skill_id}] {message}", file=sys.stderr, flush=True)
