"""plan_and_execute on a sample workspace; nested skills run in their own processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills.config import SkillSettings
from skills.context import SkillContext
from skills.plan_and_execute.skill import run
from skills.service import SkillService
from skills.testing import local_context

SKILL_DIR = Path(__file__).resolve().parents[1]

WORKSPACE = {
    "app/__init__.py": "",
    "app/storage.py": "class Loader:\n    def load(self):\n        return [1, 2]\n",
    "app/sync/__init__.py": '"""Sync between devices."""\n',
    "app/sync/queue.py": (
        '"""Outgoing change queue."""\n\nfrom app.storage import Loader\n\n\n'
        "def enqueue(change: dict) -> int:\n    '''Queue a change.'''\n    return len(Loader().load())\n"
    ),
    "app/sync/merge.py": "def merge(a: dict, b: dict) -> dict:\n    return {**a, **b}\n",
    "tests/test_storage.py": "from app.storage import Loader\n\n\ndef test_load():\n    assert Loader().load() == [1, 2]\n",
    "tests/test_sync.py": "from app.sync.queue import enqueue\n\n\ndef test_enqueue():\n    assert enqueue({}) == 2\n",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for rel, text in WORKSPACE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def context(ws: Path) -> SkillContext:
    service = SkillService(SkillSettings(workspace=ws))
    return local_context(SKILL_DIR, ws, skills=service)


def test_design_question_surveys_the_relevant_code(ws: Path) -> None:
    out = run(context(ws), {"request": "how should we architect the sync service?"})
    assert out["ok"] and out["status"] == "completed" and out["planner"] == "heuristic"
    design = out["design"]
    assert design["keywords"] == ["sync"]
    assert [m["module"] for m in design["relevant_modules"]] == [
        "app.sync",
        "app.sync.merge",
        "app.sync.queue",
    ]
    queue = design["relevant_modules"][2]
    assert queue["functions"] == ["enqueue(change: dict) -> int"] and queue["imports"] == [
        "app.storage"
    ]
    assert ["app.sync.queue", "app.storage"] in design["dependencies"]
    assert design["tests"] == ["tests/test_sync.py"]
    assert "2. Build on: app.sync, app.sync.merge, app.sync.queue." in design["outline"]


def test_multi_step_request_runs_each_step_through_its_skill(ws: Path) -> None:
    request = (
        "rename Loader to Reader in the storage module, then write docs for the storage module "
        "and run the tests"
    )
    out = run(context(ws), {"request": request})
    assert out["ok"] and out["status"] == "completed", out.get("error")
    assert [r["ok"] for r in out["results"]] == [True, True, True]
    refactor, docs, tests = out["results"]
    assert refactor["skill_id"] == "repo_refactor" and refactor["outcome"] == "success"
    assert docs["output"]["docs_path"] == "docs/app.storage.md"
    assert tests["value"]["passed"] is True
    assert "class Reader" in (ws / "app/storage.py").read_text()
    assert "from app.storage import Reader" in (ws / "app/sync/queue.py").read_text()
    assert "`class Reader`" in (ws / "docs/app.storage.md").read_text()


def test_stops_at_the_first_failure_and_resumes_from_there(ws: Path) -> None:
    request = (
        "rename Loader to Reader in the storage module, then write docs for the exporter module"
    )
    first = run(context(ws), {"request": request})
    assert first["ok"] is False and first["status"] == "failed" and first["failed_step"] == 1
    assert "no module or package 'exporter'" in first["error"]
    state = first["resume_state"]
    assert state["next_step"] == 1 and [r["step"] for r in state["results"]] == ["s1"]

    (ws / "app/exporter.py").write_text("def export(rows: list) -> str:\n    return ''\n")
    second = run(context(ws), {"request": request, "resume_state": state})
    assert second["ok"] and second["planner"] == "resumed"
    assert [r["step"] for r in second["results"]] == ["s1", "s2"]
    assert second["results"][0]["run_id"] == first["results"][0]["run_id"]  # not run again
    assert (ws / "docs/app.exporter.md").exists()


def test_a_plan_that_fails_its_check_runs_nothing(ws: Path) -> None:
    steps = [
        {"kind": "skill", "name": "write_docs", "args": {"target": "app.storage"}},
        {"kind": "tool", "name": "repo.write_file", "args": {"path": "x.py", "content": ""}},
        {"kind": "skill", "name": "repo_refactor", "args": {"old_name": "Loader"}},
    ]
    out = run(context(ws), {"request": "do these", "steps": steps})
    assert out["status"] == "rejected" and out["results"] == []
    assert any("repo.write_file" in p and "go through skills" in p for p in out["problems"])
    assert "step 3 ('repo_refactor'): $: 'new_name' is a required property" in out["problems"]
    assert not (ws / "docs").exists()


def test_dry_run_and_unknown_requests(ws: Path) -> None:
    planned = run(context(ws), {"request": "write docs for the storage module", "dry_run": True})
    assert planned["status"] == "planned" and planned["plan"][0]["name"] == "write_docs"
    assert not (ws / "docs").exists()
    vague = run(context(ws), {"request": "make it better"})
    assert vague["status"] == "rejected" and "cannot map 'make it better'" in vague["error"]
