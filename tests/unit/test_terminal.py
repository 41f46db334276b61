"""api/terminal.py: what the CLI prints of stored data cannot drive the terminal."""

from __future__ import annotations

import io
import json

from rich.console import Console

from api import terminal

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202eevil\x9b31m [red]x[/red] \x00"


def test_clean_shows_control_and_bidi_characters_as_escapes() -> None:
    shown = terminal.clean(HOSTILE)
    assert shown == ("\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil\\x9b31m [red]x[/red] \\x00")
    assert terminal.clean("tab\tand\nnewline ✓ شراكة") == "tab\tand\nnewline ✓ شراكة"


def test_markup_is_escaped_for_rich() -> None:
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system=None, width=200).print(
        f"name: {terminal.markup(HOSTILE)}"
    )
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "[red]x[/red]" in text  # shown as typed, not read as markup


def test_safe_json_is_still_the_same_json() -> None:
    value = {"name": HOSTILE}
    raw = json.dumps(value, ensure_ascii=False)
    safe = terminal.safe_json(raw)
    assert json.loads(safe) == value
    assert "\u202e" not in safe and "\x9b" not in safe and "\x1b" not in safe


def test_error_lines_are_escaped() -> None:
    out = io.StringIO()
    terminal.error(Console(file=out, force_terminal=True, width=200), HOSTILE)
    printed = out.getvalue()
    assert "\\x1b]0;pwned" in printed and "\x07" not in printed
