"""The in-process skill cache (graph/skill_vectors.py): served only under the stamp it was read
with, bounded, and ranking as the queries it replaces rank."""

from __future__ import annotations

from graph.models import Skill
from graph.skill_vectors import CachedSkill, SkillStamp, SkillVectors, nearest, tagged, unit


def cached(skill_id: str, vector: list[float] | None, tags: list[str]) -> CachedSkill:
    skill = Skill(skill_id=skill_id, namespace="ns", name=skill_id, description="d", tags=tags)
    return CachedSkill(skill, unit(vector))


SKILLS = [
    cached("b", [1.0, 0.0], ["docs", "python"]),
    cached("a", [1.0, 0.0], ["python"]),  # same vector as b: ties go by id
    cached("c", [0.0, 2.0], ["docs"]),
    cached("d", None, ["docs", "python"]),  # no embedding: found by tags only
]


def test_a_stamp_that_differs_or_names_another_namespace_gets_nothing() -> None:
    cache = SkillVectors()
    cache.put(SkillStamp("ns", ("x|h|t|",)), SKILLS)
    assert cache.get(SkillStamp("ns", ("x|h|t|",))) == SKILLS
    assert cache.get(SkillStamp("ns", ("x|h2|t|",))) is None
    assert cache.get(SkillStamp("other", ("x|h|t|",))) is None
    cache.drop("ns")
    assert cache.get(SkillStamp("ns", ("x|h|t|",))) is None


def test_the_cache_keeps_the_most_recently_used_namespaces_only() -> None:
    cache = SkillVectors(limit=2)
    for ns in ("one", "two"):
        cache.put(SkillStamp(ns, ()), SKILLS)
    assert cache.get(SkillStamp("one", ())) is not None  # "one" used last
    cache.put(SkillStamp("three", ()), SKILLS)
    assert cache.get(SkillStamp("two", ())) is None
    assert cache.get(SkillStamp("one", ())) is not None
    assert cache.get(SkillStamp("three", ())) is not None


def test_nearest_scores_as_the_index_and_breaks_ties_by_id() -> None:
    hits = nearest(SKILLS, [3.0, 0.0], k=3)
    assert [(h.skill.skill_id, round(h.score, 6), h.source) for h in hits] == [
        ("a", 1.0, "vector"),
        ("b", 1.0, "vector"),
        ("c", 0.5, "vector"),  # orthogonal: (1 + 0) / 2
    ]
    assert nearest(SKILLS, [0.0, 0.0], k=3) == []  # no direction: nothing is near


def test_tagged_ranks_by_shared_tags_then_id_in_the_skills_tag_order() -> None:
    hits = tagged(SKILLS, ["docs", "python"], k=3)
    assert [(h.skill.skill_id, h.score, h.matched_tags) for h in hits] == [
        ("b", 2.0, ("docs", "python")),
        ("d", 2.0, ("docs", "python")),
        ("a", 1.0, ("python",)),
    ]
