"""graph.migrations refuses a Neo4j older than 2025.01 before any migration runs when a pending
one says CYPHER 25 (the schema's vector indexes filter by namespace), naming the version found;
a calendar version passes, and so does a 5.x server with only older migrations pending (a
store at 021 before it is upgraded). A fake driver stands in for Neo4j: it records every
statement."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from graph.cypher import schema_files
from graph.errors import Neo4jUnavailable
from graph.migrations import CYPHER_25, apply_migrations, check_server_version


class FakeDriver:
    """Answers dbms.components() with ``version`` and the migration list with ``done``."""

    def __init__(self, version: str, done: list[str] | None = None) -> None:
        self.version = version
        self.done = done or []
        self.statements: list[str] = []

    def execute_query(self, text: str, *args: Any, **kwargs: Any) -> tuple[list[Any], None, None]:
        self.statements.append(text)
        if "dbms.components()" in text:
            return (
                [{"name": "Neo4j Kernel", "version": self.version, "edition": "community"}],
                None,
                None,
            )
        if "MATCH (m:SchemaMigration) RETURN" in text:
            return [{"id": i, "checksum": "x"} for i in self.done], None, None
        return [], None, None


@pytest.mark.parametrize("version", ["5.26.30", "5.26.0", "4.4.40"])
def test_a_5x_server_is_refused_before_any_migration(version: str) -> None:
    driver = FakeDriver(version)
    with pytest.raises(Neo4jUnavailable, match=rf"Neo4j {version} is too old.*2025\.01"):
        apply_migrations(driver, datetime(2026, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    assert not any("INDEX" in s and "CONSTRAINT" not in s for s in driver.statements)
    assert not any("MERGE (m:SchemaMigration" in s for s in driver.statements)


def test_a_5x_server_with_only_cypher_5_migrations_pending_is_migrated() -> None:
    files = schema_files()
    first_25 = next(i for i, (_, text) in enumerate(files) if CYPHER_25 in text)
    assert first_25 > 0
    done = [name for name, _ in files[first_25:]]  # only the older ones pending
    driver = FakeDriver("5.26.30", done)
    apply_migrations(driver, datetime(2026, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    assert not any("dbms.components()" in s for s in driver.statements)
    assert sum("MERGE (m:SchemaMigration" in s for s in driver.statements) == first_25


@pytest.mark.parametrize("version", ["2025.01.0", "2026.08.1"])
def test_a_calendar_version_passes(version: str) -> None:
    check_server_version(FakeDriver(version))  # type: ignore[arg-type]
