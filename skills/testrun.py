"""``repo.run_tests``: an allow-listed test command in the workspace, bounded in time and reach.

A run is a preset (``pytest``, ``compileall``) or a command equal, after ``shlex`` splitting, to
one in ``test_commands``; nothing goes through a shell. It runs with the workspace as its
working directory, in its own process group. The group is killed (SIGKILL) at the timeout, when
the caller goes away (``cancelled``), and after the command exits (so nothing it started
lingers). What a run may reach depends on its ``mode``:

- ``local`` (a local operator's ``--workspace``): the server's environment without secrets
  (names containing KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL, and every ``NEO4J_``,
  ``SHERIFF_``, ``OPENAI_`` ... variable);
- ``unsandboxed`` (a tenant, operator opted in): a minimal environment (``PATH``, ``HOME`` and
  ``TMPDIR`` in a private temporary folder, ``LANG``), as the server's user;
- ``sandboxed`` (a tenant): the same, inside Landlock (``skills/sandbox.py``): only Python,
  the system libraries, the workspace and the private folder are reachable; no TCP at all.

Output and the reported command speak of ``.`` and ``<python>``, never of host paths.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from skills import sandbox
from skills.config import SkillSettings
from skills.errors import ToolRefused, ToolUnavailable
from skills.paths import HostPaths, show
from skills.workspace import CODE_ROOT

RunMode = Literal["local", "unsandboxed", "sandboxed"]
Cancelled = Callable[[], bool]
SANDBOX_SCRIPT = Path(sandbox.__file__).resolve()
POLL_S = 0.05
ASK_EVERY = 10  # polls between two "has the caller gone?" questions (0.5 s)
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/dev/urandom", "/dev/zero",
               "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd",
               "/etc/group")  # fmt: skip


def _python_dirs() -> list[str]:
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found.add(str(Path(os.path.realpath(sys.executable)).parent))
    return sorted({os.path.realpath(p) for p in found})


def host_paths(root: Path, extra: dict[str, str] | None = None) -> HostPaths:
    """Labels for the host paths a caller could see in output: workspace, Python, the code."""
    labels = {str(root): ".", os.path.realpath(root): ".", str(CODE_ROOT): "<sheriff>"}
    for path in (sys.executable, os.path.realpath(sys.executable)):
        labels[path] = "python"
    for path in [sys.prefix, sys.base_prefix, *_python_dirs()]:
        labels[path] = "<python>"
    labels.update(extra or {})
    return HostPaths(labels)


def normalise(argv: list[str]) -> list[str]:
    """``pytest ...`` and ``python ...`` run with this interpreter (where pytest is installed)."""
    if argv and argv[0] == "pytest":
        return [sys.executable, "-m", "pytest", *argv[1:]]
    if argv and argv[0] in ("python", "python3"):
        return [sys.executable, *argv[1:]]
    return argv


def test_argv(settings: SkillSettings, command: str | None, preset: str | None) -> list[str]:
    """The argv to run for a preset or an allow-listed command; ``ToolRefused`` otherwise."""
    if (command is None) == (preset is None):
        raise ToolRefused("give exactly one of command or preset")
    if preset is not None:
        if preset not in settings.test_presets:
            allowed = ", ".join(sorted(settings.test_presets))
            raise ToolRefused(f"unknown test preset {show(preset)}; presets: {allowed}")
        return [sys.executable if a == "{python}" else a for a in settings.test_presets[preset]]
    assert command is not None
    try:
        argv = normalise(shlex.split(command))
    except ValueError as exc:
        raise ToolRefused(f"cannot parse command {show(command)}: {exc}") from exc
    if argv not in [normalise(shlex.split(c)) for c in settings.test_commands]:
        raise ToolRefused(
            f"command {show(command)} is not allow-listed; allowed: {settings.test_commands} "
            f"or presets {sorted(settings.test_presets)}"
        )
    return argv


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL a process started with ``start_new_session`` and everything it started.

    Called before the leader is reaped, so its group id cannot have been reused."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited, without reaping it (its group id stays reserved)."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None and info.si_pid == pid


class TestRun:
    """One workspace's test runner (see the module docstring for the modes)."""

    __test__ = False  # not a pytest test class

    def __init__(
        self, root: Path, settings: SkillSettings, mode: RunMode, hidden: Sequence[Path] = ()
    ) -> None:
        self.root = root
        self.settings = settings
        self.mode = mode
        self.hidden = [Path(os.path.realpath(p)) for p in hidden]

    def run(
        self,
        command: str | None,
        preset: str | None,
        timeout_s: float | None = None,
        cancelled: Cancelled | None = None,
    ) -> dict[str, Any]:
        """Run the tests; the result says how it ended and shows the output's tail."""
        argv = test_argv(self.settings, command, preset)
        limit = min(timeout_s or self.settings.test_timeout_s, self.settings.test_timeout_s)
        with self._private_tmp() as tmp:
            launch = self._sandboxed(argv, tmp) if self.mode == "sandboxed" else argv
            started = time.monotonic()
            exit_code, ended, text = self._execute(launch, self._env(tmp), limit, cancelled)
        if exit_code == sandbox.EXIT_SANDBOX_FAILED and sandbox.MARKER in text:
            line = next(x for x in text.splitlines() if sandbox.MARKER in x)
            raise ToolUnavailable(host_paths(self.root).scrub(line))
        paths = host_paths(self.root, {tmp: "<tmp>"} if tmp else None)
        return {
            "command": [paths.scrub(a) for a in argv],
            "exit_code": exit_code,
            "passed": exit_code == 0 and ended == "exited",
            "timed_out": ended == "timeout",
            "cancelled": ended == "cancelled",
            "sandboxed": self.mode == "sandboxed",
            "duration_s": round(time.monotonic() - started, 3),
            "output_tail": paths.scrub(text)[-self.settings.output_tail_chars :],
        }

    def _execute(
        self, argv: list[str], env: dict[str, str], limit: float, cancelled: Cancelled | None
    ) -> tuple[int, str, str]:
        """(exit code, "exited" | "timeout" | "cancelled", output)."""
        deadline = time.monotonic() + max(limit, 0.1)
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(
                argv, cwd=self.root, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True,
            )  # fmt: skip
            ended = "exited"
            try:
                for tick in itertools.count():
                    if _exited(proc.pid):
                        break
                    if time.monotonic() >= deadline:
                        ended = "timeout"
                        break
                    if cancelled is not None and tick % ASK_EVERY == 0 and cancelled():
                        ended = "cancelled"
                        break
                    time.sleep(POLL_S)
            finally:
                kill_group(proc)  # also whatever the command left running
            out.seek(0)
            text = out.read().decode("utf-8", errors="replace")
        return proc.returncode, ended, text

    @contextlib.contextmanager
    def _private_tmp(self) -> Iterator[str]:
        """A temporary folder for HOME and TMPDIR of a tenant's run, removed afterwards."""
        if self.mode == "local":
            yield ""
            return
        tmp = tempfile.mkdtemp(prefix="sheriff-test-")
        try:
            yield tmp
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _env(self, tmp: str) -> dict[str, str]:
        if self.mode == "local":
            env = scrubbed_env()
        else:
            bin_dir = str(Path(sys.executable).parent)
            env = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": tmp,
                   "TMPDIR": tmp, "LANG": "C.UTF-8"}  # fmt: skip
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def _sandboxed(self, argv: list[str], tmp: str) -> list[str]:
        """``argv`` wrapped in the Landlock launcher; ``ToolUnavailable`` when it cannot be."""
        if sandbox.abi_version() < 1:
            raise ToolUnavailable(
                "repo.run_tests needs the Landlock sandbox (Linux 5.13 or later), which this "
                "host does not offer; the operator may set SHERIFF_SKILLS_TENANT_RUN_TESTS"
            )
        read = [*_python_dirs(), *SYSTEM_READ]
        for hidden in self.hidden:
            if any(hidden.is_relative_to(os.path.realpath(r)) for r in read):
                raise ToolUnavailable(
                    "repo.run_tests is not available: the sandbox could not keep the server's "
                    "state out of reach (the operator should move it out of the Python folders)"
                )
        config = {
            "read": read,
            "write": [str(self.root), tmp],
            "files": ["/dev/null"],
            "memory_bytes": self.settings.test_memory_bytes,
            "file_bytes": self.settings.test_file_bytes,
        }
        return [sys.executable, "-I", "-B", str(SANDBOX_SCRIPT), json.dumps(config), "--", *argv]


# names of variables a test run never sees
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
_SERVICE_PREFIXES = ("NEO4J_", "SHERIFF_", "OPENAI_", "ANTHROPIC_", "AWS_", "AZURE_", "GOOGLE_")


def scrubbed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment minus secrets and every setting of this service or a cloud provider."""
    source = dict(os.environ if environ is None else environ)
    return {
        k: v
        for k, v in source.items()
        if not any(w in k.upper() for w in _SECRET_WORDS)
        and not k.upper().startswith(_SERVICE_PREFIXES)
    }
