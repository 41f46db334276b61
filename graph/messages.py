"""MessageStore: the continuous conversation of a namespace, as ordered Message nodes."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction
from neo4j.exceptions import ConstraintError

from graph.append_plan import AppendState, BufferStats, plan_append
from graph.clock import ensure_utc, window_bounds
from graph.cypher import query
from graph.db import Store
from graph.errors import ValidationFailed
from graph.fulltext import (
    content_words,
    in_namespace,
    in_window,
    message_query,
    wanted_names,
    whole_groups,
)
from graph.lexical import ENGLISH, rank
from graph.mapping import as_datetime, message_from_props, message_props, redact_message
from graph.models import Message
from graph.overfetch import Page, PagedQuery, Plan, overfetch, seeded

# The conversation's full-text candidates ranked by BM25 with the namespace's own statistics
# (graph/lexical.py, the English analysis of ``message_text_en``): Lucene's scores count every
# tenant's messages (another tenant's three messages with a made-up word moved a score ratio
# from 0.2506 to 0.2818, docs/security.md). A search keeps up to this many of the namespace's
# matches for the ranking; when the namespace has no more (the index ran dry) the ranking is
# exactly the namespace's, else the pool is the one bound that is left (docs/security.md).
MESSAGE_POOL = 400
# A namespace with more matches than the pool ranks the best groups of its matches by the
# constant scores of ``graph.fulltext.message_query`` (how many of the question's terms a
# message holds: its own and the question's alone), whole groups while they fit in
# TRUNCATED_POOL (or until k are taken; ``groups_of``): ranking 400 uncached messages took ~10
# ms of an API worker per request beside a 30,000-message conversation (docs/performance.md,
# "Namespace-local message ranking"), and Lucene's BM25 order, which picked them before, counts
# every tenant (docs/security.md)
TRUNCATED_POOL = 100
# A namespace of at most this many messages has every match of a search read and ranked (the
# query counts the namespace first, a seek stopping one past this): Lucene's order, whose
# statistics count every tenant's messages, then never decides which of them are ranked. A
# question naming both speakers of a 419-turn LoCoMo conversation matched all of it, and the
# 100 of its matches Lucene put first beside the 10k tenant were not those it put first on an
# empty server (docs/security.md, "Tenants do not change each other's results"). With more
# matches than the pool, its first TRUNCATED_POOL by its own BM25 over every match are ranked
# (as Lucene's first were). A larger namespace keeps the pool above.
MESSAGE_EXACT_MAX = 1000
MESSAGE_FIELDS = ("content", "speaker", "at_days")  # message_text_en's fields a word can match


@dataclass(frozen=True)
class MessageQuery(PagedQuery):
    """A conversation search ready to run (``MessageStore.text_query``): the query file's
    parameters, the plan, and the words it ranks its candidates by."""

    words: tuple[str, ...] = ()
    want: int = 0  # the hits the caller keeps (``k``)


@dataclass(frozen=True)
class MessageHit:
    message: Message
    score: float
    topics: tuple[tuple[str, str], ...]  # (topic_id, name) the message is MENTIONED_IN
    # the passages of it a search by meaning found, best first (``graph.passages``); empty
    # for a hit found by its words
    passages: tuple[str, ...] = ()


class MessageStore(Store):
    def append(
        self,
        namespace: str,
        messages: Sequence[Message],
        *,
        server_time: Collection[str] = (),
        where: str = "messages",
    ) -> list[Message]:
        """Append messages in order, in one transaction; returns every message asked for, as
        stored (redacted, the only place an append redacts), with its ``seq``.

        Idempotent by ``external_id`` and in time order (the one append rule,
        :func:`plan_append`): a retried batch stores nothing twice and returns the stored
        messages. The transaction holds the conversation's lock from the checks to the write,
        so concurrent appends cannot race past them. ``server_time``: ids of messages whose
        time the server assigned; ``where``: the prefix of the field an error names."""
        if not messages:
            return []
        if any(m.namespace != namespace for m in messages):
            raise ValidationFailed("every message must belong to the namespace it is appended to")
        messages = [redact_message(m, self.redactor) for m in messages]
        xids = list(dict.fromkeys(m.external_id for m in messages if m.external_id is not None))

        def work(tx: ManagedTransaction) -> list[Message]:
            lock = tx.run(
                query("lock_conversation"),
                namespace=namespace,
                external_ids=xids,
                message_ids=[m.message_id for m in messages],
            ).single(strict=True)
            if lock["taken"]:
                raise ValidationFailed(f"a message with id {lock['taken'][0]} already exists")
            stored: dict[str, Message] = {}
            for props in lock["existing"]:
                stored.setdefault(props["external_id"], message_from_props(props))
            newest = as_datetime(lock["newest"])
            plan = plan_append(messages, stored, newest, server_time, where=where)
            written = self._write(tx, namespace, int(lock["next_seq"]), plan.new)
            return [s if isinstance(s, Message) else written[s] for s in plan.slots]

        try:
            with self._driver.session(database=self._db) as session:
                return session.execute_write(work)
        except ConstraintError as exc:
            raise ValidationFailed(
                f"a message with one of these ids already exists: {exc}"
            ) from exc

    @staticmethod
    def _write(
        tx: ManagedTransaction, namespace: str, base: int, messages: list[Message]
    ) -> list[Message]:
        if not messages:
            return []
        rows = []
        for m in messages:
            props = message_props(m)
            props.pop("seq", None)
            rows.append(props)
        records = tx.run(query("append_messages"), namespace=namespace, base=base, rows=rows)
        seqs = {r["message_id"]: int(r["seq"]) for r in records}
        return [m.model_copy(update={"seq": seqs[m.message_id]}) for m in messages]

    def by_external_id(self, namespace: str, external_ids: Sequence[str]) -> dict[str, Message]:
        """The stored messages carrying these external ids (the oldest, should one repeat)."""
        if not external_ids:
            return {}
        return _by_external_id(
            self._read(
                "messages_by_external_id", namespace=namespace, external_ids=list(external_ids)
            )
        )

    def append_state(
        self, namespace: str, external_ids: Sequence[str], tail_turns: int
    ) -> AppendState:
        """``by_external_id``, ``newest_at``, ``buffer_stats`` and ``tail`` in ONE read
        transaction (one snapshot, one begin and commit instead of four)."""

        def work(tx: ManagedTransaction) -> AppendState:
            def run(name: str, **params: object) -> list[Any]:
                return list(tx.run(query(name), {"namespace": namespace, **params}))

            found = (
                run("messages_by_external_id", external_ids=list(external_ids))
                if external_ids
                else []
            )
            newest = run("newest_message_at")
            return AppendState(
                stored=_by_external_id([message_from_props(r["m"]) for r in found]),
                newest_at=as_datetime(newest[0]["at"]) if newest else None,
                stats=_buffer_stats(run("buffer_stats")[0]),
                tail=[message_from_props(r["m"]) for r in run("tail_messages", n=tail_turns)]
                if tail_turns > 0
                else [],
            )

        return self._read_tx(work)

    def newest_at(self, namespace: str) -> datetime | None:
        """The time of the latest stored message (None for an empty conversation)."""
        rows = self._run(query("newest_message_at"), {"namespace": namespace}, read=True)
        return as_datetime(rows[0]["at"]) if rows else None

    def tail(self, namespace: str, n: int) -> list[Message]:
        """The last ``n`` messages, oldest first."""
        return self._read("tail_messages", namespace=namespace, n=max(0, n))

    def buffer(self, namespace: str, limit: int = 100_000) -> list[Message]:
        """Messages not yet compacted by a sleep, oldest first."""
        return self._read("buffer_messages", namespace=namespace, limit=limit)

    def speakers_named(self, namespace: str, names: Sequence[str]) -> set[str]:
        """The phrases (lower-cased) that name a speaker of one of the namespace's messages
        (the (namespace, speaker_lc) index; at most ``graph.fulltext.MAX_NAMES`` phrases)."""
        wanted = wanted_names(names)
        if not wanted:
            return set()
        rows = self._run(
            query("find_speakers_named"), {"namespace": namespace, "names": wanted}, read=True
        )
        return {r["name"] for r in rows}

    def buffer_stats(self, namespace: str) -> BufferStats:
        """Size, tokens and newest time of the buffer (one row, no message bodies)."""
        return _buffer_stats(
            self._run(query("buffer_stats"), {"namespace": namespace}, read=True)[0]
        )

    def in_range(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 10_000,
    ) -> list[Message]:
        """Messages with ``since <= at < until`` (either bound open when None), oldest first."""
        start, end = window_bounds(since, until)
        return self._read(
            "messages_in_range", namespace=namespace, since=start, until=end, limit=limit
        )

    def get(self, namespace: str, message_ids: Sequence[str]) -> list[Message]:
        return self._read("get_messages", namespace=namespace, message_ids=list(message_ids))

    def source_ids(self, namespace: str, message_ids: Sequence[str]) -> dict[str, str]:
        """message id -> the id its caller knows it by (external id, else the message id), for
        the ids in the namespace: what citing needs, without reading whole messages."""
        if not message_ids:
            return {}
        records = self._run(
            query("get_message_source_ids"),
            {"namespace": namespace, "message_ids": list(dict.fromkeys(message_ids))},
            read=True,
        )
        return {message_id: source_id for message_id, source_id in records[0]["sources"]}

    def search_text(
        self,
        namespace: str,
        text: str,
        k: int = 50,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """Lexical search over the conversation (English analyzer over content and speaker),
        with the topics each hit is mentioned in. The query is confined to the namespace before
        Lucene finds candidates, and to the UTC days of a time window
        (``graph.fulltext.in_window``); the window's exact bounds filter after, so the search
        grows until ``MESSAGE_POOL`` candidates or the namespace's last. They are ranked by BM25
        with the statistics of the namespace's candidates alone (``text_hits``); a windowed
        search's with those of the whole conversation's candidates too (its search, one more
        read), as a context ranks them (``graph.context.ContextStore.search_texts``): a message
        scores the same inside a window as without one."""
        search = self.text_query(namespace, text, k, since, until)
        if search is None:
            return []
        basis = None
        if since is not None or until is not None:
            whole = self.text_query(namespace, text, k)
            basis = None if whole is None else self.text_pool(whole)
        return self.text_hits(search, k, basis=basis)

    def text_query(
        self,
        namespace: str,
        text: str,
        k: int,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> MessageQuery | None:
        """``search_text``'s query (``search_messages_fulltext``), not yet run; None when the
        text holds no word to search for. Its ``$k`` is the candidate pool (``MESSAGE_POOL``,
        or ``k`` if larger): ``text_hits`` ranks them and keeps ``k``."""
        lucene = message_query(text)  # constant scores, without graph.fulltext.COMMON_WORDS
        if not lucene:
            return None
        since = ensure_utc(since, "since") if since else None
        until = ensure_utc(until, "until") if until else None
        confined = in_namespace(namespace, lucene)
        dated = in_window(confined, since, until)
        pool = max(k, MESSAGE_POOL)
        params = {
            "query": dated,
            "k": pool,
            "namespace": namespace,
            "since": since,
            "until": until,
            "exact_max": MESSAGE_EXACT_MAX,
        }
        # the query is confined to the namespace, so without a window every row Lucene returns
        # is kept: ask for the pool. A window filters after Lucene: when the query names the
        # window's days, only the first and last day's messages outside the window's hours can
        # be dropped (twice the pool read); else a share of the whole conversation is kept
        # (four times the pool read, growing by four while short)
        if since is None and until is None:
            first = pool
        elif dated != confined:
            first = pool * 2
        else:
            first = pool * 4
        words = tuple(content_words(text))
        return MessageQuery(params, Plan(first=first), words, k)

    def text_hits(
        self,
        search: PagedQuery,
        k: int,
        first: Page[Any] | None = None,
        then: Page[Any] | None = None,
        basis: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[MessageHit]:
        """The best ``k`` hits of ``search`` (``text_query``) by the namespace's own BM25
        (``rank_hits``, over ``text_pool``'s candidates and ``basis``: another search's pool
        whose statistics count too); ``first`` and ``then`` as ``text_pool`` takes them."""
        return self.hits_of(search, self.text_pool(search, first, then), k, basis)

    def hits_of(
        self,
        search: PagedQuery,
        pool: Sequence[Mapping[str, Any]],
        k: int,
        basis: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[MessageHit]:
        """The best ``k`` of ``search``'s candidates ``pool`` (``text_pool``, what the ranking
        reads of each) by ``rank_hits`` with ``basis``, read whole with their topics
        (``get_message_hits``, one read: 400 candidates' whole records and topics cost more than
        ranking them); a message gone since is left out."""
        words = search.words if isinstance(search, MessageQuery) else ()
        best = rank_hits(words, pool, k, basis)
        if not best:
            return []
        records = self._run(
            query("get_message_hits"),
            {
                "namespace": search.params["namespace"],
                "message_ids": [h["m"]["message_id"] for h, _ in best],
            },
            read=True,
        )
        whole = {r["m"]["message_id"]: r for r in (records[0]["hits"] if records else [])}
        return [
            MessageHit(
                message_from_props(whole[mid]["m"]),
                score,
                tuple((t["topic_id"], t["name"]) for t in whole[mid]["topics"]),
            )
            for h, score in best
            if (mid := h["m"]["message_id"]) in whole
        ]

    def text_pool(
        self, search: PagedQuery, first: Page[Any] | None = None, then: Page[Any] | None = None
    ) -> list[Mapping[str, Any]]:
        """The candidates of ``search`` (``text_query``): up to its pool of the namespace's
        matches (``search_messages_fulltext``'s hits), grown while a window filters them out;
        all of them when the index ran dry, else the first ``TRUNCATED_POOL`` (or ``k``): of
        Lucene's order, or, a namespace read whole (``MESSAGE_EXACT_MAX``), of its own BM25;
        ``first``: its first page, already read (``raw`` and ``hits`` for
        ``search.first_fetch``); ``then``: its next page (for ``search.next_fetch``), read
        beforehand too."""

        def page(fetch: int) -> Page[Any]:
            records = self._run(
                query("search_messages_fulltext"), {**search.params, "fetch": fetch}, read=True
            )
            r = records[0]
            return Page(int(r["raw"]), r["hits"], bool(r["complete"]))

        later = None if then is None else (search.next_fetch, then)
        pool = int(search.params["k"])
        want = search.want if isinstance(search, MessageQuery) else pool
        # a page Lucene filled keeps only the messages scoring above its last row (the query
        # file's cut): without a window always fewer than the pool it read, so that search
        # grows only until ``want`` are kept; a window's reads more than the pool
        whole = search.params["since"] is None and search.params["until"] is None
        need = want if whole else pool
        found = overfetch(need, search.plan, seeded(page, first, search.first_fetch, later))
        if found.complete and len(found.hits) > pool:
            # a small namespace read whole, with more matches than the pool: its own best
            # (BM25 over every match, namespace-local) stand in for the first of Lucene's
            # order, which index-wide statistics choose; ranked again among themselves next
            # (ranking all ~650 matches of a LoCoMo question once instead lost 0.007 recall)
            words = search.words if isinstance(search, MessageQuery) else ()
            return [h for h, _ in rank_hits(words, found.hits, max(want, TRUNCATED_POOL))]
        if found.complete:  # every match of the namespace: the ranking is exactly its own
            return found.hits
        return groups_of(found.hits, max(want, TRUNCATED_POOL), want)

    def mentions(
        self, namespace: str, topic_ids: Sequence[str], per_topic: int = 30
    ) -> dict[str, list[Message]]:
        """The messages each topic was mentioned in, newest first."""
        records = self._run(
            query("topic_mentions"),
            {"namespace": namespace, "topic_ids": list(topic_ids), "per_topic": per_topic},
            read=True,
        )
        out: dict[str, list[Message]] = {}
        for r in records:
            out.setdefault(r["topic_id"], []).append(message_from_props(r["m"]))
        return out

    def _read(self, name: str, **params: object) -> list[Message]:
        records = self._run(query(name), dict(params), read=True)
        return [message_from_props(r["m"]) for r in records]


def rank_hits(
    words: Sequence[str],
    hits: Sequence[Mapping[str, Any]],
    k: int,
    basis: Sequence[Mapping[str, Any]] | None = None,
) -> list[tuple[Mapping[str, Any], float]]:
    """The best ``k`` of a conversation search's ``hits`` (``search_messages_fulltext``'s, each
    with what the ranking reads of its message, ``m``) with their BM25 for ``words``, computed over ``hits`` and ``basis``
    (more of the namespace's candidates: the whole conversation's for a windowed search) alone,
    with the English analysis of ``message_text_en`` (``graph/lexical.py``): what another
    namespace stores changes no score and no order. Ties go to the older message (the index's
    own order among equals depends on how its segments were merged, which every tenant's writes
    move); a hit sharing no term with ``words`` (it matched something the analysis here does
    not see) is left out."""
    mine = {h["m"]["message_id"] for h in hits}
    more = [b for b in basis or () if b["m"]["message_id"] not in mine]
    docs = [{f: str(h["m"].get(f) or "") for f in MESSAGE_FIELDS} for h in [*hits, *more]]
    scores = rank(words, docs, MESSAGE_FIELDS, analyze=ENGLISH)[: len(hits)]
    seqs = [int(h["m"].get("seq") or 0) for h in hits]
    order = sorted(
        (i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], seqs[i], i)
    )
    return [(hits[i], scores[i]) for i in order[:k]]


def groups_of(hits: Sequence[Mapping[str, Any]], size: int, k: int) -> list[Mapping[str, Any]]:
    """The candidates ranked of a large namespace's ``hits`` (``search_messages_fulltext``'s, in
    Lucene's order: constant scores, ``graph.fulltext.message_query``): whole groups of one
    score from the highest, while they fit in ``size`` or fewer than ``k`` are taken, oldest
    first within a group. Never a part of a group: which of its messages Lucene returns first
    follows its document order, which every tenant's writes move."""
    ordered = sorted(hits, key=lambda h: (-float(h["score"]), int(h["m"].get("seq") or 0)))
    return whole_groups(ordered, lambda h: float(h["score"]), size, k)


def _by_external_id(messages: list[Message]) -> dict[str, Message]:
    """External id -> message (the oldest, should one repeat; ``messages`` come oldest first)."""
    found: dict[str, Message] = {}
    for m in messages:
        if m.external_id is not None:
            found.setdefault(m.external_id, m)
    return found


def _buffer_stats(row: Any) -> BufferStats:
    last_at = row["last_at"]
    return BufferStats(
        int(row["messages"]), int(row["tokens"]), last_at.to_native() if last_at else None
    )
