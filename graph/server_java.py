"""The Java runtime a Neo4j version runs on, found among the JDKs installed.

Neo4j 5.x runs on Java 17 or 21; the calendar-versioned releases (2025.01 and later) need Java 21
or newer. A machine may hold several JDKs with the default ``java`` too old for the server that
is configured, so the runtime is looked up in this order and the first that fits is taken:

1. ``$JAVA_HOME`` (what the user asked for, when it fits);
2. the ``java`` on ``PATH``;
3. every JDK under ``/usr/lib/jvm`` (the Debian/Ubuntu and Temurin packages' place), newest first.

A JDK's major version is read from its ``release`` file (every JDK since 9 has one), so the
look-up starts no JVM. When nothing fits, the error names each place looked at and what it held.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from graph.errors import Neo4jUnavailable

JVM_ROOT = Path("/usr/lib/jvm")
_RELEASE_VERSION = re.compile(r'^JAVA_VERSION="(\d+)(?:[.\-+_"]|$)', re.MULTILINE)


@dataclass(frozen=True)
class JavaRange:
    """The Java majors a Neo4j version runs on: ``low`` to ``high`` (None: no upper bound)."""

    low: int
    high: int | None = None

    def fits(self, major: int) -> bool:
        return major >= self.low and (self.high is None or major <= self.high)

    def __str__(self) -> str:
        return f"Java {self.low}+" if self.high is None else f"Java {self.low} to {self.high}"


def java_range(neo4j_version: str) -> JavaRange:
    """Java 17-21 for Neo4j 4.x/5.x; Java 21 or newer for the calendar versions (2025.01+)."""
    major = _leading_int(neo4j_version)
    if major is None:
        raise Neo4jUnavailable(f"unreadable Neo4j version {neo4j_version!r} (e.g. 5.26.30)")
    return JavaRange(21) if major >= 2025 else JavaRange(17, 21)


def is_calendar_version(neo4j_version: str) -> bool:
    """True for the 2025.01+ releases (Cypher 25, new configuration defaults)."""
    major = _leading_int(neo4j_version)
    return major is not None and major >= 2025


def java_major(java_home: Path) -> int | None:
    """The major version of the JDK at ``java_home`` (from its ``release`` file), or None."""
    try:
        text = (java_home / "release").read_text(errors="replace")
    except OSError:
        return None
    match = _RELEASE_VERSION.search(text)
    if match is None or not (java_home / "bin" / "java").exists():
        return None
    major = int(match.group(1))
    return 8 if major == 1 else major  # "1.8.0_x" is Java 8


def find_java(
    neo4j_version: str,
    env: Mapping[str, str] | None = None,
    jvm_root: Path = JVM_ROOT,
) -> Path:
    """The ``java`` executable to run ``neo4j_version`` with; a clear error when none fits."""
    env = os.environ if env is None else env
    wanted = java_range(neo4j_version)
    seen: list[str] = []
    visited: set[Path] = set()
    for label, home in _candidates(env, jvm_root):
        if home.resolve() in visited:
            continue
        visited.add(home.resolve())
        major = java_major(home)
        seen.append(f"{label} {home} ({'no JDK' if major is None else f'Java {major}'})")
        if major is not None and wanted.fits(major):
            return home / "bin" / "java"
    looked = "; ".join(seen) if seen else "nothing (no JAVA_HOME, no java on PATH)"
    raise Neo4jUnavailable(
        f"Neo4j {neo4j_version} needs {wanted}; looked at {looked} and {jvm_root}/*. "
        f"Install one (e.g. a Temurin {wanted.low} JDK) or set JAVA_HOME to it"
    )


def _candidates(env: Mapping[str, str], jvm_root: Path) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    if env.get("JAVA_HOME"):
        found.append(("JAVA_HOME", Path(env["JAVA_HOME"])))
    on_path = shutil.which("java", path=env.get("PATH"))
    if on_path is not None:
        found.append(("java on PATH at", Path(on_path).resolve().parent.parent))
    installed = sorted(
        (p.resolve() for p in _subdirs(jvm_root)),
        key=lambda home: (java_major(home) or 0, str(home)),
        reverse=True,
    )
    found.extend(("installed", home) for home in installed)
    return found


def _subdirs(root: Path) -> list[Path]:
    try:
        return [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return []


def _leading_int(text: str) -> int | None:
    match = re.match(r"\s*(\d+)", text)
    return int(match.group(1)) if match else None
