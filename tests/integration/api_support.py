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
    settings: Settings,
    embedder: Embedder,
    workspace: Path,
    skill_settings: SkillSettings | None = None,
    **overrides: Any,
) -> Iterator[TestClient]:
    """A TestClient over the real app; each namespace's workspace is a folder of ``workspace``
    (see ``tenant_workspace``); ``overrides`` patch Settings."""
    base = skill_settings or SkillSettings()
    container = Container(
        settings.model_copy(update=overrides),
        skill_settings=base.model_copy(update={"workspaces_dir": workspace}),
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


def tenant_workspace(client: TestClient, namespace: str) -> Path:
    """The folder the repo tools of ``namespace`` work in (made if needed)."""
    container: Container = client.app.state.container  # type: ignore[attr-defined]
    assert container.workspaces is not None, "repo tools are turned off"
    return container.workspaces.for_namespace(namespace)
