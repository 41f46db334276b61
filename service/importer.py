"""Import an export document into the caller's namespace, idempotently by ids.

1. **Parse** (``service.import_validate.parse_document``): every line is validated under REST's
   field types and limits before anything else happens; the first bad line is refused with its
   number and field (``ValidationFailed``).
2. **Plan** (``ImportService.plan``): an id is kept when the namespace already holds it; every
   other id is replaced by one derived from the namespace and the server's key
   (``service.import_ids``), and every reference is rewritten with it. Each record is then
   redacted exactly as a store redacts it (``graph.mapping.redact_*``) and *created* (new),
   *merged* (exists, the file adds something: facts, aliases, edge weight), *unchanged* (exists,
   nothing new) or *refused* (with the reason: a message older than the namespace's
   conversation, an event whose topic is missing, ...).
3. **Write** (unless ``dry_run``): new topics get their vector from the file when it was made by
   the same embedding model, has its dimension and unit length, else they are embedded again
   (so a poisoned vector never reaches the index); everything is written under the namespace's
   sleep lease in bounded batches (``Pacing``: at most ``batch`` records a transaction, and a
   pause after each in proportion to its time), so an import takes a fair share of the
   database, never all of it. Every batch is idempotent: an import stopped between two batches
   (a crash, a lost connection) is completed by importing the same file again, and ``progress``
   is told the records written after each batch.

The namespace always comes from the caller: the header's namespace is information only.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import timedelta
from functools import partial

from pydantic import ValidationError

from graph.clock import Clock, SystemClock
from graph.errors import LeaseLost
from graph.forget import TopicRewrite
from graph.mapping import redact_event, redact_message, redact_topic, redact_wake_packet
from graph.messages import MessageStore
from graph.models import (
    EmbeddingMeta,
    Message,
    Topic,
    TopicEdge,
    TopicEvent,
    TopicLinks,
    WakePacket,
    describe_errors,
)
from graph.redaction import Redactor
from graph.skills import SkillRun, redact_run
from graph.sleep import SleepStore
from graph.topics import TopicStore
from graph.transfer import ImportCommit, TransferStore
from retrieval.embedding import Embedder, text_hash
from service.export_format import KINDS
from service.import_ids import derived_id
from service.import_pacing import Pacing, Progress, paced_embed, write_batches
from service.import_plan import ImportPlan, ImportReport, KindCount
from service.import_validate import (
    ID_FIELD,
    Document,
    EdgeLine,
    MessageLine,
    SkillRunLine,
    TopicLine,
    WakePacketLine,
    parse_document,
    read_lines,
    unit_length,
)
from service.merge import merge_topic
from sleepwake.lease import held_lease

__all__ = ["Document", "ImportService", "parse_document", "read_lines"]

LEASE_TTL = timedelta(minutes=10)  # renewed after every batch


@dataclass(eq=False)
class ImportService:
    """``id_key``: the server's import key (``service.import_ids.server_key``); ``redactor``:
    the stores' (built-in shapes and the operator's patterns)."""

    store: TransferStore
    messages: MessageStore
    topics: TopicStore
    leases: SleepStore
    embedder: Embedder
    clock: Clock
    _: KW_ONLY
    id_key: bytes = field(repr=False)
    redactor: Redactor = field(default_factory=Redactor)
    lease_clock: Clock = field(default_factory=SystemClock)
    pacing: Pacing = field(default_factory=Pacing)

    def run(
        self,
        namespace: str,
        doc: Document,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Plan the import of ``doc`` into ``namespace`` and, unless ``dry_run``, write it in
        batches, telling ``progress`` (records written, records to write) after each."""
        started = time.perf_counter()
        if dry_run:
            plan = self.plan(namespace, doc, embed=False)
        else:
            holder = f"import-{uuid.uuid4()}"
            with held_lease(self.leases, namespace, holder, self.lease_clock, LEASE_TTL):
                beat = partial(self._renew, namespace, holder)
                plan = self.plan(namespace, doc, embed=True, heartbeat=beat)
                plan.report.written, plan.report.batches = write_batches(
                    self.store, plan.commit, self.pacing, plan.heartbeat, progress
                )
        plan.report.duration_ms = (time.perf_counter() - started) * 1000
        return plan.report

    def _renew(self, namespace: str, holder: str) -> None:
        """Extend the import's lease; ``LeaseLost`` when another took it (the lease expired)."""
        if not self.leases.renew_lease(namespace, holder, self.lease_clock.now() + LEASE_TTL):
            raise LeaseLost(f"the import's lease of {namespace} was taken over; import the "
                            "file again to complete it")  # fmt: skip

    def plan(
        self,
        namespace: str,
        doc: Document,
        embed: bool,
        heartbeat: Callable[[], None] | None = None,
    ) -> ImportPlan:
        """Decide every record's fate (no writes); ``embed`` computes the vectors too."""
        plan = ImportPlan(
            commit=ImportCommit(namespace=namespace, now=self.clock.now()),
            report=ImportReport(
                namespace=namespace,
                dry_run=not embed,
                source_namespace=doc.header.namespace,
                format_version=doc.header.version,
                counts={k: KindCount() for k in KINDS},
            ),
        )
        if heartbeat is not None:
            plan.heartbeat = heartbeat
        self._assign_ids(namespace, doc, plan)
        self._messages(namespace, doc.records["message"], plan)
        self._topics(namespace, doc, plan, embed)
        self._events(doc, plan)
        self._edges(namespace, doc.records["edge"], plan)
        self._packets(doc.records["wake_packet"], plan)
        self._runs(doc.records["skill_run"], plan)
        return plan

    # -- ids ---------------------------------------------------------------------------------------
    def import_id(self, namespace: str, kind: str, old_id: str) -> str:
        """The id a ``kind`` record with id ``old_id`` gets in ``namespace`` unless the
        namespace holds ``old_id`` already (``service.import_ids``)."""
        return derived_id(self.id_key, namespace, kind, old_id)

    def _assign_ids(self, namespace: str, doc: Document, plan: ImportPlan) -> None:
        """Keep the ids the namespace holds, derive the others: what is remapped depends on
        this namespace alone, never on what another one holds."""
        wanted = [
            (kind, getattr(rec, ID_FIELD[kind]))
            for kind in ID_FIELD
            for _, rec in doc.records[kind]
        ]
        owners = self.store.id_owners(wanted)
        remap = {key: self.import_id(namespace, *key) for key in wanted
                 if owners.get(key) != namespace}  # fmt: skip
        owners = {k: v for k, v in owners.items() if v == namespace}  # others' ids tell nothing
        owners.update(self.store.id_owners([(k, new) for (k, _), new in remap.items()]))
        for kind, old in wanted:
            new = remap.get((kind, old), old)
            owner = owners.get((kind, new))
            plan.ids[(kind, old)] = new
            if owner == namespace:
                plan.present.add((kind, new))
            elif owner is not None:  # even the derived id is taken elsewhere: never touch it
                plan.present.add(("foreign", new))
        plan.report.remapped_ids = len(remap)

    def _foreign(self, plan: ImportPlan, line: int, kind: str, new: str) -> bool:
        if ("foreign", new) in plan.present:
            plan.refuse(line, kind, new, "the id belongs to another namespace")
            return True
        return False

    def _settled(self, plan: ImportPlan, line: int, kind: str, new: str) -> bool:
        """Whether record ``new`` needs no writing: its id is another namespace's (refused) or
        already stored here (unchanged)."""
        if self._foreign(plan, line, kind, new):
            return True
        if (kind, new) in plan.present:
            plan.report.counts[kind].unchanged += 1
            return True
        return False

    # -- messages ----------------------------------------------------------------------------------
    def _messages(self, ns: str, items: list[tuple[int, MessageLine]], plan: ImportPlan) -> None:
        existing = {m.message_id: m for m in self.messages.get(ns, [
            plan.ids[("message", r.message_id)] for _, r in items])}  # fmt: skip
        xid = {r.message_id: self.redactor.text(x) for _, r in items if (x := r.external_id)}
        by_external = {m.external_id: m for m in self.store.messages_by_external_id(ns, [
            *xid.values()])}  # fmt: skip
        tail = self.messages.tail(ns, 1)
        last_at, next_seq = (tail[-1].at, (tail[-1].seq or 0) + 1) if tail else (None, 0)
        fresh: list[tuple[int, MessageLine]] = []
        for line, rec in items:
            new = plan.ids[("message", rec.message_id)]
            twin = by_external.get(xid[rec.message_id]) if rec.external_id else None
            if self._foreign(plan, line, "message", new):
                continue
            if new in existing:
                self._same_message(plan, line, existing[new], rec)
            elif twin is not None:  # stored already under the caller's external id
                plan.ids[("message", rec.message_id)] = twin.message_id
                plan.report.counts["message"].unchanged += 1
            elif last_at is not None and rec.at < last_at:
                plan.refuse(line, "message", new, f"older than the namespace's latest message "
                            f"({last_at.isoformat()}): messages are kept in time order")  # fmt: skip
            else:
                fresh.append((line, rec))
        self._new_messages(ns, fresh, plan, next_seq, fresh_namespace=not tail)

    def _same_message(self, plan: ImportPlan, line: int, stored: Message, rec: MessageLine) -> None:
        if stored.content == self.redactor.text(rec.content) and stored.at == rec.at:
            plan.report.counts["message"].unchanged += 1
        else:
            plan.refuse(line, "message", stored.message_id,
                        "a message with this id exists with other content or time")  # fmt: skip

    def _new_messages(
        self,
        ns: str,
        fresh: list[tuple[int, MessageLine]],
        plan: ImportPlan,
        next_seq: int,
        fresh_namespace: bool,
    ) -> None:
        """Seqs are kept in an empty namespace; appended after the conversation otherwise
        (gaps kept, so events' ``first_seq``/``last_seq`` shift by the same offset)."""
        if not fresh:
            return
        seqs = [r.seq for _, r in fresh if r.seq is not None]
        base = min(seqs) if seqs else 0
        plan.seq_offset = 0 if fresh_namespace else next_seq - base
        top = next_seq - 1
        for line, rec in fresh:
            seq = rec.seq + plan.seq_offset if rec.seq is not None else top + 1
            top = max(top, seq)
            data = rec.model_dump(exclude={"kind"})
            data.update(message_id=plan.ids[("message", rec.message_id)], namespace=ns, seq=seq)
            try:
                message = redact_message(Message.model_validate(data), self.redactor)
            except ValidationError as exc:
                plan.refuse(line, "message", data["message_id"], describe_errors("message", exc))
                continue
            plan.commit.messages.append(message)
            plan.report.counts["message"].created += 1
        plan.commit.next_seq = top + 1

    # -- topics ------------------------------------------------------------------------------------
    def _topics(self, ns: str, doc: Document, plan: ImportPlan, embed: bool) -> None:
        items = doc.records["topic"]
        stored = {t.topic_id: t for t in self.topics.get(ns, [
            plan.ids[("topic", r.topic_id)] for _, r in items
            if ("topic", plan.ids[("topic", r.topic_id)]) in plan.present])}  # fmt: skip
        plan.topics_known = set(stored)
        vectors_usable = self._vectors_usable(doc)
        for line, rec in items:
            new = plan.ids[("topic", rec.topic_id)]
            if self._foreign(plan, line, "topic", new):
                continue
            topic = self._topic_model(ns, rec, plan, line)
            if topic is None:
                continue
            plan.topics_known.add(new)
            mentions = plan.maps("message", rec.mentioned_in)
            if mentions:
                plan.commit.mentions[new] = mentions
            if new in stored:
                self._merge(plan, stored[new], topic)
            elif vectors_usable and rec.vector is not None and unit_length(rec.vector):
                plan.commit.new_topics.append((topic, rec.vector))
                plan.report.vectors_imported += 1
                plan.report.counts["topic"].created += 1
            else:
                plan.to_embed.append(topic)
                plan.report.counts["topic"].created += 1
        self._embed_new(plan, embed)

    def _topic_model(self, ns: str, rec: TopicLine, plan: ImportPlan, line: int) -> Topic | None:
        data = rec.model_dump(exclude={"kind", "mentioned_in", "vector", "skill_refs",
                                       "artifact_refs"}, exclude_none=True)  # fmt: skip
        data.update(
            topic_id=plan.ids[("topic", rec.topic_id)],
            namespace=ns,
            links=TopicLinks(skill_refs=rec.skill_refs, artifact_refs=rec.artifact_refs),
        )
        for group in ("facts", "numbers", "open_loops"):
            for item in data[group]:
                item["source_message_ids"] = plan.maps("message", item["source_message_ids"])
        for item in data["time"]["notable_events"]:
            item["source_message_ids"] = plan.maps("message", item["source_message_ids"])
        try:
            return redact_topic(Topic.model_validate(data), self.redactor)
        except ValidationError as exc:
            plan.refuse(line, "topic", data["topic_id"], describe_errors("topic", exc))
            return None

    def _merge(self, plan: ImportPlan, stored: Topic, incoming: Topic) -> None:
        merged = merge_topic(stored, incoming)
        if merged is None:
            plan.report.counts["topic"].unchanged += 1
            return
        plan.commit.merged_topics.append(TopicRewrite(merged, None, stored.version))
        plan.report.counts["topic"].merged += 1

    def _embed_new(self, plan: ImportPlan, embed: bool) -> None:
        """New topics without a usable vector in the file: embed their semantic text."""
        todo = plan.to_embed
        vectors: list[list[float] | None] = (
            list(paced_embed(self.embedder, [t.semantic_text() for t in todo], self.pacing,
                             plan.heartbeat))
            if embed and todo
            else [None] * len(todo)
        )  # fmt: skip
        for topic, vector in zip(todo, vectors, strict=True):
            meta = EmbeddingMeta(
                model=self.embedder.model_name, hash=text_hash(topic.semantic_text())
            )
            plan.commit.new_topics.append((topic.model_copy(update={"embedding": meta}), vector))
        plan.report.embedded = len(todo)

    # -- events, edges, packets, runs ----------------------------------------------------------
    def _vectors_usable(self, doc: Document) -> bool:
        """The file's vectors were made by this server's model (each is checked for unit
        length too: any other is embedded again, or an event falls back on its topic's)."""
        return doc.header.vectors and (
            doc.header.embedding.model == self.embedder.model_name
            and doc.header.embedding.dimensions == self.embedder.dimensions
        )

    def _events(self, doc: Document, plan: ImportPlan) -> None:
        usable = self._vectors_usable(doc)
        for line, rec in doc.records["event"]:
            new = plan.ids[("event", rec.event_id)]
            topic_id = plan.map("topic", rec.topic_id) or rec.topic_id
            if self._settled(plan, line, "event", new):
                continue
            if topic_id not in plan.topics_known:
                plan.refuse(line, "event", new, f"its topic {topic_id} is neither in the file nor "
                            "in the namespace")  # fmt: skip
                continue
            event = redact_event(TopicEvent(
                event_id=new, namespace=plan.commit.namespace, topic_id=topic_id, at=rec.at,
                delta_summary=rec.delta_summary,
                source_message_ids=plan.maps("message", rec.source_message_ids),
                first_seq=_shift(rec.first_seq, plan.seq_offset),
                last_seq=_shift(rec.last_seq, plan.seq_offset),
            ), self.redactor)  # fmt: skip
            vector = rec.vector if usable and rec.vector and unit_length(rec.vector) else None
            plan.commit.events.append((event, vector))
            plan.report.counts["event"].created += 1

    def _edges(self, ns: str, items: list[tuple[int, EdgeLine]], plan: ImportPlan) -> None:
        stored_ids = sorted(t for k, t in plan.present if k == "topic")
        existing = {(e.from_topic_id, e.to_topic_id, e.type): e
                    for e in self.store.edges_among(ns, stored_ids)}  # fmt: skip
        for line, rec in items:
            a = plan.map("topic", rec.from_topic_id) or rec.from_topic_id
            b = plan.map("topic", rec.to_topic_id) or rec.to_topic_id
            missing = [t for t in (a, b) if t not in plan.topics_known]
            if missing or a == b:
                why = f"topic {missing[0]} is missing" if missing else "a self-link"
                plan.refuse(line, "edge", f"{a}->{b}", why)
                continue
            edge = TopicEdge.model_construct(from_topic_id=a, to_topic_id=b, type=rec.type,
                                             weight=rec.weight,
                                             last_updated_at=rec.last_updated_at or plan.commit.now)  # fmt: skip
            plan.commit.edges.append(edge)
            old = existing.get((a, b, rec.type))
            counts = plan.report.counts["edge"]
            if old is None:
                counts.created += 1
            elif old.weight >= rec.weight:
                counts.unchanged += 1
            else:
                counts.merged += 1

    def _packets(self, items: list[tuple[int, WakePacketLine]], plan: ImportPlan) -> None:
        for line, rec in items:
            new = plan.ids[("wake_packet", rec.packet_id)]
            if self._settled(plan, line, "wake_packet", new):
                continue
            tail = [t.model_copy(update={"message_id": plan.map("message", t.message_id)})
                    for t in rec.conversation_tail]  # fmt: skip
            working_on = plan.map("topic", rec.in_progress.topic_id)
            progress = rec.in_progress.model_copy(
                update={"topic_id": working_on if working_on in plan.topics_known else None}
            )
            packet = redact_wake_packet(WakePacket(
                packet_id=new, namespace=plan.commit.namespace, slept_at=rec.slept_at,
                conversation_tail=list(tail), active_subject_hints=rec.active_subject_hints,
                top_topic_ids=plan.known_topics(rec.top_topic_ids),
                recent_skill_refs=rec.recent_skill_refs, in_progress=progress,
            ), self.redactor)  # fmt: skip
            plan.commit.wake_packets.append(packet)
            plan.report.counts["wake_packet"].created += 1

    def _runs(self, items: list[tuple[int, SkillRunLine]], plan: ImportPlan) -> None:
        for line, rec in items:
            new = plan.ids[("skill_run", rec.run_id)]
            if self._settled(plan, line, "skill_run", new):
                continue
            data = rec.model_dump(exclude={"kind"})
            data.update(
                run_id=new,
                namespace=plan.commit.namespace,
                topic_ids=plan.known_topics(rec.topic_ids),
                parent_run_id=plan.map("skill_run", rec.parent_run_id),
            )
            plan.commit.skill_runs.append(redact_run(SkillRun.model_validate(data), self.redactor))
            plan.report.counts["skill_run"].created += 1


def _shift(seq: int | None, offset: int) -> int | None:
    return None if seq is None else seq + offset
