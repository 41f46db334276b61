"""Entry point of the process a skill runs in: ``python -I -m skills.child``.

Speaks JSON lines with the runner: the first line on stdin is the start message; tool calls go
out on the original stdout and their results come back on stdin; the last line out is ``done``.
Anything the skill prints lands on stderr (fd 1 is pointed at fd 2), so it cannot corrupt the
protocol.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys
import traceback
from pathlib import Path
from typing import IO, Any

from skills.context import SkillContext, ToolError


class _Pipe:
    def __init__(self, reader: IO[str], writer: IO[str]) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)

    def send(self, message: dict[str, Any]) -> None:
        self._writer.write(json.dumps(message, default=str) + "\n")
        self._writer.flush()

    def receive(self) -> dict[str, Any]:
        line = self._reader.readline()
        if not line:
            raise SystemExit("runner closed the pipe")
        message: dict[str, Any] = json.loads(line)
        return message

    def invoke(self, tool: str, args: dict[str, Any]) -> Any:
        call_id = next(self._ids)
        self.send({"type": "call", "id": call_id, "tool": tool, "args": args})
        reply = self.receive()
        if reply.get("ok"):
            return reply.get("value")
        error = reply.get("error") or {}
        raise ToolError(error.get("kind", "failed"), error.get("message", "tool failed"), tool)


def _load(skill_dir: Path, skill_id: str) -> Any:
    sys.path.append(str(skill_dir))
    spec = importlib.util.spec_from_file_location(
        f"sheriff_skill_{skill_id}", skill_dir / "skill.py"
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {skill_dir / 'skill.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


def _protocol_streams() -> tuple[IO[str], IO[str]]:
    """Keep private copies of stdin/stdout for the protocol; give the skill /dev/null and stderr."""
    reader = os.fdopen(os.dup(0), "r", encoding="utf-8")
    writer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    return reader, writer


def main() -> None:
    pipe = _Pipe(*_protocol_streams())
    start = pipe.receive()
    ctx = SkillContext(
        start["skill_id"],
        start["declared"],
        pipe.invoke,
        refs=start.get("refs"),
        llm_available=bool(start.get("llm_available")),
        reasoning_effort=start.get("effort", "medium"),
        timeout_s=float(start.get("timeout_s", 60.0)),
    )
    try:
        module = _load(Path(start["skill_dir"]), start["skill_id"])
        output = module.run(ctx, start["args"])
        json.dumps(output)  # fail here, with a clear message, if the output is not JSON
        done = {"type": "done", "ok": True, "output": output, "topics_used": ctx.topics_used}
    except ToolError as exc:
        error = {"kind": exc.kind, "message": f"{exc.tool}: {exc}", "traceback": _tb()}
        done = {"type": "done", "ok": False, "error": error, "topics_used": ctx.topics_used}
    except BaseException as exc:  # the skill's own failure, reported rather than raised
        message = f"{type(exc).__name__}: {exc}"
        error = {"kind": "exception", "message": message, "traceback": _tb()}
        done = {"type": "done", "ok": False, "error": error, "topics_used": ctx.topics_used}
    pipe.send(done)


def _tb() -> str:
    text = traceback.format_exc()
    print(text, file=sys.stderr, flush=True)  # lands in the run's log_tail
    return text[-4000:]


if __name__ == "__main__":
    main()
