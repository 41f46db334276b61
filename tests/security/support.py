"""Helpers of the security suite: what a namespace holds, to assert a refusal changed nothing."""

from __future__ import annotations

import json
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


def dump(driver: Driver, namespace: str) -> list[str]:
    """Every node of ``namespace`` (and every node without a namespace next to one) and every
    relationship touching them, each as canonical JSON of its labels or type, its element ids
    and every property: equal before and after a refused request, byte for byte, or something
    was written; and the text a scan for secrets reads."""
    nodes, _, _ = driver.execute_query(
        """
        MATCH (n) WHERE n.namespace = $ns
        OPTIONAL MATCH (n)--(m) WHERE m.namespace IS NULL
        WITH collect(DISTINCT n) + collect(DISTINCT m) AS found
        UNWIND found AS x
        RETURN DISTINCT elementId(x) AS id, labels(x) AS what, properties(x) AS props
        """,
        ns=namespace,
    )
    rels, _, _ = driver.execute_query(
        """
        MATCH (n)-[r]-() WHERE n.namespace = $ns
        RETURN DISTINCT elementId(r) AS id, [type(r), elementId(startNode(r)),
               elementId(endNode(r))] AS what, properties(r) AS props
        """,
        ns=namespace,
    )
    return sorted(
        json.dumps([r["id"], r["what"], r["props"]], sort_keys=True, default=str)
        for r in [*nodes, *rels]
    )
