"""The pipelines wired on the fakes, as ``api/container.py`` wires them on Neo4j.

Passing the fakes to the protocol-typed constructors here is also the static check that every
fake satisfies its protocol (mypy runs over ``tests/fakes``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from graph.clock import FixedClock
from retrieval.context import ContextBuilder
from retrieval.embedding import Embedder
from retrieval.search import TopicSearch
from service.windows import WindowResolver
from sleepwake.config import SleepConfig
from sleepwake.conversation import Conversation, IncomingMessage
from sleepwake.policy import SleepPolicy
from sleepwake.sleep import Sleeper
from sleepwake.wake import Waker
from tests.fakes import FakeStores, FakeTopicStore, HashEmbedder
from text.timephrases import SleepHistory

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday


@dataclass
class Memory:
    """One namespace's memory on fakes: the stores, a fixed clock and every pipeline."""

    namespace: str
    stores: FakeStores
    clock: FixedClock
    embedder: Embedder
    sleeper: Sleeper
    conversation: Conversation
    search: TopicSearch
    waker: Waker
    context: ContextBuilder

    @property
    def topics(self) -> FakeTopicStore:
        return self.stores.topics

    def say(self, at: datetime, *turns: tuple[str, str], auto_sleep: bool = False) -> None:
        """Append turns one minute apart from ``at`` (no policy sleep unless asked)."""
        items = [
            IncomingMessage.model_validate(
                {"role": role, "content": text, "at": at + timedelta(minutes=i)}
            )
            for i, (role, text) in enumerate(turns)
        ]
        self.conversation.append(self.namespace, items, auto_sleep=auto_sleep)


def sleep_history(stores: FakeStores) -> Callable[[str], SleepHistory]:
    """Sleep times for time phrases, from the newest wake packet (the product's resolver)."""
    return WindowResolver(stores.sleep).history


def wire(
    policy: SleepPolicy | None = None,
    *,
    namespace: str = "unit",
    start: datetime = T0,
    embedder: Embedder | None = None,
    stores: FakeStores | None = None,
    config: SleepConfig | None = None,
) -> Memory:
    """Every pipeline over fresh fakes (or ``stores``), with a clock fixed at ``start``; the
    sleep lease is read off the same clock. ``config``: the sleep's (its policy for all)."""
    stores = stores if stores is not None else FakeStores()
    config = config or SleepConfig(policy=policy or SleepPolicy())
    policy = config.policy
    embedder = embedder if embedder is not None else HashEmbedder()
    clock = FixedClock(start)
    sleeper = Sleeper(stores.messages, stores.sleep, embedder, config=config, lease_clock=clock)
    search = TopicSearch(stores.topics, stores.events, embedder)
    return Memory(
        namespace=namespace,
        stores=stores,
        clock=clock,
        embedder=embedder,
        sleeper=sleeper,
        conversation=Conversation(stores.messages, sleeper, clock, policy),
        search=search,
        waker=Waker(stores.sleep, stores.messages, search, policy),
        context=ContextBuilder(
            stores.topics, stores.messages, search, stores.context
        ),  # the reads before the search in one call, as the composition root wires it
    )
