"""SkillStore on the real Neo4j with the real MiniLM model: upsert, search, retire, runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from neo4j import Driver

from graph.models import Skill, Topic, parse
from graph.skills import SkillRun, SkillStore, SkillUpsert
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from tests.conftest import T0

SKILLS = [
    (
        "write_docs",
        "Write documentation",
        "Writes Markdown API docs for a Python module.",
        ["docs"],
    ),
    (
        "repo_refactor",
        "Refactor",
        "Renames a class or function across the repository.",
        ["refactor"],
    ),
    ("debug", "Debug", "Reads a stack trace and finds the failing code.", ["debug"]),
]


def make_skill(
    namespace: str, skill_id: str, name: str, description: str, tags: list[str]
) -> Skill:
    return Skill(
        skill_id=skill_id, namespace=namespace, name=name, description=description, tags=tags
    )


def upsert_all(store: SkillStore, embedder: MiniLMEmbedder, namespace: str) -> None:
    skills = [make_skill(namespace, *row) for row in SKILLS]
    vectors = embedder.embed([f"{s.name}. {s.description}" for s in skills])
    items = [
        SkillUpsert(s, v, f"h-{s.skill_id}", embedder.model_name)
        for s, v in zip(skills, vectors, strict=True)
    ]
    store.upsert(namespace, items, T0)


@pytest.fixture
def store(driver: Driver) -> SkillStore:
    return SkillStore(driver)


def make_topic(namespace: str, name: str) -> Topic:
    return parse(
        Topic,
        {"namespace": namespace, "name": name, "time": {"first_seen_at": T0, "last_seen_at": T0}},
    )


def test_vector_search_ranks_the_matching_skill_first_within_the_namespace(
    store: SkillStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    upsert_all(store, embedder, namespace)
    upsert_all(store, embedder, namespace + "-other")
    try:
        query = embedder.embed(["please document the parser module"])[0]
        hits = store.search_vector(namespace, query, k=3)
        assert hits[0].skill.skill_id == "write_docs"
        assert {h.skill.namespace for h in hits} == {namespace}
        assert len(hits) == 3
    finally:
        store._run("MATCH (s:Skill {namespace: $ns}) DETACH DELETE s", {"ns": namespace + "-other"})


def test_tags_search_and_upsert_is_idempotent_and_retire_hides_skills(
    store: SkillStore, embedder: MiniLMEmbedder, namespace: str
) -> None:
    upsert_all(store, embedder, namespace)
    upsert_all(store, embedder, namespace)  # same ids again: still three nodes
    assert [s.skill_id for s in store.list_skills(namespace)] == [
        "debug",
        "repo_refactor",
        "write_docs",
    ]
    hits = store.find_by_tags(namespace, ["Debug", "unknown"])
    assert [(h.skill.skill_id, h.matched_tags) for h in hits] == [("debug", ("debug",))]
    assert store.stored_hashes(namespace)["debug"][0] == "h-debug"

    retired = store.retire_missing(namespace, ["debug", "write_docs"], T0)
    assert retired == ["repo_refactor"]
    query = embedder.embed(["rename a class everywhere"])[0]
    assert "repo_refactor" not in [
        h.skill.skill_id for h in store.search_vector(namespace, query, k=3)
    ]
    assert len(store.list_skills(namespace, include_retired=True)) == 3


def test_successful_run_adds_two_utility_to_used_topics_of_its_namespace_only(
    store: SkillStore, embedder: MiniLMEmbedder, namespace: str, driver: Driver
) -> None:
    upsert_all(store, embedder, namespace)
    topics = TopicStore(driver)
    used, other = (
        make_topic(namespace, "KeyError in load_config"),
        make_topic(namespace + "-x", "x"),
    )
    topics.create([used], None, T0)
    topics.create([other], None, T0)
    try:
        run = SkillRun(
            namespace=namespace, skill_id="debug", outcome="success", started_at=T0,
            finished_at=T0 + timedelta(seconds=2), duration_ms=2000,
            topic_ids=[used.topic_id, other.topic_id, "missing"], tool_calls=["repo.read_file:ok"],
        )  # fmt: skip
        recorded = store.record_run(run)
        assert recorded.topic_ids == [used.topic_id]
        assert recorded.utilities == {used.topic_id: 2.0}
        after = topics.get_one(namespace, used.topic_id)
        assert after.stats.utility_score == 2.0 and after.version == 2
        assert topics.get_one(namespace + "-x", other.topic_id).stats.utility_score == 0.0

        failed = run.model_copy(update={"run_id": "r-failed", "outcome": "failed"})
        assert store.record_run(failed).utilities == {}
        assert topics.get_one(namespace, used.topic_id).stats.utility_score == 2.0

        runs = store.runs(namespace, "debug")
        assert {r.outcome for r in runs} == {"success", "failed"}
        links, _, _ = driver.execute_query(
            "MATCH (r:SkillRun {run_id: $id})-[:RUN_OF]->(s:Skill) "
            "MATCH (r)-[:USED_TOPIC]->(t:Topic) RETURN s.skill_id AS s, t.topic_id AS t",
            id=run.run_id,
        )
        assert [(r["s"], r["t"]) for r in links] == [("debug", used.topic_id)]
    finally:
        driver.execute_query("MATCH (n {namespace: $ns}) DETACH DELETE n", ns=namespace + "-x")


def test_a_run_keeps_the_callers_order_of_topics_whatever_order_neo4j_reads_them(
    store: SkillStore, namespace: str, driver: Driver
) -> None:
    topics = [make_topic(namespace, name) for name in ("first", "second", "third")]
    TopicStore(driver).create(topics, None, T0)
    ids = [t.topic_id for t in topics]
    # Neo4j reads the topics in one order (index or creation); one of these differs from it
    for order in (ids, ids[::-1], [ids[1], ids[2], ids[0]]):
        run = SkillRun(
            namespace=namespace, skill_id="debug", outcome="success", started_at=T0,
            finished_at=T0, duration_ms=1, topic_ids=[*order, order[0], "missing"],
        )  # fmt: skip
        assert store.record_run(run).topic_ids == order
        stored = {r.run_id: r for r in store.runs(namespace, "debug")}
        assert stored[run.run_id].topic_ids == order


def test_nested_runs_are_linked_to_the_run_that_started_them(
    store: SkillStore, namespace: str, driver: Driver
) -> None:
    base = {
        "namespace": namespace,
        "outcome": "success",
        "started_at": T0,
        "finished_at": T0,
        "duration_ms": 1,
    }
    child = SkillRun.model_validate({**base, "skill_id": "write_docs", "parent_run_id": "parent-1"})
    store.record_run(child)  # recorded first: the parent is still running
    store.record_run(
        SkillRun.model_validate({**base, "run_id": "parent-1", "skill_id": "plan_and_execute"})
    )
    records, _, _ = driver.execute_query(
        "MATCH (c:SkillRun)-[:PART_OF_RUN]->(p:SkillRun {run_id: 'parent-1', namespace: $ns}) "
        "RETURN c.run_id AS id",
        ns=namespace,
    )
    assert [r["id"] for r in records] == [child.run_id]
