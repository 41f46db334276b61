"""Printing stored data to a terminal without letting it drive the terminal.

Topic names, message text, tool errors and skill output come from users and models. Printed raw,
an ``ESC [2J`` clears the screen, ``ESC ]0;...`` sets the window title, a bidi override reorders
what the operator reads, and ``[red]`` is taken as rich markup. Every CLI line that shows such
data goes through this module: control characters (C0 except tab and newline, DEL, C1), line
separators and bidi controls are shown as visible escapes (``\\x1b``, ``\\u202e``), and text
passed to rich is markup-escaped. JSON output keeps valid JSON: the same characters become
``\\uXXXX`` escapes inside its strings.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from graph.errors import SheriffError

# what a terminal acts on: C0 (tab and newline are kept as layout), DEL, C1, line separators,
# bidi marks, embeddings, overrides and isolates, and the BOM
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]"
)
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(value: Any) -> str:
    """``str(value)`` with every character a terminal would act on shown as an escape."""
    return _UNSAFE.sub(_visible, str(value))


def markup(value: Any) -> str:
    """:func:`clean` and rich-markup-escaped: safe inside an f-string passed to rich."""
    return escape(clean(value))


def safe_json(text: str) -> str:
    """JSON text with C1, bidi and separator characters as ``\\uXXXX`` (still the same JSON;
    C0 characters are escaped by every JSON encoder already)."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo_json(text: str) -> None:
    """Print JSON text (``model_dump_json``, ``json.dumps``) safely on stdout."""
    typer.echo(safe_json(text))


def echo(value: Any) -> None:
    """Print one line of plain text safely on stdout (no markup)."""
    typer.echo(clean(value))


def error(console: Console, value: Any, code: str = "error") -> None:
    """``error: <value>`` in bold red on ``console``, the value escaped."""
    console.print(f"[bold red]{code}:[/] {markup(value)}", highlight=False, soft_wrap=True)


def progress() -> Progress:
    """A progress bar on stderr (stdout stays machine-readable); gone when done."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def parse_now(now: str | None) -> datetime:
    """A ``--now`` option: ISO-8601 with a zone, in the API's range, as UTC; the wall clock
    when not given. ``SheriffError`` naming the option otherwise."""
    from graph.clock import ensure_utc
    from graph.validation import check_time

    if now is None:
        return datetime.now(UTC)
    try:
        parsed = ensure_utc(datetime.fromisoformat(now), "--now")
    except ValueError as exc:
        raise SheriffError(f"--now: not an ISO-8601 timestamp: {now!r}") from exc
    try:
        return check_time(parsed)  # the API's range, in UTC
    except ValueError as exc:
        raise SheriffError(f"--now: {exc}") from exc
