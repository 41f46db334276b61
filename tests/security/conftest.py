"""The security suite runs against the real app and the real Neo4j, like tests/integration."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/security" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
