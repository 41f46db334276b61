"""Helpers for the REST API tests: the real app over a real Container (real Neo4j), with the
session's embedding model injected so the model loads once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from api.app import create_app
from api.auth import ApiKeys
from api.container import Container
from api.settings import Settings
from retrieval.embedding import Embedder
from skills.config import SkillSettings


@contextmanager
def api_client(
    settings: Settings, embedder: Embedder, workspace: Path, **overrides: Any
) -> Iterator[TestClient]:
    """A TestClient over the real app; skills run in ``workspace``; ``overrides`` patch Settings."""
    container = Container(
        settings.model_copy(update=overrides),
        skill_settings=SkillSettings(workspace=workspace),
        embedder=embedder,
    )
    try:
        with TestClient(create_app(container)) as client:
            yield client
    finally:
        container.close()


def keys(client: TestClient) -> ApiKeys:
    found: ApiKeys = client.app.state.api_keys  # type: ignore[attr-defined]
    return found


def new_key(client: TestClient, namespace: str, label: str | None = None) -> str:
    return keys(client).create(namespace, label)[1]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
