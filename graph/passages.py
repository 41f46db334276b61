"""PassageStore: the passages of every message (``text.passages``) with their vectors, and the
search of a namespace's conversation by meaning.

A message is appended (or imported) marked ``passages_pending``; its passages are written off
the append path (``retrieval.passage_index.PassageIndexer``, run by the sleep worker), from the
text as stored, i.e. redacted: a passage never holds what the message does not. Until then the
message is found by its words alone. Deleting a message deletes its passages
(``delete_messages.cypher``), and so does deleting its namespace.

Search, in memory (``graph.passage_vectors``, ``cache_mb`` per store, i.e. per API worker): a
namespace's passage vectors are held as one float32 matrix under its ``PassageStamp``, scored
exactly with numpy, and the best rows read from Neo4j by key within the namespace, with the
stamp (``read_passages_by_key.cypher``): the exact scan's answer at a few milliseconds of
Neo4j's CPU, whatever the namespace's size and neighbours. A stale copy is refreshed (the
passages past its ``gen``, or the namespace whole after a removal) and searched again; a
namespace larger than the whole budget, or a store built with ``cache_mb=0``, takes the path
below. With a load queue (``loads``, the API worker's: ``graph.vector_loads``) no copy is read
whole on a request: a namespace without one (or whose copy a removal, or more than
``REFRESH_MAX`` messages written since, made stale) takes the path below while the queue's
thread reads it.

Search in Cypher: a namespace of at most ``EXACT_VECTOR_MAX`` passages is scored exactly, its own passages
only, without the shared index (the same answer and cost beside any neighbour). One vector index
holds every namespace's passages and Neo4j 5.26 cannot filter inside it, so a larger namespace's
search asks the index for ``FETCH_FACTOR`` times the rows it needs and keeps its
namespace's; when another namespace crowds them out it scans its own passages exactly (at most
``SCAN_MAX`` of them) or asks the index again for ``FETCH_MORE`` times the rows
(``search_passages_vector.cypher``; the same plan as topics, ``graph.topic_search``).

Within topics (``search_within``, ``search_topic_passages.cypher``): the passages of the messages
some topics cite (each topic's newest ``SCOPED_PER_TOPIC``), scored exactly against a vector with
no index: the best topics' facts found by meaning (docs/retrieval.md, "The best topics' own
passages").

Spoken by (``search_spoken``, ``search_speaker_passages.cypher``): the passages of the messages
some participants said (each one's newest ``SPOKEN_PER_SPEAKER``), scored exactly against a
vector with no index: what a person named in a question said about it, across sessions and
topics (docs/retrieval.md, "A question about a person").

Backfill: messages stored before passages existed were never marked pending. Migration 021
gives every conversation then stored a cursor; ``backfill`` walks one namespace a step (the one
with the fewest steps so far), marking the next batch's messages without passages pending, so
the indexer writes them as it writes new ones: resumable (the cursor is stored with each
step), idempotent (a message with passages is skipped), bounded (one batch a transaction).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from neo4j import Driver, ManagedTransaction

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store, iso
from graph.mapping import message_from_props
from graph.messages import MessageHit
from graph.overfetch import EXACT_VECTOR_MAX, MAX_FETCH
from graph.passage_vectors import Entry, PassageVectors, Row, Stamp, incremental, row_bytes
from graph.redaction import Redactor
from graph.topic_search import check_vector
from graph.vector_loads import LoadQueue

MIN_FETCH = 100  # rows asked of the index at least
FETCH_FACTOR = 3  # rows asked per passage wanted
FETCH_MORE = 10  # the second index call: this many times the first
SCAN_MAX = 2000  # a namespace with at most this many passages is scanned exactly when short
# a topic's newest cited messages whose passages ``search_within`` scores (facts_scanned reads a
# topic's newest 200 facts the same way): a topic of years costs what one of months does
SCOPED_PER_TOPIC = 200
# a speaker's newest messages whose passages ``search_spoken`` scores: a LoCoMo speaker says
# 150-350 turns over seven months; a speaker of years costs what one of a few months does
SPOKEN_PER_SPEAKER = 1000
# speakers one ``search_spoken`` reads at most (a message naming more is about a group, and each
# costs up to SPOKEN_PER_SPEAKER messages' passages of exact cosine)
SPOKEN_SPEAKERS = 4
# the passage vectors one store (one API worker process) holds in memory, in MB
# (``Settings.passage_cache_mb``): 256 MB hold ~130,000 passages (3 namespaces of
# bench-api-10k's 39,000, or ~85 LoCoMo conversations of ~1,500; RSS measured, 2,024 bytes a
# passage); 0: every search in Cypher
CACHE_MB = 256
# a namespace found too large for the whole budget takes the Cypher path; counted again after
# this many seconds (it may have shrunk)
TOO_BIG_S = 300.0
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LOAD_BLOCK = 1000  # passages converted to float32 at a time while a namespace is read
# a copy this many messages behind its namespace's stamp is read again in the background rather
# than brought up to date on the request (a burst of appends or an import)
REFRESH_MAX = 256


@dataclass(frozen=True)
class PendingMessage:
    """A message whose passages are still to be written (``passages_pending``)."""

    namespace: str
    message_id: str
    role: str
    content: str
    speaker: str | None = None


@dataclass(frozen=True)
class MessagePassages:
    """The passages of one message, as ``PendingMessage.content`` was cut, with their vectors
    (in the same order)."""

    namespace: str
    message_id: str
    content: str
    texts: list[str]
    vectors: list[list[float]]


@dataclass(frozen=True)
class BackfillStep:
    """One step of the passage backfill (``PassageStore.backfill``): the namespace walked, the
    messages read past its cursor, how many of them were marked pending, whether the walk is
    over."""

    namespace: str
    walked: int
    marked: int
    finished: bool


class PassageStore(Store):
    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        *,
        redactor: Redactor | None = None,
        cache_mb: int = CACHE_MB,
        clock: Callable[[], float] = time.monotonic,
        loads: LoadQueue | None = None,
    ) -> None:
        super().__init__(driver, database, redactor=redactor)
        # this process's copy of the namespaces' passage vectors (None: every search in Cypher)
        self.vectors = PassageVectors(cache_mb << 20) if cache_mb > 0 else None
        # where a namespace's copy is read: the API worker's queue, off the request path (the
        # search in Cypher answers until it is in); None: on the request that needs it (the
        # CLI, benchmarks and tests that load and search in one thread)
        self.loads = loads
        self._clock = clock
        self._too_big: dict[str, float] = {}  # namespace -> when it was counted too large

    def pending(self, namespace: str | None, limit: int) -> list[PendingMessage]:
        """Up to ``limit`` messages without their passages yet, oldest first, of ``namespace``
        (None: of any namespace)."""
        rows = self._run(
            query("find_pending_passages"), {"namespace": namespace, "limit": limit}, read=True
        )
        return [
            PendingMessage(
                r["namespace"], r["message_id"], r["role"], r["content"] or "", r["speaker"]
            )
            for r in rows
        ]

    def backfill(self, namespace: str | None, limit: int) -> BackfillStep | None:
        """One step of the backfill of messages stored before passages existed
        (``cypher/schema/021_passage_backfill.cypher``): the next ``limit`` messages of the
        namespace whose walk has had the fewest steps (or of ``namespace``) marked pending when
        they have no passages; None when no walk is left."""
        rows = self._run(
            query("mark_passage_backfill"), {"namespace": namespace, "limit": max(1, limit)}
        )
        if not rows:
            return None
        r = rows[0]
        return BackfillStep(r["namespace"], int(r["walked"]), int(r["marked"]), bool(r["finished"]))

    def write(self, messages: Sequence[MessagePassages]) -> int:
        """Write the passages of ``messages`` (replacing older ones) in one transaction; a
        message deleted or changed since it was read is skipped. The number written."""
        rows: list[dict[str, Any]] = []
        for m in messages:
            if len(m.texts) != len(m.vectors):
                raise ValueError(f"message {m.message_id}: {len(m.texts)} passages, "
                                 f"{len(m.vectors)} vectors")  # fmt: skip
            rows.append({
                "namespace": m.namespace, "message_id": m.message_id, "content": m.content,
                "passages": [
                    {"text": t, "embedding": check_vector(v)}
                    for t, v in zip(m.texts, m.vectors, strict=True)
                ],
            })  # fmt: skip
        if not rows:
            return 0
        records = self._run(query("write_message_passages"), {"rows": rows})
        return int(records[0]["written"]) if records else 0

    def search(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """The messages of ``namespace`` whose passages are nearest ``vector`` (the best ``k``
        passages, said before ``until`` when given), best first, one hit per message: its
        best passage's cosine as the score, its passages found in ``MessageHit.passages``
        (best first). Scored in this process's memory when the namespace fits it (the module
        doc), else in Cypher."""
        if self.vectors is not None and k > 0:
            found = self._search_memory(namespace, check_vector(vector), k, until)
            if found is not None:
                return found
        fetch = min(max(k * FETCH_FACTOR, MIN_FETCH), MAX_FETCH)
        params = {
            "vector": check_vector(vector),
            "k": k,
            "namespace": namespace,
            "until": iso(ensure_utc(until, "until")) if until else None,
            "fetch": fetch,
            "fetch_more": min(fetch * FETCH_MORE, MAX_FETCH),
            "scan_max": SCAN_MAX,
            "exact_max": EXACT_VECTOR_MAX,
        }
        records = self._run(query("search_passages_vector"), params, read=True)
        return message_hits(records[0]["hits"] if records else [])

    def search_within(
        self,
        namespace: str,
        topic_ids: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """The messages the topics of ``topic_ids`` cite whose passages are nearest ``vector``
        (the best ``k`` passages, said before ``until`` when given), as ``search`` gives them:
        the facts of the best topics of a question, found by meaning."""
        if not topic_ids or k <= 0:
            return []
        params = _scoped(namespace, topic_ids, vector, k)
        params["until"] = iso(ensure_utc(until, "until")) if until else None
        records = self._run(query("search_topic_passages"), params, read=True)
        return message_hits(records[0]["hits"] if records else [])

    def scores_within(
        self, namespace: str, topic_ids: Sequence[str], vector: Sequence[float], k: int
    ) -> dict[str, float]:
        """Message id -> its best passage's similarity to ``vector``, among the best ``k``
        passages of the messages the topics of ``topic_ids`` cite (the passages
        ``search_within`` reads, ids and scores only): topic search's best-fact signal."""
        if not topic_ids or k <= 0:
            return {}
        params = _scoped(namespace, topic_ids, vector, k)
        records = self._run(query("score_topic_passages"), params, read=True)
        rows = records[0]["hits"] if records else []
        return {str(r["message_id"]): float(r["score"]) for r in rows}

    def search_spoken(
        self,
        namespace: str,
        speakers: Sequence[str],
        vector: Sequence[float],
        k: int,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """The messages ``speakers`` (participants' names, any case) said whose passages are
        nearest ``vector`` (the best ``k`` passages of each speaker's newest
        ``SPOKEN_PER_SPEAKER`` messages, said before ``until`` when given; the first
        ``SPOKEN_SPEAKERS`` names in order), as ``search`` gives them: what a person named in a
        question said about it, in any session."""
        names = sorted({s.strip().lower() for s in speakers if s.strip()})[:SPOKEN_SPEAKERS]
        if not names or k <= 0:
            return []
        params = {
            "vector": check_vector(vector),
            "k": k,
            "namespace": namespace,
            "speakers": names,
            "per_speaker": SPOKEN_PER_SPEAKER,
            "until": iso(ensure_utc(until, "until")) if until else None,
        }
        records = self._run(query("search_speaker_passages"), params, read=True)
        return message_hits(records[0]["hits"] if records else [])

    # -- the passage vectors in memory (graph/passage_vectors.py) --------------------------------
    def _search_memory(
        self, namespace: str, vector: list[float], k: int, until: datetime | None
    ) -> list[MessageHit] | None:
        """``search`` answered from this process's copy of the namespace's vectors, the rows
        read by key with the namespace's stamp; None when the namespace does not fit the budget
        or was written again while it was refreshed (the caller searches in Cypher)."""
        entry = self._entry(namespace)
        if entry is None:
            return None
        until_at = ensure_utc(until, "until") if until else None
        until_us = (until_at - EPOCH) // timedelta(microseconds=1) if until_at else None
        for _ in range(2):
            keys = entry.nearest(vector, k, until_us)
            params = {
                "namespace": namespace,
                "keys": [{"message_id": m, "seq": s} for m, s in keys],
                "vector": vector,
                "k": k,
                "until": iso(until_at) if until_at else None,
            }
            row = self._run(query("read_passages_by_key"), params, read=True)[0]
            stamp = Stamp(row["epoch"], int(row["gen"]))
            if stamp == entry.stamp:
                return message_hits(row["hits"])
            refreshed = self._refresh(namespace, entry, stamp)
            if refreshed is None:
                return None
            entry = refreshed
        return None

    def _entry(self, namespace: str) -> Entry | None:
        """The namespace's copy; when this process holds none, read now (no queue) or asked of
        the load queue (None: Cypher answers meanwhile). None too when it is larger than the
        whole budget."""
        assert self.vectors is not None
        entry = self.vectors.get(namespace)
        if entry is not None:
            return entry
        counted = self._too_big.get(namespace)
        if counted is not None and self._clock() - counted < TOO_BIG_S:
            return None
        if self.loads is not None:
            self.loads.ask(namespace, lambda: self._load_missing(namespace))
            return None
        with self.vectors.loading(namespace):
            entry = self.vectors.get(namespace)
            return entry if entry is not None else self._load(namespace)

    def _load_missing(self, namespace: str) -> None:
        """The queue's job: read the namespace's copy unless one came in since it was asked."""
        assert self.vectors is not None
        if self.vectors.get(namespace) is None:
            self._load(namespace)

    def _refresh(self, namespace: str, entry: Entry, seen: Stamp) -> Entry | None:
        """``entry`` brought up to at least ``seen``: the passages written past its ``gen``
        when no passage was removed since (the same ``epoch``), else the namespace read whole
        (in the background when there is a load queue, as when the copy is more than
        ``REFRESH_MAX`` messages behind: None, Cypher answers meanwhile)."""
        assert self.vectors is not None
        with self.vectors.loading(namespace):
            current = self.vectors.get(namespace)
            if current is not None and current is not entry and current.stamp == seen:
                return current  # another request of this process refreshed it
            held = current if current is not None else entry
            if self.loads is not None and (
                not incremental(held.stamp, seen) or seen.gen - held.stamp.gen > REFRESH_MAX
            ):
                self.vectors.drop(namespace)
                self.loads.ask(namespace, lambda: self._load_missing(namespace))
                return None
            if not incremental(held.stamp, seen):
                return self._load(namespace)
            self._read_tx(lambda tx: _read_rows(tx, namespace, 0, held.stamp.gen, held))
            if current is not None:
                self.vectors.resized(namespace)
            return held

    def _load(self, namespace: str) -> Entry | None:
        """Read the namespace's stamp, then every passage of it (one read transaction), and
        hold them; None (and the Cypher path for ``TOO_BIG_S``) when they exceed the budget."""
        assert self.vectors is not None
        cap = self.vectors.budget // row_bytes()
        entry = Entry(Stamp(None, -1))  # no search matches it until the rows are all in
        if not self._read_tx(lambda tx: _read_rows(tx, namespace, cap, None, entry)):
            self.vectors.drop(namespace)
            self._too_big[namespace] = self._clock()
            return None
        self._too_big.pop(namespace, None)
        self.vectors.put(namespace, entry)
        return entry


def _read_rows(
    tx: ManagedTransaction, namespace: str, cap: int, after: int | None, into: Entry
) -> bool:
    """The namespace's stamp, then its passages (those past ``after`` when given) added to
    ``into`` in blocks of ``LOAD_BLOCK`` (the driver's float lists of a whole namespace at once
    would cost ~12 KB a passage), ``into`` stamped last; False (nothing added) when it holds
    more than ``cap`` passages (``cap`` 0: not counted). The stamp is read first, so the rows
    are at least as new as it."""
    head = tx.run(query("read_passage_stamp"), namespace=namespace, cap=cap).single()
    assert head is not None
    stamp = Stamp(head["epoch"], int(head["gen"]))
    if cap and int(head["n"]) > cap:
        return False
    if cap:
        into.reserve(int(head["n"]))
    if after is None:
        result = tx.run(query("load_passage_vectors"), namespace=namespace)
    else:
        result = tx.run(query("load_new_passage_vectors"), namespace=namespace, after=after)
    block: list[Row] = []
    for r in result:
        block.append(Row(r["message_id"], int(r["seq"]), int(r["at_us"]), r["embedding"]))
        if len(block) >= LOAD_BLOCK:
            into.add(block, into.stamp)
            block = []
    into.add(block, stamp)
    return True


def message_hits(rows: Sequence[Any]) -> list[MessageHit]:
    """One hit per message of passage rows (best first): its best passage's cosine as the score,
    its passages found in ``MessageHit.passages`` (best first)."""
    hits: dict[str, MessageHit] = {}
    for h in rows:
        message_id = h["m"]["message_id"]
        found = hits.get(message_id)
        if found is None:
            hits[message_id] = MessageHit(
                message_from_props(h["m"]),
                float(h["score"]),
                tuple((t["topic_id"], t["name"]) for t in h["topics"]),
                (h["text"],),
            )
        elif h["text"] not in found.passages:
            hits[message_id] = MessageHit(
                found.message, found.score, found.topics, (*found.passages, h["text"])
            )
    return list(hits.values())


def _scoped(
    namespace: str, topic_ids: Sequence[str], vector: Sequence[float], k: int
) -> dict[str, object]:
    """The parameters of a passage search within some topics' messages (``search_within``,
    ``scores_within``)."""
    return {
        "vector": check_vector(vector),
        "k": k,
        "namespace": namespace,
        "topic_ids": list(topic_ids),
        "per_topic": SCOPED_PER_TOPIC,
    }
