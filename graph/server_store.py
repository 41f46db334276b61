"""Which Neo4j version last ran a managed store, and what a start with another version needs.

Neo4j 5.26 and the calendar versions (2025.01 and later, Community) use the same store format
(``record-aligned-1.1``, introduced in 5.0), so no offline ``neo4j-admin database migrate`` is
needed: a newer server opens a 5.26 store and upgrades it itself on start (one "upgrade
transaction" per database raises its kernel version, e.g. ``V5_25`` -> ``V2026_08``, and the
system graph's components are brought up to date). That upgrade is one way: once a newer
server has run on the store, an older one refuses it. So before a newer version first starts
on a store, ``data/`` is copied to ``backups/`` (the way back: stop, move the copy into place,
start the old version), and a start with an older version than the store's is refused.

Recovery does not cross versions: a store left unclean by a crash must be recovered by the
version that wrote it, so an upgrade first asks ``neo4j-admin database info`` and refuses,
naming the version to start once, when a database still needs recovery.

The version that last ran the store is kept in ``store-version`` beside ``data/``; a store
without that file was written before it existed, by the only version managed then (5.26.30).
"""

from __future__ import annotations

import logging
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from graph.errors import Neo4jUnavailable

log = logging.getLogger(__name__)

STORE_VERSION_FILE = "store-version"
UNMARKED_STORE_VERSION = "5.26.30"  # every store written before the marker existed
_NEEDS_RECOVERY = re.compile(
    r"Database name:\s*(\S+).*?Store needs recovery:\s*(true|false)", re.DOTALL | re.IGNORECASE
)


def version_key(version: str) -> tuple[int, ...]:
    """``"2026.08.1"`` -> ``(2026, 8, 1)``: calendar versions sort after every 5.x."""
    parts = re.findall(r"\d+", version)
    if not parts:
        raise Neo4jUnavailable(f"unreadable Neo4j version {version!r} (e.g. 5.26.30)")
    return tuple(int(p) for p in parts)


def store_version(home: Path) -> str | None:
    """The version that last ran the store in ``home/data``; None when there is no store."""
    if not any((home / "data" / "databases").glob("*")):
        return None
    try:
        return (home / STORE_VERSION_FILE).read_text().strip() or UNMARKED_STORE_VERSION
    except FileNotFoundError:
        return UNMARKED_STORE_VERSION


def mark_store(home: Path, version: str) -> None:
    """Record that ``version`` ran the store (after a successful start)."""
    tmp = home / f"{STORE_VERSION_FILE}.tmp"
    tmp.write_text(version + "\n")
    tmp.replace(home / STORE_VERSION_FILE)


def databases_needing_recovery(info_output: str) -> list[str]:
    """The databases ``neo4j-admin database info`` says need recovery."""
    return [name for name, flag in _NEEDS_RECOVERY.findall(info_output) if flag.lower() == "true"]


def refuse_downgrade(home: Path, version: str) -> None:
    """Refuse ``version`` when a newer one already ran the store (before any jar is fetched)."""
    previous = store_version(home)
    if previous is not None and version_key(version) < version_key(previous):
        raise Neo4jUnavailable(
            f"the store in {home / 'data'} was last run by Neo4j {previous}; {version} cannot "
            f"open it (an upgraded store does not go back). Set SHERIFF_NEO4J_VERSION={previous}, "
            f"or stop, move a copy from {home / 'backups'} into {home / 'data'} and start {version}"
        )


def prepare_store(
    home: Path, version: str, database_info: Callable[[], str], now: Callable[[], float] = time.time
) -> Path | None:
    """Make ``home/data`` ready for ``version``; return the backup taken, if any.

    Same version or no store: nothing to do. Older version than the store's: refused (the
    store cannot go back). Newer: refused while a database needs recovery, else ``data/`` is
    copied to ``backups/data-<old version>-<UTC time>`` and Neo4j upgrades the store on start.
    """
    refuse_downgrade(home, version)
    previous = store_version(home)
    if previous is None or previous == version:
        return None
    backups = home / "backups"
    unclean = databases_needing_recovery(database_info())
    if unclean:
        raise Neo4jUnavailable(
            f"database(s) {', '.join(unclean)} in {home / 'data'} need recovery, which only the "
            f"version that wrote them does: start once with SHERIFF_NEO4J_VERSION={previous}, "
            f"stop, then start {version}"
        )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now()))
    backup = backups / f"data-{previous}-{stamp}"
    partial = backups / f"{backup.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    backups.mkdir(parents=True, exist_ok=True)
    shutil.copytree(home / "data", partial, symlinks=True)
    partial.rename(backup)  # a backup cut short by a crash keeps its .partial name
    log.warning("upgrading the store from Neo4j %s to %s; backup at %s", previous, version, backup)
    return backup
