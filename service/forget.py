"""Forget for real: a topic, messages, whatever matches a phrase, or a whole namespace.

Forgetting deletes (never archives) and leaves no trace a later read could surface:

- a topic goes with its events and every relationship, so it leaves the vector and full-text
  indexes, neighbours, wake packets' top topics, skill runs and subjects;
- forgotten messages go, and with them every item of another topic that came only from them
  (its text quotes them); items with other sources lose the forgotten ids; a topic left empty
  is deleted (see ``service.scrub``); events that quote removed text are withheld;
- wake packets lose forgotten tail turns, top topics and in-progress hints;
- in-process caches are told through ``listeners`` (the composition root wires the context
  builder's suppression cache and the per-namespace skill services).

``with_messages`` also deletes the messages a topic was made from, so a later sleep cannot
rebuild it. Each forget holds the namespace's sleep lease (a sleep running concurrently could
otherwise write back what is being deleted) and commits in one transaction. Every operation
has a ``dry_run`` that reports the same plan and writes nothing.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from graph.clock import Clock, SystemClock
from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.events import EventStore
from graph.forget import ForgetCommit, ForgetStore, TopicRewrite
from graph.messages import MessageStore
from graph.models import Message, Topic, TopicEvent
from graph.sleep import SleepStore
from graph.topics import TopicStore
from retrieval.embedding import Embedder
from service.scrub import Removal, scrub_event, scrub_packet, scrub_topic
from service.topics import reembedded
from sleepwake.candidates import normalise_key
from sleepwake.lease import held_lease

log = logging.getLogger(__name__)

TOPIC_MATCH_LIMIT = 1000
MESSAGE_MATCH_LIMIT = 10_000
LEASE_TTL = timedelta(minutes=10)
ATTEMPTS = 3
PREVIEW_CHARS = 200


class ForgetReport(BaseModel):
    """What a forget deleted (or, with ``dry_run``, would delete)."""

    namespace: str
    dry_run: bool
    topics_deleted: list[str] = []
    messages_deleted: list[str] = []
    events_deleted: int = 0
    topics_rewritten: list[str] = []
    items_removed: int = 0
    wake_packets_cleaned: int = 0
    whole_namespace: bool = False


class TopicMatch(BaseModel):
    topic_id: str
    name: str
    why: str


class ItemMatch(BaseModel):
    topic_id: str
    topic_name: str
    kind: Literal["fact", "open_loop", "alias", "one_liner"]
    fact_id: str | None = None
    text: str


class MessageMatch(BaseModel):
    message_id: str
    external_id: str | None
    role: str
    at: datetime
    preview: str


class ForgetMatches(BaseModel):
    """What a phrase matches: whole topics (by name), items of other topics, messages."""

    query: str
    topics: list[TopicMatch] = []
    items: list[ItemMatch] = []
    messages: list[MessageMatch] = []
    truncated: bool = False


class ForgetQueryResult(BaseModel):
    matches: ForgetMatches
    report: ForgetReport


class NamespaceReport(BaseModel):
    namespace: str
    dry_run: bool
    deleted: dict[str, int]
    keys_revoked: int


Listener = Callable[[str, ForgetReport], None]


@dataclass
class _Target:
    topic_ids: set[str] = field(default_factory=set)
    message_ids: set[str] = field(default_factory=set)
    removals: dict[str, Removal] = field(default_factory=dict)  # topic id -> items to remove


@dataclass(eq=False)
class ForgetService:
    store: ForgetStore
    topics: TopicStore
    messages: MessageStore
    events: EventStore
    leases: SleepStore
    embedder: Embedder
    clock: Clock
    listeners: Sequence[Listener] = ()
    lease_clock: Clock = field(default_factory=SystemClock)  # leases are wall time, as the sleep's

    # -- use cases -------------------------------------------------------------------------------
    def topic(
        self, namespace: str, topic_id: str, *, with_messages: bool = False, dry_run: bool = False
    ) -> ForgetReport:
        """Delete one topic (404 when it is not in ``namespace``); ``with_messages`` also
        deletes the messages it was made from."""
        topic = self.topics.get_one(namespace, topic_id)
        target = _Target(topic_ids={topic_id})
        if with_messages:
            target.message_ids = self.sources(namespace, [topic])
        return self._forget(namespace, target, dry_run)

    def messages_by_id(
        self, namespace: str, message_ids: Sequence[str], *, dry_run: bool = False
    ) -> ForgetReport:
        """Delete messages by id; 404 naming the ids that are not in ``namespace``."""
        found = {m.message_id for m in self.messages.get(namespace, list(message_ids))}
        missing = [m for m in message_ids if m not in found]
        if missing:
            raise NotFound(f"message {', '.join(missing[:5])} not found")
        return self._forget(namespace, _Target(message_ids=found), dry_run)

    def messages_by_external_id(
        self, namespace: str, external_id: str, *, dry_run: bool = False
    ) -> ForgetReport:
        """Delete every message stored under the caller's ``external_id``."""
        found = self.store.messages_by_external_id(namespace, [external_id])
        if not found:
            raise NotFound(f"no message with external_id {external_id!r}")
        target = _Target(message_ids={m.message_id for m in found})
        return self._forget(namespace, target, dry_run)

    def matches(self, namespace: str, phrase: str) -> ForgetMatches:
        """Every topic, item and message whose text contains ``phrase`` (case-insensitive,
        whole words): topics named by it go whole, other topics lose the matching items."""
        pattern, needle = phrase_pattern(phrase)
        found = ForgetMatches(query=phrase)
        topics = self.store.topics_containing(namespace, needle, TOPIC_MATCH_LIMIT)
        for topic in topics:
            _match_topic(found, topic, pattern)
        messages = self.store.messages_containing(namespace, needle, MESSAGE_MATCH_LIMIT)
        found.messages = [_message_match(m) for m in messages if pattern.search(m.content)]
        found.truncated = len(topics) >= TOPIC_MATCH_LIMIT or len(messages) >= MESSAGE_MATCH_LIMIT
        return found

    def query(self, namespace: str, phrase: str, *, dry_run: bool = True) -> ForgetQueryResult:
        """Forget everything ``phrase`` matches (``dry_run``: list it, delete nothing)."""
        found = self.matches(namespace, phrase)
        target = _Target(
            topic_ids={t.topic_id for t in found.topics},
            message_ids={m.message_id for m in found.messages},
        )
        for item in found.items:
            _add_item(target.removals.setdefault(item.topic_id, Removal()), item)
        return ForgetQueryResult(matches=found, report=self._forget(namespace, target, dry_run))

    def namespace(
        self, namespace: str, revoke_keys: Callable[[str], Sequence[Any]], *, dry_run: bool = False
    ) -> NamespaceReport:
        """Delete all data of ``namespace`` after revoking its API keys (first, so no key can
        write while the data goes); the key records stay, revoked, for the audit trail."""
        counts = self.store.count_nodes(namespace)
        if dry_run:
            return NamespaceReport(
                namespace=namespace, dry_run=True, deleted=counts, keys_revoked=0
            )
        revoked = len(revoke_keys(namespace))
        self.store.delete_namespace(namespace)
        report = ForgetReport(namespace=namespace, dry_run=False, whole_namespace=True)
        self._notify(namespace, report)
        log.info("forgot namespace %s: %s", namespace, counts)
        return NamespaceReport(
            namespace=namespace, dry_run=False, deleted=counts, keys_revoked=revoked
        )

    def sources(self, namespace: str, topics: Sequence[Topic]) -> set[str]:
        """Every message id the topics were made from: mentions and all provenance."""
        ids = {m for ms in self.store.mention_ids(namespace, [t.topic_id for t in topics]).values()
               for m in ms}  # fmt: skip
        for topic in topics:
            for group in (topic.facts, topic.open_loops, topic.numbers, topic.time.notable_events):
                ids.update(m for item in group for m in item.source_message_ids)
        events = self.events.for_topics(namespace, [t.topic_id for t in topics])
        ids.update(m for e in events for m in e.source_message_ids)
        return ids

    # -- the one path every forget takes ------------------------------------------------------
    def _forget(self, namespace: str, target: _Target, dry_run: bool) -> ForgetReport:
        if dry_run:
            return self._plan(namespace, target, embed=False)[1]
        holder = f"forget-{uuid.uuid4()}"
        with held_lease(self.leases, namespace, holder, self.lease_clock, LEASE_TTL):
            for _ in range(ATTEMPTS):
                plan, report = self._plan(namespace, target, embed=True)
                if plan.empty():
                    return report
                try:
                    counts = self.store.commit(plan)
                except VersionConflict:
                    continue  # a topic moved on between plan and commit: plan again
                report.events_deleted = counts.events
                self._notify(namespace, report)
                return report
            raise VersionConflict("the memory kept changing while forgetting; try again")

    def _plan(self, ns: str, target: _Target, embed: bool) -> tuple[ForgetCommit, ForgetReport]:
        messages = {
            m.message_id: m.content for m in self.messages.get(ns, sorted(target.message_ids))
        }
        plan = ForgetCommit(namespace=ns, now=self.clock.now())
        doomed = {t.topic_id: t for t in self.topics.get(ns, sorted(target.topic_ids))}
        removed_texts, items = self._rewrite_topics(ns, target, messages, doomed, plan, embed)
        plan.delete_topic_ids = sorted(doomed)
        plan.delete_message_ids = sorted(messages)
        self._rewrite_events(ns, plan, set(messages), removed_texts)
        names = {normalise_key(n) for t in doomed.values() for n in (t.name, *t.aliases)}
        for packet in self.store.wake_packets(ns):
            cleaned = scrub_packet(packet, doomed, messages, names)
            if cleaned is not None:
                plan.rewrite_packets.append(cleaned)
        plan.subject_labels = sorted(names)
        report = ForgetReport(
            namespace=ns,
            dry_run=not embed,
            topics_deleted=plan.delete_topic_ids,
            messages_deleted=plan.delete_message_ids,
            events_deleted=len(plan.delete_event_ids)
            + len(self.events.for_topics(ns, plan.delete_topic_ids)),
            topics_rewritten=[w.topic.topic_id for w in plan.rewrite_topics],
            items_removed=items,
            wake_packets_cleaned=len(plan.rewrite_packets),
        )
        return plan, report

    def _rewrite_topics(
        self,
        ns: str,
        target: _Target,
        messages: dict[str, str],
        doomed: dict[str, Topic],
        plan: ForgetCommit,
        embed: bool,
    ) -> tuple[list[str], int]:
        """Scrub every topic citing a forgotten message or named in ``target.removals``;
        topics left empty join ``doomed``. Returns the removed texts and how many items."""
        citing = {t.topic_id: t for t in self.store.topics_citing(ns, sorted(messages))}
        extra = [tid for tid in target.removals if tid not in citing]
        citing.update({t.topic_id: t for t in self.topics.get(ns, extra)})
        removed: list[str] = []
        count = 0
        rewrites: list[Topic] = []
        for tid, topic in sorted(citing.items()):
            if tid in doomed:
                continue
            base = target.removals.get(tid, Removal())
            base.message_ids = set(messages)
            result = scrub_topic(topic, base)
            removed += result.removed_texts
            count += len(result.removed_texts)
            if result.topic is None:
                doomed[tid] = topic
            elif result.changed:
                rewrites.append(result.topic)
        originals = {t.topic_id: t for t in citing.values()}
        plan.rewrite_topics = self._embedded(rewrites, originals, embed)
        return removed, count

    def _embedded(
        self, rewrites: list[Topic], originals: dict[str, Topic], embed: bool
    ) -> list[TopicRewrite]:
        """Re-embed the rewritten topics whose semantic text changed (one batch; none in a dry
        run)."""
        pairs = [(t, originals[t.topic_id]) for t in rewrites]
        done = reembedded(self.embedder, pairs) if embed else [(t, None) for t in rewrites]
        return [TopicRewrite(t, v, originals[t.topic_id].version) for t, v in done]

    def _rewrite_events(
        self, ns: str, plan: ForgetCommit, gone: set[str], removed_texts: list[str]
    ) -> None:
        """Events of surviving topics: drop forgotten sources, withhold quoting summaries."""
        candidates: dict[str, TopicEvent] = {
            e.event_id: e for e in self.store.events_citing(ns, sorted(gone))
        }
        rewritten = [w.topic.topic_id for w in plan.rewrite_topics]
        candidates.update({e.event_id: e for e in self.events.for_topics(ns, rewritten)})
        doomed = set(plan.delete_topic_ids)
        for event in candidates.values():
            if event.topic_id in doomed:
                continue  # goes with its topic
            kept = scrub_event(event, gone, removed_texts)
            if kept is None:
                plan.delete_event_ids.append(event.event_id)
            elif kept is not event:
                plan.rewrite_events.append(kept)

    def _notify(self, namespace: str, report: ForgetReport) -> None:
        for listener in self.listeners:
            try:
                listener(namespace, report)
            except Exception:  # a cache that cannot be told must not undo a committed forget
                log.exception("forget listener failed")


def phrase_pattern(phrase: str) -> tuple[re.Pattern[str], str]:
    """A whole-word, case-insensitive pattern for ``phrase`` and the longest word in it (what
    the database scan looks for; the pattern then confirms each hit)."""
    text = " ".join(phrase.split())
    words = re.findall(r"\w+", text)
    if len(text) < 2 or not words:
        raise ValidationFailed("query: must hold at least two characters and a letter or digit")
    pattern = re.compile(rf"(?<!\w){re.escape(text)}(?!\w)", re.IGNORECASE)
    return pattern, max(words, key=len).lower()


def _match_topic(found: ForgetMatches, topic: Topic, pattern: re.Pattern[str]) -> None:
    if pattern.search(topic.name):
        found.topics.append(TopicMatch(topic_id=topic.topic_id, name=topic.name, why="name"))
        return

    def item(kind: Any, text: str, fact_id: str | None = None) -> None:
        found.items.append(
            ItemMatch(
                topic_id=topic.topic_id, topic_name=topic.name, kind=kind, fact_id=fact_id,
                text=text,
            )
        )  # fmt: skip

    for alias in topic.aliases:
        if pattern.search(alias):
            item("alias", alias)
    quoted = False
    for fact in topic.facts:
        if pattern.search(fact.text):
            item("fact", fact.text, fact.fact_id)
            quoted = quoted or fact.text[:300] == topic.one_liner
    for loop in topic.open_loops:
        if pattern.search(loop.text):
            item("open_loop", loop.text)
    if pattern.search(topic.one_liner) and not quoted:
        item("one_liner", topic.one_liner)


def _add_item(removal: Removal, item: ItemMatch) -> None:
    if item.kind == "fact" and item.fact_id:
        removal.fact_ids.add(item.fact_id)
    elif item.kind == "open_loop":
        removal.loop_texts.add(item.text)
    elif item.kind == "alias":
        removal.aliases.add(item.text.lower())
    else:
        removal.clear_one_liner = True


def _message_match(m: Message) -> MessageMatch:
    return MessageMatch(
        message_id=m.message_id,
        external_id=m.external_id,
        role=m.role,
        at=m.at,
        preview=m.content[:PREVIEW_CHARS],
    )
