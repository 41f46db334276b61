"""Issue 33, part 2: no count, score or order a tenant sees depends on another tenant's data.

Alice (``namespace``) keeps a small memory: a conversation and a few topics. Her contexts (light
and deep, with a time window, the trace on), her topic search and her skill search are read
through the real API, then bob (``other_namespace``) writes through the same API: messages with
alice's own words, with made-up words, and a flood of 2,000 long messages (two full batches, the
API's limit per request) of her words; topics named with her words and with made-up ones. Every
answer of alice's is then the same JSON, byte for byte, apart from timings: her items, their
order, their scores and the whole trace.

Before the change, message scores came from Lucene's statistics over every tenant's messages:
three of another tenant's messages with a made-up word moved a score ratio from 0.2506 to
0.2818, and 400 messages of one word changed which of a tenant's messages a 70-token context
held. Skills are installed by the operator (docs/skills.md), not written by a tenant: alice's
skill search is read before and after all the same.

Vector search is covered twice: both tenants' messages get their passages (as the sleep worker
writes them) and bob also writes, through the stores, 600 topics and 600 passages whose vectors
lie right beside the vectors of alice's questions, nearer them than anything of hers; her
answers stay the same. And the vector queries themselves, profiled: the topic and passage
searches of a small namespace read the same rows (Neo4j's db hits) and return the same hits
and scores before and after bob's crowd, i.e. they never ask the shared index (before the
change the index answered bob's rows first and the namespace was scanned only as a fallback).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from neo4j import Driver

from graph.cypher import query as cypher
from graph.db import iso
from graph.messages import MessageStore
from graph.models import Message, Topic, parse
from graph.overfetch import EXACT_VECTOR_MAX, MAX_FETCH
from graph.passages import MessagePassages, PassageStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from retrieval.passage_index import PassageIndexer
from tests.integration.api_support import bearer, new_key

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = (T0 + timedelta(days=3)).isoformat()

ALICE_SAID = [
    ("user", "We signed the Zanzibar merger plan with the spice trader on Monday."),
    ("assistant", "Noted: the Zanzibar merger closes in Q3, pending the board."),
    ("user", "The lake house caterer wants a deposit by Thursday."),
    ("user", "Rosa's Kitchen is catering; the deposit is 400 dollars."),
    ("assistant", "I will remind you about the caterer deposit on Wednesday."),
    ("user", "My bike needs new brake pads before the spring ride."),
    ("user", "The board asked for the merger numbers again, the spice volumes mostly."),
    ("user", "Quibbleton reviewed the zanzibar contract; he flagged the spice clause."),
    ("user", "Quibbleton called."),
    ("user", "We should sign the contract soon."),
]
ALICE_TOPICS = [
    ("Zanzibar merger plan", "Acquire the Zanzibar spice trader by Q3"),
    ("Lake house party", "Rosa's Kitchen caters; deposit due Thursday"),
    ("Spring ride", "new brake pads for the bike before the ride"),
]
ASKED = [
    {"message": "What did we agree about the Zanzibar merger and the spice trader?"},
    {"message": "How much is the caterer deposit for the lake house?", "budget": 70},
    {"message": "What did Quibbleton say about the contract yesterday?"},
    {"message": "What happened with the merger numbers last week?", "explicit": True},
    # a word nobody else has used, beside a common one: with index-wide statistics bob's
    # flood of "quibbleton" made it common and put "We should sign the contract soon." first
    {"message": "What about Quibbleton and the contract?", "budget": 50, "explicit": True},
]
MADE_UP = "zorblaxian quibbleton frindlewort"


def _messages(texts: list[tuple[str, str]], start: datetime) -> list[dict[str, Any]]:
    return [
        {"role": role, "content": text, "at": (start + timedelta(minutes=i)).isoformat()}
        for i, (role, text) in enumerate(texts)
    ]


def _post(client: TestClient, path: str, body: dict[str, Any], key: dict[str, str]) -> Any:
    answer = client.post(path, json=body, headers=key)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def _observe(client: TestClient, alice: dict[str, str]) -> str:
    """Everything alice's reads answer (timings left out), as one JSON text."""
    seen: list[Any] = []
    for asked in ASKED:
        body = {"now": NOW, "trace": True, **asked}
        context = _post(client, "/v1/context", body, alice)
        context.pop("timings_ms")
        seen.append(context)
    for query in ("Zanzibar merger plan", "caterer deposit", "quibbleton"):
        seen.append(_post(client, "/v1/topics/search", {"query": query, "now": NOW}, alice))
    seen.append(_post(client, "/v1/skills/search", {"query": "debug the failing merger"}, alice))
    return json.dumps(seen, sort_keys=True)


def _bob_writes(client: TestClient, bob: dict[str, str]) -> None:
    """Bob's messages and topics: alice's words, made-up words, and a flood of her words."""
    same = [(role, text) for role, text in ALICE_SAID]
    made_up = [("user", f"{MADE_UP} {MADE_UP}"), ("user", "zorblaxian zorblaxian merger")] * 2
    at = T0 - timedelta(days=1)
    body = {"messages": _messages(same + made_up, at), "auto_sleep": False}
    _post(client, "/v1/messages", body, bob)
    words = " ".join(text for _, text in ALICE_SAID).split()
    floods = [
        [" ".join(words[(i + j) % len(words)] for j in range(20)) for i in range(1000)],
        [f"quibbleton {words[i % len(words)]} quibbleton" for i in range(1000)],
    ]
    for batch, texts in enumerate(floods):  # the API's largest batch, twice
        flood = [("user", text) for text in texts]
        start = at + timedelta(hours=1 + batch * 20)
        _post(
            client, "/v1/messages", {"messages": _messages(flood, start), "auto_sleep": False}, bob
        )
    topics = [*ALICE_TOPICS, ("Zorblaxian merger", MADE_UP), ("caterer deposit", "deposit")]
    for name, one_liner in topics * 3:
        body = {"name": name, "one_liner": one_liner, "first_seen_at": T0.isoformat()}
        _post(client, "/v1/topics", body, bob)


CROWD = 600  # bob's topics and passages beside alice's questions, each


def _near(vectors: list[list[float]], n: int, seed: int) -> list[list[float]]:
    """``n`` unit vectors, each within cosine ~0.999 of one of ``vectors`` (in turn)."""
    gen = np.random.default_rng(seed)
    out = []
    for i in range(n):
        v = np.asarray(vectors[i % len(vectors)])
        noise = gen.normal(size=v.shape)
        w = v + 0.04 * noise / np.linalg.norm(noise)
        out.append((w / np.linalg.norm(w)).tolist())
    return out


def _bob_crowds(driver: Driver, embedder: MiniLMEmbedder, bob: str) -> None:
    """Bob's topics and passages with vectors right beside alice's questions' (written through
    the stores: the API embeds a text, and no text of bob's lands nearer than these)."""
    asked = embedder.embed([a["message"] for a in ASKED])
    topics = [
        parse(Topic, {"namespace": bob, "name": f"Crowd {i}", "one_liner": "near alice",
                      "time": {"first_seen_at": T0, "last_seen_at": T0}})
        for i in range(CROWD)
    ]  # fmt: skip
    TopicStore(driver).create(topics, _near(asked, CROWD, 1), T0)
    said = [
        {"role": "user", "content": f"crowd {i}", "at": T0 + timedelta(days=10, minutes=i)}
        for i in range(CROWD)
    ]
    written = MessageStore(driver).append(bob, [Message(namespace=bob, **m) for m in said])
    vectors = _near(asked, CROWD, 2)
    PassageStore(driver).write([
        MessagePassages(bob, m.message_id, m.content, [m.content], [v])
        for m, v in zip(written, vectors, strict=True)
    ])  # fmt: skip


def test_what_bob_writes_changes_nothing_alice_reads(
    client: TestClient,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
) -> None:
    alice = bearer(new_key(client, namespace))
    bob = bearer(new_key(client, other_namespace))
    body = {"messages": _messages(ALICE_SAID, T0), "auto_sleep": False}
    _post(client, "/v1/messages", body, alice)
    for name, one_liner in ALICE_TOPICS:
        topic = {"name": name, "one_liner": one_liner, "first_seen_at": T0.isoformat()}
        _post(client, "/v1/topics", topic, alice)
    indexer = PassageIndexer(PassageStore(driver), embedder)
    indexer.run(namespace)  # whatever the app's worker has not written yet
    assert _passages(driver, namespace) >= len(ALICE_SAID)  # found by meaning too
    _observe(client, alice)  # her own first reads mark her topics used: read once before
    before = _observe(client, alice)
    assert before == _observe(client, alice)  # nothing of hers moves between two reads
    evidence = [item for c in json.loads(before)[: len(ASKED)] for item in c["items"]]
    assert any(i["kind"] == "conversation" for i in evidence)  # her messages are in play
    assert "Quibbleton" in before and "Rosa" in before

    _bob_writes(client, bob)
    indexer.run(other_namespace)  # bob's messages get their passages too
    _bob_crowds(driver, embedder, other_namespace)
    assert _passages(driver, other_namespace) > 2000 + CROWD

    after = _observe(client, alice)
    assert after == before


def _passages(driver: Driver, namespace: str) -> int:
    records, _, _ = driver.execute_query(
        "MATCH (p:Passage {namespace: $ns}) RETURN count(p) AS n", ns=namespace
    )
    return int(records[0]["n"])


def _profiled(driver: Driver, name: str, params: dict[str, Any]) -> tuple[Any, int]:
    """The query's records and the db hits of its whole plan (PROFILE)."""
    with driver.session() as session:
        result = session.run("PROFILE " + cypher(name), params)
        records = [r.data() for r in result]
        profile = result.consume().profile

    def hits(plan: Any) -> int:
        return int(plan.get("dbHits", 0)) + sum(hits(c) for c in plan.get("children", []))

    return records, hits(profile)


def test_a_small_namespace_s_vector_searches_read_the_same_rows_beside_a_crowd(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, other_namespace: str
) -> None:
    """Alice's topic and passage searches (the stores' own queries and parameters) read the
    same db hits and answer the same hits and scores before and after bob's crowd of vectors
    beside her question: they are confined to her namespace before ranking."""
    alice, bob = namespace, other_namespace
    topics = [
        parse(Topic, {"namespace": alice, "name": name, "one_liner": line,
                      "time": {"first_seen_at": T0, "last_seen_at": T0}})
        for name, line in ALICE_TOPICS
    ]  # fmt: skip
    TopicStore(driver).create(topics, embedder.embed([t.semantic_text() for t in topics]), T0)
    MessageStore(driver).append(alice, [
        Message(namespace=alice, role=role, content=text, at=T0 + timedelta(minutes=i))
        for i, (role, text) in enumerate(ALICE_SAID)
    ])  # fmt: skip
    PassageIndexer(PassageStore(driver), embedder).run(alice)
    [vector] = embedder.embed([ASKED[0]["message"]])
    common = {"vector": vector, "k": 8, "namespace": alice, "fetch": 50, "fetch_more": 500,
              "scan_max": 2000, "exact_max": EXACT_VECTOR_MAX}  # fmt: skip
    assert common["fetch_more"] <= MAX_FETCH
    searches = {
        "search_topics_vector": common | {
            "since": None, "until": None, "scan_since": iso(T0 - timedelta(days=1)),
            "light": True, "topic_ids": []},
        "search_topics_vector ": common | {  # windowed
            "since": iso(T0 - timedelta(hours=1)), "until": iso(T0 + timedelta(days=1)),
            "scan_since": iso(T0 - timedelta(hours=1)), "light": True, "topic_ids": []},
        "search_passages_vector": common | {"until": None},
    }  # fmt: skip
    before = {n: _profiled(driver, n.strip(), p) for n, p in searches.items()}
    for name, (records, _) in before.items():
        assert records[0]["raw"] == 0 and records[0]["scanned"], name
        assert records[0]["hits"], name
    _bob_crowds(driver, embedder, bob)
    after = {n: _profiled(driver, n.strip(), p) for n, p in searches.items()}
    assert after == before


SPOKE = [  # a chat between people: a question naming Ann searches what Ann said (hop26)
    ("Ann", "I play the violin in a community orchestra these days."),
    ("Bo", "Which instruments do you play besides that?"),
    ("Ann", "Lately I practise the cello every evening after work."),
    ("Bo", "I play guitar in a band."),
    # then small talk: the lines above leave the tail (the recent turns the agent already has)
    *[
        ("Bo" if i % 2 else "Ann", f"The weather on the coast was lovely, day {i}.")
        for i in range(20)
    ],
]
ABOUT_ANN = {"message": "What instruments does Ann play?", "budget": 150}


def _spoken(lines: list[tuple[str, str]], start: datetime) -> list[dict[str, Any]]:
    return [
        {"role": "user", "speaker": who, "content": text,
         "at": (start + timedelta(minutes=i)).isoformat()}
        for i, (who, text) in enumerate(lines)
    ]  # fmt: skip


def test_another_tenants_speaker_of_the_same_name_changes_nothing_a_person_question_reads(
    client: TestClient,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
) -> None:
    """Bob's "Ann", with many lines in the question's own words, is not alice's Ann: the search
    of what a named person said (``PassageStore.search_spoken``) reads alice's namespace only,
    and her context (items, order, scores, trace) is the same JSON before and after."""
    alice = bearer(new_key(client, namespace))
    bob = bearer(new_key(client, other_namespace))
    _post(client, "/v1/messages", {"messages": _spoken(SPOKE, T0), "auto_sleep": False}, alice)
    indexer = PassageIndexer(PassageStore(driver), embedder)
    indexer.run(namespace)
    body = {"now": NOW, "trace": True, **ABOUT_ANN}

    def read() -> str:
        context = _post(client, "/v1/context", body, alice)
        context.pop("timings_ms")
        return json.dumps(context, sort_keys=True)

    read()  # her first read marks what it used: read once before
    before = read()
    assert "violin" in before and "cello" in before
    flood = [("Ann", f"What instruments does Ann play? I play instruments, drums {i}.")
             for i in range(300)]  # fmt: skip
    _post(client, "/v1/messages", {"messages": _spoken(flood, T0), "auto_sleep": False}, bob)
    indexer.run(other_namespace)
    assert _passages(driver, other_namespace) >= 300
    after = read()
    assert after == before and "drums" not in after
