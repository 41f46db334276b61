"""Namespace-wide operations read that namespace only. ``DELETE /v1/namespace`` and its dry run
(``count_namespace_nodes``, ``delete_namespace_data``) matched every node of every tenant and
filtered on ``namespace`` (~0.7 us a node); they now read label by label through the namespace
indexes, so their work does not grow with another tenant's data, and the plan seeks an index
for every label. Real Neo4j."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from neo4j import Driver

from graph.cypher import query
from graph.forget import ForgetStore
from graph.messages import MessageStore
from graph.models import Message

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OTHER_NODES = 3000


def db_hits(driver: Driver, text: str, **params: Any) -> int:
    """The db hits of one run of ``text`` (PROFILE), every operator's summed."""
    with driver.session() as session:
        profile = session.run("PROFILE " + text, params).consume().profile

    def total(p: dict[str, Any]) -> int:
        return int(p.get("dbHits", 0)) + sum(total(c) for c in p.get("children", []))

    assert profile is not None
    return total(profile)


def leaves(plan: dict[str, Any]) -> list[str]:
    """The operators that read nodes first (the plan's leaves), by name."""
    children = plan.get("children", [])
    if not children:
        return [plan["operatorType"].split("@")[0]]
    return [op for c in children for op in leaves(c)]


@pytest.fixture
def other(driver: Driver) -> Iterator[str]:
    """Another tenant with many nodes (messages and sessions)."""
    ns = f"test-other-{uuid.uuid4().hex[:12]}"
    yield ns
    driver.execute_query(
        "MATCH (n:Message {namespace: $ns}) DETACH DELETE n", ns=ns
    )  # fmt: skip


def fill(driver: Driver, ns: str, n: int) -> None:
    driver.execute_query(
        "UNWIND range(1, $n) AS i CREATE (:Message {namespace: $ns, message_id: $ns + i})",
        ns=ns, n=n,
    )  # fmt: skip


def test_the_dry_run_and_the_delete_read_only_their_namespace(
    driver: Driver, namespace: str, other: str
) -> None:
    MessageStore(driver).append(namespace, [Message(namespace=namespace, role="user",
                                                    content="hello", at=NOW)])  # fmt: skip
    count = query("count_namespace_nodes")
    alone = db_hits(driver, count, namespace=namespace)
    fill(driver, other, OTHER_NODES)
    beside = db_hits(driver, count, namespace=namespace)
    assert beside == alone  # the other tenant's 3,000 nodes are not read
    store = ForgetStore(driver)
    assert store.count_nodes(namespace) == {"Conversation": 1, "Message": 1}
    for name in ("count_namespace_nodes", "delete_namespace_data", "delete_namespace"):
        with driver.session() as session:
            plan = session.run("EXPLAIN " + query(name), namespace=namespace).consume().plan
        assert plan is not None
        found = leaves(plan)
        assert found and all("IndexSeek" in op or op == "Argument" for op in found), (name, found)
        assert any("IndexSeek" in op for op in found)
    store.delete_namespace(namespace)
    assert store.count_nodes(namespace) == {}
    left, _, _ = driver.execute_query(
        "MATCH (m:Message {namespace: $ns}) RETURN count(m) AS n", ns=other
    )
    assert left[0]["n"] == OTHER_NODES  # the other tenant keeps everything


SMALL_TENANTS, LONG_CONVERSATION = 1000, 3000


@pytest.fixture
def small_tenants(driver: Driver) -> Iterator[str]:
    """1,000 tenants of one message each (their prefix): the planner then reckons that a
    namespace holds a message or two."""
    prefix = f"test-small-{uuid.uuid4().hex[:8]}-"
    driver.execute_query(
        "UNWIND range(1, $n) AS i CREATE (:Message {namespace: $prefix + i, "
        "message_id: $prefix + i, seq: 1, role: 'user', content: 'hi', at: datetime($at)})",
        prefix=prefix, n=SMALL_TENANTS, at=NOW.isoformat(),
    )  # fmt: skip
    yield prefix
    driver.execute_query(
        "MATCH (m:Message) WHERE m.namespace STARTS WITH $prefix DETACH DELETE m", prefix=prefix
    )


def test_the_context_start_reads_the_tail_not_the_conversation(
    driver: Driver, namespace: str, small_tenants: str
) -> None:
    """Beside 1,000 tenants of one message, the planner took the (namespace) index for the
    tail and sorted the whole conversation (30,000 messages read for 12, 10 -> 113 ms a
    context in benchmarks/bench_neighbourhood.py): the tail is read backwards through the
    (namespace, seq) index, whatever the statistics say."""
    driver.execute_query(
        "UNWIND range(1, $n) AS i CREATE (:Message {namespace: $ns, message_id: $ns + i, "
        "seq: i, role: 'user', content: 'message ' + i, at: datetime($at)})",
        ns=namespace, n=LONG_CONVERSATION, at=NOW.isoformat(),
    )  # fmt: skip
    driver.execute_query("CALL db.prepareForReplanning()")  # fresh statistics, no cached plan
    params = {
        "namespace": namespace, "n": 12, "names": [], "people": [], "lucene": "x",
        "skills_namespace": None, "skills_cap": 64, "session_id": None, "now": None,
    }  # fmt: skip
    hits = db_hits(driver, query("read_context_start"), **params)
    assert hits < 300, hits  # the 12 newest messages and their properties, not 3,000
    records, _, _ = driver.execute_query(query("read_context_start"), params)
    assert [m["seq"] for m in records[0]["tail"]] == list(range(LONG_CONVERSATION, 2988, -1))
    # the same reads elsewhere: the tail, and the newest message every append locks and reads
    one = {"namespace": namespace, "n": 12, "external_ids": [], "message_ids": []}
    for name in ("tail_messages", "newest_message_at", "lock_conversation"):
        assert db_hits(driver, query(name), **one) < 300, name


SMALL_TOPICS, LARGE_NAMESPACE = 1000, 2000


def test_an_export_page_reads_its_page(driver: Driver, namespace: str) -> None:
    """An export page (``topic_id > $after_id`` in id order, ``$limit`` topics) reads about
    its page through the (namespace, topic_id) index: not every tenant's topics whose ids sort
    after the cursor (the unique topic_id index, filtered by namespace after), nor the whole
    namespace for every page (the namespace index and a sort, the plan the planner took
    beside 1,000 one-topic tenants). Both plans fail this test."""
    prefix = f"0-test-one-{uuid.uuid4().hex[:8]}-"  # ids that sort before the namespace's own
    try:
        driver.execute_query(
            "UNWIND range(1, $n) AS i CREATE (:Topic {namespace: $prefix + i, "
            "topic_id: $prefix + i, name: 'x'})",
            prefix=prefix, n=SMALL_TOPICS,
        )  # fmt: skip
        driver.execute_query(
            "UNWIND range(1, $n) AS i CREATE (:Topic {namespace: $ns, "
            "topic_id: $ns + '-' + right('0000' + i, 5), name: 'x'})",
            ns=namespace, n=LARGE_NAMESPACE,
        )  # fmt: skip
        driver.execute_query("CALL db.prepareForReplanning()")
        page = {"namespace": namespace, "after_id": "", "limit": 10, "vectors": False}
        for name in ("export_topics", "export_edges"):
            assert db_hits(driver, query(name), **page) < 300, name
        records, _, _ = driver.execute_query(query("export_topics"), page)
        assert [r["t"]["topic_id"] for r in records] == [
            f"{namespace}-{i:05d}" for i in range(1, 11)
        ]
    finally:
        driver.execute_query(
            "MATCH (t:Topic) WHERE t.namespace STARTS WITH $prefix DETACH DELETE t", prefix=prefix
        )
