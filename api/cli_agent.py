"""``sheriff demo`` and ``sheriff chat``: the awake loop from the command line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console

from api import terminal
from api.settings import Settings
from api.terminal import markup
from graph.errors import SheriffError
from graph.server import LocalNeo4j

err = Console(stderr=True)


@contextmanager
def neo4j_running(settings: Settings) -> Iterator[None]:
    """The managed Neo4j for the duration of a command: started if needed, and stopped again
    only if this command started it. An external NEO4J_URI is used as is."""
    server = LocalNeo4j(settings.server_config()) if settings.uses_managed_server else None
    started = False
    if server is not None:
        with err.status("starting Neo4j (the first start fetches it from Maven Central)..."):
            started = server.start()
    try:
        yield
    finally:
        if server is not None and started:
            server.stop()


def demo(
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", help="namespace to (re)build the demo in")
    ] = "demo",
) -> None:
    """Replay a bundled 3-day conversation, sleep, wake (fresh and stale), ask time-phrase
    questions and run the Responses loop with an offline stand-in model; no API key needed.
    The namespace is emptied first."""
    from api.container import Container
    from api.demo import ASKED_AT, run_demo
    from graph.clock import FixedClock

    settings = Settings(sleep_mode="inline")  # one-shot: no sleep worker runs here
    try:
        with neo4j_running(settings):
            container = Container(settings, clock=FixedClock(ASKED_AT))
            try:
                with err.status("applying schema and loading the embedding model..."):
                    container.prepare()
                run_demo(container, namespace, Console())
            finally:
                container.close()
    except SheriffError as exc:
        terminal.error(err, exc)
        raise typer.Exit(1) from exc


def chat(
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="memory namespace")],
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="one turn; omit for a session")
    ] = None,
    offline: Annotated[
        bool, typer.Option(help="use the offline stand-in model (no key, searches memory only)")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="print each turn's result as JSON")
    ] = False,
    now: Annotated[
        str | None,
        typer.Option(help="ISO-8601 time of the turn(s), for replays (default: the clock)"),
    ] = None,
) -> None:
    """Talk to the agent: each turn gets memory context (and, after a sleep or a long silence,
    the wake: resume or confirm the interrupted task), the model may call the host tools, and
    both turns are stored in the continuous conversation (sleeping when it must)."""
    from api.container import Container

    container = Container(Settings(sleep_mode="inline"))  # no sleep worker runs here
    console = Console()
    try:
        at = terminal.parse_now(now) if now is not None else None
        with _loop(container, offline) as loop:
            for text in _turns(message, console):
                result = loop.chat(namespace, text, at or container.clock.now())
                _show(console, result, as_json)
    except SheriffError as exc:
        terminal.error(err, exc)
        raise typer.Exit(1) from exc
    finally:
        container.close()


@contextmanager
def _loop(container: Any, offline: bool) -> Iterator[Any]:
    if not offline:
        yield container.agent  # AgentUnavailable without OPENAI_API_KEY: says to use --offline
        return
    from openai import OpenAI

    from agent.fake_responses import FakeResponses
    from agent.loop import AgentLoop
    from agent.offline_model import offline_model
    from agent.policy import ModelPolicy

    with FakeResponses(script=offline_model) as fake:
        client = OpenAI(api_key="offline", base_url=fake.base_url, max_retries=0)
        s = container.settings
        yield AgentLoop(
            container.services,
            client,
            container.tools,
            ModelPolicy(fallback_model=None),
            max_steps=s.agent_max_steps,
            budget=s.agent_context_budget,
        )


def _turns(message: str | None, console: Console) -> Iterator[str]:
    if message is not None:
        yield message
        return
    console.print("[dim]Ctrl-D or 'exit' ends the session.[/]")
    while True:
        try:
            text = console.input("[bold]you>[/] ").strip()
        except EOFError:
            return
        if text in {"exit", "quit"}:
            return
        if text:
            yield text


def _show(console: Console, result: Any, as_json: bool) -> None:
    if as_json:
        terminal.echo_json(result.model_dump_json(indent=2))
        return
    for call in result.tool_calls:
        console.print(
            f"[dim]tool {markup(call.name)}: {'ok' if call.ok else markup(call.error)}[/]"
        )
    if result.wake is not None:
        resume = result.wake["resume"]
        console.print(f"[dim]woke ({result.wake['reason']}): {markup(resume['action'])}[/]")
    console.print(f"[bold]sheriff>[/] {markup(result.reply)}", highlight=False)
