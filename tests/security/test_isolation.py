"""Issue 10, point 6: one tenant does not change another's results. A noisy neighbour (alice,
660 topics named "zanzibar", with embeddings close to bob's query) must not push bob's
"Zanzibar merger plan" out of his results nor change its rank or score: through the store,
through POST /v1/topics/search and through POST /v1/context.

Message search is confined to the namespace too (nothing of bob's is pushed out), and its
scores are the namespace's own BM25 (English analysis as the index's), see docs/security.md."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

import graph.topic_search
import graph.topics
from graph.context import ContextStore
from graph.fulltext import namespace_token
from graph.messages import MessageStore
from graph.models import Message, Topic, parse
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import bearer, new_key

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOISE = 660
NOISY_MESSAGES = 10_050  # past the 10,000 rows a filtered-after search would ever fetch
BOB_TOPICS = [
    ("Zanzibar merger plan", "Acquire the Zanzibar spice trader by Q3"),
    ("Merger notes", "plan for the merger with the board"),
    ("Zanzibar office lease", "the lease on the Stone Town office"),
    ("Lunch options", "sandwiches on Fridays"),
]
MIGRATION = Path(__file__).resolve().parents[2] / "cypher/schema/009_namespace_search.cypher"


def topic(namespace: str, name: str, one_liner: str = "") -> Topic:
    return parse(
        Topic,
        {"namespace": namespace, "name": name, "one_liner": one_liner,
         "time": {"first_seen_at": T0, "last_seen_at": T0}},
    )  # fmt: skip


def seed_bob(store: TopicStore, embedder: MiniLMEmbedder, bob: str) -> dict[str, str]:
    topics = [topic(bob, name, one) for name, one in BOB_TOPICS]
    vectors = embedder.embed([t.semantic_text() for t in topics])
    store.create(topics, vectors, T0)
    return {t.name: t.topic_id for t in topics}


def seed_noise(store: TopicStore, embedder: MiniLMEmbedder, alice: str, name: str) -> None:
    """``NOISE`` topics in alice's namespace named ``name``, with the embedding of bob's query
    (so they crowd the vector index too)."""
    [vector] = embedder.embed(["zanzibar merger plan"])
    for start in range(0, NOISE, 200):
        batch = [topic(alice, name) for _ in range(min(200, NOISE - start))]
        store.create(batch, [vector] * len(batch), T0)


def ranked(hits: list[Any]) -> list[tuple[str, float]]:
    return [(h.topic.topic_id, h.score) for h in hits]


def test_bob_s_full_text_results_do_not_change_when_alice_floods_the_index(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, other_namespace: str
) -> None:
    store, bob, alice = TopicStore(driver), namespace, other_namespace
    ids = seed_bob(store, embedder, bob)
    queries = [("zanzibar merger plan", True), ("zanzibar merger plan", False), ("zanzibar", False)]
    window = {"since": T0 - timedelta(days=1), "until": T0 + timedelta(days=1)}
    alone = {q: ranked(store.search_text(bob, q[0], k=3, fuzzy=q[1])) for q in queries}
    alone_windowed = ranked(store.search_text(bob, "zanzibar", k=3, **window))
    seed_noise(store, embedder, alice, "zanzibar")
    for q in queries:
        crowded = ranked(store.search_text(bob, q[0], k=3, fuzzy=q[1]))
        assert crowded == alone[q], q  # same topics, same order, same scores
    assert ranked(store.search_text(bob, "zanzibar", k=3, **window)) == alone_windowed
    assert alone[queries[0]][0][0] == ids["Zanzibar merger plan"]
    assert {tid for tid, _ in alone[("zanzibar", False)]} == {
        ids["Zanzibar merger plan"], ids["Zanzibar office lease"]
    }  # fmt: skip
    alice_hits = store.search_text(alice, "zanzibar", k=5)
    assert len(alice_hits) == 5 and all(h.topic.namespace == alice for h in alice_hits)


def test_bob_s_vector_results_do_not_change_when_alice_crowds_the_index(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, other_namespace: str
) -> None:
    store, bob, alice = TopicStore(driver), namespace, other_namespace
    ids = seed_bob(store, embedder, bob)
    [query] = embedder.embed(["zanzibar merger plan"])
    alone = [(h.topic.topic_id, round(h.score, 6)) for h in store.search_vector(bob, query, k=4)]
    seed_noise(store, embedder, alice, "zanzibar merger plan")
    crowded = store.search_vector(bob, query, k=4)
    assert [(h.topic.topic_id, round(h.score, 6)) for h in crowded] == alone
    assert crowded[0].topic.topic_id == ids["Zanzibar merger plan"]
    assert all(h.topic.namespace == bob for h in crowded)


def test_a_crowded_tenant_s_vector_search_reads_only_its_own_topics(
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The vector index holds every tenant's topics; a search is confined to its namespace
    inside the index (``SEARCH ... WHERE t.namespace = $namespace``): beside alice's hundreds of
    topics named like bob's query, the index returns bob's 4 topics and nothing else (``raw``),
    and his results are the same, exact and his own."""
    # bob's 4 topics take the index path of a large namespace (by default they are scored
    # exactly without the index: tests/integration/test_vector_search_paths.py)
    monkeypatch.setattr(graph.topic_search, "SCAN_MAX", 3)
    monkeypatch.setattr(graph.topic_search, "EXACT_VECTOR_MAX", -1)
    store, bob, alice = TopicStore(driver), namespace, other_namespace
    seed_bob(store, embedder, bob)
    [query] = embedder.embed(["zanzibar merger plan"])
    alone = [(h.topic.topic_id, round(h.score, 6)) for h in store.search_vector(bob, query, k=4)]
    seed_noise(store, embedder, alice, "zanzibar merger plan")
    raws: list[int] = []
    run = store._run

    def spy(text: str, params: dict[str, Any], **kw: Any) -> list[Any]:
        rows = run(text, params, **kw)
        if "exact_max" in params:
            raws.append(int(rows[0]["raw"]))
        return rows

    monkeypatch.setattr(store, "_run", spy)
    crowded = store.search_vector(bob, query, k=4)
    assert raws == [4]
    assert [(h.topic.topic_id, round(h.score, 6)) for h in crowded] == alone
    assert all(h.topic.namespace == bob for h in crowded)
    assert all(h.topic.namespace == alice for h in store.search_vector(alice, query, k=10))


def test_known_names_are_found_behind_a_neighbour_s_identical_names(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, other_namespace: str
) -> None:
    store, bob, alice = TopicStore(driver), namespace, other_namespace
    seed_noise(store, embedder, alice, "Zanzibar merger plan")  # 660 identical names, first
    seed_bob(store, embedder, bob)
    assert store.known_names(bob, ["Zanzibar merger plan", "Kilimanjaro"]) == {
        "zanzibar merger plan"
    }
    assert store.known_names(alice, ["Lunch options"]) == set()


def test_a_neighbour_s_participants_are_no_known_names(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    # a question naming someone makes it a memory question only in the namespace they spoke in
    bob, alice = namespace, other_namespace
    said = parse(
        Message,
        {"message_id": f"{alice}-z", "namespace": alice, "role": "user", "speaker": "Zed",
         "content": "I moved to Lisbon.", "at": T0, "token_estimate": 4},
    )  # fmt: skip
    MessageStore(driver).append(alice, [said])
    assert MessageStore(driver).speakers_named(bob, ["Zed"]) == set()
    assert ContextStore(driver).start(bob, 3, ["Zed"], ["zed"]).speakers == set()
    assert ContextStore(driver).start(alice, 3, ["Zed"], ["zed"]).speakers == {"zed"}


def test_the_api_ranks_bob_s_topics_the_same_with_a_noisy_neighbour(
    client: TestClient, driver: Driver, embedder: MiniLMEmbedder, namespace: str,
    other_namespace: str,
) -> None:  # fmt: skip
    bob = bearer(new_key(client, namespace))
    for name, one_liner in BOB_TOPICS:
        body = {"name": name, "one_liner": one_liner, "first_seen_at": T0.isoformat()}
        client.post("/v1/topics", json=body, headers=bob).raise_for_status()
    now = (T0 + timedelta(days=1)).isoformat()
    search = {"query": "Zanzibar merger plan", "now": now}
    windowed = {"query": "zanzibar", "now": now, "from": (T0 - timedelta(days=1)).isoformat()}
    context = {"message": "What was the Zanzibar merger plan again?", "explicit": True,
               "trace": True, "now": search["now"]}  # fmt: skip

    def observe() -> list[list[tuple[str, float]]]:
        hits = client.post("/v1/topics/search", json=search, headers=bob).json()["hits"]
        window = client.post("/v1/topics/search", json=windowed, headers=bob).json()["hits"]
        trace = client.post("/v1/context", json=context, headers=bob).json()["trace"]
        return [
            [(h["name"], h["score"]) for h in hits],
            [(h["name"], h["score"]) for h in window],
            [(t["title"], t["score"]) for t in trace],  # every candidate the context weighed
        ]

    alone_hits, alone_window, alone_items = observe()
    seed_noise(TopicStore(driver), embedder, other_namespace, "zanzibar")
    crowded_hits, crowded_window, crowded_items = observe()
    assert alone_hits[0][0] == "Zanzibar merger plan"
    assert crowded_hits == alone_hits  # same names, same order, same scores
    assert {"Zanzibar merger plan", "Zanzibar office lease"} <= {n for n, _ in alone_window}
    assert crowded_window == alone_window
    assert alone_items[0][0] == "Zanzibar merger plan"
    assert crowded_items == alone_items


def test_bob_s_messages_are_found_first_behind_a_neighbour_s_flood(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    messages, bob, alice = MessageStore(driver), namespace, other_namespace

    def line(ns: str, i: int, text: str) -> Message:
        return Message(namespace=ns, role="user", content=text, at=T0 + timedelta(seconds=i))

    messages.append(bob, [line(bob, 0, "The Zanzibar merger plan is signed."),
                          line(bob, 1, "Lunch is at noon.")])  # fmt: skip
    alone = [(h.message.message_id, h.score) for h in messages.search_text(bob, "zanzibar", k=5)]
    for start in range(0, NOISY_MESSAGES, 2500):  # more than one index window can hold
        count = min(2500, NOISY_MESSAGES - start)
        messages.append(alice, [line(alice, start + i, "zanzibar zanzibar") for i in range(count)])
    crowded = messages.search_text(bob, "zanzibar", k=5)
    assert [(h.message.message_id, h.score) for h in crowded] == alone  # scores too
    assert len(crowded) == 1 and crowded[0].message.namespace == bob


def test_nodes_carry_their_namespace_token_and_the_migration_encodes_as_python(
    driver: Driver, client: TestClient, namespace: str
) -> None:
    bob = bearer(new_key(client, namespace))
    client.post("/v1/topics", json={"name": "Garden"}, headers=bob).raise_for_status()
    body = {"messages": [{"role": "user", "content": "hi", "at": T0.isoformat()}]}
    client.post("/v1/messages", json=body, headers=bob).raise_for_status()
    records, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns AND (n:Topic OR n:Message) "
        "RETURN DISTINCT n.ns_token AS token", ns=namespace,
    )  # fmt: skip
    assert [r["token"] for r in records] == [namespace_token(namespace)]
    # the back-fill of nodes stored before the token existed uses the same encoding in Cypher
    text = MIGRATION.read_text(encoding="utf-8")
    expression = re.search(r"SET t\.ns_token = (.*?);", text, re.S)
    assert expression is not None
    cypher = "RETURN " + expression.group(1).replace("t.namespace", "$ns") + " AS token"
    for ns in ["bob", "Bob", "sv-Bob_1.a:b", "A-b_C.d:E", "x0", namespace]:
        records, _, _ = driver.execute_query(cypher, ns=ns)
        assert records[0]["token"] == namespace_token(ns), ns


def test_a_session_id_reads_only_its_own_namespace_s_suppression_state(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    """The context start reads the suppression session by (the key's namespace, session id):
    alice's session "s1" is invisible to bob's "s1", however alike the ids are."""
    from graph.suppression import Retention, SuppressionStore

    bob, alice = namespace, other_namespace
    keep = Retention(3, timedelta(minutes=30), timedelta(hours=24), 256)
    store = SuppressionStore(driver)
    store.record(alice, "s1", ["alice-topic"], T0, 0.9, "fp", keep)
    start = ContextStore(driver)
    later = T0 + timedelta(minutes=1)
    mine = start.start(alice, 2, [], session=("s1", later)).session
    theirs = start.start(bob, 2, [], session=("s1", later)).session
    assert mine is not None and theirs is not None
    assert set(mine().injections) == {"alice-topic"} and mine().turn == 1
    assert theirs().injections == {} and theirs().turn == 0
    assert store.load(bob, "s1", later).injections == {}
