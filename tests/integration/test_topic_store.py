"""TopicStore against the real Neo4j and the real all-MiniLM-L6-v2 model."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from neo4j import Driver

from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.models import EdgeType, EmbeddingMeta, Fact, Topic, parse
from graph.topics import LinkRequest, TopicStore
from retrieval.embedding import MiniLMEmbedder, text_hash
from tests.conftest import T0
from tests.integration.corpus import PARAPHRASES, TOPICS


def make_topic(namespace: str, name: str, one_liner: str, days: int = 0, **extra: object) -> Topic:
    at = T0 + timedelta(days=days)
    data: dict[str, object] = {
        "namespace": namespace,
        "name": name,
        "one_liner": one_liner,
        "time": {"first_seen_at": at, "last_seen_at": at},
    }
    data.update(extra)
    return parse(Topic, data)


def store_corpus(store: TopicStore, embedder: MiniLMEmbedder, namespace: str) -> dict[str, str]:
    topics = [
        make_topic(namespace, name, line, days=i % 20, aliases=[name.lower()])
        for i, (name, line) in enumerate(TOPICS)
    ]
    vectors = embedder.embed([t.semantic_text() for t in topics])
    store.create(topics, vectors, T0)
    return {t.name: t.topic_id for t in topics}


@pytest.fixture
def store(driver: Driver) -> TopicStore:
    return TopicStore(driver)


def test_vector_search_finds_the_nearest_topic_for_paraphrases(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    ids = store_corpus(store, embedder, namespace)
    assert len(ids) >= 50
    vectors = embedder.embed([q for q, _ in PARAPHRASES])
    for (question, expected), vector in zip(PARAPHRASES, vectors, strict=True):
        hits = store.search_vector(namespace, vector, k=3)
        assert hits[0].topic.name == expected, (question, [h.topic.name for h in hits])
        assert hits[0].score >= hits[-1].score


def test_vector_search_filters_by_time_window(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    store_corpus(store, embedder, namespace)
    vector = embedder.embed(["anything about home and family"])[0]
    since, until = T0 + timedelta(days=5), T0 + timedelta(days=8)
    hits = store.search_vector(namespace, vector, k=50, since=since, until=until)
    assert hits, "the window holds topics"
    for hit in hits:
        assert hit.topic.time.last_seen_at >= since and hit.topic.time.first_seen_at < until
    with pytest.raises(ValidationFailed, match="empty"):
        store.search_vector(namespace, vector, since=until, until=since)


def test_small_namespace_is_found_in_a_large_index(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str, driver: Driver
) -> None:
    store_corpus(store, embedder, namespace)  # 50 near topics in another namespace
    other = namespace + "-small"
    try:
        topic = make_topic(other, "Party planning", "Planning a birthday party by the lake.")
        store.create([topic], embedder.embed([topic.semantic_text()]), T0)
        hits = store.search_vector(other, embedder.embed(["lake party"])[0], k=5, overfetch=1)
        assert [h.topic.topic_id for h in hits] == [topic.topic_id]
        assert hits[0].source == "vector-scan"  # a namespace this small is scored exactly
    finally:
        driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=other)


def test_alias_lookup_and_near_miss_spelling(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    ids = store_corpus(store, embedder, namespace)
    store.merge(
        namespace,
        ids["Party planning"],
        lambda t: (t.model_copy(update={"aliases": [*t.aliases, "Mel's 40th"]}), None),
        T0,
    )
    assert [t.name for t in store.find_by_alias(namespace, "MEL'S 40TH")] == ["Party planning"]
    assert [t.name for t in store.find_by_alias(namespace, "party planning")] == ["Party planning"]
    assert store.find_by_alias(namespace, "mels 40") == []
    hits = store.search_text(namespace, "sourdugh bakng")  # two typos
    assert hits[0].topic.name == "Sourdough baking"
    hits = store.search_text(namespace, "marathn")
    assert hits[0].topic.name == "Marathon training"


def test_full_text_finds_nothing_for_words_no_topic_holds(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    """The query is confined to the namespace by a clause of its own: a topic matching that
    clause only (none of the query's words) is not a hit."""
    store_corpus(store, embedder, namespace)
    assert store.search_text(namespace, "zzyzx qwertyuiop") == []
    assert store.search_text(namespace, "zzyzx qwertyuiop", fuzzy=False) == []


def test_create_get_update_with_version_check(store: TopicStore, namespace: str) -> None:
    topic = make_topic(namespace, "Billing migration", "Moving billing tables to Postgres.")
    store.create([topic], None, T0)
    got = store.get_one(namespace, topic.topic_id)
    assert got.version == 1 and got.one_liner == topic.one_liner
    changed = got.model_copy(
        update={"facts": [Fact(text="invoices table is next", source_message_ids=["m7"])]}
    )
    assert store.update(changed, None, T0, expected_version=1) == 2
    with pytest.raises(VersionConflict, match="version 2, expected 1"):
        store.update(changed, None, T0, expected_version=1)
    with pytest.raises(NotFound):
        store.update(changed.model_copy(update={"topic_id": "nope"}), None, T0, 1)
    with pytest.raises(ValidationFailed, match="already exists"):
        store.create([topic], None, T0)
    assert store.get_one(namespace, topic.topic_id).facts[0].source_message_ids == ["m7"]


def test_concurrent_merges_lose_no_update(store: TopicStore, namespace: str) -> None:
    # a read racing a commit can mix two versions of the node (lock_topic.cypher): merge reads
    # under the write lock, else about one run in fifty lost an increment here
    topic = make_topic(namespace, "Counter", "A topic touched by many writers.")
    store.create([topic], None, T0)
    errors: list[BaseException] = []

    def touch() -> None:
        try:
            touch_five_times()
        except BaseException as exc:  # a thread's exception is otherwise only printed
            errors.append(exc)

    def touch_five_times() -> None:
        for _ in range(5):
            store.merge(
                namespace,
                topic.topic_id,
                lambda t: (
                    t.model_copy(
                        update={
                            "stats": t.stats.model_copy(
                                update={"touch_count": t.stats.touch_count + 1}
                            )
                        }
                    ),
                    None,
                ),
                T0,
                attempts=100,
            )

    threads = [threading.Thread(target=touch) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    final = store.get_one(namespace, topic.topic_id)
    assert final.stats.touch_count == 20
    assert final.version == 21


def test_link_accumulates_weight_and_neighbours_filter_by_type(
    store: TopicStore, namespace: str
) -> None:
    a, b, c = (make_topic(namespace, n, f"{n} one-liner") for n in ("A", "B", "C"))
    store.create([a, b, c], None, T0)
    store.link(namespace, [LinkRequest(a.topic_id, b.topic_id, EdgeType.RELATES_TO, 0.5)], T0)
    edges = store.link(
        namespace,
        [
            LinkRequest(a.topic_id, b.topic_id, EdgeType.RELATES_TO, 0.25),
            LinkRequest(a.topic_id, c.topic_id, EdgeType.DEPENDS_ON, 1.0),
        ],
        T0 + timedelta(hours=1),
    )
    by_type = {e.type: e for e in edges}
    assert by_type[EdgeType.RELATES_TO].weight == pytest.approx(0.75)
    assert by_type[EdgeType.RELATES_TO].last_updated_at == T0 + timedelta(hours=1)
    related = store.neighbours(namespace, [a.topic_id], [EdgeType.RELATES_TO])
    assert [n.topic.name for n in related] == ["B"]
    both = store.neighbours(namespace, [a.topic_id], ["relates_to", "DEPENDS_ON"])
    assert {n.topic.name for n in both} == {"B", "C"}
    assert store.get_one(namespace, a.topic_id).links.related_topic_ids == [b.topic_id]
    with pytest.raises(ValidationFailed, match="unknown edge type"):
        store.link(namespace, [LinkRequest(a.topic_id, b.topic_id, "LIKES", 1.0)], T0)  # type: ignore[arg-type]
    assert len(store.edges(namespace, a.topic_id)) == 2  # the refused link wrote nothing


def test_soft_archive_hides_from_search_but_keeps_the_node(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    topic = make_topic(namespace, "Roof leak", "The roof leaks in heavy rain.", aliases=["roof"])
    store.create([topic], embedder.embed([topic.semantic_text()]), T0)
    store.archive(namespace, topic.topic_id, T0)
    assert store.search_text(namespace, "roof") == []
    assert store.search_vector(namespace, embedder.embed(["roof leak"])[0]) == []
    assert store.find_by_alias(namespace, "roof") == []
    kept = store.get_one(namespace, topic.topic_id)
    assert kept.archived_at == T0
    assert (
        store.find_by_alias(namespace, "roof", include_archived=True)[0].topic_id == topic.topic_id
    )


INJECTION = "x'}) MATCH (n) DETACH DELETE n //\" OR 1=1; DROP INDEX topic_embedding_ns"


def test_cypher_injection_is_stored_as_inert_text(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str, driver: Driver
) -> None:
    # counted in this namespace and by a bystander node, not over the whole database: other
    # tests write while this one runs (a global count failed under concurrent writers)
    bystander, _, _ = driver.execute_query(
        "CREATE (b:InjectionBystander {namespace: $ns + '-b'}) RETURN elementId(b) AS id",
        ns=namespace,
    )
    topic = make_topic(namespace, INJECTION[:200], INJECTION, aliases=[INJECTION[:200]])
    store.create([topic], embedder.embed([topic.semantic_text()]), T0)
    got = store.get_one(namespace, topic.topic_id)
    assert got.name == INJECTION[:200] and got.one_liner == INJECTION
    assert store.find_by_alias(namespace, INJECTION[:200])[0].topic_id == topic.topic_id
    store.search_text(namespace, INJECTION)  # escaped, runs, returns whatever matches
    mine, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN collect(labels(n)[0]) AS c", ns=namespace
    )
    # the topic and its namespace's stamp (graph/topic_vectors.py), nothing else created
    assert sorted(mine[0]["c"]) == ["Topic", "TopicStamp"]
    still, _, _ = driver.execute_query(
        "MATCH (b:InjectionBystander) WHERE elementId(b) = $id DETACH DELETE b RETURN count(*) AS c",
        id=bystander[0]["id"],
    )
    assert still[0]["c"] == 1  # the text deleted nothing outside the namespace either
    indexes, _, _ = driver.execute_query("SHOW INDEXES YIELD name RETURN collect(name) AS n")
    assert "topic_embedding_ns" in indexes[0]["n"]


def test_no_store_method_crosses_namespaces(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str, driver: Driver
) -> None:
    other = namespace + "-b"
    try:
        a1 = make_topic(namespace, "Secret plan", "The secret plan of namespace A.", aliases=["sp"])
        a2 = make_topic(namespace, "Other plan", "Another plan of namespace A.")
        vectors = embedder.embed([a1.semantic_text(), a2.semantic_text()])
        store.create([a1, a2], vectors, T0)
        store.link(namespace, [LinkRequest(a1.topic_id, a2.topic_id, EdgeType.RELATES_TO)], T0)
        vec = vectors[0]
        assert store.get(other, [a1.topic_id, a2.topic_id]) == []
        with pytest.raises(NotFound):
            store.get_one(other, a1.topic_id)
        assert store.find_by_alias(other, "sp") == []
        assert store.search_text(other, "secret plan") == []
        assert store.search_vector(other, vec, k=5) == []
        assert store.neighbours(other, [a1.topic_id]) == []
        assert store.edges(other, a1.topic_id) == []
        with pytest.raises(NotFound):
            store.update(a1.model_copy(update={"namespace": other}), None, T0, 1)
        with pytest.raises(NotFound):
            store.archive(other, a1.topic_id, T0)
        assert store.link(other, [LinkRequest(a1.topic_id, a2.topic_id, EdgeType.NEXT)], T0) == []
        assert store.get_one(namespace, a1.topic_id).archived_at is None
    finally:
        driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=other)


def test_embedding_metadata_is_kept(
    store: TopicStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    topic = make_topic(namespace, "Dog adoption", "Adopting a beagle.")
    topic.embedding = EmbeddingMeta(
        model=embedder.model_name, hash=text_hash(topic.semantic_text()), dimensions=384
    )
    store.create([topic], embedder.embed([topic.semantic_text()]), T0)
    got = store.get_one(namespace, topic.topic_id)
    assert got.embedding is not None and got.embedding.model.endswith("all-MiniLM-L6-v2")
    assert got.embedding.hash == text_hash(topic.semantic_text())
