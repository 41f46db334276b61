"""The security suite runs against the real app and Neo4j, like tests/integration: it uses the
fixtures of tests/conftest.py (settings, driver, namespace, embedder) and is marked integration.
``client`` (the app in-process) and ``server`` (the app over real HTTP, for MCP) serve a module;
a module that needs other settings defines its own."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client
from tests.integration.live_server import LiveServer, live_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/security" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws")) as c:
        yield c


@pytest.fixture(scope="module")
def server(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with live_server(
        settings, embedder, tmp_path_factory.mktemp("ws"), extractor="deterministic"
    ) as live:
        yield live
