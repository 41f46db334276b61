"""The facts' signal of topic search (``retrieval/fact_rank.py``) reads only the asking namespace:
its candidates' whole topics, the passages of the messages they cite (exact cosines, no index)
and BM25 over those candidates' facts. Alice asks about a fact of her large topic; then bob, in
another namespace, stores the same conversation many times over (the same speakers, the same
words, passages with the same vectors) and topics of the same facts. Alice's hits, their order
and every score component, the fact signal included, are the same before and after."""

from __future__ import annotations

from neo4j import Driver

from api.container import Container
from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.test_fact_signal import (
    ANSWER,
    CHAT,
    LAB,
    NOW,
    OTHERS,
    QUESTION,
    _said,
    _topic,
)


def _memory(c: Container, driver: Driver, ns: str, copies: int = 1) -> None:
    for n in range(copies):
        start = 100 * n
        said = _said(c, ns, "Caroline", [*CHAT, ANSWER], start)
        _topic(c, driver, ns, f"Caroline's week {n}" if n else "Caroline's week", "c", said)
        lab = _said(c, ns, "Melanie", LAB, start + 40)
        _topic(c, driver, ns, f"research lab tour {n}" if n else "research lab tour", "lab", lab)
    for i, (name, line, texts) in enumerate(OTHERS):
        _topic(c, driver, ns, name, line, _said(c, ns, "Melanie", texts, 500 + 5 * i))


def _answer(c: Container, ns: str) -> list[tuple[str, dict[str, float]]]:
    hits = c.search.run(ns, QUESTION, NOW, k=5).hits
    return [(h.topic.topic_id.removeprefix(ns), h.components) for h in hits]


def test_another_tenant_changes_nothing_the_facts_signal_reads(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
) -> None:
    c = Container(
        settings.model_copy(update={"extractor": "deterministic"}), driver=driver, embedder=embedder
    )
    _memory(c, driver, namespace)
    before = _answer(c, namespace)
    assert any("fact_signal" in parts for _, parts in before)  # the signal was read

    _memory(c, driver, other_namespace, copies=4)  # bob: the same words, vectors and speakers
    after = _answer(c, namespace)
    assert after == before
