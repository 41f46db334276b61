"""Import is validated like every other write: each malformed line of an export document or of a
ChatGPT history is a 422 naming the line (or conversation node) and the field, in a dry run too,
and leaves the namespace byte-identical; a poison vector never reaches Neo4j; remapped ids are
neither predictable nor a window on other namespaces. Real app, real Neo4j, real model."""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.container import Container
from sleepwake.normalise import stable_id
from tests.integration.api_support import bearer, new_key
from tests.security.support import dump

AT = "2026-03-05T09:00:00Z"
SPAN = {"first_seen_at": AT, "last_seen_at": AT}


@pytest.fixture
def tenant(client: TestClient, namespace: str) -> dict[str, str]:
    """A namespace that already holds a message and a topic (so "unchanged" means something)."""
    auth = bearer(new_key(client, namespace))
    client.post("/v1/messages", json={"messages": [{"role": "user", "content": "hello there",
                "at": AT}], "auto_sleep": False}, headers=auth).raise_for_status()  # fmt: skip
    client.post("/v1/topics", json={"name": "Garden", "facts": [{"text": "tomatoes"}]},
                headers=auth).raise_for_status()  # fmt: skip
    return auth


def _container(client: TestClient) -> Container:
    found: Container = client.app.state.container  # type: ignore[attr-defined]
    return found


def header(client: TestClient, vectors: bool = False) -> dict[str, Any]:
    embedder = _container(client).embedder
    return {"kind": "header", "format": "sheriff-claw-export", "version": 1, "namespace": "x",
            "exported_at": AT, "vectors": vectors,
            "embedding": {"model": embedder.model_name, "dimensions": embedder.dimensions}}  # fmt: skip


def document(head: dict[str, Any], *records: dict[str, Any] | str) -> str:
    counts: dict[str, int] = {}
    for r in records:
        kind = r["kind"] if isinstance(r, dict) else "message"
        counts[kind] = counts.get(kind, 0) + 1
    lines = [json.dumps(head), *(r if isinstance(r, str) else json.dumps(r) for r in records)]
    return "\n".join([*lines, json.dumps({"kind": "end", "counts": counts})])


def message(**over: Any) -> dict[str, Any]:
    return {"kind": "message", "message_id": "m-1", "role": "user", "content": "hi", "at": AT,
            **over}  # fmt: skip


def topic(**over: Any) -> dict[str, Any]:
    return {"kind": "topic", "topic_id": "t-1", "name": "Roses", "time": SPAN, **over}


DEEP = '{"kind": "message", "tool_calls": ' + "[" * 100_000 + "]" * 100_000 + "}"
MALFORMED: dict[str, tuple[dict[str, Any] | str, str]] = {
    "year 0001": (message(at="0001-01-01T00:00:00Z"), "message.at"),
    "year 9999": (message(at="9999-06-01T00:00:00Z"), "message.at"),
    "date offset overflow": (message(at="9999-12-31T23:59:59-23:59"), "message.at"),
    "ANSI in a name": (topic(name="Roses\x1b[2J\x1b]0;owned\x07"), "topic.name"),
    "bidi in an alias": (topic(aliases=["abc\u202egnp.exe"]), "topic.aliases.0"),
    "NUL in a speaker": (message(speaker="bob\x00"), "message.speaker"),
    "5,000 tool calls": (message(tool_calls=[{"id": "c"}] * 5000), "message.tool_calls"),
    "5,000 facts": (topic(facts=[{"text": f"fact {i}"} for i in range(5000)]), "topic.facts"),
    "edge weight -1e300": (
        {
            "kind": "edge",
            "from_topic_id": "a",
            "to_topic_id": "b",
            "type": "RELATES_TO",
            "weight": -1e300,
        },
        "edge.weight",
    ),
    "infinite edge weight": (
        '{"kind": "edge", "from_topic_id": "a", "to_topic_id": "b", "type": "RELATES_TO", '
        '"weight": Infinity}',
        "edge.weight",
    ),
    "int64 overflow": (message(seq=2**70), "message.seq"),
    "int64 overflow in stats": (topic(stats={"usage_count": 2**63}), "topic.stats.usage_count"),
    "100k-deep JSON": (DEEP, "nests too deep"),
    "tool calls 40 deep": (
        message(tool_calls=[{"a": json.loads("[" * 40 + "]" * 40)}]),
        "message.tool_calls.0",
    ),
    "a NaN in a vector": (
        '{"kind": "topic", "topic_id": "t", "name": "n", "time": '
        + json.dumps(SPAN)
        + ', "vector": [NaN]}',
        "topic.vector.0",
    ),
    "a secret-shaped external id": (
        message(external_id="ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"),
        "message.external_id",
    ),
    "a secret-shaped source id": (
        topic(facts=[{"text": "x", "source_message_ids": ["AKIA" + "Z7XQ3MNB4V5C6X7Z"]}]),
        "topic.facts.0.source_message_ids.0",
    ),
    "a secret-shaped fact id": (
        topic(facts=[{"text": "x", "fact_id": "AKIA" + "IOSFODNN7EXAMPLE"}]),
        "topic.facts.0.fact_id",
    ),
    "a secret-shaped superseding fact": (
        topic(facts=[{"text": "x", "superseded_by": "AKIA" + "IOSFODNN7EXAMPLE"}]),
        "topic.facts.0.superseded_by",
    ),
    "a secret-shaped embedding hash": (
        topic(embedding={"model": "m", "hash": "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"}),
        "topic.embedding.hash",
    ),
}


def refused(
    client: TestClient,
    driver: Driver,
    namespace: str,
    auth: dict[str, str],
    path: str,
    body: str,
    dry_run: bool = False,
) -> str:
    """POST ``body`` to ``path``: a 422 that changed nothing in the namespace; its detail."""
    before = dump(driver, namespace)
    r = client.post(path, params={"dry_run": dry_run}, content=body, headers=auth)
    assert r.status_code == 422, r.text
    assert dump(driver, namespace) == before
    detail: str = r.json()["detail"]
    return detail


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dry run"])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_line_is_a_422_naming_it_and_nothing_changes(
    client: TestClient,
    tenant: dict[str, str],
    driver: Driver,
    namespace: str,
    case: str,
    dry_run: bool,
) -> None:
    record, field = MALFORMED[case]
    body = document(header(client), message(message_id="m-0", content="fine"), record)
    detail = refused(client, driver, namespace, tenant, "/v1/import", body, dry_run)
    assert detail.startswith("line 3: ") and field in detail, detail


def test_a_vector_of_the_wrong_dimension_is_a_422(
    client: TestClient, tenant: dict[str, str], driver: Driver, namespace: str
) -> None:
    body = document(header(client, vectors=True), topic(vector=[0.5] * 7))
    detail = refused(client, driver, namespace, tenant, "/v1/import", body, dry_run=True)
    assert detail.startswith("line 2: vector: 7 dimensions"), detail


def test_a_poison_vector_never_reaches_neo4j(
    client: TestClient, tenant: dict[str, str], driver: Driver, namespace: str
) -> None:
    """Values of 1e308 are finite JSON but no embedding: the topic is embedded again from its
    text, and the namespace's search and context keep working."""
    dims = _container(client).embedder.dimensions
    poison = topic(name="Poisoned roses", one_liner="rose pruning in March", vector=[1e308] * dims)
    event = {"kind": "event", "event_id": "e-1", "topic_id": "t-1", "at": AT,
             "delta_summary": "pruned", "vector": [-1e308] * dims}  # fmt: skip
    report = client.post("/v1/import", content=document(header(client, vectors=True), poison,
                         event), headers=tenant).json()  # fmt: skip
    assert report["counts"]["topic"]["created"] == 1, report
    assert report["vectors_imported"] == 0 and report["embedded"] == 1
    rows, _, _ = driver.execute_query(
        "MATCH (x) WHERE x.namespace = $ns AND x.embedding IS NOT NULL "
        "RETURN labels(x)[0] AS label, x.embedding AS v",
        ns=namespace,
    )
    assert {r["label"] for r in rows} >= {"Topic"}
    for row in rows:
        assert all(math.isfinite(v) and abs(v) <= 1.0 for v in row["v"]), row["label"]
        assert abs(math.sqrt(sum(v * v for v in row["v"])) - 1.0) < 1e-3
    search = client.get("/v1/topics/search", params={"query": "rose pruning"}, headers=tenant)
    assert search.status_code == 200 and search.json()["hits"][0]["name"] == "Poisoned roses"
    context = client.post("/v1/context", json={"message": "how do I prune roses?",
                          "explicit": True}, headers=tenant)  # fmt: skip
    assert context.status_code == 200, context.text


CHATGPT_BAD: dict[str, tuple[dict[str, Any], str]] = {
    "year 9999": ({"create_time": 253370764800.0}, ": at: "),
    "a control character in the id": ({"id": "n1\x1b[2J"}, ": external_id: "),
    "a secret-shaped id": (
        {"id": "sk-" + "proj-" + "Qw3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC"},
        ": external_id: ",
    ),
    "a lone surrogate": (
        {"content": {"content_type": "text", "parts": ["a\ud800b"]}},
        ": content: ",
    ),
}


def _chatgpt(**over: Any) -> list[dict[str, Any]]:
    msg = {"id": "n1", "author": {"role": "user"}, "create_time": 1772700000.0,
           "content": {"content_type": "text", "parts": ["hello from chatgpt"]}, **over}  # fmt: skip
    return [{"title": "t", "create_time": 1772700000.0, "current_node": "n1",
             "mapping": {"n1": {"message": msg, "parent": None, "children": []}}}]  # fmt: skip


@pytest.mark.parametrize("case", list(CHATGPT_BAD))
def test_a_malformed_chatgpt_message_is_a_422_naming_the_node(
    client: TestClient, tenant: dict[str, str], driver: Driver, namespace: str, case: str
) -> None:
    over, field = CHATGPT_BAD[case]
    body = json.dumps(_chatgpt(**over), ensure_ascii=True)
    detail = refused(client, driver, namespace, tenant, "/v1/import/chatgpt", body)
    assert detail.startswith("conversations[0].mapping.n1") and field in detail, detail


def test_a_100k_deep_chatgpt_file_is_a_422(
    client: TestClient, tenant: dict[str, str], driver: Driver, namespace: str
) -> None:
    body = "[" * 100_000 + "]" * 100_000
    detail = refused(client, driver, namespace, tenant, "/v1/import/chatgpt", body)
    assert "nests too deep" in detail, detail


def _shared_file(client: TestClient) -> str:
    return document(
        header(client),
        message(message_id="shared-m1", content="the plan for the launch"),
        topic(topic_id="shared-t1", name="Launch plan", mentioned_in=["shared-m1"]),
    )


def test_remapped_ids_cannot_be_claimed_first_nor_reveal_other_namespaces(
    client: TestClient, driver: Driver, namespace: str, other_namespace: str
) -> None:
    """The attack: the victim will import a file the attacker also has. Before, the attacker
    could compute the victim's remaps (uuid5 of public parts), import them first, and make every
    record of the victim's import refused; a dry run also told whether an id existed elsewhere."""
    victim, attacker = bearer(new_key(client, namespace)), bearer(new_key(client, other_namespace))
    shared = _shared_file(client)
    planned = client.post("/v1/import", params={"dry_run": True}, content=shared,
                          headers=victim).json()  # fmt: skip
    claimed = shared  # the attacker imports the file, and its ids as the old scheme remapped them
    for kind, old in (("message", "shared-m1"), ("topic", "shared-t1")):
        claimed = claimed.replace(f'"{old}"', f'"{stable_id("import", namespace, kind, old)}"')
    for body in (shared, claimed):
        client.post("/v1/import", content=body, headers=attacker).raise_for_status()
    again = client.post("/v1/import", params={"dry_run": True}, content=shared,
                        headers=victim).json()  # fmt: skip
    assert again["remapped_ids"] == planned["remapped_ids"] == 2  # blind to the attacker's ids
    assert again["counts"] == planned["counts"] and again["refused"] == []
    done = client.post("/v1/import", content=shared, headers=victim).json()
    assert done["refused"] == [] and done["counts"]["topic"]["created"] == 1
    exported = client.get("/v1/export", headers=attacker).text.splitlines()
    theirs = {r["topic_id"] for r in map(json.loads, exported) if r["kind"] == "topic"}
    mine = [json.loads(x) for x in client.get("/v1/export", headers=victim).text.splitlines()]
    topic_ids = {r["topic_id"] for r in mine if r["kind"] == "topic"}
    assert len(topic_ids) == 1 and not topic_ids & theirs
    assert topic_ids != {stable_id("import", namespace, "topic", "shared-t1")}
    assert topic_ids == {_container(client).importer.import_id(namespace, "topic", "shared-t1")}
    unique = f"never-{uuid.uuid4().hex}"  # an id nobody holds is remapped the same way
    report = client.post("/v1/import", params={"dry_run": True}, headers=victim,
                         content=shared.replace("shared-t1", unique)).json()  # fmt: skip
    assert report["remapped_ids"] == 2
