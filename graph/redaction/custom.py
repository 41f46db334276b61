"""Operator patterns: extra secret shapes from settings, checked once at start-up.

An operator adds a shape as ``kind`` plus a regular expression (Python syntax), e.g.
``employee_id`` -> ``EMP-[0-9]{6}``. A match is replaced by ``[REDACTED:employee_id]``; when the
pattern has a group named ``value`` only that group is replaced (``badge: (?P<value>\\d{6})``
keeps ``badge: ``). Patterns come from ``SHERIFF_REDACT_PATTERNS`` (a JSON object, kind ->
pattern) and ``SHERIFF_REDACT_PATTERNS_FILE`` (one ``kind pattern`` per line, ``#`` comments).

A pattern is refused at start-up (``ValueError`` naming it and why) when it does not compile, has
a nested unbounded quantifier (``(a+)+``, ``(?:\\w+\\s?)*``) or a backreference, matches the empty
string or a redaction marker, or is slow on a probe of adversarial text. At run time it runs with
a time limit (the ``regex`` module's ``timeout``); text it cannot finish in time is not stored
as is: it is replaced whole by the pattern's marker (fail closed) and a warning is logged.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from graph.redaction.rules import mark

__all__ = ["CustomPattern", "compile_pattern", "load_patterns", "parse_patterns_file"]

log = logging.getLogger(__name__)

_KIND = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_PATTERNS = 100
MAX_PATTERN_CHARS = 1000
RUN_TIMEOUT_S = 0.5
PROBE_TIMEOUT_S = 0.25
PROBE_CHARS = 20_000
_NESTED_PRODUCT_MAX = 1000  # (?:\d{1,3}\.){3} is fine; (?:\d{1,100}){1,100} is not
_sre: Any = importlib.import_module("re._parser")  # the stdlib parser; no public equivalent
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)} - {None}
_UNBOUNDED = _sre.MAXREPEAT


@dataclass(frozen=True)
class CustomPattern:
    """One operator pattern, compiled and checked; ``apply`` marks its matches in a text."""

    kind: str
    source: str
    compiled: Any  # regex.Pattern[str]
    timeout_s: float = RUN_TIMEOUT_S

    def apply(self, text: str) -> str:
        """``text`` with every match replaced by the marker (fail closed on a timeout)."""
        try:
            return str(self.compiled.sub(self._replace, text, timeout=self.timeout_s))
        except TimeoutError:
            log.warning(
                "redaction pattern %r timed out on a %d-character text; the text was withheld",
                self.kind,
                len(text),
            )
            return mark(self.kind)

    def _replace(self, m: Any) -> str:
        if "value" in self.compiled.groupindex and m.start("value") >= 0:
            whole, start, end = m.group(0), m.start("value") - m.start(), m.end("value") - m.start()
            return f"{whole[:start]}{mark(self.kind)}{whole[end:]}"
        return mark(self.kind)


def compile_pattern(kind: str, source: str, *, timeout_s: float = RUN_TIMEOUT_S) -> CustomPattern:
    """Check and compile one operator pattern; ``ValueError`` says which and why."""
    where = f"redaction pattern {kind!r}"
    if not _KIND.fullmatch(kind):
        raise ValueError(f"{where}: the kind must be lower-case letters, digits and _ (max 40)")
    if not source or len(source) > MAX_PATTERN_CHARS:
        raise ValueError(f"{where}: the pattern must have 1 to {MAX_PATTERN_CHARS} characters")
    try:
        tree = _sre.parse(source)
        compiled = regex.compile(source, regex.VERSION0)
    except (re.error, regex.error) as exc:
        raise ValueError(f"{where}: not a valid regular expression: {exc}") from exc
    problem = _structure_problem(tree)
    if problem is None and compiled.search(""):
        problem = "it matches the empty string"
    if problem is None and compiled.search(mark(kind) + " " + mark("password")):
        problem = "it matches a redaction marker, so redacted text would be redacted again"
    if problem is None:
        problem = _probe_problem(compiled, tree)
    if problem is not None:
        raise ValueError(f"{where} refused: {problem}")
    return CustomPattern(kind, source, compiled, timeout_s)


def _structure_problem(tree: Any) -> str | None:
    """Backreferences and nested quantifiers (unbounded, or with a large product) are refused:
    they make backtracking super-linear."""
    stack: list[tuple[Any, int]] = [(tree, 1)]  # (subpattern, product of enclosing maxima)
    while stack:
        items, outer = stack.pop()
        for op, av in items:
            if op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
                return "backreferences are not allowed"
            if op in _REPEATS:
                _, high, body = av
                if outer > 1 and high > 1 and (high == _UNBOUNDED or outer == _UNBOUNDED):
                    return "a quantifier inside a repeated group (nested quantifiers)"
                product = _UNBOUNDED if high == _UNBOUNDED else outer * max(high, 1)
                if outer > 1 and high > 1 and product > _NESTED_PRODUCT_MAX:
                    return "nested quantifiers repeat too often"
                stack.append((body, product if high > 1 else outer))
            else:
                stack.extend((sub, outer) for sub in _children(op, av))
    return None


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns under one parsed node (groups, alternations, look-arounds)."""
    if op == _sre.SUBPATTERN:
        return [av[-1]]
    if op == _sre.BRANCH:
        return list(av[1])
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        return [av[1]]
    if op == getattr(_sre, "ATOMIC_GROUP", None):
        return [av]
    return []


def _probe_problem(compiled: Any, tree: Any) -> str | None:
    """Run the pattern over long runs of characters it can consume; too slow means refused."""
    for probe in _probes(tree):
        try:
            compiled.sub("", probe, timeout=PROBE_TIMEOUT_S)
        except TimeoutError:
            return f"too slow on {PROBE_CHARS} characters of {probe[:8]!r}... (super-linear)"
    return None


def _probes(tree: Any) -> list[str]:
    """Runs of one character (its literals, a representative of each class, common text
    characters) and runs of its literal prefix followed by itself."""
    chars = {"a", "A", "0", " ", "\n", "-", "_", ".", "/", ":", "@", "=", "\t"}
    stack: list[Any] = [tree]
    while stack:
        for op, av in stack.pop():
            if op == _sre.LITERAL:
                chars.add(chr(av))
            elif op == _sre.IN:
                chars.update(_class_representatives(av))
            elif op in _REPEATS:
                stack.append(av[2])
            else:
                stack.extend(_children(op, av))
    runs = [c * PROBE_CHARS for c in sorted(chars)[:40]]
    pairs = ["a0", "a ", "a-", "0 ", "a:", "a="]
    return runs + [(p * PROBE_CHARS)[:PROBE_CHARS] for p in pairs]


def _class_representatives(members: Any) -> set[str]:
    """One character per literal or range of a character class (``[a-z0-9_]`` -> a, 0, _)."""
    out = set()
    for kind, value in members:
        if kind == _sre.LITERAL:
            out.add(chr(value))
        elif kind == _sre.RANGE:
            out.add(chr(value[0]))
    return out


def parse_patterns_file(path: Path) -> dict[str, str]:
    """``kind pattern`` per line (the pattern is the rest of the line); ``#`` starts a comment
    line. ``ValueError`` names the line of a malformed entry or a repeated kind."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(
            f"redaction patterns file {path}: cannot read it ({exc.strerror})"
        ) from exc
    out: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.strip().split(None, 1)
        if len(parts) != 2:
            raise ValueError(f"{path}:{number}: expected 'kind pattern'")
        if parts[0] in out:
            raise ValueError(f"{path}:{number}: kind {parts[0]!r} is given twice")
        out[parts[0]] = parts[1]
    return out


def load_patterns(
    patterns: Mapping[str, str] | None = None, file: Path | None = None
) -> list[CustomPattern]:
    """Every operator pattern from the settings (the mapping, then the file), checked."""
    entries: list[tuple[str, str]] = list((patterns or {}).items())
    if file is not None:
        entries += list(parse_patterns_file(file).items())
    if len(entries) > MAX_PATTERNS:
        raise ValueError(f"at most {MAX_PATTERNS} redaction patterns, got {len(entries)}")
    return [compile_pattern(kind, source) for kind, source in _unique(entries)]


def _unique(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: set[str] = set()
    for kind, _ in entries:
        if kind in seen:
            raise ValueError(f"redaction pattern kind {kind!r} is given twice")
        seen.add(kind)
    return entries
