"""The skill store's cached vectors on the real Neo4j (docs/performance.md, fifth pass): skill
routing ranks a namespace's few skills in process under a stamp read with the context's first
query. Two stores stand for two workers: a change one makes is seen by the other at its next
stamp; a stamp of one namespace never serves another's skills."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.context import ContextStore
from graph.skill_vectors import SkillStamp
from graph.skills import ScoredSkill, SkillStore, SkillUpsert
from retrieval.context import ContextRequest
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from tests.conftest import T0
from tests.integration.test_skill_store import make_skill, upsert_all

DOCS = "please write the Markdown docs for the parser module"


class Counting(SkillStore):
    """A worker's skill store that counts its round trips."""

    calls = 0

    def _run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.calls += 1
        return super()._run(*args, **kwargs)


def stamp(driver: Driver, namespace: str) -> SkillStamp:
    """The stamp a context request reads for ``namespace``'s skills."""
    found = ContextStore(driver, skills_namespace=namespace).start(namespace, 1, []).skills
    assert found is not None and found.namespace == namespace
    return found


def ranked(hits: Sequence[ScoredSkill]) -> list[tuple[str, float]]:
    return [(h.skill.skill_id, round(h.score, 5)) for h in hits]


@pytest.fixture
def query(embedder: MiniLMEmbedder) -> list[float]:
    return embedder.embed(["please document the parser module"])[0]


def test_cached_vectors_answer_as_the_index_and_follow_another_workers_changes(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, query: list[float]
) -> None:
    upsert_all(SkillStore(driver), embedder, namespace)
    one, two = Counting(driver), Counting(driver)
    first = stamp(driver, namespace)
    cached = one.search_vector(namespace, query, k=3, stamp=first)
    assert ranked(cached) == ranked(two.search_vector(namespace, query, k=3))  # the index's
    assert one.find_by_tags(namespace, ["docs", "debug"], stamp=first) == one.find_by_tags(
        namespace, ["docs", "debug"]
    )
    calls = one.calls
    one.search_vector(namespace, query, k=3, stamp=first)
    assert one.calls == calls  # current: no query

    two.retire_missing(namespace, ["debug", "repo_refactor"], T0)  # another worker's change
    retired = stamp(driver, namespace)
    assert retired != first
    assert "write_docs" not in [h.skill.skill_id for h in one.search_vector(
        namespace, query, k=3, stamp=retired)]  # fmt: skip
    assert one.find_by_tags(namespace, ["docs"], stamp=retired) == []

    # a re-embedded skill: the new vector ranks, as the index ranks it
    docs = make_skill(namespace, "debug", "Debug", "Writes documentation for a module.", ["docs"])
    vector = embedder.embed(["Writes documentation for a module."])[0]
    two.upsert(namespace, [SkillUpsert(docs, vector, "h-new", embedder.model_name)], T0)
    renewed = stamp(driver, namespace)
    hits = one.search_vector(namespace, query, k=3, stamp=renewed)
    assert hits[0].skill.skill_id == "debug"
    assert ranked(hits) == ranked(two.search_vector(namespace, query, k=3))


def test_a_namespace_never_sees_another_namespaces_skills_through_the_cache(
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
    query: list[float],
) -> None:
    store = SkillStore(driver)
    upsert_all(store, embedder, namespace)
    only = make_skill(other_namespace, "other_only", "Other", "Plans a garden.", ["garden"])
    vector = embedder.embed(["Plans a garden."])[0]
    store.upsert(other_namespace, [SkillUpsert(only, vector, "h-o", embedder.model_name)], T0)
    mine = stamp(driver, namespace)
    assert store.search_vector(namespace, query, k=3, stamp=mine)  # cached: this namespace's
    # the other namespace asked with this namespace's stamp: its own skills, from the index
    theirs = store.search_vector(other_namespace, query, k=3, stamp=mine)
    assert [h.skill.skill_id for h in theirs] == ["other_only"]
    assert store.find_by_tags(other_namespace, ["docs"], stamp=mine) == []
    # and with its own stamp, cached beside the first: still only its own
    cached = store.search_vector(other_namespace, query, k=3, stamp=stamp(driver, other_namespace))
    assert {h.skill.namespace for h in cached} == {other_namespace}
    assert {h.skill.namespace for h in store.search_vector(namespace, query, 3, stamp=mine)} == {
        namespace
    }


def test_two_workers_route_a_context_from_the_skills_as_they_are_now(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    namespace: str,
    other_namespace: str,
    tmp_path: Path,
) -> None:
    """Two containers (two workers) route the contexts of one namespace; when one retires a
    skill, the other's next context no longer offers it, with no query of its own while
    nothing changed."""
    skills = SkillSettings(namespace=other_namespace, workspace=tmp_path)
    one, two = (
        Container(settings, skill_settings=skills, driver=driver, embedder=embedder)
        for _ in range(2)
    )
    ask = ContextRequest(namespace=namespace, message=DOCS, now=T0)

    def offered(worker: Container) -> list[str]:
        return [s["skill_id"] for s in worker.context.build(ask).skills]

    assert "write_docs" in offered(one) and "write_docs" in offered(two)
    store = one.skills.registry._store
    assert isinstance(store, SkillStore)
    calls: list[str] = []
    inner = store._run
    store._run = lambda text, *a, **k: calls.append(text) or inner(text, *a, **k)  # type: ignore[method-assign]
    assert "write_docs" in offered(one) and calls == []  # current: ranked from the cache
    kept = [s for s in two.skills.registry.report.skills if s != "write_docs"]
    SkillStore(driver).retire_missing(other_namespace, kept, T0)  # another worker's sync
    assert "write_docs" not in offered(one) and len(calls) == 1  # read again, once
    assert offered(one) == offered(two)
