"""``sheriff analytics ...``: the topic-evolution queries of ``cypher/analytics``.

``sheriff analytics list`` names them with their parameters (reads the files only, no Neo4j).
``sheriff analytics NAME --namespace NS [--param key=value ...] [--now ISO] [--json]`` runs one,
read-only, and prints a table (JSON with ``--json``); ``sheriff analytics run NAME ...`` is the
same. The tables go to stdout; errors go to stderr with exit code 1 (2 for bad input).
"""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import UTC, date, datetime
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.rule import Rule
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from api import terminal
from api.settings import Settings
from api.terminal import clean, markup
from graph.analytics import AnalyticResult, AnalyticsStore, load_analytics, node_key
from graph.clock import ensure_utc
from graph.db import connect
from graph.errors import SheriffError, ValidationFailed

CELL_CHARS = 120  # a table cell longer than this is cut (the JSON output is never cut)


class _RunByName(TyperGroup):
    """``sheriff analytics NAME ...`` means ``sheriff analytics run NAME ...``."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:  # click's types, vendored
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


analytics_app = typer.Typer(
    cls=_RunByName,
    no_args_is_help=True,
    help="Topic evolution: `sheriff analytics list`, then `sheriff analytics NAME -n NS`.",
)
err = Console(stderr=True)

NameArg = Annotated[str, typer.Argument(help="the analytic (see `sheriff analytics list`)")]
NamespaceOpt = Annotated[str, typer.Option("--namespace", "-n", help="memory namespace")]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--param", "-p", help="key=value for one of the analytic's $params (repeatable)"),
]
NowOpt = Annotated[
    str | None, typer.Option(help="the clock for $now, ISO-8601 with zone (default: now)")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


def _fail(message: str, code: int = 1) -> None:
    terminal.error(err, message)
    raise typer.Exit(code)


@analytics_app.command("list")
def list_analytics(as_json: JsonOpt = False) -> None:
    """The analytics: name, parameters and what each shows."""
    try:
        analytics = load_analytics()
    except SheriffError as exc:
        _fail(str(exc))
    if as_json:
        listing = [
            {
                "name": a.name,
                "description": a.description,
                "params": [p.describe() for p in a.params],
                "columns": list(a.columns),
            }
            for a in analytics.values()
        ]
        typer.echo(json.dumps(listing, indent=2))
        return
    table = Table("name", "params", "shows", box=None, pad_edge=False)
    for a in analytics.values():
        params = ", ".join(p.describe() for p in a.params if p.name != "namespace")
        table.add_row(a.name, params or "-", markup(a.description))
    Console().print(table)


@analytics_app.command("run")
def run_analytic(
    name: NameArg,
    namespace: NamespaceOpt,
    param: ParamOpt = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one analytic read-only and print its rows."""
    try:
        values = parse_params(param or [])
        clock = parse_now(now)
    except ValidationFailed as exc:
        _fail(str(exc), 2)
    settings = Settings()
    try:
        driver = connect(*settings.connection())
    except SheriffError as exc:
        _fail(str(exc))
    try:
        result = AnalyticsStore(driver, settings.neo4j_database).run(
            name, namespace, values, now=clock
        )
    except ValidationFailed as exc:
        _fail(f"{exc}\n(parameters: --param key=value; see `sheriff analytics list`)", 2)
    except SheriffError as exc:
        _fail(str(exc))
    finally:
        driver.close()
    if as_json:
        typer.echo(json.dumps(as_dict(result), indent=2, default=_json_default))
    else:
        print_table(result, Console())


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``["top=3", "bucket=day"]`` -> ``{"top": "3", "bucket": "day"}``; typed later by the
    analytic's header."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValidationFailed(f"--param wants key=value, got {pair!r}")
        if key in values:
            raise ValidationFailed(f"--param {key} is given twice")
        values[key] = value
    return values


def parse_now(now: str | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    try:
        return ensure_utc(datetime.fromisoformat(now), "--now")
    except ValueError:
        raise ValidationFailed(f"--now: not an ISO-8601 timestamp: {now!r}") from None


def as_dict(result: AnalyticResult) -> dict[str, Any]:
    """Every field of the result, in its order, the values as they are (``--json`` turns the
    driver's nodes and times into JSON itself); a field added to the result is printed too."""
    return {f.name: getattr(result, f.name) for f in fields(result)}


def print_table(result: AnalyticResult, console: Console) -> None:
    """Rows as a rich table: times in ISO-8601, lists joined, nodes and paths as captions.
    A table too wide for the console is printed one record per row instead (like psql's
    expanded mode), so no column is squeezed into unreadable slivers."""
    shown = ", ".join(f"{k}={'null' if v is None else cell(v)}" for k, v in result.params.items())
    title = f"{result.analytic} ({shown})"
    # Text, not str: values such as "[shares a photo: ...]" must not be read as rich markup
    cells = [[Text(_cut(clean(cell(row[c])))) for c in result.columns] for row in result.rows]
    table = Table(*result.columns, title=Text(clean(title)), title_justify="left")
    for values in cells:
        table.add_row(*values)
    wide = console.options.update_width(1_000_000)
    if Measurement.get(console, wide, table).minimum <= console.width:
        console.print(table)
    else:
        console.print(Text(clean(title)))
        for n, values in enumerate(cells, 1):
            record = Table.grid(padding=(0, 2))
            record.add_column(style="bold", no_wrap=True)
            record.add_column(overflow="fold")
            for column, value in zip(result.columns, values, strict=True):
                record.add_row(Text(column), value)
            console.print(Rule(f"{n}", align="left"), record)
    if not result.rows:
        err.print("(no rows)")


def cell(value: Any) -> str:
    """One value as table text."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return _caption(value)
    return str(value)


def _caption(value: dict[str, Any]) -> str:
    """A node as ``(Label name)``, a relationship as ``[:TYPE]``, a path as its chain."""
    if "nodes" in value and "relationships" in value:
        nodes, rels = value["nodes"], value["relationships"]
        parts = [_caption(nodes[0])] if nodes else []
        for rel, node in zip(rels, nodes[1:], strict=False):
            forward = rel.get("end") == node_key(node.get("labels", []), node)
            arrow = f"-[:{rel['type']}]->" if forward else f"<-[:{rel['type']}]-"
            parts += [arrow, _caption(node)]
        return "".join(parts)
    if "labels" in value:
        label = ":".join(value["labels"])
        what = value.get("name") or value.get("label")
        if what is None and "at" in value:
            what = f"{cell(value['at'])} {value.get('delta_summary', '')}".strip()
        return f"({label} {_cut(str(what), 60)})" if what else f"({label})"
    if "type" in value:
        return f"[:{value['type']}]"
    return json.dumps(value, default=_json_default)


def _cut(text: str, limit: int = CELL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_default(value: Any) -> str:
    if isinstance(value, datetime | date):
        return cell(value)
    return str(value)
