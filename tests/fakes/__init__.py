"""In-memory fakes of the stores, for unit tests of the pipelines (no Neo4j, no model).

Each fake implements its protocol of ``graph/protocols.py`` as the Neo4j store does (namespaces,
ordering by ``seq`` and time, time windows, leases with expiry, exact cosine search, term-match
full text, one atomic sleep commit); the fakes of one test share a ``FakeGraph`` as the real stores
share a database. ``tests/integration/test_store_contracts.py`` runs one table of operations
against both, so a fake cannot drift from its store unnoticed. ``tests/fakes/pipelines.py``
wires the pipelines on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.fakes.context import FakeContextStore
from tests.fakes.embedder import DownEmbedder, HashEmbedder
from tests.fakes.events import FakeEventStore
from tests.fakes.graph import FakeGraph
from tests.fakes.messages import FakeMessageStore
from tests.fakes.sleep import FakeSleepStore
from tests.fakes.sleep_queue import FakeSleepQueue
from tests.fakes.topics import FakeTopicStore


@dataclass
class FakeStores:
    """One fake of each store over one shared ``FakeGraph``."""

    graph: FakeGraph = field(default_factory=FakeGraph)

    def __post_init__(self) -> None:
        self.messages = FakeMessageStore(self.graph)
        self.topics = FakeTopicStore(self.graph)
        self.events = FakeEventStore(self.graph)
        self.sleep = FakeSleepStore(self.graph)
        self.queue = FakeSleepQueue(self.graph)
        self.context = FakeContextStore(self.graph)


__all__ = [
    "DownEmbedder",
    "FakeContextStore",
    "FakeEventStore",
    "FakeGraph",
    "FakeMessageStore",
    "FakeSleepQueue",
    "FakeSleepStore",
    "FakeStores",
    "FakeTopicStore",
    "HashEmbedder",
]
