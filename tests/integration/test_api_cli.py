"""``sheriff keys create/list/revoke`` and ``sheriff search`` against the real Neo4j: a key made
by the CLI opens its namespace over REST, and the CLI search explains its ranking."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.cli import app
from api.settings import Settings
from graph.keys import looks_like_key
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer

NOW = "2026-03-10T12:00:00Z"


@pytest.fixture
def runner(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    uri, user, password = settings.connection()
    for name, value in (("NEO4J_URI", uri), ("NEO4J_USER", user), ("NEO4J_PASSWORD", password)):
        monkeypatch.setenv(name, value)
    return CliRunner()


@pytest.fixture
def client(settings: Settings, embedder: MiniLMEmbedder, tmp_path: Path) -> Iterator[TestClient]:
    """A server that does not cache keys, so a CLI revocation shows at once."""
    with api_client(settings, embedder, tmp_path, api_key_cache_seconds=0) as c:
        yield c


def _keys(runner: CliRunner, namespace: str) -> list[dict[str, object]]:
    done = runner.invoke(app, ["keys", "list", "-n", namespace, "--json"])
    assert done.exit_code == 0, done.output
    found: list[dict[str, object]] = json.loads(done.stdout)
    return found


def test_keys_create_list_revoke(runner: CliRunner, namespace: str, client: TestClient) -> None:
    made = runner.invoke(app, ["keys", "create", "-n", namespace, "--label", "ci"])
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert looks_like_key(key) and "not shown again" in made.stderr
    assert client.get("/v1/messages", headers=bearer(key)).status_code == 200

    [listed] = _keys(runner, namespace)
    assert listed["namespace"] == namespace and listed["label"] == "ci"
    assert listed["prefix"] == key[:12] and "key_hash" not in listed
    assert key not in json.dumps(listed)

    revoked = runner.invoke(app, ["keys", "revoke", str(listed["key_id"])])
    assert revoked.exit_code == 0 and "revoked" in revoked.stderr
    assert _keys(runner, namespace)[0]["revoked"] is True
    active = runner.invoke(app, ["keys", "list", "-n", namespace, "--active", "--json"])
    assert json.loads(active.stdout) == []
    assert client.get("/v1/messages", headers=bearer(key)).status_code == 401


def test_keys_refuse_bad_input(runner: CliRunner) -> None:
    bad = runner.invoke(app, ["keys", "create", "-n", "no spaces allowed"])
    assert bad.exit_code == 1 and "namespace" in bad.stderr
    missing = runner.invoke(app, ["keys", "revoke", "key_does_not_exist"])
    assert missing.exit_code == 1 and "no API key with id 'key_does_not_exist'" in missing.stderr


def test_search_prints_ranked_topics_with_why(
    runner: CliRunner, namespace: str, client: TestClient
) -> None:
    key = runner.invoke(app, ["keys", "create", "-n", namespace]).stdout.strip()
    for name, one_liner, seen in (
        ("Birthday party", "Ana's birthday party in the garden.", "2026-03-05T10:00:00Z"),
        ("Office party", "The office Christmas party.", "2025-12-15T10:00:00Z"),
    ):
        client.post("/v1/topics", json={"name": name, "one_liner": one_liner,
                                        "first_seen_at": seen}, headers=bearer(key)).raise_for_status()  # fmt: skip
    args = ["search", "party", "-n", namespace, "--window", "last week", "--now", NOW]
    done = runner.invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    rest = client.get("/v1/topics/search", params={"query": "party", "window": "last week",
                                                   "now": NOW}, headers=bearer(key)).json()  # fmt: skip
    assert [h["topic_id"] for h in data["hits"]] == [h["topic_id"] for h in rest["hits"]]
    assert data["hits"][0]["name"] == "Birthday party"

    text = runner.invoke(app, args).stdout
    assert text.index("1. Birthday party") < text.index("2. Office party")
    assert "why: matched by" in text and "seen within 'last week'" in text
    bad = runner.invoke(app, ["search", "party", "-n", namespace, "--k", "0"])
    assert bad.exit_code == 2 and "k:" in bad.stderr
