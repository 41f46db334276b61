"""In-memory ``MessageStoreProtocol``: the conversation log as ``graph.messages.MessageStore``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from graph.append_plan import AppendState, BufferStats, plan_append
from graph.clock import ensure_utc
from graph.errors import ValidationFailed
from graph.fulltext import wanted_names
from graph.mapping import speaker_key
from graph.messages import MessageHit
from graph.models import Message
from tests.fakes.graph import FakeGraph, content_words, english_terms, term_score


class FakeMessageStore:
    """Messages of every namespace in one ``FakeGraph``; ``seq`` counts from 0 per namespace."""

    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph if graph is not None else FakeGraph()

    def append(
        self,
        namespace: str,
        messages: Sequence[Message],
        *,
        server_time: Collection[str] = (),
        where: str = "messages",
    ) -> list[Message]:
        """Append in order, all or nothing; an id already stored (in any namespace) is refused;
        idempotent by ``external_id`` and in time order, by the store's own ``plan_append``."""
        if not messages:
            return []
        if any(m.namespace != namespace for m in messages):
            raise ValidationFailed("every message must belong to the namespace it is appended to")
        ids = [m.message_id for m in messages]
        with self.graph.transaction():
            taken = [i for i in ids if i in self.graph.messages]
            if taken or len(set(ids)) != len(ids):
                raise ValidationFailed(f"a message with one of these ids already exists: {taken}")
            xids = [m.external_id for m in messages if m.external_id is not None]
            plan = plan_append(
                messages,
                self.by_external_id(namespace, xids),
                self.newest_at(namespace),
                server_time,
                where=where,
            )
            base = self.graph.next_seq.get(namespace, 0)
            self.graph.next_seq[namespace] = base + len(plan.new)
            stored = [m.model_copy(update={"seq": base + i}) for i, m in enumerate(plan.new)]
            self.graph.messages.update((m.message_id, m) for m in stored)
        return [(s if isinstance(s, Message) else stored[s]).model_copy() for s in plan.slots]

    def by_external_id(self, namespace: str, external_ids: Sequence[str]) -> dict[str, Message]:
        """The stored messages carrying these external ids (the oldest, should one repeat)."""
        found: dict[str, Message] = {}
        for m in self._ordered(namespace):
            if m.external_id is not None and m.external_id in external_ids:
                found.setdefault(m.external_id, m)
        return found

    def newest_at(self, namespace: str) -> datetime | None:
        """The time of the latest stored message (None for an empty conversation)."""
        return max((m.at for m in self._ordered(namespace)), default=None)

    def tail(self, namespace: str, n: int) -> list[Message]:
        """The last ``n`` messages, oldest first."""
        ordered = self._ordered(namespace)
        return ordered[max(0, len(ordered) - n) :] if n > 0 else []

    def speakers_named(self, namespace: str, names: Sequence[str]) -> set[str]:
        """The phrases (lower-cased) that name a speaker of the namespace's messages."""
        speakers = {speaker_key(m.speaker) for m in self._ordered(namespace) if m.speaker}
        return {n for n in wanted_names(names) if n in speakers}

    def buffer(self, namespace: str, limit: int = 100_000) -> list[Message]:
        """Messages not yet compacted by a sleep, oldest first."""
        return [m for m in self._ordered(namespace) if m.compacted_at is None][:limit]

    def append_state(
        self, namespace: str, external_ids: Sequence[str], tail_turns: int
    ) -> AppendState:
        """What an append reads before it writes (one read in the real store)."""
        with self.graph.lock:
            return AppendState(
                stored=self.by_external_id(namespace, external_ids) if external_ids else {},
                newest_at=self.newest_at(namespace),
                stats=self.buffer_stats(namespace),
                tail=self.tail(namespace, tail_turns),
            )

    def buffer_stats(self, namespace: str) -> BufferStats:
        """Size, tokens and newest time of the buffer."""
        buffer = self.buffer(namespace)
        return BufferStats(
            len(buffer), sum(m.token_estimate for m in buffer), buffer[-1].at if buffer else None
        )

    def in_range(
        self,
        namespace: str,
        since: datetime | None,
        until: datetime | None,
        limit: int = 10_000,
    ) -> list[Message]:
        """Messages with ``since <= at < until`` (either bound open), oldest first."""
        s = ensure_utc(since, "since") if since else None
        u = ensure_utc(until, "until") if until else None
        inside = [
            m
            for m in self._ordered(namespace)
            if (s is None or m.at >= s) and (u is None or m.at < u)
        ]
        return inside[:limit]

    def get(self, namespace: str, message_ids: Sequence[str]) -> list[Message]:
        """Messages by id within the namespace, oldest first (an id asked twice comes twice)."""
        found = [self.graph.messages.get(mid) for mid in message_ids]
        kept = [m.model_copy() for m in found if m is not None and m.namespace == namespace]
        return sorted(kept, key=lambda m: m.seq or 0)

    def source_ids(self, namespace: str, message_ids: Sequence[str]) -> dict[str, str]:
        """message id -> external id (else the message id) for the ids in the namespace."""
        found = (self.graph.messages.get(mid) for mid in message_ids)
        return {
            m.message_id: m.external_id or m.message_id
            for m in found
            if m is not None and m.namespace == namespace
        }

    def search_text(
        self,
        namespace: str,
        text: str,
        k: int = 50,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHit]:
        """Messages holding the query's terms (content and speaker, English analysis), best
        first, with the live topics they are mentioned in."""
        words = content_words(text)
        if not words:
            return []
        query = english_terms(" ".join(words))
        s = ensure_utc(since, "since") if since else None
        u = ensure_utc(until, "until") if until else None
        scored = []
        for m in self._ordered(namespace):
            if (s is not None and m.at < s) or (u is not None and m.at >= u):
                continue
            score = term_score(query, english_terms(f"{m.content} {m.speaker or ''}"))
            if score > 0:
                scored.append((score, m))
        scored.sort(key=lambda pair: -pair[0])
        return [MessageHit(m.model_copy(), score, self._topics_of(m)) for score, m in scored[:k]]

    def mark_compacted(self, namespace: str, message_ids: Sequence[str], now: datetime) -> int:
        """Mark messages compacted (they leave the buffer; nothing is deleted)."""
        when = ensure_utc(now)
        marked = 0
        with self.graph.transaction():
            for mid in message_ids:
                m = self.graph.messages.get(mid)
                if m is not None and m.namespace == namespace and m.compacted_at is None:
                    self.graph.messages[mid] = m.model_copy(update={"compacted_at": when})
                    marked += 1
        return marked

    def _ordered(self, namespace: str) -> list[Message]:
        with self.graph.lock:
            mine = [m for m in self.graph.messages.values() if m.namespace == namespace]
        return [m.model_copy() for m in sorted(mine, key=lambda m: m.seq or 0)]

    def _topics_of(self, message: Message) -> tuple[tuple[str, str], ...]:
        out = []
        for tid, node in self.graph.topics.items():
            if (tid, message.message_id) in self.graph.mentions and node.live(message.namespace):
                out.append((tid, str(node.props["name"])))
        return tuple(sorted(out, key=lambda t: (t[1], t[0])))  # by name, as Neo4j returns them
