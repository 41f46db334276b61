"""What a managed store needs before another Neo4j version starts on it (no server started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.errors import Neo4jUnavailable
from graph.server_store import (
    databases_needing_recovery,
    mark_store,
    prepare_store,
    store_version,
    version_key,
)

# what `neo4j-admin database info` printed for a 5.26 store (2026.08.1's admin tool)
INFO = """
Database name:                neo4j
Database in use:              false
Store format version:         record-aligned-1.1
Store format introduced in:   5.0.0
Last committed transaction id:174
Store needs recovery:         {neo4j}

Database name:                system
Database in use:              false
Store format version:         record-aligned-1.1
Store format introduced in:   5.0.0
Last committed transaction id:41
Store needs recovery:         false
"""
T = 1_796_000_000.0  # a fixed instant: 2026-11-29T...Z


def store(home: Path) -> Path:
    db = home / "data" / "databases" / "neo4j"
    db.mkdir(parents=True)
    (db / "neostore").write_text("the data")
    return db


def never_called() -> str:
    raise AssertionError("database info is only read before an upgrade")


def test_versions_order_calendar_releases_after_5x() -> None:
    assert version_key("5.26.30") < version_key("2025.01.0") < version_key("2026.08.1")
    assert version_key("2026.08.1") > version_key("2026.07.1")


def test_no_store_or_the_same_version_needs_nothing(tmp_path: Path) -> None:
    assert store_version(tmp_path) is None
    assert prepare_store(tmp_path, "2026.08.1", never_called) is None
    store(tmp_path)
    mark_store(tmp_path, "2026.08.1")
    assert store_version(tmp_path) == "2026.08.1"
    assert prepare_store(tmp_path, "2026.08.1", never_called) is None
    assert not (tmp_path / "backups").exists()


def test_an_upgrade_backs_the_store_up_first(tmp_path: Path) -> None:
    store(tmp_path)
    assert store_version(tmp_path) == "5.26.30"  # written before the marker existed
    backup = prepare_store(tmp_path, "2026.08.1", lambda: INFO.format(neo4j="false"), lambda: T)
    assert backup is not None and backup.parent == tmp_path / "backups"
    assert backup.name.startswith("data-5.26.30-2026")
    assert (backup / "databases" / "neo4j" / "neostore").read_text() == "the data"
    assert (tmp_path / "data" / "databases" / "neo4j" / "neostore").read_text() == "the data"
    assert [p.name for p in (tmp_path / "backups").iterdir()] == [backup.name]  # no .partial


def test_a_store_that_needs_recovery_is_not_upgraded(tmp_path: Path) -> None:
    store(tmp_path)
    assert databases_needing_recovery(INFO.format(neo4j="true")) == ["neo4j"]
    with pytest.raises(Neo4jUnavailable) as caught:
        prepare_store(tmp_path, "2026.08.1", lambda: INFO.format(neo4j="true"), lambda: T)
    assert "neo4j" in str(caught.value) and "SHERIFF_NEO4J_VERSION=5.26.30" in str(caught.value)
    assert not (tmp_path / "backups").exists()


def test_an_older_version_than_the_store_is_refused_and_the_store_kept(tmp_path: Path) -> None:
    db = store(tmp_path)
    mark_store(tmp_path, "2026.08.1")
    with pytest.raises(Neo4jUnavailable, match="does not go back"):
        prepare_store(tmp_path, "5.26.30", never_called, lambda: T)
    assert (db / "neostore").read_text() == "the data"
    assert store_version(tmp_path) == "2026.08.1"
