"""How an import shares the server: its upload read line by line, its embeddings and its writes
in bounded slices, each followed by a pause in proportion to its own time.

An import used to be one transaction: 7,000 tiny topics held every tenant's queries for seconds,
and 63 MB reached Neo4j's transaction memory limit. ``write_batches`` commits an
``ImportCommit`` as its ``batches`` (each idempotent, so an import stopped between two is
completed by importing the same file again), ``paced_embed`` embeds the topics the file has no
usable vector for in slices paced the same way, and ``iter_lines`` reads a spooled upload one
line at a time (it is read twice: a validating pass, then the parse for the plan).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from graph.errors import ValidationFailed
from graph.transfer import ImportCommit, TransferStore
from retrieval.embedding import Embedder

Progress = Callable[[int, int], None]  # (records written so far, records to write)
Heartbeat = Callable[[], None]  # renews the import's lease; raises when it was lost


@dataclass(frozen=True)
class Pacing:
    """How an import shares the database: at most ``batch`` records a transaction, then a pause
    of ``pause_ratio`` times that batch's own time (0.5: the import holds it two thirds of the
    time at most), taken by ``sleep`` (injected: tests do not wait); ``niceness`` for the
    server's import thread (api/uploads.py)."""

    batch: int = 500
    pause_ratio: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    niceness: int = 10  # how much lower the CPU priority of the thread the server imports in

    def rest(self, started: float) -> None:
        """The pause after a slice that began at ``started`` (``time.perf_counter()``)."""
        if self.pause_ratio > 0:
            self.sleep((time.perf_counter() - started) * self.pause_ratio)


def write_batches(
    store: TransferStore,
    commit: ImportCommit,
    pacing: Pacing,
    heartbeat: Heartbeat,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """Commit ``commit`` batch by batch, pausing after each (not after the last) and renewing
    the lease; ``progress`` hears (written, total) before the first and after each. Returns
    (records written, batches)."""
    total, written, batches = commit.size(), 0, 0
    if progress is not None:
        progress(0, total)
    for batch in commit.batches(pacing.batch):
        started = time.perf_counter()
        store.commit(batch)
        written, batches = written + batch.size(), batches + 1
        if progress is not None:
            progress(written, total)
        heartbeat()
        if written < total:
            pacing.rest(started)
    return written, batches


def paced_embed(
    embedder: Embedder, texts: list[str], pacing: Pacing, heartbeat: Heartbeat
) -> Iterator[list[float]]:
    """``texts`` embedded ``pacing.batch`` at a time, pausing after each slice as after a
    written batch: thousands of topics to embed keep a core busy for minutes, which the other
    tenants' queries (and their own embeddings) must share."""
    for start in range(0, len(texts), pacing.batch):
        started = time.perf_counter()
        yield from embedder.embed(texts[start : start + pacing.batch])
        heartbeat()
        if start + pacing.batch < len(texts):
            pacing.rest(started)


def iter_lines(source: IO[bytes]) -> Iterator[str]:
    """The lines of an uploaded document read from ``source`` one at a time (UTF-8; a BOM on
    the first line is tolerated; lines end at ``\\n``), so a spooled upload is never decoded
    whole. A line that is not UTF-8 is refused with its number."""
    for number, raw in enumerate(source, start=1):
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationFailed(
                f"body: line {number} is not UTF-8 text (byte {exc.start}: {exc.reason})"
            ) from exc
        yield text.rstrip("\r\n")
