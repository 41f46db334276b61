"""The sleep's faster paths against real Neo4j and the real model: the exact match scan still
returns the exact nearest topics, one statement writes every edge type (and strengthens them on
the next sleep), an event of a new topic gets the topic's vector without sending it twice, the
policy's buffer figures equal the buffer, and the embedding cache returns what the model
computes."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from neo4j import Driver

from graph.models import EdgeType, Message, TopicEvent
from graph.sleep import SleepCommit, SleepStore, TopicWrite, _event_rows
from graph.topics import LinkRequest, TopicStore
from retrieval.embedding import MiniLMEmbedder, cache_scope
from tests.conftest import T0
from tests.integration.corpus import TOPICS
from tests.integration.stores import CompactingMessageStore
from tests.integration.test_topic_store import make_topic, store_corpus


def test_the_exact_scan_returns_the_true_nearest_topics_and_exact_names(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    ids = store_corpus(TopicStore(driver), embedder, namespace)
    queries = ["moving the invoices database", "the team offsite", "Nginx"]
    vectors = embedder.embed(queries)
    rows = [
        {"idx": i, "vector": v, "names": [q.lower()]}
        for i, (q, v) in enumerate(zip(queries, vectors, strict=True))
    ]
    hits = SleepStore(driver).match_pool(namespace, rows, k=5)
    topic_vectors = dict(
        # the exact neighbours of the vectors stored: each topic's semantic text, as store_corpus
        zip(
            ids.values(),
            embedder.embed(
                [
                    make_topic(namespace, n, line, aliases=[n.lower()]).semantic_text()
                    for n, line in TOPICS
                ]
            ),
            strict=True,
        )
    )
    for i, vector in enumerate(vectors):
        exact = sorted(topic_vectors, key=lambda t: -float(np.dot(topic_vectors[t], vector)))[:5]
        got = {h.fields.topic_id: h.cosine for h in hits if h.idx == i}
        assert set(exact) <= set(got)
        for tid in exact:
            assert abs(got[tid] - float(np.dot(topic_vectors[tid], vector))) < 1e-5


def test_one_statement_writes_every_edge_type_and_adds_up_weights(
    driver: Driver, namespace: str
) -> None:
    topics = [make_topic(namespace, f"topic {i}", f"line {i}") for i in range(2)]
    TopicStore(driver).create(topics, None, T0)
    a, b = (t.topic_id for t in topics)
    store = SleepStore(driver)
    links = [LinkRequest(a, b, etype, 0.5) for etype in EdgeType]
    store.commit(SleepCommit(namespace=namespace, now=T0, links=links))
    store.commit(SleepCommit(namespace=namespace, now=T0 + timedelta(days=1), links=links))
    edges = TopicStore(driver).edges(namespace, a)
    weights = {e.type: e.weight for e in edges if e.from_topic_id == a and e.to_topic_id == b}
    assert weights == dict.fromkeys(EdgeType, 1.0)
    assert {e.last_updated_at for e in edges} == {T0 + timedelta(days=1)}


def test_buffer_stats_match_the_buffer(driver: Driver, namespace: str) -> None:
    store = CompactingMessageStore(driver)
    assert (store.buffer_stats(namespace).messages, store.buffer_stats(namespace).last_at) == (
        0,
        None,
    )
    messages = [
        Message(
            namespace=namespace,
            role="user",
            content="x" * (10 * (i + 1)),
            at=T0 + timedelta(minutes=i),
            token_estimate=(10 * (i + 1) + 3) // 4,
        )
        for i in range(6)
    ]
    written = store.append(namespace, messages)
    store.mark_compacted(namespace, [m.message_id for m in written[:2]], T0 + timedelta(hours=1))
    buffer = store.buffer(namespace)
    stats = store.buffer_stats(namespace)
    assert stats.messages == len(buffer) == 4
    assert stats.tokens == sum(m.token_estimate for m in buffer)
    assert stats.last_at == buffer[-1].at


def test_cached_vectors_equal_what_the_model_computes(embedder: MiniLMEmbedder) -> None:
    texts = ["Caroline went to the LGBTQ support group.", "Melanie paints sunsets.", "  "]
    with cache_scope("cached-vectors"):  # the cache keeps a namespace's texts only
        first = embedder.embed(texts)
        hits = embedder.cache.hits
        again = embedder.embed(list(reversed(texts)))
    assert embedder.cache.hits == hits + 3
    assert again == list(reversed(first))
    raw = embedder._model.encode(texts[:2])  # the runtime returns unit-length float32 rows
    assert np.allclose(np.asarray(first[:2]), raw, atol=1e-6)


def test_an_event_of_a_created_topic_gets_the_topic_vector_without_resending_it(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    new, old = (make_topic(namespace, f"topic {i}", f"line {i}") for i in range(2))
    TopicStore(driver).create([old], None, T0)
    v_new, v_event = embedder.embed(["a new topic", "an update of an old topic"])
    events = [
        TopicEvent(
            namespace=namespace,
            topic_id=t.topic_id,
            at=T0,
            delta_summary="x",
            source_message_ids=[],
        )
        for t in (new, old)
    ]
    plan = SleepCommit(
        namespace=namespace,
        now=T0,
        topics=[TopicWrite(new, v_new, None)],
        events=[(events[0], list(v_new)), (events[1], v_event)],
    )
    rows = _event_rows(plan, plan.topics)
    assert [r["topic_vector"] for r in rows] == [True, False]
    assert rows[0]["embedding"] is None and rows[1]["embedding"] is not None
    SleepStore(driver).commit(plan)
    records, _, _ = driver.execute_query(
        "MATCH (e:TopicEvent {namespace: $ns}) RETURN e.topic_id AS t, e.embedding AS v",
        ns=namespace,
    )
    stored = {r["t"]: r["v"] for r in records}
    assert np.allclose(stored[new.topic_id], v_new) and np.allclose(stored[old.topic_id], v_event)
