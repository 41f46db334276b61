"""Repo tools on disk against escapes planted inside a workspace (as a skill or a test run could
plant them): symlinks, hard links, FIFOs, links swapped in after the check, over-long names,
failed writes, unbounded patterns, skill packages and the state folder of a local workspace.

Every attack is refused with a clear error and changes nothing outside the workspace (and
leaves nothing behind inside it)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from graph.errors import ValidationFailed
from skills import safefs
from skills.config import SkillSettings
from skills.errors import PathInvalid, ToolFailed, ToolRefused, ToolUnavailable
from skills.tools import RepoTools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/a.py").write_text("A = 1\n")
    (root / "README.md").write_text("# ws\n")
    (tmp_path / "secret.txt").write_text("outside secret")
    return root


def tools(root: Path, **settings: object) -> RepoTools:
    return RepoTools(root, SkillSettings.model_validate(settings))


def tree(root: Path) -> dict[str, str]:
    """Every entry below ``root`` (hidden ones too) -> its content, link target or 'dir'."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes().decode("utf-8", "replace")
    return found


def test_a_symlink_to_a_file_outside_is_refused_for_read_write_and_move(ws: Path) -> None:
    secret = ws.parent / "secret.txt"
    (ws / "link.txt").symlink_to(secret)
    (ws / "passwd").symlink_to("/etc/passwd")
    repo = tools(ws)
    for path in ("link.txt", "passwd"):
        with pytest.raises(ToolRefused, match="resolves outside the workspace"):
            repo.read_file(path)
        with pytest.raises(ToolRefused, match="resolves outside the workspace"):
            repo.write_file(path, "overwritten")
        with pytest.raises(ToolRefused):
            repo.move_file(path, "moved.txt")
    assert secret.read_text() == "outside secret"
    assert "link.txt" not in repo.list_files() and "passwd" not in repo.list_files()


def test_a_symlinked_folder_outside_is_never_entered(ws: Path) -> None:
    (ws / "up").symlink_to(ws.parent)
    (ws / "loop").symlink_to(ws)
    repo = tools(ws)
    with pytest.raises(ToolRefused, match="resolves outside the workspace"):
        repo.read_file("up/secret.txt")
    with pytest.raises(ToolRefused, match="resolves outside the workspace"):
        repo.write_file("up/planted.txt", "x")
    assert not (ws.parent / "planted.txt").exists()
    assert repo.list_files("**/*") == ["README.md", "pkg/a.py"]  # neither link is walked


def test_a_hard_link_to_a_file_outside_is_refused(ws: Path) -> None:
    secret = ws.parent / "secret.txt"
    os.link(secret, ws / "hard.txt")
    repo = tools(ws)
    with pytest.raises(ToolRefused, match="hard-linked"):
        repo.read_file("hard.txt")
    with pytest.raises(ToolRefused, match="hard-linked"):
        repo.write_file("hard.txt", "overwritten")
    with pytest.raises(ToolRefused, match="hard-linked"):
        repo.move_file("hard.txt", "elsewhere.txt")
    assert secret.read_text() == "outside secret"
    assert (ws / "hard.txt").exists() and not (ws / "elsewhere.txt").exists()


def test_a_fifo_or_device_is_refused_without_blocking(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    repo = tools(ws)
    with pytest.raises(ToolRefused, match="not a regular file"):
        repo.read_file("pipe")  # O_NONBLOCK: no writer, no hang
    with pytest.raises(ToolRefused, match="not a regular file"):
        repo.write_file("pipe", "x")


def test_a_link_swapped_in_after_the_check_is_not_followed(ws: Path) -> None:
    """The walk itself refuses links (O_NOFOLLOW), so a race after ``target`` cannot escape."""
    (ws / "pkg/a.py").unlink()
    (ws / "pkg").rmdir()
    (ws / "pkg").symlink_to(ws.parent)
    with pytest.raises(ToolRefused, match="symbolic link"):
        safefs.read_bytes(ws, ("pkg", "secret.txt"), 1000)
    with pytest.raises(ToolRefused, match="symbolic link"):
        safefs.write_atomic(ws, ("pkg", "planted.txt"), b"x")
    (ws / "last").symlink_to(ws.parent / "secret.txt")
    with pytest.raises(ToolRefused, match="symbolic link"):
        safefs.read_bytes(ws, ("last",), 1000)
    with pytest.raises(ToolRefused, match="symbolic link"):
        safefs.write_atomic(ws, ("last",), b"x")
    assert not (ws.parent / "planted.txt").exists()
    assert (ws.parent / "secret.txt").read_text() == "outside secret"


@pytest.mark.parametrize(
    ("path", "error", "why"),
    [
        ("a/b/" + "x" * 300, PathInvalid, "at most 255"),
        ("deep/" * 40 + "f.txt", PathInvalid, "folders deep"),
        ("README.md/x", ToolFailed, "is a file, not a folder"),
        (".", PathInvalid, "names the workspace folder"),
        ("pkg", ToolFailed, "is a folder"),
        ("new/\x1b[2Jx.txt", PathInvalid, "U\\+001B"),
    ],
)
def test_bad_writes_are_clear_errors_and_leave_nothing(
    ws: Path, path: str, error: type[Exception], why: str
) -> None:
    before = tree(ws)
    with pytest.raises(error, match=why):
        tools(ws).write_file(path, "content")
    assert tree(ws) == before


def test_a_write_that_fails_midway_removes_its_folders_and_temporary_file(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(ws)

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safefs.os, "replace", disk_full)
    with pytest.raises(ToolFailed, match="no space left") as err:
        tools(ws).write_file("new/deeper/file.txt", "content")
    assert str(ws) not in str(err.value)
    assert tree(ws) == before


def test_list_patterns_are_bounded_and_skip_hidden_folders(ws: Path) -> None:
    venv = ws / ".venv/lib"
    venv.mkdir(parents=True)
    for i in range(300):
        (venv / f"m{i}.py").write_text("")
    deep = ws.joinpath(*["d"] * 25)
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("")
    repo = tools(ws, max_list_depth=16)
    listing = repo.listing("**/*")
    assert listing.files == ["README.md", "pkg/a.py"]
    assert listing.truncated  # the deep file is below the depth limit
    assert listing.walked < 40  # .venv was never opened
    with pytest.raises(PathInvalid, match="at most one"):
        repo.listing("**/**/**/**/*")
    small = tools(ws, max_list_entries=5).listing("**/*")
    assert small.truncated and small.walked <= 5
    few = tools(ws, max_list_files=1).listing("**/*")
    assert few.truncated and few.files == ["README.md"]
    assert not tools(ws).listing("pkg/*.py").truncated


def test_a_workspace_cannot_be_a_skill_folder_and_skill_packages_are_read_only(
    tmp_path: Path,
) -> None:
    skills_dir = tmp_path / "repo/skills"
    (skills_dir / "mine").mkdir(parents=True)
    (skills_dir / "mine/skill.py").write_text("def run(ctx, args):\n    return {}\n")
    settings = SkillSettings(include_builtin=False, dirs=[skills_dir])
    with pytest.raises(ToolUnavailable, match="inside a skill folder"):
        RepoTools(skills_dir / "mine", settings)
    repo = RepoTools(tmp_path / "repo", settings)  # a local checkout that holds its skills
    assert "def run" in repo.read_file("skills/mine/skill.py")
    with pytest.raises(ToolRefused, match="skill packages are refused"):
        repo.write_file("skills/mine/skill.py", "import os\n")
    with pytest.raises(ToolRefused, match="skill packages are refused"):
        repo.write_file("skills/evil/skill.py", "import os\n")
    (tmp_path / "repo/x.py").write_text("")
    with pytest.raises(ToolRefused, match="skill packages are refused"):
        repo.move_file("x.py", "skills/mine/x.py")
    (tmp_path / "repo/link").symlink_to(skills_dir / "mine")
    with pytest.raises(ToolRefused, match="skill packages are refused"):
        repo.write_file("link/skill.py", "import os\n")
    assert (skills_dir / "mine/skill.py").read_text().startswith("def run")


def test_the_state_folder_in_a_local_workspace_is_out_of_reach(tmp_path: Path) -> None:
    (tmp_path / ".sheriff/neo4j").mkdir(parents=True)
    (tmp_path / ".sheriff/neo4j/password").write_text("hunter2")
    (tmp_path / "pw").symlink_to(tmp_path / ".sheriff/neo4j/password")
    repo = RepoTools(tmp_path, SkillSettings(), hidden=[tmp_path / ".sheriff"])
    for path in (".sheriff/neo4j/password", "pw"):
        with pytest.raises(ToolRefused, match="not part of the workspace"):
            repo.read_file(path)
    with pytest.raises(ToolRefused):
        repo.write_file(".sheriff/neo4j/password", "x")
    assert "pw" not in repo.list_files("*")
    assert (tmp_path / ".sheriff/neo4j/password").read_text() == "hunter2"


def test_a_full_workspace_refuses_writes(ws: Path) -> None:
    repo = RepoTools(ws, SkillSettings(max_workspace_bytes=100, max_workspace_files=10), quota=True)
    repo.write_file("a.txt", "x" * 50)
    with pytest.raises(ToolRefused, match="the workspace is full"):
        repo.write_file("b.txt", "x" * 60)
    repo.write_file("a.txt", "x" * 10)  # replacing shrinks it
    repo.write_file("b.txt", "x" * 60)
    assert not (ws / "c").exists()


def test_concurrent_writers_never_leave_temporary_files(ws: Path) -> None:
    repo = tools(ws)
    threads = [
        threading.Thread(target=repo.write_file, args=("same.txt", str(i) * 1000)) for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len((ws / "same.txt").read_text()) == 1000
    assert not [p for p in ws.iterdir() if p.name.startswith(".sheriff-")]


def test_content_with_a_lone_surrogate_is_refused(ws: Path) -> None:
    before = tree(ws)
    with pytest.raises(ValidationFailed, match="lone surrogate"):
        tools(ws).write_file("new/s.txt", "text \ud800")  # what a skill's JSON may carry
    assert tree(ws) == before
