"""``sheriff skills list/route/run`` against the real Neo4j and model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.settings import Settings

SHERIFF = str(Path(sys.executable).with_name("sheriff"))


@pytest.fixture
def env(settings: Settings, namespace: str, tmp_path: Path) -> dict[str, str]:
    uri, user, password = settings.connection()
    ws = tmp_path / "ws"
    (ws / "app").mkdir(parents=True)
    (ws / "app/__init__.py").write_text("")
    (ws / "app/parser.py").write_text(
        "def parse(text: str) -> list[str]:\n    '''Split lines.'''\n    return text.splitlines()\n"
    )
    return {
        **os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password,
        "SHERIFF_SKILLS_NAMESPACE": namespace, "SHERIFF_SKILLS_WORKSPACE": str(ws),
    }  # fmt: skip


def sheriff(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SHERIFF, "skills", *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_list_json_names_the_built_in_skills_and_reports_broken_folders(
    env: dict[str, str], tmp_path: Path
) -> None:
    broken = tmp_path / "extra/broken"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text("{not json")
    done = sheriff(env, "list", "--json", "--skills-dir", str(tmp_path / "extra"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [s["skill_id"] for s in data["skills"]] == [
        "debug",
        "plan_and_execute",
        "repo_refactor",
        "write_docs",
    ]
    assert all(s["has_tests"] for s in data["skills"])
    [problem] = data["problems"]
    assert problem["path"].endswith("broken") and "not JSON" in problem["message"]


def test_route_json_ranks_skills_with_reasons(env: dict[str, str]) -> None:
    done = sheriff(env, "route", "refactor the storage module: rename Loader to Reader", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["intent"] == "coding" and data["mode"] == "deep"
    assert [t["name"] for t in data["triggers"]] == ["change_request", "multi_step"]
    top = data["skills"][0]
    assert top["skill_id"] == "repo_refactor"
    assert top["reasons"][0].startswith("serves intent coding")
    assert top["args_hint"] == {"old_name": "Loader", "new_name": "Reader", "module": "storage"}
    assert len(data["skills"]) >= 3 and data["skills"][0]["score"] >= data["skills"][1]["score"]


def test_run_prints_the_skill_result_and_writes_the_docs(env: dict[str, str]) -> None:
    done = sheriff(env, "run", "write_docs", "--args", '{"target": "parser"}')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] and result["outcome"] == "success" and result["recorded"]
    assert result["output"]["functions"] == ["parse"]
    assert (
        "parse(text: str) -> list[str]"
        in (Path(env["SHERIFF_SKILLS_WORKSPACE"]) / "docs/app.parser.md").read_text()
    )


def test_run_exit_codes_for_bad_args_and_failures(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in (
        "NEO4J_URI",
        "NEO4J_USER",
        "NEO4J_PASSWORD",
        "SHERIFF_SKILLS_NAMESPACE",
        "SHERIFF_SKILLS_WORKSPACE",
    ):
        monkeypatch.setenv(key, env[key])
    runner = CliRunner()
    bad = runner.invoke(app, ["skills", "run", "write_docs", "--args", '{"target": 3, "x": 1}'])
    assert bad.exit_code == 2
    data = json.loads(bad.stdout)
    assert data["violations"] == [
        "$: Additional properties are not allowed ('x' was unexpected)",
        "$.target: 3 is not of type 'string'",
    ]
    assert runner.invoke(app, ["skills", "run", "write_docs", "--args", "{oops"]).exit_code == 2
    missing = runner.invoke(app, ["skills", "run", "write_docs", "--args", '{"target": "lexer"}'])
    assert missing.exit_code == 1 and json.loads(missing.stdout)["outcome"] == "failed"
    unknown = runner.invoke(app, ["skills", "run", "nope"])
    assert unknown.exit_code == 2 and "no skill 'nope'" in unknown.stderr
