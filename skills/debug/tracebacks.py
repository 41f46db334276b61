"""Parse Python stack traces: the standard ``Traceback (most recent call last):`` format
(chained exceptions included, 3.11 ``^^^`` markers skipped) and pytest's ``path:line: in func``
plus ``E   Error: ...`` format. Pure: text in, frames and exception out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HEADER = "Traceback (most recent call last):"
_CHAIN = re.compile(
    r"^(During handling of the above exception, another exception occurred:|"
    r"The above exception was the direct cause of the following exception:)\s*$",
    re.MULTILINE,
)
# "(?P<func>.+)" then strip: a lazy ".+?" before "\s*$" rescanned a whitespace run from
# every character of it (quadratic on a 32,000-character line).
_FRAME = re.compile(r'^\s*+File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?\s*+$')
_PYTEST_FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): in (?P<func>\S+)\s*$")
_PYTEST_EXC = re.compile(r"^E\s+(?P<type>[A-Za-z_][\w.]*)(?::\s*(?P<msg>.*))?$")
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s*(?P<msg>.*))?$")
_MARKERS = re.compile(r"^\s*[\^~]+\s*$")
_EXTERNAL = re.compile(r"(site-packages|dist-packages|/lib/python\d|^<frozen |^<string>|^<stdin>)")


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str
    code: str = ""

    @property
    def external(self) -> bool:
        return bool(_EXTERNAL.search(self.path))


@dataclass
class ParsedTrace:
    exception_type: str
    message: str
    frames: list[Frame] = field(default_factory=list)
    chain: list[tuple[str, str]] = field(default_factory=list)  # earlier exceptions, oldest first

    @property
    def short_type(self) -> str:
        return self.exception_type.rsplit(".", 1)[-1]


def _parse_block(lines: list[str]) -> tuple[list[Frame], str, str] | None:
    frames: list[Frame] = []
    exc_type = message = ""
    i = 0
    while i < len(lines):
        m = _FRAME.match(lines[i])
        if m:
            code = ""
            if (
                i + 1 < len(lines)
                and not _FRAME.match(lines[i + 1])
                and lines[i + 1].startswith("    ")
            ):
                code = lines[i + 1].strip()
                i += 1
            frames.append(Frame(m["path"], int(m["line"]), (m["func"] or "<module>").strip(), code))
        elif frames and not exc_type and lines[i].strip() and not lines[i].startswith(" "):
            e = _EXC.match(lines[i].strip())
            if e and not _MARKERS.match(lines[i]):
                exc_type, message = e["type"], (e["msg"] or "").strip()
        i += 1
    return (frames, exc_type, message) if frames and exc_type else None


def _parse_pytest(lines: list[str]) -> ParsedTrace | None:
    frames: list[Frame] = []
    exc: tuple[str, str] | None = None
    for i, line in enumerate(lines):
        m = _PYTEST_FRAME.match(line)
        if m:
            code = (
                lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith(" ") else ""
            )
            frames.append(Frame(m["path"], int(m["line"]), m["func"], code))
            continue
        e = _PYTEST_EXC.match(line)
        if (
            e
            and exc is None
            and (e["msg"] is not None or e["type"].endswith(("Error", "Exception")))
        ):
            exc = (e["type"], (e["msg"] or "").strip())
    if not frames or exc is None:
        return None
    return ParsedTrace(exc[0], exc[1], frames)


def parse_traceback(text: str) -> ParsedTrace | None:
    """The exception that surfaced (the last of a chain), with its frames, outermost first."""
    text = text.replace("\r\n", "\n")
    if HEADER not in text:
        return _parse_pytest(text.splitlines())
    parts = _CHAIN.split(text)
    blocks = [p for p in parts if HEADER in p]
    parsed = []
    for block in blocks:
        body = block.split(HEADER, 1)[1]
        result = _parse_block(body.splitlines())
        if result:
            parsed.append(result)
    if not parsed:
        return None
    frames, exc_type, message = parsed[-1]
    return ParsedTrace(exc_type, message, frames, [(t, m) for _, t, m in parsed[:-1]])


def workspace_path(frame_path: str, files: list[str]) -> str | None:
    """The workspace file a frame's path points at: exact, else the longest suffix match."""
    path = frame_path.replace("\\", "/")
    if path in files:
        return path
    matches = [f for f in files if path.endswith("/" + f)]
    return max(matches, key=len) if matches else None
