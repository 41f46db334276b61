"""``sheriff search "QUERY" -n NS``: ranked topics with why each was found, through the same
``search_topics`` the REST ``/v1/topics/search`` runs."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from api import terminal
from api.schemas import SearchPublic, TopicSearch
from api.search import search_topics
from api.settings import Settings
from api.terminal import clean, markup
from graph.errors import SheriffError
from graph.models import describe_errors

err = Console(stderr=True)


def search(
    query: Annotated[str, typer.Argument(help="what to look for")],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="memory namespace")],
    window: Annotated[
        str | None, typer.Option(help='a time phrase: "last week", "before you slept"')
    ] = None,
    from_: Annotated[str | None, typer.Option("--from", help="window start, ISO-8601")] = None,
    to: Annotated[str | None, typer.Option(help="window end (exclusive), ISO-8601")] = None,
    k: Annotated[int, typer.Option("--k", "-k", help="how many topics")] = 8,
    now: Annotated[str | None, typer.Option(help="the clock, ISO-8601 with zone")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Search the topics of NAMESPACE; each hit says why it was found."""
    from api.container import Container

    raw = {"query": query, "window": window, "from": from_, "to": to, "k": k, "now": now}
    try:
        request = TopicSearch.model_validate({f: v for f, v in raw.items() if v is not None})
    except ValidationError as exc:
        terminal.error(err, describe_errors("search", exc))
        raise typer.Exit(2) from exc
    container = Container(Settings())
    try:
        services = container.services
        result = search_topics(
            services.topics, services.windows, namespace, request, services.clock.now()
        )
    except SheriffError as exc:
        terminal.error(err, exc)
        raise typer.Exit(1) from exc
    finally:
        container.close()
    if as_json:
        terminal.echo_json(result.model_dump_json(indent=2))
    else:
        _print(result)


def _print(result: SearchPublic) -> None:
    console = Console(highlight=False)
    if result.time_window is not None:
        w = result.time_window
        console.print(
            markup(f"window: {w.phrase!r} ({w.kind}) {w.start or '...'} to {w.end or '...'}")
        )
    if result.degraded:
        console.print("[yellow]embedding model unavailable: lexical results only[/]")
    if not result.hits:
        console.print("no topics found")
    for rank, hit in enumerate(result.hits, start=1):
        console.print(
            f"{rank}. [bold]{markup(hit.name)}[/] ({hit.first_seen_at:%Y-%m-%d} to "
            f"{hit.last_seen_at:%Y-%m-%d})  score {hit.score:.3f}  id {hit.topic_id}"
        )
        if hit.one_liner:
            console.print(f"   {markup(hit.one_liner)}")
        parts = ", ".join(f"{k} {v:.3g}" for k, v in hit.components.items() if k != "score")
        console.print(f"   why: {clean(hit.reason)}; {parts}", markup=False)
