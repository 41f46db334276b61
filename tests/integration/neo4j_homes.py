"""A private managed-Neo4j home for the CLI tests: own folder and ports, the caller's
environment without its NEO4J_* / SHERIFF_* settings, and the jars shared with the main
managed home when it has those of the default version (a symlink, so nothing is downloaded
again)."""

from __future__ import annotations

import os
from pathlib import Path

from api.settings import Settings
from graph.server import NEO4J_VERSION


def private_home_env(home: Path, bolt: int, http: int) -> dict[str, str]:
    """The environment for `sheriff neo4j ...` on ``home`` (SHERIFF_HOME) and those ports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "SHERIFF_"))}
    env.update(
        SHERIFF_HOME=str(home),
        SHERIFF_NEO4J_BOLT_PORT=str(bolt),
        SHERIFF_NEO4J_HTTP_PORT=str(http),
        SHERIFF_NEO4J_HEAP="512m",
    )
    shared_lib = (Settings().home / "neo4j" / "lib").resolve()
    if (shared_lib / f"neo4j-{NEO4J_VERSION}.jar").is_file():
        (home / "neo4j").mkdir(parents=True, exist_ok=True)
        (home / "neo4j" / "lib").symlink_to(shared_lib)
    return env
