"""Driver lifecycle: one driver per process, built by the composition root and passed to stores."""

from __future__ import annotations

from typing import Any

from neo4j import Driver, GraphDatabase, Record
from neo4j.exceptions import AuthError, ServiceUnavailable

from graph.errors import Neo4jUnavailable
from graph.redaction import DEFAULT, Redactor


def connect(uri: str, user: str, password: str, *, timeout_s: float = 10.0) -> Driver:
    """Open a driver and check that the server answers; raise ``Neo4jUnavailable`` if not."""
    driver = GraphDatabase.driver(
        uri,
        auth=(user, password),
        connection_timeout=timeout_s,
        max_connection_pool_size=50,
        notifications_min_severity="OFF",
    )
    try:
        driver.verify_connectivity()
    except (ServiceUnavailable, AuthError, OSError) as exc:
        driver.close()
        raise Neo4jUnavailable(f"cannot reach Neo4j at {uri}: {exc}") from exc
    return driver


def server_info(driver: Driver, database: str = "neo4j") -> dict[str, Any]:
    """Version and edition of the server, as reported by ``dbms.components()``."""
    records, _, _ = driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition "
        "RETURN name, versions[0] AS version, edition",
        database_=database,
        routing_="r",
    )
    row = records[0]
    return {"name": row["name"], "version": row["version"], "edition": row["edition"]}


def index_states(driver: Driver, database: str = "neo4j") -> list[dict[str, Any]]:
    """Name, type, state and population of every index (for health and diagnostics)."""
    records, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, state, populationPercent "
        "RETURN name, type, state, populationPercent ORDER BY name",
        database_=database,
        routing_="r",
    )
    return [dict(r) for r in records]


class Store:
    """Base of the per-aggregate stores: holds the driver (never creates one) and runs queries.
    Stores redact every text they write with ``redactor`` (the built-in secret shapes unless the
    composition root passes one with the operator's patterns)."""

    def __init__(
        self, driver: Driver, database: str = "neo4j", *, redactor: Redactor | None = None
    ) -> None:
        self._driver = driver
        self._db = database
        self.redactor = redactor or DEFAULT

    def _run(self, text: str, params: dict[str, Any], *, read: bool = False) -> list[Record]:
        records, _, _ = self._driver.execute_query(
            text, parameters_=params, database_=self._db, routing_="r" if read else "w"
        )
        return list(records)


def drop_namespace(driver: Driver, namespace: str, database: str = "neo4j") -> None:
    """Delete every node of ``namespace``, API keys included (demo and evaluation namespaces; a
    user forgets through ``service.forget``, which keeps the keys, revoked). Batched, so it runs
    as an auto-commit transaction."""
    from graph.cypher import query

    with driver.session(database=database) as session:
        session.run(query("delete_namespace"), namespace=namespace).consume()
