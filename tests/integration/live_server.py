"""The real app under a real uvicorn server on a free 127.0.0.1 port (in a thread, so the
test session's embedding model is shared), and MCP client sessions against its ``/mcp``."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import uvicorn
from fastapi import FastAPI
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from api.app import create_app
from api.auth import ApiKeys
from api.container import Container
from api.settings import Settings
from graph.clock import Clock
from retrieval.embedding import Embedder
from skills.config import SkillSettings


@dataclass
class LiveServer:
    app: FastAPI
    base_url: str

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    def keys(self) -> ApiKeys:
        found: ApiKeys = self.app.state.api_keys
        return found

    def new_key(self, namespace: str) -> str:
        return self.keys().create(namespace)[1]

    def rest(self, key: str) -> httpx.Client:
        """A REST client with ``key`` (close it, or use it in ``with``)."""
        return httpx.Client(base_url=self.base_url, headers=bearer(key), timeout=60)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def live_server(
    settings: Settings,
    embedder: Embedder,
    workspace: Path,
    clock: Clock | None = None,
    **overrides: Any,
) -> Iterator[LiveServer]:
    """uvicorn serving ``create_app`` over a real Container (with ``clock``, else the system's);
    stopped (and the container closed) on exit. ``overrides`` patch Settings."""
    container = Container(
        settings.model_copy(update=overrides),
        clock,
        skill_settings=SkillSettings(workspaces_dir=workspace),
        embedder=embedder,
    )
    app = create_app(container)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        yield LiveServer(app, f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        container.close()


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    """An initialized MCP ``ClientSession`` over streamable HTTP with ``headers``."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
