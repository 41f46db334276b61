"""Helpers of the security suite: what a namespace holds, to assert a refusal changed nothing."""

from __future__ import annotations

from typing import Any

from neo4j import Driver


def census(driver: Driver, namespace: str) -> dict[str, Any]:
    """Nodes of ``namespace`` by label, its relationships with their weights, and its messages'
    ids: equal before and after a refused request, or something was written."""
    nodes, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN labels(n)[0] AS label, count(*) AS n",
        ns=namespace,
    )
    rels, _, _ = driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE a.namespace = $ns "
        "RETURN type(r) AS type, a.topic_id AS a, b.topic_id AS b, r.weight AS weight "
        "ORDER BY type, a, b",
        ns=namespace,
    )
    messages, _, _ = driver.execute_query(
        "MATCH (m:Message {namespace: $ns}) RETURN m.message_id AS id ORDER BY m.seq",
        ns=namespace,
    )
    return {
        "nodes": {r["label"]: r["n"] for r in nodes},
        "edges": [dict(r) for r in rels],
        "messages": [r["id"] for r in messages],
    }
