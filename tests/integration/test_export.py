"""Export and import: the JSON Lines document validates against docs/export-schema.json;
export -> import into a new namespace -> export again gives the same document (ids aside);
importing again changes nothing; a dry run writes nothing; vectors travel when the model
matches; bad files are refused whole, bad records one by one. Real Neo4j, real MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.settings import Settings
from graph.skills import SkillRun, SkillStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "export-schema.json").read_text(encoding="utf-8"))
DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TURNS = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. The caterer is Rosa's Kitchen; they want a deposit by Thursday."),
    ("user", "My favourite cake is lemon. We still need to book the band."),
    ("user", "Separately, my bike needs new brake pads before the spring ride."),
    ("assistant", "Good idea to do that early."),
    ("user", "Actually my favourite cake is chocolate now."),
    ("assistant", "Chocolate it is."),
]
ID_FIELDS = {"message": "message_id", "topic": "topic_id", "event": "event_id",
             "wake_packet": "packet_id", "skill_run": "run_id"}  # fmt: skip


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=2) as c:
        yield c


@dataclass
class Space:
    client: TestClient
    auth: dict[str, str]
    namespace: str

    def export(self, **params: Any) -> str:
        response = self.client.get("/v1/export", params=params, headers=self.auth)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return response.text

    def import_(self, document: str | bytes, **params: Any) -> dict[str, Any]:
        response = self.client.post("/v1/import", content=document, params=params,
                                    headers=self.auth)  # fmt: skip
        assert response.status_code == 200, response.text
        report: dict[str, Any] = response.json()
        return report


def _space(client: TestClient, namespace: str) -> Space:
    return Space(client, bearer(new_key(client, namespace)), namespace)


@pytest.fixture
def source(client: TestClient, namespace: str, driver: Driver) -> Space:
    """A namespace with everything an export carries: messages (two still in the buffer),
    slept topics with a superseded fact and a user correction, events, edges (slept and
    manual), a wake packet and a skill run."""
    space = _space(client, namespace)
    for day, turns in ((0, TURNS[:6]), (1, TURNS[6:])):
        at = DAY1 + timedelta(days=day)
        body = [{"role": r, "content": t, "at": (at + timedelta(minutes=i)).isoformat(),
                 "external_id": f"d{day}-{i}"} for i, (r, t) in enumerate(turns)]  # fmt: skip
        client.post("/v1/messages", json={"messages": body, "auto_sleep": False},
                    headers=space.auth).raise_for_status()  # fmt: skip
        client.post("/v1/sleep", json={"now": (at + timedelta(hours=3)).isoformat()},
                    headers=space.auth).raise_for_status()  # fmt: skip
    made = client.post("/v1/topics", headers=space.auth, json={
        "name": "Band booking", "one_liner": "Book a band for Mel's party.",
        "facts": [{"text": "The band costs 400 dollars", "at": DAY1.isoformat()}]})  # fmt: skip
    made.raise_for_status()
    topic = made.json()
    party = next(t for t in _records(space.export(), "topic") if "party" in t["name"].lower())
    client.post(f"/v1/topics/{topic['topic_id']}/links", headers=space.auth,
                json={"to": party["topic_id"], "type": "PART_OF", "weight": 2}).raise_for_status()  # fmt: skip
    fact = topic["facts"][0]["fact_id"]
    client.post(f"/v1/topics/{topic['topic_id']}/facts/{fact}/correct", headers=space.auth,
                json={"text": "The band costs 450 dollars"}).raise_for_status()  # fmt: skip
    SkillStore(driver).record_run(SkillRun(
        namespace=namespace, skill_id="write_docs", outcome="success", started_at=DAY1,
        finished_at=DAY1 + timedelta(seconds=2), duration_ms=2000,
        topic_ids=[party["topic_id"]], tool_calls=["repo.read_file:ok"]))  # fmt: skip
    return space


def _records(document: str, kind: str | None = None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in document.splitlines() if line.strip()]
    return [r for r in rows if kind is None or r["kind"] == kind]


def _normalised(document: str, ids: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Each kind's records as sorted canonical JSON, ids renamed through ``ids``; the header
    keeps only what does not depend on where and when the export was taken."""

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return (ids or {}).get(value, value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        return value

    out: dict[str, list[str]] = {}
    for record in _records(document):
        if record["kind"] == "header":
            record = {k: v for k, v in record.items() if k not in ("namespace", "exported_at")}
        out.setdefault(record["kind"], []).append(json.dumps(rename(record), sort_keys=True))
    return {k: sorted(v) for k, v in out.items()}


def _id_map(client: TestClient, document: str, target: str) -> dict[str, str]:
    """How an import into ``target`` renames the ids of ``document`` (none of them its own):
    derived with the server's import key, so only the server can say."""
    importer = client.app.state.container.importer  # type: ignore[attr-defined]
    return {
        r[ID_FIELDS[r["kind"]]]: importer.import_id(target, r["kind"], r[ID_FIELDS[r["kind"]]])
        for r in _records(document)
        if r["kind"] in ID_FIELDS
    }


def test_every_line_validates_against_the_published_schema(source: Space) -> None:
    document = source.export()
    validator = jsonschema.Draft202012Validator(SCHEMA)
    kinds = [r["kind"] for r in _records(document)]
    assert kinds[0] == "header" and kinds[-1] == "end"
    assert {"message", "topic", "event", "edge", "wake_packet", "skill_run"} <= set(kinds)
    for record in _records(document):
        validator.validate(record)
    end = _records(document, "end")[0]
    assert end["counts"] == {k: kinds.count(k) for k in end["counts"]}
    closed = [f for t in _records(document, "topic") for f in t["facts"] if f["invalid_at"]]
    assert closed and all(f["superseded_by"] for f in closed)  # validity travels


def test_export_import_export_gives_the_same_document(
    source: Space, client: TestClient, other_namespace: str
) -> None:
    first = source.export()
    target = _space(client, other_namespace)
    report = target.import_(first)
    counts = report["counts"]
    assert all(c["refused"] == 0 for c in counts.values()), report["refused"]
    assert counts["topic"]["created"] == len(_records(first, "topic"))
    assert report["embedded"] == counts["topic"]["created"]  # no vectors in the file: re-embedded
    again = target.export()
    assert _normalised(again) == _normalised(first, _id_map(client, first, other_namespace))
    hits = client.get("/v1/topics/search", params={"query": "surprise party"},
                      headers=target.auth).json()["hits"]  # fmt: skip
    assert any("party" in h["name"].lower() for h in hits)  # imported topics are searchable
    repeat = target.import_(first)  # idempotent by ids
    assert all(c["created"] == c["merged"] == c["refused"] == 0
               for c in repeat["counts"].values()), repeat  # fmt: skip
    assert _normalised(target.export()) == _normalised(again)


def test_a_dry_run_reports_and_writes_nothing(
    source: Space, client: TestClient, other_namespace: str
) -> None:
    document = source.export()
    target = _space(client, other_namespace)
    report = target.import_(document, dry_run="true")
    assert report["dry_run"] and report["counts"]["message"]["created"] == len(TURNS)
    assert report["embedded"] == report["counts"]["topic"]["created"] > 0
    assert _records(target.export(), "end")[0]["counts"] == dict.fromkeys(
        ID_FIELDS | {"edge": ""}, 0
    )


def test_vectors_travel_when_the_embedding_model_matches(
    source: Space, client: TestClient, other_namespace: str, driver: Driver
) -> None:
    document = source.export(vectors="true")
    topics = _records(document, "topic")
    assert all(len(t["vector"]) == 384 for t in topics)
    target = _space(client, other_namespace)
    report = target.import_(document)
    assert report["vectors_imported"] == len(topics) and report["embedded"] == 0
    party = next(t for t in topics if "party" in t["name"].lower())
    found = TopicStore(driver).search_vector(other_namespace, party["vector"], k=1)
    assert found[0].topic.name == party["name"]


def test_merging_into_a_namespace_that_moved_on(
    source: Space, client: TestClient, other_namespace: str
) -> None:
    document = source.export()
    target = _space(client, other_namespace)
    target.import_(document)
    topics = _records(target.export(), "topic")
    band = next(t for t in topics if t["name"] == "Band booking")
    newer = [json.loads(line) for line in document.splitlines()]
    for record in newer:  # the file knows one more alias of the band topic than the namespace
        if record["kind"] == "topic" and record["name"] == "Band booking":
            record["aliases"] = ["the band"]
    merged = target.import_("\n".join(json.dumps(r) for r in newer))
    assert merged["counts"]["topic"]["merged"] == 1
    again = client.get(f"/v1/topics/{band['topic_id']}", headers=target.auth).json()
    assert again["aliases"] == ["the band"] and again["version"] == band["version"] + 1


def test_records_that_cannot_be_placed_are_refused_one_by_one(
    source: Space, client: TestClient, other_namespace: str
) -> None:
    target = _space(client, other_namespace)
    late = {"messages": [{"role": "user", "content": "a later word", "at": "2026-05-01T09:00:00Z"}],
            "auto_sleep": False}  # fmt: skip
    client.post("/v1/messages", json=late, headers=target.auth).raise_for_status()
    lines = source.export().splitlines()
    orphan = {"kind": "event", "event_id": "e-orphan", "topic_id": "no-such-topic",
              "at": "2026-03-02T09:00:00Z", "delta_summary": "lost", "source_message_ids": []}  # fmt: skip
    counts = json.loads(lines[-1])
    counts["counts"]["event"] += 1
    events = [i for i, line in enumerate(lines) if '"kind": "event"' in line]
    lines.insert(events[-1] + 1, json.dumps(orphan))
    lines[-1] = json.dumps(counts)
    report = target.import_("\n".join(lines))
    refused = {(r["kind"], r["reason"].split(" ")[0]) for r in report["refused"]}
    assert report["counts"]["message"]["refused"] == len(TURNS)  # older than its conversation
    assert ("event", "its") in refused and ("message", "older") in refused
    assert report["counts"]["topic"]["created"] > 0  # the rest went in


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda ls: ls[:-1], "end line is missing"),
        (lambda ls: ls[1:], "line 1: kind: the first line must be the header"),
        (lambda ls: [ls[0].replace('"version": 1', '"version": 9'), *ls[1:]], "version"),
        (lambda ls: [ls[0], ls[1].replace('"role": "user"', '"role": "robot"'), *ls[2:]],
         "line 2: invalid record: message.role"),
        (lambda ls: [*ls[:2], "{not json", *ls[3:]], "line 3: not valid JSON"),
        (lambda ls: [ls[0], ls[-2], *ls[1:-2], ls[-1]], "order is"),
        (lambda ls: [*ls[:-1], ls[-1].replace('"message": 8', '"message": 7')],
         "counts.message"),
        (lambda ls: [ls[0], ls[1], ls[1], *ls[2:]], "already on line 2"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_whole_naming_the_line_and_field(
    source: Space, client: TestClient, other_namespace: str, change: Any, field: str
) -> None:
    target = _space(client, other_namespace)
    lines = change(source.export().splitlines())
    response = client.post("/v1/import", content="\n".join(lines), headers=target.auth)
    assert response.status_code == 422, response.text
    assert field in response.json()["detail"]
    assert _records(target.export(), "end")[0]["counts"]["message"] == 0  # nothing written


@pytest.mark.parametrize(
    ("path", "params", "body", "field"),
    [
        ("/v1/import", {}, b"", "body"),
        ("/v1/import", {}, b"\xff\xfe\x00", "body"),
        ("/v1/import", {"dry_run": "perhaps"}, b"{}", "query.dry_run"),
    ],
)
def test_bad_uploads_are_422_naming_the_field(
    client: TestClient, namespace: str, path: str, params: dict[str, str], body: bytes, field: str
) -> None:
    space = _space(client, namespace)
    response = client.post(path, content=body, params=params, headers=space.auth)
    assert response.status_code == 422 and field in response.json()["detail"], response.text
    bad = client.get("/v1/export", params={"vectors": "some"}, headers=space.auth)
    assert bad.status_code == 422 and "query.vectors" in bad.json()["detail"]


def test_the_cli_exports_and_imports_jsonl(
    source: Space, other_namespace: str, settings: Settings, tmp_path: Path
) -> None:
    uri, user, password = settings.connection()
    env = {**os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password}

    def sheriff(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-c", "from api.cli import main; main()", *args],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done

    out = tmp_path / "memory.jsonl"
    sheriff("memory", "export", "-n", source.namespace, "--format", "jsonl", "--out", str(out))
    first = out.read_text(encoding="utf-8")
    assert _normalised(first) == _normalised(source.export())
    planned = json.loads(sheriff("memory", "import", str(out), "-n", other_namespace,
                                 "--dry-run").stdout)  # fmt: skip
    assert planned["dry_run"] and planned["counts"]["topic"]["created"] > 0
    done = json.loads(sheriff("memory", "import", str(out), "-n", other_namespace).stdout)
    assert done["counts"] == planned["counts"]
    again = sheriff("memory", "export", "-n", other_namespace, "--format", "jsonl", "--out", "-")
    assert _normalised(again.stdout) == _normalised(
        first, _id_map(source.client, first, other_namespace)
    )


def test_imported_messages_get_their_passages_made_again_from_the_stored_text(
    source: Space, client: TestClient, other_namespace: str, driver: Driver
) -> None:
    document = source.export()  # passages are derived: the file carries none
    target = _space(client, other_namespace)
    target.import_(document)
    container = client.app.state.container  # type: ignore[attr-defined]
    assert container.passage_indexer.run(other_namespace) == len(_records(document, "message"))
    rows, _, _ = driver.execute_query(
        "MATCH (m:Message {namespace: $ns})-[:HAS_PASSAGE]->(p:Passage) "
        "RETURN m.content AS content, p.text AS text, p.namespace AS ns",
        ns=other_namespace,
    )
    assert rows and all(r["ns"] == other_namespace for r in rows)
    for r in rows:  # every passage says what its stored message says
        assert set(r["text"].split()) <= set(r["content"].split())
