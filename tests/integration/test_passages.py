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
