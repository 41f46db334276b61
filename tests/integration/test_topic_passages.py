"""A topic's facts found by meaning (``PassageStore.search_within``,
``search_topic_passages.cypher``): real Neo4j, the real MiniLM model. The passages of the messages
the given topics cite, nearest a question, and nothing else: not another topic's, not another
namespace's, not a message said after ``until``; a topic citing more messages than
``SCOPED_PER_TOPIC`` gives its newest. And the context uses them: a fact of the best topic
that shares no word with the question reaches it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

import graph.passages as passages_module
from api.container import Container
from api.settings import Settings
from graph.context import ContextTopics
from graph.cypher import query as cypher
from graph.db import drop_namespace
from graph.models import Message, Topic, parse
from retrieval.config import ContextConfig
from retrieval.context import ContextBuilder
from retrieval.context_result import ContextRequest
from retrieval.embedding import MiniLMEmbedder
from tests.fakes.context import read_apart

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUESTION = "What kind of pet do I own?"
ANSWER = "My beagle Rex chews every slipper in the flat."  # no word of the question
DOGS = [ANSWER, "We walk along the canal before breakfast.", "The vet said he is healthy."]
WORK = [
    "The quarterly budget review moved to Thursday afternoon.",
    "My cat-themed mug broke at the office.",  # near the question, but another topic's
]


@pytest.fixture(scope="module")
def container(settings: Settings, driver: Driver, embedder: MiniLMEmbedder) -> Container:
    return Container(
        settings.model_copy(update={"extractor": "deterministic"}), driver=driver, embedder=embedder
    )


@pytest.fixture
def spaces(driver: Driver, namespace: str, other_namespace: str) -> Iterator[tuple[str, str]]:
    yield namespace, other_namespace
    for ns in (namespace, other_namespace):
        drop_namespace(driver, ns)


def _said(c: Container, ns: str, texts: list[str], start: int = 0) -> list[Message]:
    msgs = [
        Message(namespace=ns, role="user", content=t, at=T0 + timedelta(minutes=start + i))
        for i, t in enumerate(texts)
    ]
    stored = c.messages.append(ns, msgs)
    c.passage_indexer.run(ns)
    return stored


def _topic(
    c: Container, driver: Driver, ns: str, key: str, cited: list[Message], one_liner: str = ""
) -> str:
    topic = parse(Topic, {
        "topic_id": f"{ns}-{key}", "namespace": ns, "name": key, "one_liner": one_liner,
        "facts": [{"text": m.content, "source_message_ids": [m.message_id], "at": m.at}
                  for m in cited],
        "time": {"first_seen_at": T0, "last_seen_at": T0 + timedelta(hours=1)},
    })  # fmt: skip
    c.topics.create([topic], [None], T0)
    driver.execute_query(
        cypher("link_topic_messages"),
        {"namespace": ns, "rows": [{"topic_id": topic.topic_id,
                                    "message_ids": [m.message_id for m in cited]}]},
    )  # fmt: skip
    return topic.topic_id


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.message.message_id for h in hits]


def test_only_the_given_topics_messages_are_searched(
    container: Container, driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, other = spaces
    dogs = _said(container, ns, DOGS)
    work = _said(container, ns, WORK, start=10)
    theirs = _said(container, other, DOGS + WORK)
    dog_topic = _topic(container, driver, ns, "dogs", dogs)
    _topic(container, driver, ns, "work", work)
    _topic(container, driver, other, "dogs", theirs)
    vector = container.embedder.embed([QUESTION])[0]

    found = container.passages.search_within(ns, [dog_topic], vector, 10)
    assert set(_ids(found)) == {m.message_id for m in dogs}  # work's and theirs never
    assert found[0].message.message_id == dogs[0].message_id  # the answer, by meaning
    assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)
    assert all(h.topics == ((dog_topic, "dogs"),) for h in found)
    assert container.passages.search_within(ns, [dog_topic], vector, 1)[0].passages == (ANSWER,)
    # nothing said before the first message; no topic, no search; another tenant's id, nothing
    assert container.passages.search_within(ns, [dog_topic], vector, 10, until=T0) == []
    assert container.passages.search_within(ns, [], vector, 10) == []
    assert container.passages.search_within(ns, [f"{other}-dogs"], vector, 10) == []


def test_a_long_topic_gives_its_newest_messages(
    container: Container, driver: Driver, spaces: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ns, _ = spaces
    dogs = _said(container, ns, DOGS)
    tid = _topic(container, driver, ns, "dogs", dogs)
    vector = container.embedder.embed([QUESTION])[0]
    monkeypatch.setattr(passages_module, "SCOPED_PER_TOPIC", 2)
    found = container.passages.search_within(ns, [tid], vector, 10)
    assert set(_ids(found)) == {m.message_id for m in dogs[1:]}  # the answer is the oldest


def test_the_best_topics_fact_reaches_the_context(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    """The dog's turns, the answer among them, and other talk about pet dogs in no topic: the
    namespace's nearest passages (three here) are the other talk's, nearer the question than
    the answer; the dog topic's own passages hold the answer."""
    ns, _ = spaces
    seen = {}
    for scoped in (0, 10):
        cfg = settings.retrieval.model_copy(update={"context": ContextConfig(
            scoped_topics=3 if scoped else 0, scoped_evidence=scoped, dense_evidence=3,
        )})  # fmt: skip
        c = Container(
            settings.model_copy(update={"extractor": "deterministic", "retrieval": cfg}),
            driver=driver, embedder=embedder,
        )  # fmt: skip
        if not scoped:
            near = [  # nearer the question than the answer, in no topic
                "I am thinking about getting a pet dog.",
                "Which pet dog is easiest to keep?",
                "My neighbour has a pet dog too.",
                "A pet dog needs a lot of walks.",
                "Is a pet dog good for a small flat?",
            ]
            filler = near + [f"Note {i}: the train was late again today." for i in range(30)]
            dogs = _said(c, ns, DOGS)
            _said(c, ns, filler, start=10)
            _topic(c, driver, ns, "pet dog", dogs)
        req = ContextRequest(
            namespace=ns, message="Tell me about my pet dog", now=T0 + timedelta(days=1),
            budget=400, explicit=True,
        )  # fmt: skip
        result = c.context.build(req)
        seen[scoped] = {s for item in result.items for s in item["provenance"]["source_ids"]}
    answer = dogs[0].message_id
    assert answer not in seen[0]  # the control: by words and the namespace-wide search, not
    assert answer in seen[10]


def test_a_large_best_topics_answer_past_its_80_nearest_reaches_the_context(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    """A topic of 100 turns, 99 of them nearer the question than the one that answers it in
    other words: the best 80 of its passages (the setting before) hold no answer, the default
    best ``scoped_evidence`` (320) do, and the context cites it (a budget that holds every
    line: what is tested is what the search finds, not the packing)."""
    ns, _ = spaces
    near = [f"My pet dog learned trick number {i} today." for i in range(99)]
    assert ContextConfig().scoped_evidence > len(near) + 1 > 80
    seen = {}
    for scoped in (80, ContextConfig().scoped_evidence):
        cfg = settings.retrieval.model_copy(
            update={"context": ContextConfig(scoped_evidence=scoped)}
        )
        c = Container(
            settings.model_copy(update={"extractor": "deterministic", "retrieval": cfg}),
            driver=driver, embedder=embedder,
        )  # fmt: skip
        if scoped == 80:
            said = _said(c, ns, [ANSWER, *near])
            _topic(c, driver, ns, "pet dog", said)
        req = ContextRequest(
            namespace=ns, message="Tell me about my pet dog", now=T0 + timedelta(days=1),
            budget=8000, explicit=True,
        )  # fmt: skip
        result = c.context.build(req)
        seen[scoped] = {s for item in result.items for s in item["provenance"]["source_ids"]}
    answer = said[0].message_id
    assert answer not in seen[80]  # the control: its 80 nearest are the tricks
    assert answer in seen[ContextConfig().scoped_evidence]


class _Apart:
    """The context's own store, its topics and their passages read as before they were one
    query: the passages, then the topics (``tests.fakes.context.read_apart``); writes left
    out, so that two builders over one memory see the same stored state."""

    def __init__(self, container: Container, apart: bool) -> None:
        self._c, self._apart = container, apart

    def read_topics(self, namespace: str, *args: Any) -> ContextTopics:
        c = self._c
        if self._apart:
            return read_apart(c.topics, c.passages, namespace, *args)
        return c.context.reads.read_topics(namespace, *args)

    def finish(self, *args: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._c.context.reads, name)


def test_the_topics_and_their_passages_read_together_answer_as_read_apart(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    """``read_context_topics`` (the best topics' passages and every topic the context shows,
    one query) builds the context the two reads in a row built: the same items, order,
    scores, text and trace. The best topic's own passages bring the answer, and with it a
    topic no search ranked (the answer's other topic, reached through that passage alone),
    shown from its brief: read in the same query."""
    ns, _ = spaces
    cfg = settings.retrieval.model_copy(update={"context": ContextConfig(
        light_topics=1, deep_topics=1, scoped_topics=1, scoped_evidence=10, dense_evidence=3,
    )})  # fmt: skip
    c = Container(
        settings.model_copy(update={"extractor": "deterministic", "retrieval": cfg}),
        driver=driver, embedder=embedder,
    )  # fmt: skip
    near = [f"A pet dog needs {w}." for w in ("walks", "a vet", "toys", "a bed", "patience")]
    dogs = _said(c, ns, DOGS)
    _said(c, ns, near + [f"Note {i}: the train was late again today." for i in range(30)], 10)
    _topic(c, driver, ns, "pet dog", dogs)
    # the answer's other topic, its one-liner quoting it (citable, so the context shows it)
    rex = _topic(c, driver, ns, "chewed slippers", dogs[:1], one_liner=ANSWER)
    built = {}
    for apart in (False, True):
        builder = ContextBuilder(
            c.topics, c.messages, c.search, _Apart(c, apart), c.settings.timezone,  # type: ignore[arg-type]
            config=c.settings.retrieval, passages=c.passages,
        )  # fmt: skip
        req = ContextRequest(
            namespace=ns, message="Tell me about my pet dog", now=T0 + timedelta(days=1),
            budget=400,
        )  # fmt: skip
        built[apart] = builder.build(req).model_dump(exclude={"timings_ms"})
    assert built[False] == built[True]
    items = {i["record_id"]: i for i in built[False]["items"]}
    shown = {s for i in built[False]["items"] for s in i["provenance"]["source_ids"]}
    assert dogs[0].message_id in shown  # the answer, through the best topic's passages
    assert items[rex]["reason_label"] == "conversation_match"
    assert items[rex]["freshness"]["first_seen_at"]  # its dates: described from its brief
