"""Runs a skill in its own process, with only its declared tools, a timeout and checked I/O.

``skills.run(skill_id, args, ctx_refs)`` (spec §3.3, §7.3):

1. args are validated against the manifest's ``inputs_schema``; ``SkillArgsInvalid`` lists every
   violation and nothing runs;
2. ``python -I -B -m skills.child`` loads ``skill.py`` and calls ``run(ctx, args)``; the context
   forwards each tool call here, where a tool missing from ``requires_tools`` stops the run as
   ``refused`` and any other call goes to the ``ToolHost``;
3. at the deadline the whole process group is killed (a ``while True: pass`` included):
   outcome ``timeout``;
4. the output is validated against ``outputs_schema`` (outcome ``invalid_output`` otherwise);
   an output with ``"ok": false`` counts as ``failed``;
5. a ``:SkillRun`` is recorded with the outcome, duration, tool calls and the topics used
   (``ctx_refs.topic_ids`` plus those the skill marked with ``ctx.use_topics``); a success adds
   +2 utility to those topics (spec §8.3).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any

from pydantic import BaseModel, Field

from graph.clock import Clock, SystemClock
from graph.errors import SheriffError
from graph.models import new_id
from graph.redaction import DEFAULT as REDACTOR
from graph.skills import Outcome, SkillRun, SkillStore
from skills.config import SkillSettings
from skills.errors import ToolFailed, ToolRefused, ToolUnavailable
from skills.loader import SkillPackage
from skills.paths import HostPaths
from skills.registry import SkillRegistry
from skills.schemas import violations
from skills.testrun import host_paths, kill_group, scrubbed_env
from skills.tools import CallInfo, ToolHost

log = logging.getLogger(__name__)

UTILITY_PER_SUCCESS = 2.0  # spec §8.3: "+2 if topic used in successful skill completion"
LOG_TAIL_CHARS = 4_000


class SkillResult(BaseModel):
    """What ``skills.run`` returns (and what the model sees as the tool output)."""

    run_id: str
    skill_id: str
    outcome: Outcome
    ok: bool
    output: dict[str, Any] | None = None
    error: str | None = None
    violations: list[str] = Field(default_factory=list)
    duration_ms: int = 0
    topics_used: list[str] = Field(default_factory=list)
    utility: dict[str, float] = Field(default_factory=dict)
    tool_calls: list[str] = Field(default_factory=list)
    log_tail: str = ""
    parent_run_id: str | None = None
    recorded: bool = False


@dataclass
class _Execution:
    outcome: Outcome = "failed"
    output: dict[str, Any] | None = None
    error: str | None = None
    topics_used: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    log_tail: str = ""


def normalise_refs(ctx_refs: dict[str, Any] | list[str] | None) -> dict[str, Any]:
    """ctx_refs as a dict; a bare list means topic ids. ``topic_ids`` must be strings."""
    if ctx_refs is None:
        return {"topic_ids": []}
    refs = {"topic_ids": list(ctx_refs)} if isinstance(ctx_refs, list) else dict(ctx_refs)
    ids = refs.get("topic_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ToolRefused("ctx_refs.topic_ids must be a list of topic id strings")
    refs["topic_ids"] = ids
    return refs


def args_hash(args: dict[str, Any]) -> str:
    """A short hash of the redacted args (a hash of a password would let guesses be tested)."""
    text = json.dumps(REDACTOR.value(args), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(eq=False)
class SkillRunner:
    """Executes registered skills against a ``ToolHost`` and records each run."""

    registry: SkillRegistry
    host: ToolHost
    settings: SkillSettings
    store: SkillStore | None = None
    clock: Clock = field(default_factory=SystemClock)

    def timeout_for(self, package: SkillPackage, requested: float | None = None) -> float:
        wanted = requested or package.manifest.timeout_s or self.settings.timeout_s
        return min(wanted, self.settings.max_timeout_s)

    def run(
        self,
        skill_id: str,
        args: dict[str, Any],
        ctx_refs: dict[str, Any] | list[str] | None = None,
        *,
        timeout_s: float | None = None,
        parent: CallInfo | None = None,
    ) -> SkillResult:
        """Validate, execute, check and record one run (see the module docstring)."""
        package = self.registry.get(skill_id)
        self.registry.check_args(skill_id, args)
        refs = normalise_refs(ctx_refs)
        timeout = self.timeout_for(package, timeout_s)
        if parent is not None:
            timeout = min(timeout, max(parent.remaining() - 0.5, 0.1))
        run_id = new_id()
        started_at, t0 = self.clock.now(), time.monotonic()
        call = CallInfo(skill_id, run_id, parent.depth + 1 if parent else 0, t0 + timeout)
        execution = self._execute(package, args, refs, call, timeout)
        duration_ms = int((time.monotonic() - t0) * 1000)
        result = SkillResult(
            run_id=run_id,
            skill_id=skill_id,
            outcome=execution.outcome,
            ok=execution.outcome == "success",
            output=execution.output,
            error=execution.error,
            duration_ms=duration_ms,
            topics_used=list(dict.fromkeys([*refs["topic_ids"], *execution.topics_used])),
            tool_calls=execution.tool_calls,
            log_tail=execution.log_tail,
            parent_run_id=parent.run_id if parent else None,
        )
        if execution.outcome == "invalid_output" and execution.output is not None:
            result.violations = violations(package.manifest.outputs_schema, execution.output)
        self._record(result, package, args, started_at)
        log.info(
            "skill run",
            extra={"skill_id": skill_id, "run_id": run_id, "outcome": result.outcome,
                   "duration_ms": duration_ms, "tool_calls": len(result.tool_calls)},
        )  # fmt: skip
        return result

    # -- the process -----------------------------------------------------------------------------
    def _execute(
        self,
        package: SkillPackage,
        args: dict[str, Any],
        refs: dict[str, Any],
        call: CallInfo,
        timeout: float,
    ) -> _Execution:
        env = scrubbed_env()
        start = {
            "skill_id": package.skill_id,
            "skill_dir": str(package.path),
            "declared": package.manifest.requires_tools,
            "args": args,
            "refs": refs,
            "llm_available": self.host.llm_available,
            "effort": package.manifest.default_reasoning_effort,
            "timeout_s": timeout,
        }
        # cwd: an empty folder of its own, so a stray relative write can never land in a
        # skill package or the server's folder
        with tempfile.TemporaryFile() as errfile, tempfile.TemporaryDirectory() as cwd:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-m", "skills.child"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errfile,
                cwd=cwd, env=env, start_new_session=True,
            )  # fmt: skip
            try:
                execution = self._converse(proc, start, package, call)
            finally:
                if proc.poll() is None:
                    kill_group(proc)
                for stream in (proc.stdin, proc.stdout):
                    if stream is not None:
                        stream.close()
            errfile.seek(0)
            tail = errfile.read().decode("utf-8", errors="replace")[-LOG_TAIL_CHARS:]
        paths = self._host_paths(package)
        execution.log_tail = paths.scrub(tail)
        execution.error = paths.scrub(execution.error) if execution.error else None
        return execution

    def _host_paths(self, package: SkillPackage) -> HostPaths:
        """Labels for the paths a run's log may show: its workspace, its folder, Python."""
        root = self.host.repo.root if self.host.repo is not None else None
        extra = {str(package.path): f"<skill {package.skill_id}>"}
        return host_paths(root, extra) if root is not None else HostPaths(extra)

    def _converse(
        self,
        proc: subprocess.Popen[bytes],
        start: dict[str, Any],
        package: SkillPackage,
        call: CallInfo,
    ) -> _Execution:
        assert proc.stdin is not None and proc.stdout is not None
        execution = _Execution()
        lines = _LineReader(proc.stdout)
        _send(proc.stdin, {"type": "start", **start})
        declared = set(package.manifest.requires_tools)
        while True:
            line = lines.readline(call.remaining())
            if line is _TIMED_OUT:
                execution.outcome = "timeout"
                execution.error = f"stopped after its {start['timeout_s']:.1f}s timeout"
                return execution
            if line is None:
                code = proc.wait()
                execution.error = f"skill process exited (code {code}) without a result"
                return execution
            message = json.loads(line)
            if message.get("type") == "done":
                return _finish(execution, message, package)
            tool = str(message.get("tool"))
            if tool not in declared:
                execution.tool_calls.append(f"{tool}:refused")
                execution.outcome = "refused"
                execution.error = (
                    f"skill {package.skill_id!r} called tool {tool!r}, which its manifest does "
                    f"not declare (requires_tools: {sorted(declared)}); the run was stopped"
                )
                return execution
            reply = self._call_tool(tool, message.get("args") or {}, call)
            execution.tool_calls.append(f"{tool}:{'ok' if reply['ok'] else reply['error']['kind']}")
            _send(proc.stdin, {"type": "result", "id": message.get("id"), **reply})

    def _call_tool(self, tool: str, args: dict[str, Any], call: CallInfo) -> dict[str, Any]:
        t0 = time.monotonic()
        try:
            value = self.host.call(tool, args, call)
            reply: dict[str, Any] = {"ok": True, "value": value}
        except ToolRefused as exc:
            reply = {"ok": False, "error": {"kind": "refused", "message": str(exc)}}
        except ToolUnavailable as exc:
            reply = {"ok": False, "error": {"kind": "unavailable", "message": str(exc)}}
        except (ToolFailed, SheriffError) as exc:
            reply = {"ok": False, "error": {"kind": "failed", "message": str(exc)}}
        except Exception as exc:  # a host bug must not hang the skill: report it as a failure
            log.exception("tool %s raised", tool)
            reply = {"ok": False, "error": {"kind": "failed", "message": f"{tool}: {exc!r}"}}
        log.info(
            "tool call",
            extra={"tool": tool, "skill_id": call.skill_id, "run_id": call.run_id,
                   "args_hash": args_hash(args), "ok": reply["ok"],
                   "duration_ms": int((time.monotonic() - t0) * 1000)},
        )  # fmt: skip
        return reply

    # -- recording ---------------------------------------------------------------------------------
    def _record(
        self, result: SkillResult, package: SkillPackage, args: dict[str, Any], started_at: datetime
    ) -> None:
        if self.store is None:
            return
        run = SkillRun(
            run_id=result.run_id,
            namespace=self.registry.namespace,
            skill_id=package.skill_id,
            outcome=result.outcome,
            started_at=started_at,
            finished_at=self.clock.now(),
            duration_ms=result.duration_ms,
            error=(result.error or "")[:2000] or None,
            args_hash=args_hash(args),
            topic_ids=result.topics_used,
            tool_calls=result.tool_calls,
            parent_run_id=result.parent_run_id,
        )
        try:
            recorded = self.store.record_run(run, UTILITY_PER_SUCCESS)
        except SheriffError as exc:  # keep the result (files may have changed); say it was lost
            log.error("skill run %s not recorded: %s", result.run_id, exc)
            return
        result.topics_used = recorded.topic_ids
        result.utility = recorded.utilities
        result.recorded = True


def _finish(execution: _Execution, message: dict[str, Any], package: SkillPackage) -> _Execution:
    execution.topics_used = [str(t) for t in message.get("topics_used") or []]
    if not message.get("ok"):
        error = message.get("error") or {}
        execution.outcome = "refused" if error.get("kind") == "refused" else "failed"
        execution.error = str(error.get("message", "skill failed"))
        return execution
    output = message.get("output")
    if not isinstance(output, dict):
        execution.outcome = "invalid_output"
        execution.error = f"skill returned {type(output).__name__}, not a JSON object"
        return execution
    execution.output = output
    problems = violations(package.manifest.outputs_schema, output)
    if problems:
        execution.outcome = "invalid_output"
        execution.error = "output violates outputs_schema: " + "; ".join(problems)
    elif output.get("ok") is False:
        execution.outcome = "failed"
        execution.error = str(output.get("error") or "the skill reported ok=false")
    else:
        execution.outcome = "success"
    return execution


def _send(stream: IO[bytes], message: dict[str, Any]) -> None:
    stream.write((json.dumps(message, default=str) + "\n").encode("utf-8"))
    stream.flush()


_TIMED_OUT = object()


class _LineReader:
    """Reads newline-terminated messages from a pipe with a timeout (select + os.read)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)

    def readline(self, timeout: float) -> Any:
        """A line (str), None at end of stream, or ``_TIMED_OUT``."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                return _TIMED_OUT
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8")
