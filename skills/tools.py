"""The host side of the tools skills call: repo tools confined to a workspace, and dispatch.

``RepoTools`` is the skills' hands (spec §7.3): list, read, write and move files and run tests,
all inside one workspace root. Refused (``ToolRefused``): absolute paths, ``..`` anywhere in a
path, paths that resolve outside the root through a symlink, writes into ``.git``, files over
the size limits, and test commands that are neither a preset nor on the allow-list.

``ToolHost`` validates a call's arguments against its ``TOOL_SPECS`` schema and dispatches it;
the runner consults the skill's ``requires_tools`` before it ever reaches the host.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from skills.config import SkillSettings
from skills.errors import ToolFailed, ToolRefused, ToolUnavailable
from skills.schemas import violations
from skills.toolspec import TOOL_SPECS

log = logging.getLogger(__name__)

IGNORED_PARTS = frozenset({"__pycache__", "node_modules"})
SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


def _ignored(rel: PurePosixPath) -> bool:
    return any(p.startswith(".") or p in IGNORED_PARTS for p in rel.parts)


class RepoTools:
    """File and test tools that never reach outside ``root``."""

    def __init__(self, root: Path, settings: SkillSettings | None = None) -> None:
        self.settings = settings or SkillSettings()
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ToolUnavailable(f"workspace {self.root} is not a directory")

    # -- paths ---------------------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        """The real path of a workspace-relative ``path``; ``ToolRefused`` when it escapes."""
        if not isinstance(path, str) or not path.strip() or "\x00" in path:
            raise ToolRefused(f"invalid path {path!r}")
        rel = PurePosixPath(path.replace("\\", "/"))
        if rel.is_absolute() or path.startswith("~") or re.match(r"^[A-Za-z]:", path):
            raise ToolRefused(
                f"absolute path {path!r} refused: give a path relative to the workspace"
            )
        if ".." in rel.parts:
            raise ToolRefused(f"path {path!r} refused: '..' may not appear in a workspace path")
        real = (self.root / rel).resolve()
        if real != self.root and not real.is_relative_to(self.root):
            raise ToolRefused(f"path {path!r} refused: it resolves outside the workspace ({real})")
        return real

    def relative(self, real: Path) -> str:
        return real.relative_to(self.root).as_posix()

    # -- files ---------------------------------------------------------------------------------
    def list_files(self, pattern: str = "**/*") -> list[str]:
        """Files matching a relative glob, sorted; hidden folders and caches are skipped."""
        rel = PurePosixPath(pattern or "**/*")
        if rel.is_absolute() or ".." in rel.parts:
            raise ToolRefused(f"pattern {pattern!r} refused: must be relative without '..'")
        found: list[str] = []
        for candidate in self.root.glob(str(rel)):
            rel_path = PurePosixPath(candidate.relative_to(self.root).as_posix())
            if _ignored(rel_path) or not candidate.is_file():
                continue
            real = candidate.resolve()
            if real.is_relative_to(self.root):
                found.append(rel_path.as_posix())
        found.sort()
        return found[: self.settings.max_list_files]

    def read_file(self, path: str) -> str:
        real = self.resolve(path)
        if not real.is_file():
            raise ToolFailed(f"no file {path!r} in the workspace")
        size = real.stat().st_size
        if size > self.settings.max_read_bytes:
            raise ToolRefused(
                f"{path!r} is {size} bytes; the read limit is {self.settings.max_read_bytes}"
            )
        try:
            return real.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ToolFailed(f"{path!r} is not UTF-8 text") from exc

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        real = self.resolve(path)
        if ".git" in PurePosixPath(self.relative(real)).parts:
            raise ToolRefused(f"writes into .git are refused ({path!r})")
        data = content.encode("utf-8")
        if len(data) > self.settings.max_write_bytes:
            raise ToolRefused(
                f"content is {len(data)} bytes; the write limit is {self.settings.max_write_bytes}"
            )
        if real.is_dir():
            raise ToolFailed(f"{path!r} is a directory")
        created = not real.exists()
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=".sheriff-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, real)
        return {"path": self.relative(real), "bytes": len(data), "created": created}

    def move_file(self, src: str, dst: str) -> dict[str, Any]:
        real_src, real_dst = self.resolve(src), self.resolve(dst)
        if not real_src.is_file():
            raise ToolFailed(f"no file {src!r} in the workspace")
        if real_dst.exists():
            raise ToolFailed(f"{dst!r} already exists; refusing to overwrite it")
        if ".git" in PurePosixPath(self.relative(real_dst)).parts:
            raise ToolRefused(f"moves into .git are refused ({dst!r})")
        real_dst.parent.mkdir(parents=True, exist_ok=True)
        real_src.rename(real_dst)
        return {"src": self.relative(real_src), "dst": self.relative(real_dst)}

    # -- tests ---------------------------------------------------------------------------------
    def test_argv(self, command: str | None, preset: str | None) -> list[str]:
        """The argv to run for a preset or an allow-listed command; ``ToolRefused`` otherwise."""
        if (command is None) == (preset is None):
            raise ToolRefused("give exactly one of command or preset")
        if preset is not None:
            if preset not in self.settings.test_presets:
                allowed = ", ".join(sorted(self.settings.test_presets))
                raise ToolRefused(f"unknown test preset {preset!r}; presets: {allowed}")
            return [
                sys.executable if a == "{python}" else a for a in self.settings.test_presets[preset]
            ]
        assert command is not None
        try:
            argv = _normalise(shlex.split(command))
        except ValueError as exc:
            raise ToolRefused(f"cannot parse command {command!r}: {exc}") from exc
        allowed_argvs = [_normalise(shlex.split(c)) for c in self.settings.test_commands]
        if argv not in allowed_argvs:
            raise ToolRefused(
                f"command {command!r} is not allow-listed; allowed: {self.settings.test_commands} "
                f"or presets {sorted(self.settings.test_presets)}"
            )
        return argv

    def run_tests(
        self, command: str | None = None, preset: str | None = None, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Run tests in the workspace; the whole process group is killed at the timeout."""
        argv = self.test_argv(command, preset)
        limit = min(timeout_s or self.settings.test_timeout_s, self.settings.test_timeout_s)
        env = {k: v for k, v in os.environ.items() if not SECRET_ENV.search(k)}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        started = time.monotonic()
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(
                argv, cwd=self.root, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True,
            )  # fmt: skip
            timed_out = False
            try:
                proc.wait(timeout=max(limit, 0.1))
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(proc)
            out.seek(0)
            text = out.read().decode("utf-8", errors="replace")
        tail = text[-self.settings.output_tail_chars :]
        return {
            "command": argv,
            "exit_code": proc.returncode,
            "passed": proc.returncode == 0 and not timed_out,
            "timed_out": timed_out,
            "duration_s": round(time.monotonic() - started, 3),
            "output_tail": tail,
        }


def _normalise(argv: list[str]) -> list[str]:
    """``pytest ...`` and ``python ...`` run with this interpreter (where pytest is installed)."""
    if argv and argv[0] == "pytest":
        return [sys.executable, "-m", "pytest", *argv[1:]]
    if argv and argv[0] in ("python", "python3"):
        return [sys.executable, *argv[1:]]
    return argv


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL a process started with ``start_new_session`` and everything it started."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


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


class ToolHost:
    """Validates tool arguments and dispatches to the implementations this host has."""

    def __init__(
        self,
        repo: RepoTools,
        *,
        topics: TopicSearch | None = None,
        skills: SkillsFacade | None = None,
        llm: LLM | None = None,
    ) -> None:
        self.repo = repo
        self.topics = topics
        self.skills = skills
        self.llm = llm

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
        r = self.repo
        handlers: dict[str, Callable[[dict[str, Any], CallInfo], Any]] = {
            "repo.list_files": lambda a, c: r.list_files(a.get("pattern", "**/*")),
            "repo.read_file": lambda a, c: r.read_file(a["path"]),
            "repo.write_file": lambda a, c: r.write_file(a["path"], a["content"]),
            "repo.move_file": lambda a, c: r.move_file(a["src"], a["dst"]),
            "repo.run_tests": lambda a, c: r.run_tests(
                a.get("command"), a.get("preset"), timeout_s=max(c.remaining() - 1.0, 1.0)
            ),
        }
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
