"""Export a namespace as a versioned JSON Lines document (see ``service.export_format``).

``ExportService.lines`` is a generator: it reads the graph page by page (messages by ``seq``,
topics and events by id) and yields one line at a time, so the REST route streams and the CLI
writes without holding the namespace in memory. Pages are separate reads: an export taken while
the namespace is being written reflects each page as it was read (sleep and forget take the
sleep lease; export does not block them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graph.clock import Clock
from graph.models import WakePacket
from graph.skills import SkillRun
from graph.transfer import ExportedTopic, TransferStore
from retrieval.embedding import Embedder
from service.export_format import (
    FORMAT,
    VERSION,
    EdgeRecord,
    EmbeddingInfo,
    EndRecord,
    EventRecord,
    Header,
    MessageRecord,
    SkillRunRecord,
    TopicRecord,
    WakePacketRecord,
    dump_line,
)

PAGE = 500


@dataclass(eq=False)
class ExportService:
    store: TransferStore
    embedder: Embedder
    clock: Clock

    def lines(self, namespace: str, vectors: bool = False) -> Iterator[str]:
        """The document, one line at a time: header, records, end (with the counts)."""
        counts = dict.fromkeys(("message", "topic", "event", "edge", "wake_packet", "skill_run"), 0)
        yield dump_line(
            Header(
                kind="header",
                format=FORMAT,
                version=VERSION,
                namespace=namespace,
                exported_at=self.clock.now(),
                embedding=EmbeddingInfo(
                    model=self.embedder.model_name, dimensions=self.embedder.dimensions
                ),
                vectors=vectors,
            )
        )
        for kind, line in self._records(namespace, vectors):
            counts[kind] += 1
            yield line
        yield dump_line(EndRecord(kind="end", counts=counts))

    def _records(self, namespace: str, vectors: bool) -> Iterator[tuple[str, str]]:
        for message in self._messages(namespace):
            yield "message", dump_line(message)
        for topic in self._topics(namespace, vectors):
            yield "topic", dump_line(topic)
        for event in self._events(namespace, vectors):
            yield "event", dump_line(event)
        for edge in self._edges(namespace):
            yield "edge", dump_line(edge)
        for packet in self.store.wake_packets(namespace):
            yield "wake_packet", dump_line(wake_packet_record(packet))
        for run in self._runs(namespace):
            yield "skill_run", dump_line(skill_run_record(run))

    def _messages(self, namespace: str) -> Iterator[MessageRecord]:
        after = -1
        while page := self.store.messages_page(namespace, after, PAGE):
            for m in page:
                yield MessageRecord(kind="message", **m.model_dump(exclude={"namespace"}))
            after = page[-1].seq if page[-1].seq is not None else after + len(page)

    def _topics(self, namespace: str, vectors: bool) -> Iterator[TopicRecord]:
        after = ""
        while page := self.store.topics_page(namespace, after, PAGE, vectors):
            yield from (topic_record(t) for t in page)
            after = page[-1].topic.topic_id

    def _events(self, namespace: str, vectors: bool) -> Iterator[EventRecord]:
        after = ""
        while page := self.store.events_page(namespace, after, PAGE, vectors):
            for event, vector in page:
                data = event.model_dump(exclude={"namespace"})
                yield EventRecord(kind="event", **data, vector=vector)
            after = page[-1][0].event_id

    def _edges(self, namespace: str) -> Iterator[EdgeRecord]:
        after: str | None = ""
        while after is not None:
            edges, after = self.store.edges_page(namespace, after, PAGE)
            for e in edges:
                yield EdgeRecord(kind="edge", **e.model_dump())

    def _runs(self, namespace: str) -> Iterator[SkillRun]:
        skip = 0
        while page := self.store.skill_runs_page(namespace, skip, PAGE):
            yield from page
            skip += len(page)


def topic_record(exported: ExportedTopic) -> TopicRecord:
    """A stored topic as an export line."""
    t = exported.topic
    return TopicRecord(
        kind="topic",
        topic_id=t.topic_id,
        name=t.name,
        one_liner=t.one_liner,
        aliases=t.aliases,
        facts=t.facts,
        numbers=t.numbers,
        open_loops=t.open_loops,
        time=t.time,
        skill_refs=t.links.skill_refs,
        artifact_refs=t.links.artifact_refs,
        stats=t.stats,
        embedding=t.embedding,
        version=t.version,
        archived_at=t.archived_at,
        mentioned_in=exported.mentioned_in,
        vector=exported.vector,
    )


def wake_packet_record(packet: WakePacket) -> WakePacketRecord:
    data = packet.model_dump(exclude={"namespace", "schema_version"})
    return WakePacketRecord(kind="wake_packet", **data)


def skill_run_record(run: SkillRun) -> SkillRunRecord:
    return SkillRunRecord(kind="skill_run", **run.model_dump(exclude={"namespace"}))
