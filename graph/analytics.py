"""Topic-evolution analytics: the read-only queries in ``cypher/analytics/*.cypher``.

Each file holds one query whose header comment documents it for people pasting it into Neo4j
Browser and describes it for this runner::

    // <name>: <one-line description>
    //
    // <what it shows, in prose>
    //
    // params:
    //   $namespace  string                         the memory namespace
    //   $bucket     'day'|'week'|'month' = 'week'   size of a time bucket
    //   $now        datetime = now                 the clock
    // returns: col_a, col_b,
    //          col_c
    //
    // Neo4j Browser:
    //   :param namespace => 'demo'
    //   :param bucket => 'week'

A parameter's type is ``string``, ``int``, ``float``, ``datetime`` or a choice of quoted strings;
its default is a literal (``'week'``, ``5``, ``0.5``, ``null``) or, for a datetime, ``now`` (the
caller's clock). ``$namespace`` is required and never has a default. The header must match the
query: every ``$param`` the query uses is declared and every declared one is used, and every
parameter has its ``:param`` line for Browser. ``parse_analytic`` refuses a file that breaks
any of this (``ValidationFailed`` naming the file), so a header cannot drift from its query.

Queries run in a read transaction of a read-access session: the server refuses any write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from neo4j import READ_ACCESS, Driver, ManagedTransaction, unit_of_work
from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable
from neo4j.graph import Node, Relationship
from neo4j.graph import Path as GraphPath
from pydantic import TypeAdapter, ValidationError

from graph.clock import ensure_utc
from graph.errors import Neo4jUnavailable, NotFound, SheriffError, ValidationFailed
from graph.models import Namespace

SCALAR_TYPES = ("string", "int", "float", "datetime")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_TITLE = re.compile(r"^(?P<name>[a-z][a-z0-9_]*):\s*(?P<description>\S.*)$")
_CHOICES = r"'[^'|]*'(?:\|'[^'|]*')+"
_PARAM = re.compile(
    rf"^\$(?P<name>[A-Za-z_]\w*)\s+(?P<type>{'|'.join(SCALAR_TYPES)}|{_CHOICES})"
    r"(?:\s*=\s*(?P<default>'[^']*'|-?\d+(?:\.\d+)?|null|now))?(?:\s+(?P<doc>\S.*))?$"
)
_BROWSER_PARAM = re.compile(r"^:param\s+(?P<name>[A-Za-z_]\w*)\s*=>\s*\S")
_USED_PARAM = re.compile(r"\$([A-Za-z_]\w*)")
_NAMESPACE = TypeAdapter(Namespace)
_REQUIRED = object()  # marks a parameter without a default


@dataclass(frozen=True)
class Param:
    """One ``$param`` of an analytic, as its header declares it."""

    name: str
    type: str  # one of SCALAR_TYPES, or "choice"
    description: str = ""
    choices: tuple[str, ...] = ()
    default: Any = _REQUIRED  # a value, None for null, "now" for the caller's clock

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def describe(self) -> str:
        """``bucket ('day'|'week'|'month', default 'week')``: for help and error messages."""
        kind = "|".join(f"'{c}'" for c in self.choices) if self.choices else self.type
        if self.required:
            return f"{self.name} ({kind})"
        default = "null" if self.default is None else repr(self.default)
        return f"{self.name} ({kind}, default {'now' if self.default == 'now' else default})"


@dataclass(frozen=True)
class Analytic:
    """One query of ``cypher/analytics``: its name (the file's stem), header and text."""

    name: str
    description: str
    params: tuple[Param, ...]
    columns: tuple[str, ...]
    text: str
    notes: str = ""

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class AnalyticResult:
    """The rows of one run, with the parameters it ran with (datetimes in UTC)."""

    analytic: str
    params: dict[str, Any]
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)


# -- the header -----------------------------------------------------------------------------------


def parse_analytic(name: str, text: str) -> Analytic:
    """Read an analytic's header and check it against its query; ``ValidationFailed`` if not."""
    where = f"cypher/analytics/{name}.cypher"
    if not _NAME.match(name):
        raise ValidationFailed(f"{where}: an analytic's name is lower_snake_case")
    header, body = _split_header(text)
    if not header:
        raise ValidationFailed(f"{where}: no header comment (// {name}: what it shows)")
    title = _TITLE.match(header[0])
    if title is None or title["name"] != name:
        raise ValidationFailed(f"{where}: the first line must be '// {name}: <description>'")
    sections = _sections(header[1:])
    params = tuple(_parse_param(where, line) for line in sections.get("params:", []))
    columns = tuple(
        c.strip() for c in " ".join(sections.get("returns:", [])).split(",") if c.strip()
    )
    analytic = Analytic(
        name=name,
        description=title["description"],
        params=params,
        columns=columns,
        text=text,
        notes=" ".join(sections.get("", [])),
    )
    _check(where, analytic, body, sections.get("Neo4j Browser:", []))
    return analytic


def _split_header(text: str) -> tuple[list[str], str]:
    lines = text.splitlines()
    n = 0
    while n < len(lines) and lines[n].lstrip().startswith("//"):
        n += 1
    header = [ln.lstrip()[2:].strip() for ln in lines[:n]]
    return header, "\n".join(lines[n:])


def _sections(lines: list[str]) -> dict[str, list[str]]:
    """Group header lines under ``params:``, ``returns:``, ``Neo4j Browser:`` ("" = prose).
    A blank comment line ends a section."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        if not line:
            current = ""
            continue
        key = next(
            (k for k in ("params:", "returns:", "Neo4j Browser:") if line.startswith(k)), None
        )
        if key is not None:
            current = key
            line = line[len(key) :].strip()
            sections.setdefault(key, [])
            if not line:
                continue
        sections.setdefault(current, []).append(line)
    return sections


def _parse_param(where: str, line: str) -> Param:
    found = _PARAM.match(line)
    if found is None:
        raise ValidationFailed(
            f"{where}: cannot read the parameter line {line!r} "
            "(want '$name  type [= default]  description')"
        )
    kind, raw = found["type"], found["default"]
    choices = tuple(c.strip("'") for c in kind.split("|")) if kind.startswith("'") else ()
    param = Param(
        name=found["name"],
        type="choice" if choices else kind,
        description=found["doc"] or "",
        choices=choices,
    )
    if raw is None:
        return param
    default = _literal(raw)
    if default is not None and default != "now":
        try:
            default = coerce(param, default)
        except ValidationFailed as exc:
            raise ValidationFailed(f"{where}: default of ${param.name}: {exc}") from exc
    if default == "now" and param.type != "datetime":
        raise ValidationFailed(f"{where}: only a datetime parameter can default to now")
    return Param(param.name, param.type, param.description, param.choices, default)


def _literal(raw: str) -> Any:
    if raw == "null":
        return None
    if raw == "now":
        return "now"
    if raw.startswith("'"):
        return raw[1:-1]
    return float(raw) if "." in raw else int(raw)


def _check(where: str, analytic: Analytic, body: str, browser: list[str]) -> None:
    names = [p.name for p in analytic.params]
    if len(set(names)) != len(names):
        raise ValidationFailed(f"{where}: a parameter is declared twice")
    namespace = analytic.param("namespace")
    if namespace is None or namespace.type != "string" or not namespace.required:
        raise ValidationFailed(f"{where}: every analytic takes $namespace (string, no default)")
    if not analytic.columns:
        raise ValidationFailed(f"{where}: the header lists no returned columns (returns: ...)")
    code = "\n".join(ln for ln in body.splitlines() if not ln.lstrip().startswith("//"))
    used = set(_USED_PARAM.findall(code))
    if undeclared := sorted(used - set(names)):
        raise ValidationFailed(f"{where}: the query uses undeclared parameters: {undeclared}")
    if unused := sorted(set(names) - used):
        raise ValidationFailed(f"{where}: declared parameters the query never uses: {unused}")
    shown = []
    for line in browser:
        found = _BROWSER_PARAM.match(line)
        if found is None:
            raise ValidationFailed(f"{where}: not a ':param name => value' line: {line!r}")
        shown.append(found["name"])
    if sorted(shown) != sorted(names):
        raise ValidationFailed(
            f"{where}: the 'Neo4j Browser:' section needs exactly one ':param' line per "
            f"parameter; has {sorted(shown)}, wants {sorted(names)}"
        )


# -- the catalogue ------------------------------------------------------------------------------


def load_analytics(folder: Path | Traversable | None = None) -> dict[str, Analytic]:
    """Every ``*.cypher`` in ``folder`` (default ``cypher/analytics``), by name, sorted."""
    if folder is None:
        return dict(_packaged())
    return _load(folder)


@cache
def _packaged() -> tuple[tuple[str, Analytic], ...]:
    return tuple(_load(resources.files("cypher") / "analytics").items())


def _load(folder: Path | Traversable) -> dict[str, Analytic]:
    files = sorted(
        (f for f in folder.iterdir() if f.name.endswith(".cypher")), key=lambda f: f.name
    )
    analytics = {}
    for f in files:
        name = f.name.removesuffix(".cypher")
        analytics[name] = parse_analytic(name, f.read_text(encoding="utf-8"))
    return analytics


# -- parameters ---------------------------------------------------------------------------------


def coerce(param: Param, value: Any) -> Any:
    """``value`` as the parameter's type; strings (from a command line) are parsed."""
    try:
        return _coerce(param, value)
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"{param.name}: {exc}") from exc


def _coerce(param: Param, value: Any) -> Any:
    if param.type == "string":
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {value!r}")
        return value
    if param.type == "choice":
        if value not in param.choices:
            raise ValueError(f"expected one of {', '.join(param.choices)}; got {value!r}")
        return value
    if param.type == "int":
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise TypeError(f"expected an integer, got {value!r}")
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"expected an integer, got {value!r}") from None
    if param.type == "float":
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise TypeError(f"expected a number, got {value!r}")
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
    return _datetime(value)


def _datetime(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"expected an ISO-8601 timestamp with a zone, e.g. 2026-03-02T09:00:00Z; "
                f"got {value!r}"
            ) from None
    if not isinstance(value, datetime):
        raise TypeError(f"expected a datetime, got {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"expected a timestamp with a zone, e.g. {value.isoformat()}Z; "
            f"got {value.isoformat()} (no zone)"
        )
    # UTC like every stored time: Cypher compares datetimes of different zones unequal
    return ensure_utc(value)


def bind(
    analytic: Analytic, namespace: str, values: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """The query parameters: ``values`` checked and typed, defaults filled in, ``now`` for
    datetime parameters that default to the clock. ``ValidationFailed`` names what is wrong."""
    if "namespace" in values:
        raise ValidationFailed("the namespace is given on its own, not as a parameter")
    takes = [p.name for p in analytic.params if p.name != "namespace"]
    if unknown := sorted(set(values) - set(takes)):
        allowed = ", ".join(takes) or "nothing but the namespace"
        raise ValidationFailed(
            f"{analytic.name} has no parameter {unknown[0]!r}; it takes {allowed}"
        )
    try:
        bound: dict[str, Any] = {"namespace": _NAMESPACE.validate_python(namespace)}
    except ValidationError:
        raise ValidationFailed(
            f"invalid namespace {namespace!r}: letters, digits and _ . : -, at most 64"
        ) from None
    missing = [
        p for p in analytic.params if p.name != "namespace" and p.required and p.name not in values
    ]
    if missing:
        wanted = "; ".join(f"{p.describe()}: {p.description}" for p in missing)
        raise ValidationFailed(f"{analytic.name} needs parameter {wanted}")
    for p in analytic.params:
        if p.name == "namespace":
            continue
        if p.name in values:
            bound[p.name] = coerce(p, values[p.name])
        else:
            bound[p.name] = ensure_utc(now, "now") if p.default == "now" else p.default
    return bound


# -- values -------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A Neo4j value as plain Python: temporals as ``datetime``/``date``, a node as its labels
    and properties (without the embedding), a relationship as its type, ends and properties,
    a path as its nodes and relationships. A relationship's ``start`` and ``end`` are the ids
    of its nodes (``node_key``)."""
    if isinstance(value, Node):
        return {"labels": sorted(value.labels), **_props(value)}
    if isinstance(value, Relationship):
        return {
            "type": value.type,
            "start": _key(value.start_node),
            "end": _key(value.end_node),
            **_props(value),
        }
    if isinstance(value, GraphPath):
        return {
            "nodes": [plain(n) for n in value.nodes],
            "relationships": [plain(r) for r in value.relationships],
        }
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    to_native = getattr(value, "to_native", None)
    if callable(to_native):
        native = to_native()
        return native if isinstance(native, datetime | date) else str(value)
    return value


def _props(entity: Node | Relationship) -> dict[str, Any]:
    return {k: plain(v) for k, v in entity.items() if k != "embedding"}


_NODE_KEYS = {
    "Topic": "topic_id",
    "TopicEvent": "event_id",
    "Message": "message_id",
    "WakePacket": "packet_id",
    "Subject": "subject_id",
    "Skill": "skill_id",
    "SkillRun": "run_id",
}


def node_key(labels: Any, props: Mapping[str, Any]) -> Any:
    """A node's id property by its label (a TopicEvent also holds its topic's topic_id)."""
    for label in sorted(labels):
        if label in _NODE_KEYS and _NODE_KEYS[label] in props:
            return props[_NODE_KEYS[label]]
    return None


def _key(node: Node | None) -> Any:
    if node is None:
        return None
    key = node_key(node.labels, node)
    return node.element_id if key is None else key


# -- running ------------------------------------------------------------------------------------


class AnalyticsStore:
    """Runs the analytics of ``cypher/analytics`` (or ``folder``) read-only on a driver it is
    given (never creates one)."""

    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        folder: Path | Traversable | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        self._driver = driver
        self._db = database
        self._folder = folder
        self._timeout_s = timeout_s

    def catalogue(self) -> list[Analytic]:
        """Every analytic, by name."""
        return list(load_analytics(self._folder).values())

    def get(self, name: str) -> Analytic:
        """One analytic; ``NotFound`` listing the names there are."""
        analytics = load_analytics(self._folder)
        if name not in analytics:
            known = ", ".join(analytics) or "(none)"
            raise NotFound(f"no analytic named {name!r}; there are: {known}")
        return analytics[name]

    def run(
        self,
        name: str,
        namespace: str,
        params: Mapping[str, Any] | None = None,
        *,
        now: datetime,
    ) -> AnalyticResult:
        """Run one analytic for ``namespace``; ``now`` fills datetime parameters defaulting to
        the clock. Rows are dicts of plain Python values, in the query's order."""
        analytic = self.get(name)
        bound = bind(analytic, namespace, params or {}, now)
        columns, rows = self._read(analytic.name, analytic.text, bound)
        return AnalyticResult(analytic.name, bound, columns, rows)

    def explain(self, name: str) -> list[str]:
        """Plan (EXPLAIN) an analytic without running it; returns the columns it would return."""
        analytic = self.get(name)
        columns, _ = self._read(analytic.name, "EXPLAIN " + analytic.text, {})
        return columns

    def _read(
        self, name: str, text: str, params: dict[str, Any]
    ) -> tuple[list[str], list[dict[str, Any]]]:
        @unit_of_work(timeout=self._timeout_s)
        def work(tx: ManagedTransaction) -> tuple[list[str], list[dict[str, Any]]]:
            result = tx.run(text, params)
            keys = list(result.keys())
            return keys, [
                {k: plain(v) for k, v in zip(keys, r.values(), strict=True)} for r in result
            ]

        try:
            with self._driver.session(database=self._db, default_access_mode=READ_ACCESS) as s:
                return s.execute_read(work)
        except ServiceUnavailable as exc:
            raise Neo4jUnavailable(f"cannot reach Neo4j: {exc}") from exc
        except (Neo4jError, DriverError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            raise SheriffError(f"analytic {name} failed in Neo4j: {message}") from exc
