"""The ``sheriff`` command line (typer)."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from api import terminal
from api.cli_agent import chat, demo
from api.cli_analytics import analytics_app
from api.cli_embedder import embedder_app
from api.cli_eval import eval_app
from api.cli_keys import keys_app
from api.cli_mcp import mcp
from api.cli_memory import export_jsonl, facts_app, forget_app, import_app, memory_import
from api.cli_search import search
from api.cli_shared import err
from api.cli_shared import fail as _fail
from api.cli_shared import one_shot_container as _container
from api.cli_shared import settings as _settings
from api.cli_skills import skills_app
from api.settings import Settings
from api.terminal import markup, progress
from graph.errors import SheriffError
from graph.server import LocalNeo4j

if TYPE_CHECKING:
    from api.container import Container

app = typer.Typer(no_args_is_help=True, help="Sheriff Claw: time-aware graph memory for agents.")
neo4j_app = typer.Typer(no_args_is_help=True, help="The local Neo4j server (no Docker needed).")
app.add_typer(neo4j_app, name="neo4j")
app.command()(demo)
app.command()(chat)
app.add_typer(skills_app, name="skills")
app.add_typer(keys_app, name="keys")
app.command("search")(search)
app.command("mcp")(mcp)
app.add_typer(analytics_app, name="analytics")
app.add_typer(forget_app, name="forget")
app.add_typer(facts_app, name="facts")
app.add_typer(import_app, name="import")
app.add_typer(embedder_app, name="embedder")


def _server(settings: Settings) -> LocalNeo4j:
    return LocalNeo4j(settings.server_config())


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Fetch (first use), configure and start Neo4j; wait until Bolt answers. Idempotent."""
    settings = _settings()
    if not settings.uses_managed_server:
        err.print(f"NEO4J_URI is set ({settings.neo4j_uri}); using that server, nothing to start.")
        return
    server = _server(settings)
    try:
        with err.status("starting Neo4j (the first start fetches it from Maven Central)..."):
            started = server.start()
    except SheriffError as exc:
        _fail(exc)
    state = "started" if started else "already running"
    err.print(
        f"Neo4j {state}: {server.config.uri}, Browser http://127.0.0.1:{settings.neo4j_http_port}/browser/"
    )


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the managed Neo4j (no Java process is left behind)."""
    server = _server(_settings())
    err.print("Neo4j stopped." if server.stop() else "Neo4j was not running.")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Exit 0 only when Bolt answers."""
    settings = _settings()
    if settings.uses_managed_server:
        server = _server(settings)
        ok = server.running_pid() is not None and server.bolt_answers()
        where = server.config.uri
    else:
        from graph.db import connect

        uri, user, password = settings.connection()
        where = uri
        try:
            connect(uri, user, password).close()
            ok = True
        except SheriffError:
            ok = False
    err.print(f"Neo4j at {where}: {'answering' if ok else 'not answering'}")
    raise typer.Exit(0 if ok else 1)


@neo4j_app.command("env")
def neo4j_env() -> None:
    """Print export lines for NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD (eval "$(sheriff neo4j env)")."""
    settings = _settings()
    try:
        uri, user, password = settings.connection()
    except SheriffError as exc:
        _fail(exc)
    for key, value in (("NEO4J_URI", uri), ("NEO4J_USER", user), ("NEO4J_PASSWORD", password)):
        typer.echo(f"export {key}={shlex.quote(value)}")


@neo4j_app.command("logs")
def neo4j_logs(lines: int = 40) -> None:
    """Show the relevant lines of the managed server's logs."""
    terminal.echo(_server(_settings()).log_excerpt(lines))


# how long `sheriff up` waits on stopping for its sleep worker to end the batch or sleep it is in
WORKER_STOP_S = 10.0


@app.command()
def migrate() -> None:
    """Apply the schema migrations in cypher/schema (idempotent)."""
    from api.container import Container

    container = Container(_settings())
    try:
        report = container.migrate()
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    typer.echo(json.dumps(report.__dict__))


@app.command()
def health() -> None:
    """Print what /health would answer (Neo4j version, index states, embedding model)."""
    from api.container import Container
    from graph.db import index_states, server_info

    container = Container(_settings())
    try:
        info: dict[str, Any] = {
            "neo4j": server_info(container.driver),
            "indexes": index_states(container.driver),
            "embedding": {"model": container.embedder.model_name},
        }
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    typer.echo(json.dumps(info, indent=2, default=str))


@app.command()
def up(
    keep_neo4j: Annotated[bool, typer.Option(help="leave Neo4j running on exit")] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1, max=64, help="API worker processes (default: SHERIFF_API_WORKERS, else the CPUs)"
        ),
    ] = None,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="run no sleep worker here (run `sheriff worker`)")
    ] = False,
    port: Annotated[int | None, typer.Option(help="API port (default SHERIFF_API_PORT)")] = None,
) -> None:
    """The main job: Neo4j up, schema applied, API on 127.0.0.1:8000 served by N worker
    processes (each loads the embedding model before it takes requests), and a sleep worker
    in a thread of this process (appends queue sleeps; the worker runs them)."""
    from api.container import Container
    from api.serve import serve, worker_count

    settings = _settings()
    if port is not None:
        settings = settings.model_copy(update={"api_port": port})
    count = worker_count(workers, settings)
    server = _server(settings) if settings.uses_managed_server else None
    started = False
    container = None
    background: threading.Thread | None = None
    stop = threading.Event()
    try:
        if server is not None:
            with err.status("starting Neo4j..."):
                started = server.start()
        container = Container(settings)  # the migrations run once, here: workers only check
        with err.status("applying schema..."):
            container.migrate()
        # the worker also writes new messages' passages, so it runs with inline sleeps too (it
        # then finds no sleep queued: the appends sleep themselves)
        if not no_worker:
            background = _start_sleep_worker(container, settings, stop)
        else:  # the API workers build their own driver and model
            container.close()
            container = None
        where = f"http://{settings.api_host}:{settings.api_port}"
        err.print(f"API on {where} (docs at /docs), {count} worker process(es) loading...")
        serve(settings, count)
    except SheriffError as exc:
        _fail(exc)
    finally:
        stop.set()
        if background is not None:
            # the worker ends its batch first: a thread still inside the model's runtime when
            # the interpreter exits aborts the process ("terminate called"), and a batch of
            # passages or a sleep's transaction left half-way is redone by the next worker
            background.join(WORKER_STOP_S)
        if container is not None:
            container.close()
        if server is not None and started and not keep_neo4j:
            server.stop()


def _start_sleep_worker(
    container: Container, settings: Settings, stop: threading.Event
) -> threading.Thread:
    """This process's sleep worker, in a daemon thread (at ``sleep_worker_niceness``) until
    ``stop`` is set."""
    from api.telemetry import setup as setup_tracing

    setup_tracing(settings)  # this process's sleep worker (the API workers: their own)
    sleeper = container.sleep_worker()
    background = threading.Thread(
        target=sleeper.run_forever,
        args=(stop, settings.sleep_poll_seconds, settings.sleep_worker_niceness),
        name="sleep-worker",
        daemon=True,
    )
    background.start()
    return background


@app.command()
def worker(
    worker_id: Annotated[str | None, typer.Option(help="name in the run records")] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="only this namespace's sleeps")
    ] = None,
) -> None:
    """A sleep worker: claims due sleeps from Neo4j (any number of workers, on any machine,
    share the queue; leases keep one sleep per namespace) until interrupted."""
    import signal
    import threading

    from api.container import Container
    from api.telemetry import setup as setup_tracing

    settings = _settings()
    setup_tracing(settings)  # OTEL_* set: a span per sleep, its steps and queries
    container = Container(settings)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        container.prepare()
        sleeper = container.sleep_worker(worker_id, namespace)
        err.print(f"sleep worker {sleeper.worker_id} polling every {settings.sleep_poll_seconds}s")
        sleeper.run_forever(stop, settings.sleep_poll_seconds)
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()


@app.command("sleep-runs")
def sleep_runs(
    namespace: NamespaceOpt,
    limit: Annotated[int, typer.Option(min=1, max=200, help="runs to show")] = 20,
    before: Annotated[str | None, typer.Option(help="the run id the last page ended with")] = None,
) -> None:
    """Sleep attempts of a namespace, newest first (JSON): outcome, error, counts, steps."""
    container = _container()
    try:
        runs = container.services.sleepwake.runs(namespace, limit, before)
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    terminal.echo_json(json.dumps([r.model_dump(mode="json") for r in runs], indent=2))


def _parse_now(now: str | None) -> datetime:
    return terminal.parse_now(now)


NamespaceOpt = Annotated[str, typer.Option("--namespace", "-n", help="memory namespace")]
NowOpt = Annotated[str | None, typer.Option(help="the clock, ISO-8601 with zone (replays)")]


@app.command()
def ingest(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON Lines file")],
    namespace: NamespaceOpt,
    no_sleep: Annotated[bool, typer.Option(help="append only; no sleep policy")] = False,
) -> None:
    """Append {"role", "content", "at"} lines in order; the sleep policy runs as in production.
    A malformed line is reported with its number and nothing is written. Lines whose
    external_id is already stored are skipped (counted as duplicates): re-running is safe."""
    from sleepwake.conversation import parse_jsonl

    container = _container()
    appended, duplicates, sleeps = 0, 0, []
    try:
        with file.open(encoding="utf-8") as fh:
            items = parse_jsonl(fh)
        container.conversation.validate(namespace, items)  # the whole file, before any write
        with progress() as bar:
            task = bar.add_task("ingesting", total=len(items))
            for start in range(0, len(items), INGEST_BATCH):
                part = items[start : start + INGEST_BATCH]
                result = container.conversation.append(namespace, part, auto_sleep=not no_sleep)
                appended += len(result.messages) - result.duplicates
                duplicates += result.duplicates
                sleeps += [s.model_dump(mode="json") for s in result.sleeps]
                bar.update(task, advance=len(part), description=f"ingesting ({len(sleeps)} sleeps)")
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    report: dict[str, Any] = {"appended": appended, "sleeps": sleeps}
    if duplicates:  # lines whose external_id was already stored (a re-run): not stored again
        report["duplicates"] = duplicates
    typer.echo(json.dumps(report, indent=2))


INGEST_BATCH = 100


@app.command()
def sleep(namespace: NamespaceOpt, now: NowOpt = None) -> None:
    """Sleep now: compact the buffer into topics and write a wake packet (JSON summary)."""
    container = _container()
    try:
        summary = container.services.sleepwake.sleep(namespace, _parse_now(now), "explicit")
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    terminal.echo_json(summary.model_dump_json(indent=2))


@app.command()
def wake(
    namespace: NamespaceOpt,
    message: Annotated[str, typer.Option(help="the new user message")],
    now: NowOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Wake: the packet, the resume decision and the topics retrieved for MESSAGE."""
    container = _container()
    try:
        result = container.services.sleepwake.wake(namespace, message, _parse_now(now))
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    if as_json:
        terminal.echo_json(result.model_dump_json(indent=2))
        return
    console = Console(highlight=False)
    resume = result.resume
    console.print(f"[bold]resume:[/] {markup(f'{resume.action} {resume.goal} {resume.reason}')}")
    for topic in result.topics:
        line = (
            f"- {topic.name} ({topic.last_seen_at:%Y-%m-%d}): {topic.one_liner}  [{topic.reason}]"
        )
        console.print(markup(line))


app.add_typer(eval_app, name="eval")
memory_app = typer.Typer(no_args_is_help=True, help="The memory as a file.")
app.add_typer(memory_app, name="memory")


@memory_app.command("export")
def memory_export(
    namespace: NamespaceOpt,
    out: Annotated[Path, typer.Option(help="file to write ('-' = stdout, jsonl only)")],
    budget: Annotated[int, typer.Option(help="token budget (hot 60%, warm 30%, cold 10%)")] = 4000,
    now: NowOpt = None,
    fmt: Annotated[
        str, typer.Option("--format", help="yaml: a budgeted summary; jsonl: everything")
    ] = "yaml",
    vectors: Annotated[bool, typer.Option(help="jsonl: include the vectors")] = False,
) -> None:
    """Write the memory as YAML within a token budget, or all of it as versioned JSON Lines
    (docs/export.md) for backup and `sheriff memory import`."""
    from sleepwake.export import export_memory

    if fmt not in ("yaml", "jsonl"):
        raise typer.BadParameter(f"--format must be yaml or jsonl, not {fmt!r}")
    if fmt == "jsonl":
        export_jsonl(namespace, out, vectors)
        return

    container = _container()
    try:
        text = export_memory(container.topics.list_live(namespace), budget, _parse_now(now))
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    out.write_text(text, encoding="utf-8")
    err.print(f"wrote {out} ({len(text)} chars)")


memory_app.command("import")(memory_import)


def main() -> None:
    from pydantic import ValidationError

    from api.serve import configure_logging

    configure_logging()
    try:
        app()
    except SheriffError as exc:  # anything not caught by a command
        terminal.error(err, exc)
        sys.exit(1)
    except ValidationError as exc:  # Settings refused (a bad redaction pattern, a bad value)
        err.print(f"error: invalid settings: {exc}")
        sys.exit(2)
