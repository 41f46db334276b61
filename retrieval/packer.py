"""The context packer: ranked memory into a token budget, with a trace of every decision. Pure.

Tokens are ceil(chars / 4) (no tokenizer for the target models is available offline).
Layers: L0 a topic's one-liner; L1 a shaped summary (seed 003): the topic's title and 1-3 dated
sentences that answer the message, each citing the message it came from (the topic's first and
last seen are the item's ``freshness``, not repeated in its text); L2 the full
record, only on explicit request. Snippets are packed best-first; a topic's header is paid for
once, when its first snippet goes in. Every item lists the source message ids its text came from
(and only those), and the trace says for every candidate why it was included or excluded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, NotRequired

from typing_extensions import TypedDict  # pydantic reads this one on Python 3.11

MAX_LINES_PER_ITEM = 3
MAX_L0 = 3  # one-liners of topics with no matching sentence: orientation, not filler
GENERAL = "conversation"


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def day(when: datetime | None) -> str:
    """ "2 Mar 2026" (what ``strftime("%-d %b %Y")`` writes in the C locale, in any locale and
    at a fifth of its cost: a context dates every line it packs)."""
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year}" if when else "undated"


@dataclass
class Snippet:
    message_id: str
    source_id: str  # the id the caller knows the message by (external id, else message id)
    at: datetime | None
    speaker: str
    text: str
    score: float
    record_ids: list[str]  # candidate records (topics) this snippet can be filed under, best first

    def line(self) -> str:
        who = f"{self.speaker}: " if self.speaker else ""
        return f"- {day(self.at)} {who}{self.text}"


@dataclass
class Candidate:
    record_id: str
    kind: Literal["topic", "conversation"]
    title: str
    score: float
    reason_label: str
    reason_summary: str
    components: dict[str, float] = field(default_factory=dict)
    one_liner: str = ""
    one_liner_sources: list[str] = field(default_factory=list)
    first_seen_at: datetime | None = None
    last_seen_at: datetime | None = None
    full_record: str = ""  # L2 rendering
    full_record_sources: list[str] = field(default_factory=list)
    blocked: str | None = None  # set when policy (suppression, thresholds) excludes it


class Provenance(TypedDict):
    source_ids: list[str]  # the message (or external) ids the item's text came from


class Freshness(TypedDict):
    first_seen_at: str | None  # ISO 8601
    last_seen_at: str | None


class ContextItem(TypedDict):
    """One packed item as a context reports it (seed 003's shape)."""

    record_id: str
    kind: str
    layer: Literal["L0", "L1", "L2"]
    title: str
    reason_label: str
    reason_summary: str
    durable_summary: str
    provenance: Provenance
    freshness: Freshness
    full_record_hint: str
    score: float


class TraceEntry(TypedDict):
    """Why one candidate was included or excluded, with its score components."""

    record_id: str
    title: str
    score: float
    components: dict[str, float]
    reason: str
    decision: Literal["pending", "included", "excluded"]
    layer: NotRequired[Literal["L0", "L1", "L2"]]  # included: the layer it went in as
    lines: NotRequired[int]  # included at L1: its sentences
    why: NotRequired[str]  # excluded: why


@dataclass
class PackedItem:
    """A candidate as packed: at which layer, with what text, citing which messages."""

    cand: Candidate
    layer: Literal["L0", "L1", "L2"]
    text: str
    source_ids: list[str]

    @property
    def record_id(self) -> str:
        return self.cand.record_id

    @property
    def kind(self) -> str:
        return self.cand.kind

    def payload(self) -> ContextItem:
        """The seed-003 shaped summary of this item."""
        c = self.cand
        return {
            "record_id": c.record_id,
            "kind": c.kind,
            "layer": self.layer,
            "title": c.title,
            "reason_label": c.reason_label,
            "reason_summary": c.reason_summary,
            "durable_summary": self.text,
            "provenance": {"source_ids": self.source_ids},
            "freshness": {
                "first_seen_at": c.first_seen_at.isoformat() if c.first_seen_at else None,
                "last_seen_at": c.last_seen_at.isoformat() if c.last_seen_at else None,
            },
            "full_record_hint": f"topics_get(['{c.record_id}']) for the full record"
            if c.kind == "topic"
            else "messages are in the conversation log",
            "score": round(c.score, 4),
        }


@dataclass
class Packed:
    text: str
    items: list[PackedItem]
    trace: list[TraceEntry]
    used_tokens: int
    budget: int


@dataclass
class _Block:
    cand: Candidate
    lines: list[Snippet] = field(default_factory=list)

    def header(self) -> str:
        """The block's title line: the topic's name alone. Every line under it carries its own
        date and the item its ``freshness``; the span "(seen 8 May 2023 to 17 Jul 2023)" was a
        fifth of a 1,000-token context spent twice (docs/retrieval.md, "Bare questions and
        headers")."""
        if self.cand.kind == GENERAL:
            return "## From the conversation"
        return f"## {self.cand.title}"


def prefer_newest(snippets: list[Snippet], gain: float) -> list[Snippet]:
    """For a question about the value as it stands now: each snippet's score times
    (1 + gain x newness), newness 0 for the oldest dated snippet and 1 for the newest (by date
    rank between them), so an updated statement outranks the one it updated while relevance
    still decides between unrelated ones. Undated snippets are left as they are."""
    dated = sorted({s.at for s in snippets if s.at is not None})
    if len(dated) < 2:
        return snippets
    rank = {at: i / (len(dated) - 1) for i, at in enumerate(dated)}
    for s in snippets:
        if s.at is not None:
            s.score *= 1 + gain * rank[s.at]
    return snippets


def pack(
    candidates: list[Candidate],
    snippets: list[Snippet],
    budget: int,
    full_records: int = 0,
) -> Packed:
    """Pack L2 records (``full_records`` of them, explicit requests only), then L1 snippets
    best-first under their topics, then L0 one-liners of the remaining topics, within ``budget``."""
    by_id = {c.record_id: c for c in candidates}
    trace = {c.record_id: _trace(c) for c in candidates}
    items: list[PackedItem] = []
    used = _pack_full_records(candidates, budget, full_records, items, trace)
    l2 = {i.record_id for i in items}
    blocks: dict[str, _Block] = {}
    order: list[str] = []
    seen_messages: set[str] = set()
    for snip in sorted(snippets, key=lambda s: -s.score):
        if snip.message_id in seen_messages:
            continue
        placed = _place(snip, by_id, blocks, order, l2, budget - used)
        if placed is not None:
            used += placed
            seen_messages.add(snip.message_id)
    for rid in order:
        block = blocks[rid]
        text = "\n".join([block.header(), *(s.line() for s in block.lines)])
        sources = list(dict.fromkeys(s.source_id for s in block.lines))
        items.append(PackedItem(block.cand, "L1", text, sources))
        if rid in trace:
            _included(trace[rid], "L1", len(block.lines))
    used = _pack_one_liners(candidates, budget, used, items, trace)
    _excluded(trace, by_id)
    return Packed(
        text="\n".join(i.text for i in items),
        items=items,
        trace=sorted(trace.values(), key=lambda e: -e["score"]),
        used_tokens=used,
        budget=budget,
    )


def _pack_full_records(
    candidates: list[Candidate],
    budget: int,
    full_records: int,
    items: list[PackedItem],
    trace: dict[str, TraceEntry],
) -> int:
    """The L2 records that fit (the first ``full_records`` not blocked); the tokens used."""
    used = 0
    for cand in [c for c in candidates if not c.blocked and c.full_record][:full_records]:
        cost = tokens(cand.full_record) + 1
        if used + cost <= budget:
            used += cost
            items.append(PackedItem(cand, "L2", cand.full_record, cand.full_record_sources))
            _included(trace[cand.record_id], "L2")
    return used


def _pack_one_liners(
    candidates: list[Candidate],
    budget: int,
    used: int,
    items: list[PackedItem],
    trace: dict[str, TraceEntry],
) -> int:
    """The L0 one-liners of the best topics not yet in (at most ``MAX_L0``); the tokens used."""
    included = {i.record_id for i in items}
    l0 = 0
    for cand in sorted(candidates, key=lambda c: -c.score):
        if cand.record_id in included or cand.blocked or not cand.one_liner_sources:
            continue
        text = f"## {cand.title}: {cand.one_liner}"
        if l0 < MAX_L0 and used + tokens(text) + 1 <= budget:
            used += tokens(text) + 1
            l0 += 1
            items.append(PackedItem(cand, "L0", text, cand.one_liner_sources))
            _included(trace[cand.record_id], "L0")
    return used


def _included(entry: TraceEntry, layer: Literal["L0", "L1", "L2"], lines: int = 0) -> None:
    entry["decision"], entry["layer"] = "included", layer
    if lines:
        entry["lines"] = lines


def _excluded(trace: dict[str, TraceEntry], by_id: dict[str, Candidate]) -> None:
    """Every candidate still pending excluded, with why."""
    for rid, entry in trace.items():
        if entry["decision"] == "pending":
            entry["decision"] = "excluded"
            entry["why"] = by_id[rid].blocked or (
                "budget: nothing of it fit after better items"
                if by_id[rid].one_liner_sources
                else "no sentence of it matched the request and it has no citable one-liner"
            )


def _place(
    snip: Snippet,
    by_id: dict[str, Candidate],
    blocks: dict[str, _Block],
    order: list[str],
    skip: set[str],
    room: int,
) -> int | None:
    """File the snippet under the best record that can take it; return the tokens it cost."""
    line_cost = tokens(snip.line()) + 1  # + the newline
    homes = [r for r in snip.record_ids if r in by_id and not by_id[r].blocked and r not in skip]
    if not homes and any(r in by_id and by_id[r].blocked for r in snip.record_ids):
        return None  # every topic it belongs to was held back by policy: so is the sentence
    for rid in [*homes, GENERAL]:
        block = blocks.get(rid)
        if block is not None and (rid == GENERAL or len(block.lines) < MAX_LINES_PER_ITEM):
            if line_cost <= room:
                block.lines.append(snip)
                return line_cost
            return None
        if block is None:
            cand = by_id.get(rid) or Candidate(
                GENERAL, "conversation", GENERAL, 0.0, "conversation", ""
            )
            new = _Block(cand)
            cost = tokens(new.header()) + 1 + line_cost
            if cost <= room:
                new.lines.append(snip)
                blocks[rid] = new
                order.append(rid)
                return cost
    return None


def _trace(cand: Candidate) -> TraceEntry:
    return {
        "record_id": cand.record_id,
        "title": cand.title,
        "score": round(cand.score, 4),
        "components": {k: round(v, 4) for k, v in cand.components.items()},
        "reason": cand.reason_summary,
        "decision": "pending",
    }
