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
