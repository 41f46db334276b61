"""Workspace paths and list patterns as plain strings, checked before any file is touched.

Pure (no I/O), so every rule is unit-tested without a disk:

- ``relative_parts(path)`` turns a caller's path into its names. Escapes are ``ToolRefused``
  (HTTP 403): an absolute path, ``~``, a drive letter, ``..`` anywhere. Malformed input is
  ``PathInvalid`` (HTTP 422): empty, the workspace folder itself (``.``), NUL, control or
  formatting characters (bidi overrides, zero-width marks, lone surrogates), a name over 255
  bytes, a path over 1024 bytes or 32 levels.
- ``ListPattern`` is a bounded glob: ``*``, ``?`` and ``[...]`` inside one name, and at most one
  ``**`` (a whole name) standing for any number of folders. Matching is linear in the path.

Messages quote the caller's own text (shortened, with odd characters escaped) and never a host
path.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from skills.errors import PathInvalid, ToolRefused

MAX_NAME_BYTES = 255  # NAME_MAX on Linux and macOS
MAX_PATH_BYTES = 1024
MAX_PATH_DEPTH = 32
MAX_PATTERN_WILDCARDS = 16  # per name; fnmatch is linear, this keeps the constant small
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_DRIVE = re.compile(r"^[A-Za-z]:")
DEFAULT_PATTERN = "**/*"


def show(text: str, limit: int = 60) -> str:
    """The caller's text quoted for a message: shortened, control and bidi characters escaped."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return ascii(text) if not text.isprintable() else repr(text)


def _odd_character(text: str) -> str | None:
    for char in text:
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            return f"U+{ord(char):04X}"
    return None


def _split(text: object, what: str) -> tuple[str, ...]:
    """The names of a relative path; refuses escapes and malformed text (see the module doc)."""
    if not isinstance(text, str) or not text.strip():
        raise PathInvalid(f"the {what} is empty")
    if len(text) > MAX_PATH_BYTES:
        raise PathInvalid(f"the {what} is {len(text)} characters; at most {MAX_PATH_BYTES}")
    odd = _odd_character(text)
    if odd is not None:
        raise PathInvalid(f"the {what} {show(text)} has a control or formatting character {odd}")
    norm = text.replace("\\", "/")
    if norm.startswith(("/", "~")) or _DRIVE.match(norm):
        # not echoed: an absolute path is a host path, and messages name workspace paths only
        raise ToolRefused(f"absolute path refused: give a {what} relative to the workspace")
    parts = PurePosixPath(norm).parts
    if ".." in parts:
        raise ToolRefused(f"{what} {show(text)} refused: '..' may not appear in a workspace path")
    _check_sizes(text, parts, what)
    return parts


def _check_sizes(text: str, parts: Sequence[str], what: str) -> None:
    for name in parts:
        size = len(name.encode("utf-8"))
        if size > MAX_NAME_BYTES:
            raise PathInvalid(
                f"the name {show(name, 40)} in the {what} is {size} bytes; "
                f"a name may have at most {MAX_NAME_BYTES}"
            )
    size = len(text.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise PathInvalid(f"the {what} is {size} bytes; at most {MAX_PATH_BYTES}")
    if len(parts) > MAX_PATH_DEPTH:
        raise PathInvalid(f"the {what} is {len(parts)} folders deep; at most {MAX_PATH_DEPTH}")


def relative_parts(path: object) -> tuple[str, ...]:
    """The names of a workspace-relative file path (at least one); raises on anything else."""
    parts = _split(path, "path")
    if not parts:
        raise PathInvalid(f"the path {show(str(path))} names the workspace folder, not a file")
    return parts


def display(parts: Sequence[str]) -> str:
    """Workspace-relative names joined as the caller sees them (``pkg/a.py``)."""
    return "/".join(parts) or "."


@dataclass(frozen=True)
class ListPattern:
    """A glob with at most one ``**``: ``head`` names, then any folders, then ``tail`` names."""

    head: tuple[str, ...]
    tail: tuple[str, ...]
    globstar: bool

    @classmethod
    def parse(cls, pattern: str | None) -> ListPattern:
        """Parse and check a pattern (``None`` or ``""`` mean ``**/*``); ``PathInvalid`` if bad."""
        text = pattern if pattern else DEFAULT_PATTERN
        parts = _split(text, "pattern")
        if not parts:
            raise PathInvalid(
                f"the pattern {show(text)} matches no file; use '*' or '**/*' for all files"
            )
        for name in parts:
            if "**" in name and name != "**":
                raise PathInvalid(
                    f"'**' must be a whole name in a pattern (as in 'src/**/*.py'), "
                    f"not part of {show(name, 40)}"
                )
            if sum(name.count(c) for c in "*?[") > MAX_PATTERN_WILDCARDS:
                raise PathInvalid(f"the pattern name {show(name, 40)} has too many wildcards")
        stars = parts.count("**")
        if stars > 1:
            raise PathInvalid(f"the pattern {show(text)} has {stars} '**'; at most one is allowed")
        if stars == 0:
            return cls(parts, (), False)
        at = parts.index("**")
        return cls(parts[:at], parts[at + 1 :], True)

    def matches(self, parts: Sequence[str]) -> bool:
        """Whether a file at workspace-relative ``parts`` matches."""
        n_head, n_tail = len(self.head), len(self.tail)
        if not self.globstar:
            return len(parts) == n_head and _all_match(parts, self.head)
        if len(parts) < n_head + max(n_tail, 1):
            return False
        return _all_match(parts[:n_head], self.head) and _all_match(
            parts[len(parts) - n_tail :], self.tail
        )

    def may_descend(self, folder: Sequence[str]) -> bool:
        """Whether files below the folder at ``folder`` could match (prunes the walk)."""
        depth = len(folder)
        if not self.globstar:
            return depth < len(self.head) and _all_match(folder, self.head[:depth])
        shared = min(depth, len(self.head))
        return _all_match(folder[:shared], self.head[:shared])


def _all_match(names: Sequence[str], globs: Sequence[str]) -> bool:
    return all(fnmatch.fnmatchcase(n, g) for n, g in zip(names, globs, strict=True))


class HostPaths:
    """Replaces host paths in text a caller will see (test output, skill logs) with labels.

    ``HostPaths({"/srv/ws/ab12": ".", "/usr/lib/python3.11": "<python>"})``: the longest
    prefix wins, and a path followed by ``/`` loses that slash when its label is ``.``.
    """

    def __init__(self, labels: dict[str, str]) -> None:
        pairs = [(p.rstrip("/"), label) for p, label in labels.items() if p.rstrip("/")]
        self._pairs = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)

    def scrub(self, text: str) -> str:
        """``text`` with every known host path replaced by its label."""
        for path, label in self._pairs:
            if path not in text:
                continue
            if label == ".":
                text = text.replace(path + "/", "")
            text = text.replace(path, label)
        return text
