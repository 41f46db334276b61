"""Repo tools confined to a workspace: paths, symlinks, limits, allow-listed test runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skills.config import SkillSettings
from skills.errors import ToolFailed, ToolRefused
from skills.tools import RepoTools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/a.py").write_text("A = 1\n")
    (root / "README.md").write_text("# ws\n")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]\n")
    (root / "pkg/__pycache__").mkdir()
    (root / "pkg/__pycache__/a.pyc").write_bytes(b"\0")
    (tmp_path / "secret.txt").write_text("outside")
    return root


def tools(root: Path, **settings: object) -> RepoTools:
    return RepoTools(root, SkillSettings.model_validate(settings))


def test_list_read_write_move_inside_the_workspace(ws: Path) -> None:
    repo = tools(ws)
    assert repo.list_files() == ["README.md", "pkg/a.py"]  # .git and __pycache__ skipped
    assert repo.list_files("**/*.py") == ["pkg/a.py"]
    assert repo.read_file("pkg/a.py") == "A = 1\n"
    assert repo.write_file("docs/new.md", "hi") == {
        "path": "docs/new.md",
        "bytes": 2,
        "created": True,
    }
    assert repo.write_file("docs/new.md", "hey")["created"] is False
    assert repo.move_file("docs/new.md", "docs/old.md") == {
        "src": "docs/new.md",
        "dst": "docs/old.md",
    }
    assert (ws / "docs/old.md").read_text() == "hey"
    with pytest.raises(ToolFailed, match="already exists"):
        repo.move_file("README.md", "pkg/a.py")
    with pytest.raises(ToolFailed, match="no file"):
        repo.read_file("missing.py")


@pytest.mark.parametrize("path", ["/etc/passwd", "~/.ssh/id_rsa", "C:/x.txt"])
def test_absolute_paths_are_refused(ws: Path, path: str) -> None:
    with pytest.raises(ToolRefused, match="absolute path"):
        tools(ws).read_file(path)


@pytest.mark.parametrize("path", ["../secret.txt", "pkg/../../secret.txt", "pkg/../a.py"])
def test_dotdot_is_refused_even_when_it_would_stay_inside(ws: Path, path: str) -> None:
    with pytest.raises(ToolRefused, match=r"'\.\.' may not appear"):
        tools(ws).read_file(path)
    with pytest.raises(ToolRefused):
        tools(ws).write_file(path, "x")


def test_symlinks_out_of_the_root_are_refused(ws: Path) -> None:
    (ws / "link.txt").symlink_to(ws.parent / "secret.txt")
    (ws / "outdir").symlink_to(ws.parent)
    (ws / "inside.py").symlink_to(ws / "pkg/a.py")
    repo = tools(ws)
    with pytest.raises(ToolRefused, match="resolves outside the workspace"):
        repo.read_file("link.txt")
    with pytest.raises(ToolRefused, match="resolves outside the workspace"):
        repo.write_file("outdir/planted.txt", "x")
    assert not (ws.parent / "planted.txt").exists()
    assert repo.read_file("inside.py") == "A = 1\n"  # a link that stays inside is fine
    assert "link.txt" not in repo.list_files() and "inside.py" in repo.list_files()
    with pytest.raises(ToolRefused):
        repo.list_files("../*")


def test_git_writes_and_size_limits_are_refused(ws: Path) -> None:
    repo = tools(ws, max_read_bytes=10, max_write_bytes=5)
    with pytest.raises(ToolRefused, match=r"writes into \.git"):
        repo.write_file(".git/hooks/pre-commit", "x")
    with pytest.raises(ToolRefused, match="the write limit is 5"):
        repo.write_file("big.txt", "123456")
    (ws / "big.txt").write_text("x" * 11)
    with pytest.raises(ToolRefused, match="is 11 bytes; the read limit is 10"):
        repo.read_file("big.txt")


def test_run_tests_runs_presets_and_allow_listed_commands_only(ws: Path) -> None:
    (ws / "test_a.py").write_text("from pkg.a import A\n\n\ndef test_a():\n    assert A == 1\n")
    (ws / "pkg/__init__.py").write_text("")
    repo = tools(ws)
    result = repo.run_tests(preset="pytest")
    assert result["exit_code"] == 0 and result["passed"] and "1 passed" in result["output_tail"]
    assert repo.run_tests(command="pytest -q")["passed"]
    with pytest.raises(ToolRefused, match="not allow-listed"):
        repo.run_tests(command="pytest -q; rm -rf /")
    with pytest.raises(ToolRefused, match="not allow-listed"):
        repo.run_tests(command="bash -c 'echo hi'")
    with pytest.raises(ToolRefused, match="unknown test preset"):
        repo.run_tests(preset="deploy")
    with pytest.raises(ToolRefused, match="exactly one"):
        repo.run_tests()


def test_run_tests_reports_failures_with_the_output_tail(ws: Path) -> None:
    (ws / "test_b.py").write_text("def test_b():\n    assert 1 == 2\n")
    result = tools(ws, output_tail_chars=300).run_tests(preset="pytest")
    assert result["exit_code"] == 1 and result["passed"] is False
    assert len(result["output_tail"]) <= 300 and "1 failed" in result["output_tail"]


def test_run_tests_timeout_kills_the_whole_process_group(ws: Path) -> None:
    (ws / "test_slow.py").write_text(
        "import pathlib, subprocess, sys, time\n\n\ndef test_slow():\n"
        "    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "    pathlib.Path('grandchild.pid').write_text(str(p.pid))\n"
        "    time.sleep(60)\n"
    )
    t0 = time.monotonic()
    # long enough for pytest to start and spawn the grandchild on a loaded machine
    result = tools(ws, test_timeout_s=12).run_tests(preset="pytest")
    assert result["timed_out"] is True and result["passed"] is False
    assert time.monotonic() - t0 < 30
    grandchild = int((ws / "grandchild.pid").read_text())
    time.sleep(0.2)
    assert not _running(grandchild)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_test_runs_do_not_see_secrets(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    (ws / "test_env.py").write_text(
        "import os\n\n\ndef test_env():\n    assert 'OPENAI_API_KEY' not in os.environ\n"
    )
    assert tools(ws).run_tests(preset="pytest")["passed"]
    assert os.environ["OPENAI_API_KEY"] == "sk-test-secret"
