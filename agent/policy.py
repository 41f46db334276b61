"""Model selection and the reasoning-effort dial (spec §7.1, §7.4). Pure: no I/O.

Higher effort for sleep compaction and complex refactors, lower for quick edits, medium
otherwise. The words are matched as whole words, case-insensitively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Effort = Literal["minimal", "low", "medium", "high"]
TaskKind = Literal["chat", "sleep_compaction"]

_HIGH = re.compile(
    r"\b(refactor\w*|re-?architect\w*|redesign\w*|migrat\w+|rewrite|overhaul|"
    r"debug\w*|root cause|race condition|deadlock|performance|architecture)\b",
    re.IGNORECASE,
)
_LOW = re.compile(
    r"\b(typo|rename|quick(ly)?|small (fix|change|edit|tweak)|one-liner|tweak|"
    r"bump( the)? version|fix (the )?(indentation|formatting|spelling))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ModelPolicy:
    model: str = "gpt-5.2-codex"
    fallback_model: str | None = "gpt-5.1-codex"
    default_effort: Effort = "medium"

    def effort_for(self, text: str, kind: TaskKind = "chat") -> Effort:
        """The reasoning effort for a request: ``high`` for sleep compaction and refactors,
        ``low`` for quick edits (unless the text also asks for a refactor)."""
        if kind == "sleep_compaction" or _HIGH.search(text):
            return "high"
        if _LOW.search(text):
            return "low"
        return self.default_effort
