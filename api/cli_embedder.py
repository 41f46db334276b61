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
    """Export the ONNX graph the default embedding runtime loads (idempotent), and its int8
    graph when a runtime of minilm uses it (passages do by default)."""
    from retrieval.minilm_export import export_onnx, quantise_int8  # set-up only

    settings = Settings()
    graph = minilm.onnx_file(settings.home)
    wants_int8 = settings.embedder == "minilm" and "onnx-int8" in (
        settings.embedding_runtime,
        settings.passage_embedding_runtime,
    )
    int8 = minilm.int8_file(graph) if wants_int8 else None
    try:
        with minilm.export_lock(graph):
            if not force and minilm.is_current(graph):
                typer.echo(f"ONNX graph up to date: {graph}")
            else:
                cosine = export_onnx(graph)
                typer.echo(f"exported {graph} (cosine vs sentence-transformers >= {cosine:.6f})")
            if int8 is not None and (
                force or not minilm.is_current(int8, minilm.expected_int8_stamp())
            ):
                cosine = quantise_int8(graph)
                typer.echo(f"quantised {int8} (cosine vs sentence-transformers >= {cosine:.6f})")
    except SheriffError as exc:
        terminal.error(err, exc)
        raise typer.Exit(1) from exc
