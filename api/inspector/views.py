"""View models of the inspector's pages: pure functions from domain values to what a template
shows (no I/O, unit-tested in tests/unit/test_inspector_views.py). Templates only loop and print;
every choice (a fact's state, a sleep's group, a node's place, a score part's order) is made here.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from graph.models import Fact, TopicEvent

FactState = Literal["current", "superseded", "retracted", "future"]


@dataclass(frozen=True)
class FactView:
    fact_id: str
    text: str
    said_at: datetime | None
    valid_from: datetime | None
    invalid_at: datetime | None
    state: FactState
    reason: str | None
    source_message_ids: list[str]

    @property
    def past(self) -> bool:
        return self.state in ("superseded", "retracted")


def fact_state(fact: Fact, now: datetime) -> FactState:
    """Whether ``fact`` holds at ``now``: closed by a successor, retracted (closed without
    one), not yet true, or current."""
    if fact.invalid_at is not None and fact.invalid_at <= now:
        return "superseded" if fact.superseded_by else "retracted"
    starts = fact.starts_at
    if starts is not None and starts > now:
        return "future"
    return "current"


def fact_views(facts: Sequence[Fact], now: datetime) -> list[FactView]:
    """The facts current first, then the past ones; each group newest said first."""
    views = [
        FactView(
            fact_id=f.fact_id,
            text=f.text,
            said_at=f.at,
            valid_from=f.valid_from,
            invalid_at=f.invalid_at,
            state=fact_state(f, now),
            reason=f.invalid_reason,
            source_message_ids=list(f.source_message_ids),
        )
        for f in facts
    ]
    oldest = datetime.min.replace(tzinfo=now.tzinfo)
    views.sort(key=lambda v: v.said_at or oldest, reverse=True)
    views.sort(key=lambda v: v.past)  # stable: current (and future) before past
    return views


@dataclass(frozen=True)
class SleepGroup:
    """The events one sleep wrote, with their topics' names; ``at`` None: events written
    after the last sleep (by the API: a topic created, a fact corrected)."""

    at: datetime | None
    events: list[tuple[TopicEvent, str]]  # (event, topic name)

    @property
    def topics(self) -> int:
        return len({e.topic_id for e, _ in self.events})


def sleep_groups(
    events: Sequence[TopicEvent], names: Mapping[str, str], sleeps: Sequence[datetime]
) -> list[SleepGroup]:
    """Events grouped by the sleep that wrote them, newest first. An event is dated by the
    newest message it came from, so it belongs to the first sleep at or after its date
    (``sleeps``: the dates the namespace slept at); later events form the group of ``None``.
    A topic whose name is unknown (forgotten since) shows its id."""
    ordered = sorted(set(sleeps))
    groups: dict[datetime | None, list[tuple[TopicEvent, str]]] = {}
    for e in sorted(events, key=lambda e: e.at):
        at = ordered[bisect_left(ordered, e.at)] if ordered and e.at <= ordered[-1] else None
        groups.setdefault(at, []).append((e, names.get(e.topic_id, e.topic_id)))
    newest = sorted((k for k in groups if k is not None), reverse=True)
    keys: list[datetime | None] = [*([None] if None in groups else []), *newest]
    return [SleepGroup(at, groups[at]) for at in keys]


@dataclass(frozen=True)
class Node:
    topic_id: str
    label: str
    x: float
    y: float
    center: bool = False


@dataclass(frozen=True)
class Edge:
    x1: float
    y1: float
    x2: float
    y2: float
    type: str
    width: float
    outgoing: bool


@dataclass(frozen=True)
class Neighbour:
    """One topic an edge away (the service's ``Neighbour`` as the page needs it)."""

    topic_id: str
    name: str
    type: str
    weight: float
    outgoing: bool


GRAPH_SIZE = 420
GRAPH_RADIUS = 150
LABEL_CHARS = 24


def short(text: str, n: int = LABEL_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def neighbourhood(
    topic_id: str, name: str, neighbours: Sequence[Neighbour]
) -> tuple[list[Node], list[Edge]]:
    """A 1-hop neighbourhood as an SVG draws it: the topic in the middle, each neighbour on a
    circle around it (one place per neighbour topic, its edges drawn from the middle); an
    edge's width grows with its weight (1 to 4 px)."""
    c = GRAPH_SIZE / 2
    ids = list(dict.fromkeys(n.topic_id for n in neighbours if n.topic_id != topic_id))
    nodes = [Node(topic_id, short(name), c, c, center=True)]
    place: dict[str, tuple[float, float]] = {}
    names = {n.topic_id: n.name for n in neighbours}
    for i, other in enumerate(ids):
        angle = 2 * math.pi * i / len(ids) - math.pi / 2
        x, y = c + GRAPH_RADIUS * math.cos(angle), c + GRAPH_RADIUS * math.sin(angle)
        place[other] = (round(x, 1), round(y, 1))
        nodes.append(Node(other, short(names[other]), *place[other]))
    top = max((n.weight for n in neighbours), default=1.0) or 1.0
    edges = [
        Edge(c, c, *place[n.topic_id], type=n.type, outgoing=n.outgoing,
             width=round(1 + 3 * max(n.weight, 0.0) / top, 2))
        for n in neighbours
        if n.topic_id in place
    ]  # fmt: skip
    return nodes, edges


@dataclass(frozen=True)
class TraceRow:
    """One candidate of a context build: its score, the parts of it, and what the budget did."""

    record_id: str
    title: str
    score: float
    parts: list[tuple[str, float]]  # largest contribution first
    reason: str
    decision: str
    layer: str | None
    why: str | None


def trace_rows(trace: Sequence[Mapping[str, Any]]) -> list[TraceRow]:
    """The trace of a context as rows: included ones first, then by score; each row's score
    parts ordered by their size (zero parts left out)."""
    rows = [
        TraceRow(
            record_id=str(t["record_id"]),
            title=str(t.get("title", "")),
            score=float(t.get("score", 0.0)),
            parts=sorted(
                ((k, float(v)) for k, v in (t.get("components") or {}).items() if v),
                key=lambda kv: -abs(kv[1]),
            ),
            reason=str(t.get("reason", "")),
            decision=str(t.get("decision", "")),
            layer=t.get("layer"),
            why=t.get("why"),
        )
        for t in trace
    ]
    rows.sort(key=lambda r: (r.decision != "included", -r.score))
    return rows


@dataclass(frozen=True)
class StepRow:
    step: str
    ms: float
    share: float  # of the run's summed top-level step time, 0..1
    part: bool  # a part of the step above it ("commit.events" of "commit")


def step_rows(step_ms: Mapping[str, float]) -> list[StepRow]:
    """A sleep run's step durations, the longest step first, each followed by its parts
    (``step.part``, longest first); shares are of the summed top-level steps."""
    tops = {k: v for k, v in step_ms.items() if "." not in k}
    total = sum(max(v, 0.0) for v in tops.values()) or 1.0
    rows: list[StepRow] = []
    parents = sorted(tops, key=lambda k: -tops[k])
    orphans = [k for k in step_ms if "." in k and k.split(".", 1)[0] not in tops]
    for parent in [*parents, *sorted(set(k.split(".", 1)[0] for k in orphans))]:
        if parent in tops:
            rows.append(
                StepRow(parent, round(tops[parent], 1), max(tops[parent], 0.0) / total, False)
            )
        parts = [k for k in step_ms if k.startswith(parent + ".")]
        for k in sorted(parts, key=lambda k: -step_ms[k]):
            v = step_ms[k]
            rows.append(StepRow(k, round(v, 1), max(v, 0.0) / total, True))
    return rows


@dataclass(frozen=True)
class Pager:
    skip: int
    limit: int
    has_more: bool

    @property
    def previous(self) -> int | None:
        return max(self.skip - self.limit, 0) if self.skip > 0 else None

    @property
    def next(self) -> int | None:
        return self.skip + self.limit if self.has_more else None

    @property
    def first(self) -> int:
        return self.skip + 1
