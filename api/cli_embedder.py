"""``sheriff embedder ...``: prepare the local embedding model (run by ``scripts/setup``).

``export`` builds the ONNX graph of all-MiniLM-L6-v2 from the installed weights into
``<home>/models/all-MiniLM-L6-v2/`` and checks it against sentence-transformers' vectors; it is a
no-op when the graph already matches the installed weights. It needs neither torch nor a network:
the graph is written from the weights (``retrieval.minilm_graph``).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from api import terminal
from api.settings import Settings
from graph.errors import SheriffError
from retrieval import minilm

embedder_app = typer.Typer(no_args_is_help=True, help="The local embedding model (set-up).")
err = Console(stderr=True)


@embedder_app.command("export")
def export(
    force: Annotated[
        bool, typer.Option("--force", help="export even if the graph is current")
    ] = False,
) -> None:
    """Export the ONNX graph the default embedding runtime loads (idempotent)."""
    from retrieval.minilm_export import export_onnx  # onnx + safetensors: set-up only

    graph = minilm.onnx_file(Settings().home)
    try:
        with minilm.export_lock(graph):
            if not force and minilm.is_current(graph):
                typer.echo(f"ONNX graph up to date: {graph}")
                return
            cosine = export_onnx(graph)
    except SheriffError as exc:
        terminal.error(err, exc)
        raise typer.Exit(1) from exc
    typer.echo(f"exported {graph} (cosine vs sentence-transformers >= {cosine:.6f})")
