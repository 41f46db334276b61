"""The security suite runs against the real app and Neo4j, like tests/integration: it uses the
fixtures of tests/conftest.py (settings, driver, namespace, embedder) and is marked integration."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/security" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
