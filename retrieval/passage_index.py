"""Writing the passages of new messages with their vectors, off the append path.

An append marks each message ``passages_pending`` (so it stays fast: no embedding inside it);
``PassageIndexer.run`` cuts the pending messages into passages (``text.passages``), embeds them
with the product's embedder (one call per namespace of the batch, inside that namespace's
``cache_scope``) and writes them (``graph.passages.PassageStore``).
The sleep worker runs it whenever no sleep is due (``sleepwake.worker.SleepWorker``); a
message waiting for it is still found by its words. When nothing is pending the worker takes
one step of the backfill (``backfill_once``): messages stored before passages existed are
marked pending a batch at a time, one namespace after another, and written the same way. The
text cut is the text as stored (redacted), read back from Neo4j, so a passage holds nothing
its message does not.

The namespace's scope lets a sleep and the passages share their vectors: a short turn is often
one passage whose text is the very lead the sleep's segmentation embeds, and whichever of the
two comes second reads the first one's vector from the embedder's per-namespace cache instead
of running the model again (the same float32 vector: the sleep's output does not change). The
cache never answers one namespace with another's vector (docs/security.md).

With ``Leads`` the writer also embeds, before the batch's passages, the text the next sleep's
segmentation will embed for each message (its lead, ``sleepwake.segments.embedded_lead``) with
the sleep's own embedder, into the same per-namespace cache: the sleep then reads those vectors
instead of running the model on its own thread (the same vectors, so the same topics), and the
writer's thread, which waits for new messages between sessions, does that work beside the
sleeps instead of after them (docs/performance.md, "Ingest: the leads ahead of the sleep").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graph.errors import EmbeddingUnavailable
from graph.passages import MessagePassages, PendingMessage
from graph.protocols import PassageStoreProtocol
from retrieval.embedding import Embedder, cache_scope
from text.passages import message_passages

log = logging.getLogger(__name__)

BATCH_MESSAGES = 64  # messages per read, embedding and write


@dataclass(frozen=True)
class Leads:
    """What a sleep will embed for each new message, embedded ahead: ``text`` gives a pending
    message's text (None: the sleep embeds none of its own), ``embedder`` is the sleep's (its
    cache is where the sleep will look)."""

    embedder: Embedder
    text: Callable[[PendingMessage], str | None]


class PassageIndexer:
    """Writes pending messages' passages (one namespace's, or every namespace's), and with
    ``leads`` embeds the next sleep's texts of them ahead (module docstring)."""

    def __init__(
        self,
        store: PassageStoreProtocol,
        embedder: Embedder,
        batch: int = BATCH_MESSAGES,
        leads: Leads | None = None,
    ) -> None:
        self.store, self.embedder, self.batch = store, embedder, max(1, batch)
        self.leads = leads

    def run_once(self, namespace: str | None = None) -> int:
        """One batch of pending messages written; how many (0: none was pending, or the
        embedder is unavailable and they stay pending)."""
        pending = self.store.pending(namespace, self.batch)
        if not pending:
            return 0
        self._embed_leads(pending)
        cut = [message_passages(m.content, m.role) for m in pending]
        try:
            vectors = self._passage_vectors(pending, cut)
        except EmbeddingUnavailable as exc:
            log.warning("passages not written (embedder unavailable): %s", exc)
            return 0
        self.store.write([
            MessagePassages(m.namespace, m.message_id, m.content, ts, vs)
            for m, ts, vs in zip(pending, cut, vectors, strict=True)
        ])  # fmt: skip
        return len(pending)

    def _embed_leads(self, pending: Sequence[PendingMessage]) -> None:
        """The next sleep's texts of ``pending`` embedded into its embedder's per-namespace
        cache (best effort: a sleep embeds whatever is missing itself)."""
        if self.leads is None:
            return
        texts: dict[str, list[str]] = {}
        for m in pending:
            if (text := self.leads.text(m)) is not None:
                texts.setdefault(m.namespace, []).append(text)
        for namespace, theirs in texts.items():
            with cache_scope(namespace):
                try:
                    self.leads.embedder.embed(theirs)
                except EmbeddingUnavailable as exc:
                    log.warning("leads not embedded ahead (embedder unavailable): %s", exc)
                    return

    def _passage_vectors(
        self, pending: Sequence[PendingMessage], cut: Sequence[list[str]]
    ) -> list[list[list[float]]]:
        """Each message's passage vectors: one embedding call per namespace of the batch, in
        that namespace's ``cache_scope`` (a text its sleep already embedded is not run again)."""
        texts: dict[str, list[str]] = {}
        for m, ts in zip(pending, cut, strict=True):
            texts.setdefault(m.namespace, []).extend(ts)
        found: dict[str, list[list[float]]] = {}
        for namespace, theirs in texts.items():
            with cache_scope(namespace):
                found[namespace] = self.embedder.embed(theirs) if theirs else []
        out: list[list[list[float]]] = []
        start = dict.fromkeys(texts, 0)
        for m, ts in zip(pending, cut, strict=True):
            at = start[m.namespace]
            out.append(found[m.namespace][at : at + len(ts)])
            start[m.namespace] = at + len(ts)
        return out

    def backfill_once(self, namespace: str | None = None) -> int:
        """One step of the backfill of messages stored before passages existed: the next batch
        of one namespace's old messages marked pending (``PassageStore.backfill``), which the
        next ``run_once`` writes; how many messages the step walked (0: no walk is left)."""
        step = self.store.backfill(namespace, self.batch)
        if step is None:
            return 0
        if step.finished:
            log.info("passage backfill of %s finished", step.namespace)
        # a walk's last step may read nothing (its messages ended on a batch's edge): still a step
        return max(step.walked, 1)

    def run(self, namespace: str | None = None, limit: int | None = None) -> int:
        """Batches until nothing is pending (or ``limit`` messages were handled); how many."""
        done = 0
        while limit is None or done < limit:
            n = self.run_once(namespace)
            if n == 0:
                break
            done += n
        return done
