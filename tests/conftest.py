"""Shared fixtures. Integration tests need the real Neo4j: they fail (never skip) without it.

Where Neo4j comes from, in order: NEO4J_URI (an existing server, e.g. ``docker compose up``); the
server managed by ``sheriff neo4j start`` (``make test`` starts it); a testcontainers Neo4j when a
Docker engine answers. Each test gets its own namespace, deleted afterwards, so the suite can run
twice against the same server.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from neo4j import Driver

from api.settings import Settings
from graph.db import connect
from graph.errors import SheriffError
from graph.migrations import apply_migrations
from retrieval import minilm
from retrieval.embedding import MiniLMEmbedder

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def settings() -> Settings:
    """The environment's settings with sleeps inline (the append that fills the buffer
    sleeps): most tests pin what a sleep does, with no worker running. Background sleep is
    tested with ``sleep_mode="background"`` and a worker (tests/integration/test_sleep_worker.py)."""
    return Settings(sleep_mode="inline")


@pytest.fixture(scope="session")
def driver(settings: Settings) -> Iterator[Driver]:
    try:
        uri, user, password = settings.connection()
        drv = connect(uri, user, password)
    except SheriffError as exc:
        if settings.uses_managed_server and _docker_answers():
            yield from _testcontainers_driver()
            return
        pytest.fail(
            f"Neo4j is required for integration tests and is not reachable: {exc}\n"
            "Run `make test` (it starts Neo4j), or `sheriff neo4j start`, or set NEO4J_URI.",
            pytrace=False,
        )
    apply_migrations(drv, datetime.now(UTC), settings.neo4j_database)
    yield drv
    drv.close()


def _testcontainers_driver() -> Iterator[Driver]:
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:2026.08.1-community") as container:
        drv = connect(container.get_connection_url(), "neo4j", container.password)
        apply_migrations(drv, datetime.now(UTC))
        yield drv
        drv.close()


@pytest.fixture
def namespace(driver: Driver) -> Iterator[str]:
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)


@pytest.fixture
def other_namespace(driver: Driver) -> Iterator[str]:
    """A second namespace for isolation tests, deleted afterwards."""
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)


@pytest.fixture(scope="session")
def embedder(settings: Settings) -> MiniLMEmbedder:
    model = MiniLMEmbedder(onnx_path=minilm.onnx_file(settings.home))
    model.load()
    return model
