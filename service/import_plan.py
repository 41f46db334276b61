"""What an import would do, built before anything is written (``ImportPlan``: the ids it keeps or
replaces, the records it writes, the report), and the report it answers (``ImportReport``:
created, merged, unchanged and refused records per kind). ``service.importer`` builds the plan
and writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from graph.models import Topic
from graph.transfer import ImportCommit

MAX_REFUSALS_SHOWN = 100


class KindCount(BaseModel):
    created: int = 0
    merged: int = 0
    unchanged: int = 0
    refused: int = 0


class Refusal(BaseModel):
    line: int
    kind: str
    id: str
    reason: str


class ImportReport(BaseModel):
    """What an import wrote (or, with ``dry_run``, would write)."""

    namespace: str
    dry_run: bool
    source_namespace: str
    format_version: int
    counts: dict[str, KindCount]
    refused: list[Refusal] = []
    remapped_ids: int = 0
    embedded: int = 0
    vectors_imported: int = 0
    written: int = 0  # records written (a topic's mentions count as one)
    batches: int = 0  # the transactions they took
    duration_ms: float = 0.0


@dataclass
class ImportPlan:
    """Everything the import would do, built before anything is written."""

    commit: ImportCommit
    report: ImportReport
    ids: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, old) -> new
    present: set[tuple[str, str]] = field(default_factory=set)  # (kind, new id) in the namespace
    topics_known: set[str] = field(default_factory=set)  # new topic ids after the import
    seq_offset: int = 0
    to_embed: list[Topic] = field(default_factory=list)
    heartbeat: Callable[[], None] = lambda: None  # renews the import's lease while it works

    def refuse(self, line: int, kind: str, rid: str, reason: str) -> None:
        self.report.counts[kind].refused += 1
        if len(self.report.refused) < MAX_REFUSALS_SHOWN:
            self.report.refused.append(Refusal(line=line, kind=kind, id=rid, reason=reason))

    def map(self, kind: str, old: str | None) -> str | None:
        """The namespace's id for a reference (ids the file does not hold stay as they are)."""
        return None if old is None else self.ids.get((kind, old), old)

    def maps(self, kind: str, olds: Sequence[str]) -> list[str]:
        return [self.ids.get((kind, o), o) for o in olds]

    def known_topics(self, olds: Sequence[str]) -> list[str]:
        """The namespace's ids of these topics, without those it does not hold (a file cannot
        point a packet or a run at another namespace's topic)."""
        return [t for t in self.maps("topic", olds) if t in self.topics_known]
