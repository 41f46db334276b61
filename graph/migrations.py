"""Schema migrations: apply ``cypher/schema/NNN_*.cypher`` once each, recorded in the database.

Every statement is idempotent (``IF NOT EXISTS``), so two processes migrating at once are harmless.
A migration is recorded as ``(:SchemaMigration {id, checksum, applied_at})`` after all its
statements ran; an edited, already-applied file is reported rather than silently re-run.

The schema needs Neo4j 2025.01 or later (Cypher 25: the vector indexes of 022 filter by namespace,
and the vector queries use ``SEARCH``): when a pending migration says ``CYPHER 25``, a server of
5.x is refused with a clear error before any migration runs (``sheriff neo4j start`` upgrades a
5.26 store, docs/neo4j.md).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime

from neo4j import Driver

from graph.cypher import schema_files, split_statements
from graph.db import server_info
from graph.errors import Neo4jUnavailable
from graph.server_java import is_calendar_version

log = logging.getLogger(__name__)

CYPHER_25 = "CYPHER 25"  # a migration holding this needs Neo4j 2025.01+


@dataclass
class MigrationReport:
    applied: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


def apply_migrations(
    driver: Driver, now: datetime, database: str = "neo4j", await_s: int = 300
) -> MigrationReport:
    """Apply pending migrations and wait until every index is online."""
    driver.execute_query(
        "CREATE CONSTRAINT schema_migration_id IF NOT EXISTS "
        "FOR (m:SchemaMigration) REQUIRE m.id IS UNIQUE",
        database_=database,
    )
    records, _, _ = driver.execute_query(
        "MATCH (m:SchemaMigration) RETURN m.id AS id, m.checksum AS checksum", database_=database
    )
    done = {r["id"]: r["checksum"] for r in records}
    if any(m not in done and CYPHER_25 in text for m, text in schema_files()):
        check_server_version(driver, database)
    report = MigrationReport()
    for migration_id, text in schema_files():
        checksum = hashlib.sha256(text.encode()).hexdigest()
        if migration_id in done:
            (report.already if done[migration_id] == checksum else report.changed).append(
                migration_id
            )
            continue
        for statement in split_statements(text):
            driver.execute_query(statement, database_=database)
        driver.execute_query(
            "MERGE (m:SchemaMigration {id: $id}) SET m.checksum = $checksum, m.applied_at = $now",
            id=migration_id,
            checksum=checksum,
            now=now,
            database_=database,
        )
        report.applied.append(migration_id)
    for migration_id in report.changed:
        log.warning("migration %s changed after it was applied; write a new one", migration_id)
    driver.execute_query(f"CALL db.awaitIndexes({int(await_s)})", database_=database)
    return report


def check_server_version(driver: Driver, database: str = "neo4j") -> None:
    """Refuse a Neo4j older than 2025.01 (no Cypher 25, no vector index filter properties),
    naming the version found and the way forward; nothing is written."""
    version = str(server_info(driver, database)["version"])
    if not is_calendar_version(version):
        raise Neo4jUnavailable(
            f"Neo4j {version} is too old for this schema: Sheriff Claw needs Neo4j 2025.01 or "
            "later (Cypher 25 and vector indexes filtered by namespace; the managed server is "
            "2026.08.1). `sheriff neo4j start` upgrades a managed 5.26 store on its first "
            "start, with a backup (docs/neo4j.md); upgrade any other server to 2025.01+"
        )


def pending_migrations(driver: Driver, database: str = "neo4j") -> list[str]:
    """The migrations not applied yet (read-only: an API worker checks that the process that
    started it migrated, instead of migrating again)."""
    records, _, _ = driver.execute_query(
        "MATCH (m:SchemaMigration) RETURN m.id AS id", database_=database, routing_="r"
    )
    done = {r["id"] for r in records}
    return [migration_id for migration_id, _ in schema_files() if migration_id not in done]
