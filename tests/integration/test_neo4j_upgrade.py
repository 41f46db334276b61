"""A store written by Neo4j 5.26 through the product is opened by 2026.08.1 via `sheriff neo4j
start`: backed up first, upgraded by the server, and the migrations, queries and data still work.

Two private servers start one after the other on their own home and ports (5.26 from the shared
jars when the main managed home has them, 2026.08.1 fetched from Maven Central into this home):
several minutes on a loaded machine, so the normal suite skips it and
``scripts/test-neo4j-upgrade`` runs it (docs/neo4j.md, "Moving to 2026.x").

The 5.26 store is the one the product wrote before the switch: its schema ends at
``LAST_ON_526`` (the migrations after it need Cypher 25, which 5.26 refuses: so does
``apply_migrations``, before writing anything) and its vector search is read with plain Cypher
(the product's vector queries are Cypher 25 now). On 2026.08.1 the remaining migrations build the
namespace-filtered vector indexes and drop the plain ones, and the product's search answers what
5.26 answered.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from neo4j import Driver

import graph.migrations
from api.settings import Settings
from graph.cypher import schema_files
from graph.db import connect
from graph.errors import Neo4jUnavailable
from graph.migrations import apply_migrations
from graph.server_store import STORE_VERSION_FILE
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key
from tests.integration.neo4j_homes import private_home_env

pytestmark = pytest.mark.skipif(
    os.environ.get("SHERIFF_TEST_NEO4J_UPGRADE") != "1",
    reason="starts two Neo4j servers (minutes): scripts/test-neo4j-upgrade runs it",
)

OLD, NEW = "5.26.30", "2026.08.1"
LAST_ON_526 = "021_passage_backfill"  # the schema of a store written before the switch
NEAREST = """
MATCH (t:Topic {namespace: $ns}) WHERE t.embedding IS NOT NULL AND t.archived_at IS NULL
WITH t, vector.similarity.cosine(t.embedding, $v) AS score ORDER BY score DESC LIMIT $k
RETURN t.topic_id AS topic_id, score
"""
BOLT, HTTP = 17697, 17497
SHERIFF = [sys.executable, "-c", "from api.cli import main; main()"]
DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TURNS = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. The caterer is Rosa's Kitchen; they want a deposit by Thursday."),
    ("user", "Separately, my bike needs new brake pads before the spring ride."),
]


def sheriff(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SHERIFF, *args], env=env, capture_output=True, text=True, timeout=900, check=False
    )


@pytest.fixture
def home_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = private_home_env(tmp_path, BOLT, HTTP)
    env["SHERIFF_NEO4J_START_TIMEOUT"] = "600"
    # the shared lib holds 5.26's jars: the upgrade replaces the link, never what it points at
    yield env
    sheriff(["neo4j", "stop"], env)


def started(env: dict[str, str], version: str) -> Driver:
    result = sheriff(["neo4j", "start"], {**env, "SHERIFF_NEO4J_VERSION": version})
    assert result.returncode == 0, result.stderr
    home = Path(env["SHERIFF_HOME"]) / "neo4j"
    drv = connect(f"bolt://127.0.0.1:{BOLT}", "neo4j", (home / "password").read_text().strip())
    records, _, _ = drv.execute_query(
        "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions"
    )
    assert records[0]["versions"][0] == version
    apply_migrations(drv, datetime.now(UTC))  # idempotent: applied once, then a no-op
    return drv


def before_the_switch() -> list[tuple[str, str]]:
    return [(name, text) for name, text in schema_files() if name <= LAST_ON_526]


def write_namespace(settings: Settings, embedder: MiniLMEmbedder, work: Path) -> str:
    """Messages, a sleep and a topic with a fact, written through the API; the API key."""
    with api_client(settings, embedder, work) as client:
        key = new_key(client, "upgraded")
        body = [{"role": r, "content": t, "at": (DAY1 + timedelta(minutes=i)).isoformat()}
                for i, (r, t) in enumerate(TURNS)]  # fmt: skip
        client.post("/v1/messages", json={"messages": body, "auto_sleep": False},
                    headers=bearer(key)).raise_for_status()  # fmt: skip
        client.post("/v1/sleep", json={"now": (DAY1 + timedelta(hours=3)).isoformat()},
                    headers=bearer(key)).raise_for_status()  # fmt: skip
        client.post("/v1/topics", headers=bearer(key), json={
            "name": "Surprise party", "one_liner": "Mel's surprise party at the lake house.",
            "facts": [{"text": "Rosa's Kitchen caters the party", "at": DAY1.isoformat()}],
        }).raise_for_status()  # fmt: skip
    return key


def export_lines(settings: Settings, embedder: MiniLMEmbedder, work: Path, key: str) -> list[str]:
    with api_client(settings, embedder, work) as client:
        response = client.get("/v1/export", params={"vectors": "true"}, headers=bearer(key))
        assert response.status_code == 200, response.text
    return sorted(line for line in response.text.splitlines() if '"kind": "header"' not in line)


def test_a_526_store_is_backed_up_upgraded_and_served_by_2026(
    home_env: dict[str, str],
    embedder: MiniLMEmbedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "neo4j"
    monkeypatch.setattr(graph.migrations, "schema_files", before_the_switch)
    old = started(home_env, OLD)
    monkeypatch.undo()
    with pytest.raises(Neo4jUnavailable, match=f"Neo4j {OLD} is too old"):
        apply_migrations(old, datetime.now(UTC))  # 022+ refused on 5.26, nothing applied
    applied, _, _ = old.execute_query("MATCH (m:SchemaMigration) RETURN max(m.id) AS last")
    assert applied[0]["last"] == LAST_ON_526
    monkeypatch.setattr(graph.migrations, "schema_files", before_the_switch)
    settings = Settings(
        sleep_mode="inline",
        neo4j_uri=f"bolt://127.0.0.1:{BOLT}",
        neo4j_password=(home / "password").read_text().strip(),
        api_deadline_seconds=0,  # a cold server's first plans take seconds on a loaded host
    )
    key = write_namespace(settings, embedder, tmp_path / "ws")
    before = export_lines(settings, embedder, tmp_path / "ws", key)
    vector = embedder.embed(["surprise party"])[0]
    nearest, _, _ = old.execute_query(NEAREST, ns="upgraded", v=vector, k=3)
    hits_before = [(r["topic_id"], round(r["score"], 5)) for r in nearest]
    assert hits_before
    old.close()
    monkeypatch.undo()  # from here on the product's whole schema
    busy = sheriff(["neo4j", "start"], {**home_env, "SHERIFF_NEO4J_VERSION": NEW})
    assert busy.returncode != 0 and f"Neo4j {OLD} is running" in busy.stderr  # not "running"
    assert sheriff(["neo4j", "stop"], home_env).returncode == 0
    assert (home / STORE_VERSION_FILE).read_text().strip() == OLD

    new = started(home_env, NEW)
    backups = list((home / "backups").iterdir())
    assert [b.name.split("-2")[0] for b in backups] == [f"data-{OLD}"]  # data-5.26.30-<time>
    assert (backups[0] / "databases" / "neo4j").is_dir()
    assert (home / STORE_VERSION_FILE).read_text().strip() == NEW
    assert export_lines(settings, embedder, tmp_path / "ws", key) == before
    indexes, _, _ = new.execute_query(
        "SHOW VECTOR INDEXES YIELD name, properties RETURN name, properties ORDER BY name"
    )
    assert {r["name"]: r["properties"] for r in indexes} == {
        f"{label}_embedding_ns": ["embedding", "namespace"]
        for label in ("passage", "skill", "topic", "topic_event")
    }
    hits_after = TopicStore(new).search_vector("upgraded", vector, k=3)
    assert [(h.topic.topic_id, round(h.score, 5)) for h in hits_after] == hits_before
    assert any(h.topic.name == "Surprise party" for h in hits_after)
    with api_client(settings, embedder, tmp_path / "ws") as client:  # writes work too
        more = [{"role": "user", "content": "The deposit for Rosa's Kitchen is paid.",
                 "at": (DAY1 + timedelta(days=1)).isoformat()}]  # fmt: skip
        client.post("/v1/messages", json={"messages": more, "auto_sleep": False},
                    headers=bearer(key)).raise_for_status()  # fmt: skip
    assert len(export_lines(settings, embedder, tmp_path / "ws", key)) == len(before) + 1
    new.close()

    assert sheriff(["neo4j", "stop"], home_env).returncode == 0
    back = sheriff(["neo4j", "start"], {**home_env, "SHERIFF_NEO4J_VERSION": OLD})
    assert back.returncode != 0 and "does not go back" in back.stderr  # and the store is kept
    assert (home / STORE_VERSION_FILE).read_text().strip() == NEW
