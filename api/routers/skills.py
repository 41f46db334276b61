"""``/v1/skills``: list, search and run skills, in the caller's namespace."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter

from api.deps import NamespaceDep, SkillsDep
from api.routers.common import NOT_RETRY_SAFE, errors
from api.schemas import SkillHits, SkillList, SkillProblem, SkillPublic, SkillRunCreate, SkillSearch
from skills.runner import SkillResult

router = APIRouter(prefix="/skills", tags=["skills"])


def _no_host_path(message: str, path: str) -> str:
    return message.replace(str(Path(path).parent) + "/", "")


@router.get("")
def list_skills(skills: SkillsDep, ns: NamespaceDep) -> SkillList:
    """The skills found in the skill folders, and folders that could not be loaded."""
    registry = skills.get(ns).registry
    return SkillList(
        skills=[
            SkillPublic(
                skill_id=p.skill_id,
                name=p.manifest.name,
                description=p.manifest.description,
                tags=p.manifest.tags,
                requires_tools=p.manifest.requires_tools,
                default_reasoning_effort=p.manifest.default_reasoning_effort,
                has_tests=p.has_tests,
            )
            for p in registry.packages
        ],
        # the folder's name only: where the server keeps its skills is not the caller's business
        problems=[
            SkillProblem(path=Path(p.path).name, message=_no_host_path(p.message, p.path))
            for p in registry.problems
        ],
    )


@router.post("/search")
def search_skills(body: SkillSearch, skills: SkillsDep, ns: NamespaceDep) -> SkillHits:
    """Compact manifests best first (embedding similarity plus shared tags)."""
    return SkillHits(skills=skills.get(ns).search(body.query, body.k))


@router.post("/run", responses=errors(404), dependencies=NOT_RETRY_SAFE)  # runs code
def run_skill(body: SkillRunCreate, skills: SkillsDep, ns: NamespaceDep) -> SkillResult:
    """Run a skill (its own process, declared tools only, a timeout). Bad args: 422 listing
    each violation; a skill that ran and failed: 200 with ``ok: false``."""
    return skills.get(ns).run(body.name, body.args, timeout_s=body.timeout_s)
