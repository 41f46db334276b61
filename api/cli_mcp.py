"""``sheriff mcp``: the memory of one namespace as an MCP server on stdin/stdout.

For desktop clients (Claude Desktop, Cursor, ...) that start their MCP servers as local
processes. The operator names the namespace on the command line, as for ``sheriff chat``: the
process runs as the local user with the server's own Neo4j credentials, so no API key is
involved. stdout carries only the protocol; logs and progress go to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import TypeAdapter, ValidationError
from rich.console import Console

from api.cli_agent import neo4j_running
from api.settings import Settings
from graph.errors import SheriffError
from graph.models import Namespace

if TYPE_CHECKING:
    from api.container import Container

err = Console(stderr=True)


async def serve_stdio(container: Container, namespace: str) -> None:
    """Serve ``namespace`` over stdio until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    from api.mcp_server import build_server, fixed_namespace

    server = build_server(container, fixed_namespace(namespace))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def mcp(
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", help="the memory namespace to serve")
    ],
) -> None:
    """Serve NAMESPACE's memory as an MCP server over stdio (for Claude Desktop, Cursor...):
    memory context, topics, remember, link, messages, sleep, wake and skills; see docs/mcp.md.
    Starts the managed Neo4j if it is not running."""
    import anyio

    from api.container import Container

    try:
        namespace = TypeAdapter(Namespace).validate_python(namespace)
    except ValidationError:
        err.print(f"[bold red]error:[/] not a namespace: {namespace!r} (letters, digits, _.:-)")
        raise typer.Exit(2) from None
    settings = Settings(sleep_mode="inline")  # stdio MCP: no sleep worker runs here
    try:
        with neo4j_running(settings):
            container = Container(settings)
            try:
                with err.status("applying schema and loading the embedding model..."):
                    container.prepare()
                err.print(f"MCP server on stdio, namespace {namespace!r}")
                anyio.run(serve_stdio, container, namespace)
            finally:
                container.close()
    except SheriffError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from exc
