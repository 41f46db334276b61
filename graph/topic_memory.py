"""The worker's copy of a namespace's live topic vectors (``graph.topic_vectors``) in the topic
store: read off the request path (``graph.vector_loads``), served under the namespace's
``TopicStamp``, its candidates read by id within the namespace (``read_topics_by_vector``).
``TopicSearchStore`` (``graph.topic_search``) is built on it; without ``cache_mb`` every vector
search runs in Cypher.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from neo4j import Driver, ManagedTransaction, Record

from graph.clock import BEFORE_ALL
from graph.cypher import query
from graph.db import Store, iso
from graph.overfetch import EXACT_VECTOR_MAX
from graph.redaction import Redactor
from graph.topic_vectors import TopicEntry, TopicRow, TopicVectors, row_bytes
from graph.vector_loads import LoadQueue

# the live topic vectors one store (one API worker process) holds in memory, in MB
# (``Settings.topic_cache_mb``; ~1,800 bytes a topic: 64 MB hold ~37,000); 0: every vector
# search in Cypher (the default of a store built without it: the CLI, tests, benchmarks)
TOPIC_CACHE_MB = 64
# a namespace found too large for the whole budget (or holding topics but no stamp) is searched
# in Cypher; counted again after this many seconds
UNHELD_S = 300.0
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TopicCopies(Store):
    """The topic store's copies of live topic vectors. With ``cache_mb`` (the API worker's:
    ``Settings.topic_cache_mb``) a namespace's live topic vectors are held in this process and
    its vector searches scored there, the best rows read by id with the namespace's stamp; with
    ``loads`` (the worker's ``LoadQueue``) a namespace's copy is read off the request path,
    Neo4j answering until it is in (and again after any write of the namespace's topics, until
    the copy is read again)."""

    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        *,
        redactor: Redactor | None = None,
        cache_mb: int = 0,
        loads: LoadQueue | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(driver, database, redactor=redactor)
        self.topic_vectors = TopicVectors(cache_mb << 20) if cache_mb > 0 else None
        self.topic_loads = loads
        self._topic_clock = clock
        self._unheld: dict[str, float] = {}  # namespace -> when it was found unfit to hold

    def _copy_search(
        self,
        namespace: str,
        vector: list[float],
        k: int,
        window: Mapping[str, datetime | None],
        light: bool,
        topic_ids: Sequence[str],
    ) -> tuple[str, Record] | None:
        """``search_vector_reading`` answered from this process's copy of the namespace's live
        topic vectors, the candidates read by id with the namespace's stamp: the hits' label
        and ``read_topics_by_vector``'s row; None when there is no copy to serve it (none yet,
        unfit, or stale: the caller searches in Cypher)."""
        for _ in range(2):
            entry = self._topic_entry(namespace)
            if entry is None:
                return None
            since, until = window["since"] or BEFORE_ALL, window["until"]
            ids = entry.nearest(vector, k, _us(since), None if until is None else _us(until))
            params: dict[str, Any] = {
                "namespace": namespace, "ids": ids, "vector": vector, "k": k, "light": light,
                "scan_since": iso(since), "until": iso(until), "topic_ids": list(topic_ids),
            }  # fmt: skip
            row = self._run(query("read_topics_by_vector"), params, read=True)[0]
            if row["epoch"] == entry.epoch:
                # the label the Cypher path gives: an exact scan up to EXACT_VECTOR_MAX topics
                return ("vector-scan" if entry.total <= EXACT_VECTOR_MAX else "vector"), row
            # a write of the namespace's topics since the copy was read: it serves nothing more
            assert self.topic_vectors is not None
            self.topic_vectors.drop(namespace, entry)
            if self.topic_loads is not None:
                self._ask_topics(namespace)
                return None
        return None

    def _topic_entry(self, namespace: str) -> TopicEntry | None:
        """The namespace's copy; when this process holds none, read now (no queue) or asked of
        the load queue (None: Cypher answers meanwhile). None too when it does not fit the
        budget or holds topics but no stamp (for ``UNHELD_S``)."""
        vectors = self.topic_vectors
        assert vectors is not None
        entry = vectors.get(namespace)
        if entry is not None:
            return entry
        unheld = self._unheld.get(namespace)
        if unheld is not None and self._topic_clock() - unheld < UNHELD_S:
            return None
        if self.topic_loads is not None:
            self._ask_topics(namespace)
            return None
        with vectors.loading(namespace):
            entry = vectors.get(namespace)
            return entry if entry is not None else self._load_topics(namespace)

    def _ask_topics(self, namespace: str) -> None:
        assert self.topic_loads is not None
        self.topic_loads.ask(("topics", namespace), lambda: self._load_topics_missing(namespace))

    def _load_topics_missing(self, namespace: str) -> None:
        """The queue's job: read the namespace's copy unless one came in since it was asked."""
        assert self.topic_vectors is not None
        if self.topic_vectors.get(namespace) is None:
            self._load_topics(namespace)

    def _load_topics(self, namespace: str) -> TopicEntry | None:
        """Read the namespace's stamp, then its live topic vectors (one read transaction: the
        rows at least as new as the stamp), and hold them; None (and Cypher for ``UNHELD_S``)
        when they exceed the budget or the namespace holds topics but no stamp."""
        vectors = self.topic_vectors
        assert vectors is not None
        cap = vectors.budget // row_bytes()
        entry = self._read_tx(lambda tx: _read_topic_rows(tx, namespace, cap))
        if entry is None:
            vectors.drop(namespace)
            self._unheld[namespace] = self._topic_clock()
            return None
        self._unheld.pop(namespace, None)
        vectors.put(namespace, entry)
        return entry


def _read_topic_rows(tx: ManagedTransaction, namespace: str, cap: int) -> TopicEntry | None:
    """The namespace's stamp, then its live topics with their vectors and times; None when it
    holds more than ``cap`` topics, or topics and no stamp (a copy no write would move)."""
    head = tx.run(query("read_topic_stamp"), namespace=namespace, cap=cap).single()
    assert head is not None
    epoch, total = head["epoch"], int(head["n"])
    if total > cap or (epoch is None and total > 0):
        return None
    rows = (
        TopicRow(r["topic_id"], int(r["first_us"]), int(r["last_us"]), r["embedding"])
        for r in tx.run(query("load_topic_vectors"), namespace=namespace)
    )
    return TopicEntry.of(epoch, total, rows)


def _us(at: datetime) -> int:
    """Microseconds since the epoch (as ``load_topic_vectors.cypher`` reads a topic's times)."""
    return (at - EPOCH) // timedelta(microseconds=1)
