"""Where each namespace's files live: one workspace folder per tenant, apart from everything else.

``TenantWorkspaces(root, protected=...)`` hands out ``<root>/<name>`` for a namespace, made on
first use with mode 0700. The name is a short slug of the namespace plus 24 hex digits of its
SHA-256, so it is always a safe single folder name (no ``/``, ``..``, control characters or
length surprises) and two namespaces never share a folder. The root is checked once, at
start-up: it may not be, contain or sit inside a skill folder, the code, the Python
installation, and it may not contain the state folder (Neo4j data, its password, API keys).
The default root is ``<state folder>/workspaces``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from skills.config import BUILTIN_DIR, SkillSettings
from skills.errors import WorkspaceInvalid

CODE_ROOT = BUILTIN_DIR.parent  # the folder holding the skills/, api/, graph/... packages
_SLUG = re.compile(r"[^a-z0-9]+")


def workspace_dir_name(namespace: str) -> str:
    """The folder name of a namespace's workspace: ``<slug>-<24 hex of sha256>``."""
    slug = _SLUG.sub("-", namespace.lower()).strip("-")[:32].strip("-") or "ns"
    digest = hashlib.sha256(namespace.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{slug}-{digest}"


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def protected_paths(settings: SkillSettings) -> list[Path]:
    """What a workspaces root may not overlap: the skill folders, the code and Python."""
    paths = [*settings.skill_dirs(), CODE_ROOT, Path(sys.prefix), Path(sys.base_prefix)]
    return [_real(p) for p in paths]


def check_root(root: Path, protected: Iterable[Path], state_home: Path | None = None) -> Path:
    """The real path of a workspaces root, or ``WorkspaceInvalid`` naming the overlap.

    A root inside the state folder is allowed (that is the default) even when the state folder
    itself sits inside the code, as in a development checkout; the Neo4j folder is never.
    Messages name host paths: this runs at start-up, for the operator.
    """
    real = _real(root)
    home = _real(state_home) if state_home is not None else None
    if home is not None and home.is_relative_to(real):
        raise WorkspaceInvalid(f"the workspaces folder {real} contains the state folder {home}")
    if home is not None and real.is_relative_to(home / "neo4j"):
        raise WorkspaceInvalid(f"the workspaces folder {real} is inside the Neo4j folder")
    in_home = home is not None and real.is_relative_to(home)
    for path in protected:
        if path.is_relative_to(real):
            raise WorkspaceInvalid(f"the workspaces folder {real} contains {path}")
        exempt = in_home and home is not None and home.is_relative_to(path)
        if real.is_relative_to(path) and not exempt:
            raise WorkspaceInvalid(
                f"the workspaces folder {real} is inside {path} (skills, code or Python); "
                "choose a folder of its own, e.g. <state folder>/workspaces"
            )
    return real


class TenantWorkspaces:
    """One workspace folder per namespace under a checked root (see the module docstring)."""

    def __init__(
        self, root: Path, protected: Sequence[Path], state_home: Path | None = None
    ) -> None:
        self.root = check_root(root, protected, state_home)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)

    def for_namespace(self, namespace: str) -> Path:
        """The namespace's workspace, made on first use; a link planted there is refused."""
        path = self.root / workspace_dir_name(namespace)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise WorkspaceInvalid(f"the workspace of namespace {namespace!r} is not a folder")
        return path
