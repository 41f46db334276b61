"""repo_refactor on a sample workspace: edits, compile check, and a real pytest run."""

from __future__ import annotations

from pathlib import Path

from skills.repo_refactor.skill import run
from skills.testing import local_context

SKILL_DIR = Path(__file__).resolve().parents[1]

WORKSPACE = {
    "app/__init__.py": "from .storage import Loader\n",
    "app/storage.py": (
        "class Loader:\n    def load(self):\n        return [1, 2]\n\n\n"
        "def make():\n    return Loader()\n"
    ),
    "app/service.py": "from app import storage\n\n\ndef count():\n    return len(storage.Loader().load())\n",
    "tests/test_app.py": (
        "from app import Loader\nfrom app.service import count\n\n\n"
        "def test_count():\n    assert count() == 2\n    assert Loader().load() == [1, 2]\n"
    ),
}


def workspace(tmp_path: Path, files: dict[str, str] = WORKSPACE) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_rename_symbol_then_tests_pass(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = run(
        local_context(SKILL_DIR, ws),
        {"old_name": "Loader", "new_name": "Reader", "module": "storage"},
    )
    assert out["ok"] is True and out["compiled"] is True, out
    assert out["tests"]["passed"] is True and out["tests"]["exit_code"] == 0
    assert "1 passed" in out["tests"]["output_tail"]
    assert {f["path"] for f in out["changed_files"]} == set(WORKSPACE)
    assert "class Reader:" in (ws / "app/storage.py").read_text()
    assert "storage.Reader()" in (ws / "app/service.py").read_text()
    assert "Loader" not in "".join((ws / p).read_text() for p in WORKSPACE)


def test_rename_module_moves_the_file_and_tests_pass(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = run(local_context(SKILL_DIR, ws), {"old_name": "storage", "new_name": "store"})
    assert out["ok"] is True and out["kind"] == "module", out
    assert out["moved"] == [{"src": "app/storage.py", "dst": "app/store.py"}]
    assert not (ws / "app/storage.py").exists() and (ws / "app/store.py").exists()
    assert (ws / "app/service.py").read_text().startswith("from app import store\n")


def test_dry_run_reports_and_writes_nothing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = run(
        local_context(SKILL_DIR, ws), {"old_name": "make", "new_name": "build", "dry_run": True}
    )
    assert (
        out["ok"]
        and out["dry_run"]
        and out["changed_files"] == [{"path": "app/storage.py", "replacements": 1}]
    )
    assert "def make" in (ws / "app/storage.py").read_text()


def test_failing_tests_after_the_rename_are_reported(tmp_path: Path) -> None:
    files = {
        **WORKSPACE,
        "tests/test_names.py": "import app.storage\n\n\ndef test_name():\n    assert hasattr(app.storage, 'Loader')\n",
    }
    ws = workspace(tmp_path, files)
    out = run(local_context(SKILL_DIR, ws), {"old_name": "Loader", "new_name": "Reader"})
    assert out["ok"] is False and out["compiled"] is True
    assert "tests failed" in out["error"] and "1 failed" in out["tests"]["output_tail"]
    assert any("tests/test_names.py:5" in m for m in out["mentions_left"])


def test_unknown_name_is_an_error_that_changes_nothing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = run(local_context(SKILL_DIR, ws), {"old_name": "Missing", "new_name": "Found"})
    assert out["ok"] is False and "not defined at module level" in out["error"]
    assert (ws / "app/storage.py").read_text() == WORKSPACE["app/storage.py"]
