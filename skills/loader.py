"""Discovers skill packages: every ``<dir>/<skill_id>/`` holding a ``manifest.json``.

A package is ``manifest.json`` + ``skill.py`` (with a top-level ``def run(ctx, args)``) +
``README.md``, and should have ``tests/``. The loader never imports ``skill.py`` (skills run in
their own process); it parses it to check that ``run`` exists. A broken package becomes a
``LoadProblem`` that names the folder and says what is wrong; the others still load.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skills.errors import ManifestInvalid
from skills.manifest import SkillManifest, parse_manifest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SkillPackage:
    manifest: SkillManifest
    path: Path
    readme: str
    has_tests: bool

    @property
    def skill_id(self) -> str:
        return self.manifest.skill_id


@dataclass(frozen=True)
class LoadProblem:
    path: str
    message: str


@dataclass
class LoadReport:
    skills: dict[str, SkillPackage] = field(default_factory=dict)
    problems: list[LoadProblem] = field(default_factory=list)


def discover(dirs: Sequence[Path]) -> LoadReport:
    """Load every skill package under ``dirs``; the first folder with a given skill_id wins."""
    report = LoadReport()
    for base in dirs:
        if not base.is_dir():
            report.problems.append(LoadProblem(str(base), "skills folder does not exist"))
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            if folder.name.startswith((".", "_")) or not _looks_like_skill(folder):
                continue
            try:
                package = load_package(folder)
            except ManifestInvalid as exc:
                report.problems.append(LoadProblem(str(folder), str(exc)))
                log.warning("skill folder %s skipped: %s", folder, exc)
                continue
            if package.skill_id in report.skills:
                first = report.skills[package.skill_id].path
                report.problems.append(
                    LoadProblem(
                        str(folder), f"duplicate skill_id {package.skill_id!r}; {first} kept"
                    )
                )
                continue
            report.skills[package.skill_id] = package
    return report


def _looks_like_skill(folder: Path) -> bool:
    return (folder / "manifest.json").exists() or (folder / "skill.py").exists()


def load_package(folder: Path) -> SkillPackage:
    """One skill package, or ``ManifestInvalid`` saying everything that is wrong with it."""
    manifest_file = folder / "manifest.json"
    if not manifest_file.is_file():
        raise ManifestInvalid(f"{manifest_file}: missing (a skill folder needs manifest.json)")
    manifest = parse_manifest(manifest_file.read_text(encoding="utf-8"), str(manifest_file))
    problems = []
    if manifest.skill_id != folder.name:
        problems.append(
            f"skill_id {manifest.skill_id!r} must equal the folder name {folder.name!r}"
        )
    problems.extend(_skill_py_problems(folder / "skill.py"))
    readme = folder / "README.md"
    if not readme.is_file():
        problems.append("README.md is missing")
    if problems:
        raise ManifestInvalid(f"{folder}: " + "; ".join(problems))
    has_tests = (folder / "tests").is_dir()
    if not has_tests:
        log.warning("skill %s has no tests/ folder", manifest.skill_id)
    return SkillPackage(manifest, folder.resolve(), readme.read_text(encoding="utf-8"), has_tests)


def _skill_py_problems(path: Path) -> list[str]:
    if not path.is_file():
        return ["skill.py is missing"]
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except SyntaxError as exc:
        return [f"skill.py does not parse: {exc.msg} (line {exc.lineno})"]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "run":
            if len(node.args.args) < 2:
                return ["skill.py: run must take (ctx, args)"]
            return []
    return ["skill.py has no top-level `def run(ctx, args)`"]
