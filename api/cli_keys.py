"""``sheriff keys create/list/revoke``: API keys, each mapped to one namespace.

A new key is printed once, alone on stdout (``KEY=$(sheriff keys create -n NS)``); only its
SHA-256 hash is stored. Everything else goes to stderr. A running server stops accepting a key
revoked here within ``SHERIFF_API_KEY_CACHE_SECONDS`` (default 30 s).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from api import terminal
from api.auth import ApiKeys, api_keys_for
from api.settings import Settings
from api.terminal import markup
from graph.errors import SheriffError
from graph.keys import ApiKey

keys_app = typer.Typer(no_args_is_help=True, help="API keys: each key opens one namespace.")
err = Console(stderr=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]


@contextmanager
def _keys() -> Iterator[ApiKeys]:
    from api.container import Container

    container = Container(Settings())
    try:
        container.migrate()
        yield api_keys_for(container)
    finally:
        container.close()


def _fail(message: str) -> None:
    terminal.error(err, message)
    raise typer.Exit(1)


def _public(key: ApiKey) -> dict[str, object]:
    return key.model_dump(mode="json", exclude={"key_hash"})


@keys_app.command("create")
def create_key(
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="the namespace it opens")],
    label: Annotated[str | None, typer.Option(help="a note: who or what uses it")] = None,
) -> None:
    """Create a key and print it (the only time it is shown)."""
    try:
        with _keys() as keys:
            record, key = keys.create(namespace, label)
    except SheriffError as exc:
        _fail(str(exc))
    typer.echo(key)
    err.print(
        f"created {record.key_id} for namespace {record.namespace!r}; store the key now, "
        "it is not shown again",
        highlight=False,
        soft_wrap=True,
    )


@keys_app.command("list")
def list_keys(
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="only this namespace")
    ] = None,
    active: Annotated[bool, typer.Option(help="leave out revoked keys")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Keys, newest first (ids, prefixes, namespaces; never the keys themselves)."""
    try:
        with _keys() as keys:
            found = keys.list_keys(namespace, include_revoked=not active)
    except SheriffError as exc:
        _fail(str(exc))
    if json_out:
        typer.echo(json.dumps([_public(k) for k in found], indent=2))
        return
    table = Table("key id", "prefix", "namespace", "label", "created", "state")
    for k in found:
        state = f"revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "active"
        table.add_row(k.key_id, k.prefix + "…", k.namespace, markup(k.label or ""),
                      f"{k.created_at:%Y-%m-%d %H:%M}", state)  # fmt: skip
    Console().print(table)


@keys_app.command("revoke")
def revoke_key(
    key_id: Annotated[str, typer.Argument(help="the key id (sheriff keys list)")],
) -> None:
    """Revoke a key; servers refuse it within the key cache TTL."""
    try:
        with _keys() as keys:
            record = keys.revoke(key_id)
    except SheriffError as exc:
        _fail(str(exc))
    err.print(
        f"revoked {record.key_id} (namespace {record.namespace!r}); running servers refuse it "
        "within their key cache TTL",
        highlight=False,
        soft_wrap=True,
    )
