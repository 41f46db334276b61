"""/v1/skills: list, search, run in the caller's namespace (runs, skills and utility never land
in another namespace), 404 for unknown skills and 422 listing each bad argument."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key, tenant_workspace


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("workspaces")) as c:
        yield c


@pytest.fixture
def workspace(client: TestClient, namespace: str) -> Path:
    """The caller's own workspace, with a small package in it."""
    ws = tenant_workspace(client, namespace)
    (ws / "app").mkdir()
    (ws / "app/__init__.py").write_text("")
    (ws / "app/parser.py").write_text(
        "def parse(text: str) -> list[str]:\n    '''Split lines.'''\n    return text.splitlines()\n"
    )
    return ws


@pytest.fixture
def auth(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


def test_list_and_search(client: TestClient, auth: dict[str, str]) -> None:
    listed = client.get("/v1/skills", headers=auth).json()
    assert [s["skill_id"] for s in listed["skills"]] == [
        "debug", "plan_and_execute", "repo_refactor", "write_docs",
    ]  # fmt: skip
    found = client.post(
        "/v1/skills/search", json={"query": "write markdown documentation", "k": 2}, headers=auth
    ).json()
    assert found["skills"][0]["skill_id"] == "write_docs" and len(found["skills"]) <= 2


def test_run_records_the_run_in_the_callers_namespace(
    client: TestClient, auth: dict[str, str], namespace: str, workspace: Path, driver: Driver
) -> None:
    response = client.post(
        "/v1/skills/run", json={"name": "write_docs", "args": {"target": "parser"}}, headers=auth
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["ok"] and result["recorded"] and result["output"]["functions"] == ["parse"]
    assert "parse(text: str)" in (workspace / "docs/app.parser.md").read_text()
    records, _, _ = driver.execute_query(
        "MATCH (r:SkillRun {run_id: $id}) RETURN r.namespace AS ns", id=result["run_id"]
    )
    assert [r["ns"] for r in records] == [namespace]


def test_bad_runs_say_what_is_wrong(client: TestClient, auth: dict[str, str]) -> None:
    unknown = client.post("/v1/skills/run", json={"name": "nope"}, headers=auth)
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]
    bad = client.post(
        "/v1/skills/run", json={"name": "write_docs", "args": {"target": 3}}, headers=auth
    )
    assert bad.status_code == 422
    assert "$.target: 3 is not of type 'string'" in bad.json()["detail"]
    shape = client.post("/v1/skills/run", json={"name": "Write Docs"}, headers=auth)
    assert shape.json()["fields"][0]["field"] == "body.name"
    failed = client.post(
        "/v1/skills/run", json={"name": "write_docs", "args": {"target": "lexer"}}, headers=auth
    ).json()
    assert failed["ok"] is False and failed["outcome"] == "failed"
