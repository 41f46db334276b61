"""The host side of the tools skills call: repo tools confined to a workspace, and dispatch.

``RepoTools`` is the skills' hands (spec §7.3): list, read, write and move files and run tests,
all inside one workspace root. A path is checked as text first (``skills/paths.py``: absolute,
``~``, ``..``, NUL, control characters, over-long names are refused before anything is
touched), then resolved: it must stay inside the root after following symlinks, and it may not
enter a read-only folder (skill packages) or a hidden one (the state folder) that a local
workspace happens to contain. The file operations themselves walk from the root's descriptor
with ``O_NOFOLLOW`` and refuse hard-linked files (``skills/safefs.py``). Tests run through
``skills/testrun.py``. Refusals are ``ToolRefused`` (HTTP 403), malformed paths ``PathInvalid``
(422), a tool that ran and failed ``ToolFailed`` (422); messages name workspace-relative paths
only.

``ToolHost`` validates a call's arguments against its ``TOOL_SPECS`` schema and dispatches it;
the runner consults the skill's ``requires_tools`` before it ever reaches the host.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Protocol

from graph.errors import ValidationFailed
from skills import safefs
from skills.config import SkillSettings
from skills.errors import ToolFailed, ToolRefused, ToolUnavailable
from skills.paths import ListPattern, display, relative_parts, show
from skills.schemas import violations
from skills.testrun import Cancelled, RunMode, TestRun, kill_group, scrubbed_env, test_argv
from skills.toolspec import TOOL_SPECS

__all__ = ["CallInfo", "RepoTools", "ToolHost", "kill_group", "scrubbed_env"]

log = logging.getLogger(__name__)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


class RepoTools:
    """File and test tools that never reach outside ``root``.

    ``readonly`` folders (default: the skill folders) may be read but not written or moved
    into; ``hidden`` folders (e.g. the state folder) are neither read nor listed; a sandboxed
    test run refuses to start if it could reach ``hidden`` or ``keep_out`` (e.g. the other
    tenants' workspaces). ``tests`` is how ``run_tests`` runs (None refuses it); ``quota``
    caps the workspace's size.
    """

    def __init__(
        self,
        root: Path,
        settings: SkillSettings | None = None,
        *,
        tests: RunMode | None = "local",
        readonly: Sequence[Path] | None = None,
        hidden: Sequence[Path] = (),
        keep_out: Sequence[Path] = (),
        quota: bool = False,
    ) -> None:
        self.settings = settings or SkillSettings()
        self.root = _real(Path(root))
        if not self.root.is_dir():
            raise ToolUnavailable(f"workspace {self.root} is not a directory")
        dirs = self.settings.skill_dirs() if readonly is None else readonly
        self.readonly = [_real(d) for d in dirs]
        # a hidden folder the workspace itself is in is the operator's deliberate choice
        self.hidden = [h for h in map(_real, hidden) if not self.root.is_relative_to(h)]
        self.keep_out = [*self.hidden, *(_real(p) for p in keep_out)]
        for skill_dir in self.readonly:
            if self.root.is_relative_to(skill_dir):
                raise ToolUnavailable("a workspace may not be inside a skill folder")
        self.tests = tests
        self.quota = safefs.Quota(self.settings) if quota else None

    # -- paths ---------------------------------------------------------------------------------
    def target(self, path: str) -> tuple[str, ...]:
        """The workspace-relative names of ``path`` after resolving symlinks; refuses escapes."""
        parts = relative_parts(path)
        real = _real(self.root.joinpath(*parts))
        if not real.is_relative_to(self.root):
            raise ToolRefused(f"path {show(path)} refused: it resolves outside the workspace")
        if any(real.is_relative_to(h) for h in self.hidden):
            raise ToolRefused(f"path {show(path)} refused: it is not part of the workspace")
        names = real.relative_to(self.root).parts
        if not names:
            raise ToolFailed(f"path {show(path)} is the workspace folder, not a file")
        return names

    def writable(self, path: str, verb: str = "writes") -> tuple[str, ...]:
        """``target`` plus the write rules: not into ``.git``, not into a skill package."""
        names = self.target(path)
        if ".git" in names:
            raise ToolRefused(f"{verb} into .git are refused ({show(path)})")
        real = self.root.joinpath(*names)
        if any(real.is_relative_to(d) for d in self.readonly):
            raise ToolRefused(f"{verb} into skill packages are refused: they are read-only")
        return names

    def resolve(self, path: str) -> Path:
        """The real path of a workspace-relative ``path``; ``ToolRefused`` when it escapes."""
        return self.root.joinpath(*self.target(path))

    def relative(self, real: Path) -> str:
        return real.relative_to(self.root).as_posix()

    # -- files ---------------------------------------------------------------------------------
    def listing(self, pattern: str | None = None) -> safefs.Listing:
        """Files matching a bounded glob, sorted, with ``truncated`` when a limit was hit."""
        parsed = ListPattern.parse(pattern)
        s = self.settings
        listing = safefs.walk(
            self.root,
            parsed,
            safefs.WalkLimits(s.max_list_files, s.max_list_entries, s.max_list_depth),
        )
        if self.hidden:
            listing.files = [f for f in listing.files if not self._is_hidden(f)]
        return listing

    def _is_hidden(self, rel: str) -> bool:
        real = _real(self.root / rel)
        return any(real.is_relative_to(h) for h in self.hidden)

    def list_files(self, pattern: str | None = "**/*") -> list[str]:
        """Files matching a relative glob, sorted; hidden folders and caches are skipped."""
        return self.listing(pattern).files

    def read_file(self, path: str) -> str:
        names = self.target(path)
        data = safefs.read_bytes(self.root, names, self.settings.max_read_bytes)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolFailed(f"{display(names)!r} is not UTF-8 text") from exc

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        names = self.writable(path)
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate from JSON's "\ud800"
            raise ValidationFailed(
                f"content is not valid Unicode text (a lone surrogate at character {exc.start})"
            ) from exc
        if len(data) > self.settings.max_write_bytes:
            raise ToolRefused(
                f"content is {len(data)} bytes; the write limit is {self.settings.max_write_bytes}"
            )
        if self.quota is not None:
            self.quota.check(self.root, names, len(data))
        created = safefs.write_atomic(self.root, names, data)
        if self.quota is not None:
            self.quota.wrote(self.root, names, len(data), created)
        return {"path": display(names), "bytes": len(data), "created": created}

    def move_file(self, src: str, dst: str) -> dict[str, Any]:
        src_names, dst_names = self.writable(src, "moves"), self.writable(dst, "moves")
        safefs.move(self.root, src_names, dst_names)
        return {"src": display(src_names), "dst": display(dst_names)}

    # -- tests ---------------------------------------------------------------------------------
    def test_argv(self, command: str | None, preset: str | None) -> list[str]:
        """The argv to run for a preset or an allow-listed command; ``ToolRefused`` otherwise."""
        return test_argv(self.settings, command, preset)

    def run_tests(
        self,
        command: str | None = None,
        preset: str | None = None,
        timeout_s: float | None = None,
        cancelled: Cancelled | None = None,
    ) -> dict[str, Any]:
        """Run tests in the workspace; the whole process group is killed at the timeout."""
        if self.tests is None:
            raise ToolRefused(
                "repo.run_tests is turned off for API callers on this server (it runs code "
                "written into the workspace); the operator may enable it with "
                "SHERIFF_SKILLS_TENANT_RUN_TESTS=sandboxed"
            )
        runner = TestRun(self.root, self.settings, self.tests, self.keep_out)
        try:
            return runner.run(command, preset, timeout_s, cancelled)
        finally:
            if self.quota is not None:
                self.quota.forget()  # the run may have written anything


# -- dispatch ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CallInfo:
    """Where a tool call comes from: the running skill, its run, nesting depth and deadline."""

    skill_id: str
    run_id: str
    depth: int
    deadline: float  # time.monotonic() value

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


class TopicSearch(Protocol):
    def __call__(self, query: str, k: int) -> list[dict[str, Any]]: ...


class LLM(Protocol):
    def complete(self, prompt: str, instructions: str, effort: str) -> str: ...


class SkillsFacade(Protocol):
    def search(self, query: str, k: int) -> list[dict[str, Any]]: ...
    def validate(self, skill_id: str, args: dict[str, Any]) -> list[str]: ...
    def run_nested(self, skill_id: str, args: dict[str, Any], call: CallInfo) -> dict[str, Any]: ...


@dataclass(eq=False)
class ToolHost:
    """Validates tool arguments and dispatches to the implementations this host has.

    ``repo`` None means no repo tools (turned off for API callers): their calls are
    ``ToolUnavailable``, which a skill sees as ``kind == "unavailable"``."""

    repo: RepoTools | None
    _: KW_ONLY
    topics: TopicSearch | None = None
    skills: SkillsFacade | None = None
    llm: LLM | None = None

    @property
    def llm_available(self) -> bool:
        return self.llm is not None

    def call(self, name: str, args: dict[str, Any], call: CallInfo) -> Any:
        spec = TOOL_SPECS.get(name)
        if spec is None:
            raise ToolRefused(f"unknown tool {name!r}")
        problems = violations(spec.schema, args)
        if problems:
            raise ToolRefused(f"invalid arguments for {name}: " + "; ".join(problems))
        handler = self._handlers().get(name)
        if handler is None:
            raise ToolUnavailable(f"tool {name} is not available on this host")
        return handler(args, call)

    def _handlers(self) -> dict[str, Callable[[dict[str, Any], CallInfo], Any]]:
        handlers: dict[str, Callable[[dict[str, Any], CallInfo], Any]] = {}
        if self.repo is not None:  # None: the operator turned the repo tools off
            r = self.repo
            handlers["repo.list_files"] = lambda a, c: r.list_files(a.get("pattern", "**/*"))
            handlers["repo.read_file"] = lambda a, c: r.read_file(a["path"])
            handlers["repo.write_file"] = lambda a, c: r.write_file(a["path"], a["content"])
            handlers["repo.move_file"] = lambda a, c: r.move_file(a["src"], a["dst"])
            handlers["repo.run_tests"] = lambda a, c: r.run_tests(
                a.get("command"), a.get("preset"), timeout_s=max(c.remaining() - 1.0, 1.0)
            )
        if self.topics is not None:
            topics = self.topics
            handlers["topics.search"] = lambda a, c: topics(a["query"], int(a.get("k", 5)))
        if self.skills is not None:
            sk = self.skills
            handlers["skills.search"] = lambda a, c: sk.search(a["query"], int(a.get("k", 3)))
            handlers["skills.validate"] = lambda a, c: sk.validate(a["skill_id"], a["args"])
            handlers["skills.run"] = lambda a, c: sk.run_nested(a["skill_id"], a["args"], c)
        if self.llm is not None:
            llm = self.llm
            handlers["llm.complete"] = lambda a, c: llm.complete(
                a["prompt"], a.get("instructions", ""), a.get("effort", "medium")
            )
        return handlers
