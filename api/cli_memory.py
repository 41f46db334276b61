"""Memory control from the command line: ``sheriff forget ...``, ``sheriff facts ...``,
``sheriff memory import`` (and the JSON Lines side of ``sheriff memory export``) and
``sheriff import chatgpt``. Every command calls the same service as the REST API; results are
JSON on stdout, progress and errors on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from api.terminal import progress
from graph.errors import SheriffError

if TYPE_CHECKING:
    from api.container import Container

err = Console(stderr=True)
forget_app = typer.Typer(no_args_is_help=True, help="Forget for real (dry runs first).")
facts_app = typer.Typer(no_args_is_help=True, help="Correct or retract facts; topic history.")
import_app = typer.Typer(no_args_is_help=True, help="Bring a history in from elsewhere.")

NamespaceOpt = Annotated[str, typer.Option("--namespace", "-n", help="memory namespace")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="report only; change nothing")]
YesOpt = Annotated[bool, typer.Option("--yes", help="really delete (without it: a dry run)")]
T = TypeVar("T")


@contextmanager
def _container() -> Iterator[Container]:
    from api.container import Container
    from api.settings import Settings

    container = Container(Settings(sleep_mode="inline"))  # no sleep worker runs here
    try:
        yield container
    except SheriffError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(1) from exc
    finally:
        container.close()


def _run(work: Callable[[Container], Any]) -> None:
    """Run ``work`` with a container and print its result as JSON."""
    with _container() as c:
        result = work(c)
    data = result.model_dump(mode="json") if hasattr(result, "model_dump") else result
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


# -- forget ---------------------------------------------------------------------------------------
@forget_app.command("topic")
def forget_topic(
    topic_id: Annotated[str, typer.Argument(help="the topic's id")],
    namespace: NamespaceOpt,
    messages: Annotated[bool, typer.Option(help="also the messages it came from")] = False,
    yes: YesOpt = False,
) -> None:
    """Delete a topic, its events and every trace of it (a dry run without --yes)."""
    _run(lambda c: c.forget.topic(namespace, topic_id, with_messages=messages, dry_run=not yes))


@forget_app.command("message")
def forget_message(
    namespace: NamespaceOpt,
    message_id: Annotated[str | None, typer.Argument(help="the message's id")] = None,
    external_id: Annotated[str | None, typer.Option(help="or your external id")] = None,
    yes: YesOpt = False,
) -> None:
    """Delete a message (by id or --external-id) and what came only from it."""
    if (message_id is None) == (external_id is None):
        raise typer.BadParameter("give a MESSAGE_ID or --external-id (one of them)")
    if external_id is not None:
        _run(lambda c: c.forget.messages_by_external_id(namespace, external_id, dry_run=not yes))
    else:
        _run(lambda c: c.forget.messages_by_id(namespace, [str(message_id)], dry_run=not yes))


@forget_app.command("query")
def forget_query(
    query: Annotated[str, typer.Argument(help="a phrase (whole words, any case)")],
    namespace: NamespaceOpt,
    yes: YesOpt = False,
) -> None:
    """List (or with --yes delete) everything a phrase matches: topics, facts, messages."""
    _run(lambda c: c.forget.query(namespace, query, dry_run=not yes))


@forget_app.command("namespace")
def forget_namespace(namespace: NamespaceOpt, yes: YesOpt = False) -> None:
    """Delete all data of a namespace and revoke its API keys (a count without --yes)."""
    from api.auth import ApiKeys
    from graph.keys import ApiKeyStore

    def work(c: Container) -> Any:
        keys = ApiKeys(ApiKeyStore(c.driver, c.settings.neo4j_database), c.clock, ttl_s=0)
        return c.forget.namespace(namespace, keys.revoke_namespace, dry_run=not yes)

    _run(work)


# -- facts ----------------------------------------------------------------------------------------
@facts_app.command("correct")
def facts_correct(
    topic_id: Annotated[str, typer.Argument()],
    fact_id: Annotated[str, typer.Argument(help="from `sheriff facts history TOPIC_ID`")],
    namespace: NamespaceOpt,
    text: Annotated[str, typer.Option(help="what is true instead")],
    reason: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Replace one fact; the old one is kept as history."""
    _run(lambda c: c.facts.correct(namespace, topic_id, fact_id, text, reason=reason))


@facts_app.command("retract")
def facts_retract(
    topic_id: Annotated[str, typer.Argument()],
    fact_id: Annotated[str, typer.Argument()],
    namespace: NamespaceOpt,
    reason: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Close one fact with no successor (no longer true; kept as history)."""
    _run(lambda c: c.facts.retract(namespace, topic_id, fact_id, reason=reason))


@facts_app.command("history")
def facts_history(topic_id: Annotated[str, typer.Argument()], namespace: NamespaceOpt) -> None:
    """Every fact version and event of a topic, oldest first."""
    _run(lambda c: c.facts.history(namespace, topic_id))


# -- export / import ------------------------------------------------------------------------------
def export_jsonl(namespace: str, out: Path, vectors: bool) -> None:
    """Write the JSON Lines export to ``out`` (``-``: stdout), atomically for a file."""
    with _container() as c:
        if str(out) == "-":
            for line in c.exporter.lines(namespace, vectors=vectors):
                sys.stdout.write(line)
            return
        partial = out.with_name(out.name + ".partial")
        count = 0
        with partial.open("w", encoding="utf-8") as fh:
            for line in c.exporter.lines(namespace, vectors=vectors):
                fh.write(line)
                count += 1
        partial.replace(out)  # a failed export never leaves a truncated file under the name
    err.print(f"wrote {out} ({count} lines)")


def memory_import(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="a JSON Lines export")],
    namespace: NamespaceOpt,
    dry_run: DryRunOpt = False,
) -> None:
    """Import an export into NAMESPACE (idempotent): created / merged / unchanged / refused."""
    from service.importer import parse_document

    def work(c: Container) -> Any:
        with file.open(encoding="utf-8-sig") as fh:
            doc = parse_document(fh)
        with err.status(f"importing {doc.count()} records..."):
            return c.importer.run(namespace, doc, dry_run=dry_run)

    _run(work)


@import_app.command("chatgpt")
def import_chatgpt(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="conversations.json")],
    namespace: NamespaceOpt,
    dry_run: DryRunOpt = False,
) -> None:
    """Ingest a ChatGPT data export: the current branch of every conversation, by time, with
    the production sleep policy (as `sheriff ingest`)."""
    from service.chatgpt import read_history

    def work(c: Container) -> Any:
        history = read_history(file.read_bytes())
        with progress() as bar:
            task = bar.add_task("importing", total=len(history.messages))

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return c.chatgpt.run(namespace, history, dry_run=dry_run, progress=advance)

    _run(work)
