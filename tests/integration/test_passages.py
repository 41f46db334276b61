"""Evidence found by meaning (graph/passages.py, retrieval/passage_index.py): real Neo4j, the
real MiniLM model. A message that shares no word with the question reaches the context once its
passages are written; forgetting it removes them; another namespace's never appear; an import
writes them again from the text as stored."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.db import drop_namespace
from graph.models import Message
from retrieval.context_result import ContextRequest
from retrieval.embedding import MiniLMEmbedder
from retrieval.passage_index import PassageIndexer

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUESTION = "What kind of pet do I own?"
# shares no content word (nor stem) with the question: only its meaning answers it
ANSWER = "My beagle Rex chews every slipper in the flat."
FILLER = [
    "The quarterly budget review moved to Thursday afternoon.",
    "I repainted the kitchen cabinets a pale green last weekend.",
    "Traffic on the ring road was terrible this morning.",
    "The printer on the third floor keeps jamming.",
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


def _append(c: Container, ns: str, texts: list[str]) -> list[Message]:
    msgs = [
        Message(namespace=ns, role="user", content=t, at=T0 + timedelta(minutes=i))
        for i, t in enumerate(texts)
    ]
    return c.messages.append(ns, msgs)


def _context(c: Container, ns: str) -> tuple[str, set[str]]:
    req = ContextRequest(
        namespace=ns, message=QUESTION, now=T0 + timedelta(days=1), budget=400, explicit=True
    )
    result = c.context.build(req)
    cited = {s for item in result.items for s in item["provenance"]["source_ids"]}
    return result.context_text, cited


def _passages(driver: Driver, ns: str) -> list[str]:
    rows, _, _ = driver.execute_query(
        "MATCH (p:Passage {namespace: $ns}) RETURN p.message_id AS id", ns=ns
    )
    return [r["id"] for r in rows]


def test_a_message_found_only_by_meaning_reaches_the_context(
    container: Container, driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    stored = _append(container, ns, [*FILLER, ANSWER])
    answer = stored[-1]
    text, cited = _context(container, ns)
    assert answer.message_id not in cited  # by its words alone it is not found
    assert container.passage_indexer.run(ns) == len(stored)
    assert container.passage_indexer.run(ns) == 0  # nothing is left pending
    text, cited = _context(container, ns)
    assert answer.message_id in cited
    assert "beagle Rex" in text


def test_forget_removes_a_messages_passages(
    container: Container, driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    stored = _append(container, ns, [*FILLER, ANSWER])
    container.passage_indexer.run(ns)
    answer = stored[-1]
    assert answer.message_id in _passages(driver, ns)
    container.services.forget.messages_by_id(ns, [answer.message_id])
    assert answer.message_id not in _passages(driver, ns)
    assert len(set(_passages(driver, ns))) == len(FILLER)
    _, cited = _context(container, ns)
    assert answer.message_id not in cited


def test_another_namespaces_passages_never_appear(
    container: Container, driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, other = spaces
    _append(container, ns, FILLER)
    theirs = _append(container, other, [ANSWER])
    container.passage_indexer.run(ns)
    container.passage_indexer.run(other)
    vector = container.embedder.embed([QUESTION])[0]
    found = container.passages.search(ns, vector, 50)
    assert found and all(h.message.namespace == ns for h in found)
    assert theirs[0].message_id not in {h.message.message_id for h in found}
    text, cited = _context(container, ns)
    assert theirs[0].message_id not in cited and "beagle" not in text


def test_passages_are_made_from_the_redacted_text(
    container: Container, driver: Driver, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    _append(container, ns, [f"My beagle's vet portal key is {secret} and it expires soon."])
    container.passage_indexer.run(ns)
    rows, _, _ = driver.execute_query(
        "MATCH (p:Passage {namespace: $ns}) RETURN p.text AS text", ns=ns
    )
    assert rows and all(secret not in r["text"] for r in rows)


def _as_before_passages(driver: Driver, ns: str) -> None:
    """``ns`` as a store written before passages existed: no message pending, and the cursor
    migration 021 gave every conversation it found."""
    driver.execute_query(
        "MATCH (m:Message {namespace: $ns}) REMOVE m.passages_pending "
        "WITH DISTINCT m.namespace AS ns MATCH (c:Conversation {namespace: ns}) "
        "SET c.passages_backfill_after = -1, c.passages_backfill_turns = 0",
        ns=ns,
    )


def _cursor(driver: Driver, ns: str) -> int | None:
    rows, _, _ = driver.execute_query(
        "MATCH (c:Conversation {namespace: $ns}) RETURN c.passages_backfill_after AS after", ns=ns
    )
    return rows[0]["after"]


def test_messages_stored_before_passages_are_backfilled_and_found_by_meaning(
    container: Container, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    ns, other = spaces
    stored = _append(container, ns, [*FILLER, ANSWER])
    _append(container, other, FILLER[:1])
    container.passage_indexer.run(other)  # the neighbour's passages are written already
    _as_before_passages(driver, ns)
    answer = stored[-1]
    assert container.passage_indexer.run(ns) == 0  # nothing pending: the old ones are missed
    assert answer.message_id not in _context(container, ns)[1]
    # bounded steps of two messages; the cursor is stored with each, so a new indexer (a
    # restarted worker) goes on where the last one stopped
    assert PassageIndexer(container.passages, embedder, batch=2).backfill_once(ns) == 2
    assert _cursor(driver, ns) == stored[1].seq
    assert _passages(driver, ns) == []  # marked pending, written by the indexer's next run
    steps = 0
    while True:
        indexer = PassageIndexer(container.passages, embedder, batch=2)
        if not (indexer.run_once(ns) or indexer.backfill_once(ns)):
            break
        steps += 1
    assert steps >= 3 and _cursor(driver, ns) is None  # the walk is over
    assert sorted(set(_passages(driver, ns))) == sorted(m.message_id for m in stored)
    text, cited = _context(container, ns)
    assert answer.message_id in cited and "beagle Rex" in text
    # idempotent: nothing is walked or written again
    before = sorted(_passages(driver, ns))
    assert container.passage_indexer.backfill_once(ns) == 0
    assert container.passage_indexer.run(ns) == 0
    assert sorted(_passages(driver, ns)) == before
    # forget covers a backfilled message's passages like any other's
    container.services.forget.messages_by_id(ns, [answer.message_id])
    assert answer.message_id not in _passages(driver, ns)


def test_a_walk_marks_only_messages_without_passages(
    container: Container, driver: Driver, embedder: MiniLMEmbedder, spaces: tuple[str, str]
) -> None:
    ns, _ = spaces
    stored = _append(container, ns, FILLER)
    container.passage_indexer.run(ns)
    written = sorted(_passages(driver, ns))
    _as_before_passages(driver, ns)  # a conversation with a cursor whose passages exist
    step = container.passages.backfill(ns, 100)
    assert step is not None and step.walked == len(stored) and step.marked == 0
    assert step.finished and _cursor(driver, ns) is None
    assert container.passage_indexer.run(ns) == 0 and sorted(_passages(driver, ns)) == written
