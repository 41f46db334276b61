"""SkillStore: :Skill nodes (manifests with embeddings) and :SkillRun records in Neo4j.

Every method is scoped to one namespace. Vectors come from the caller (the embedder lives above
``graph/``). A run is recorded in one transaction with the utility it earns: a successful run
adds ``utility_delta`` (spec §8.3: +2) to each topic it used, and only to topics of its own
namespace.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from neo4j import Driver, ManagedTransaction
from pydantic import BaseModel, ConfigDict, Field

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store
from graph.mapping import as_datetime
from graph.models import Namespace, Skill, UtcDatetime, new_id
from graph.overfetch import EXACT_VECTOR_MAX, MAX_FETCH, Page, Plan
from graph.overfetch import overfetch as run_overfetch
from graph.redaction import Redactor
from graph.skill_vectors import (
    STAMP_CAP,
    CachedSkill,
    ScoredSkill,
    SkillStamp,
    SkillVectors,
    nearest,
    tagged,
    unit,
)
from graph.topics import check_vector

Outcome = Literal["success", "failed", "refused", "timeout", "invalid_output"]


class SkillRun(BaseModel):
    """One execution of a skill: what happened, how long it took, which topics it used."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(default_factory=new_id)
    namespace: Namespace
    skill_id: str
    outcome: Outcome
    started_at: UtcDatetime
    finished_at: UtcDatetime
    duration_ms: int = Field(ge=0)
    error: str | None = None
    args_hash: str = ""
    topic_ids: list[str] = Field(default_factory=list)
    tool_calls: list[str] = Field(default_factory=list)  # "repo.read_file:ok", ...
    parent_run_id: str | None = None


@dataclass(frozen=True)
class SkillUpsert:
    skill: Skill
    embedding: Sequence[float] | None  # None keeps the stored vector
    embedding_hash: str
    embedding_model: str


@dataclass(frozen=True)
class RecordedRun:
    run_id: str
    topic_ids: list[str]  # topics linked (those that exist in the namespace)
    utilities: dict[str, float]  # topic_id -> utility_score after the bump


def skill_props(skill: Skill, embedding_hash: str, embedding_model: str) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "tags": skill.tags,
        "requires_tools": skill.requires_tools,
        "default_reasoning_effort": skill.default_reasoning_effort,
        "examples": skill.examples,
        "manifest_json": json.dumps(skill.manifest, sort_keys=True),
        "embedding_hash": embedding_hash,
        "embedding_model": embedding_model,
    }


def skill_from_props(props: dict[str, Any]) -> Skill:
    return Skill(
        skill_id=props["skill_id"],
        namespace=props["namespace"],
        name=props["name"],
        description=props["description"],
        tags=list(props.get("tags") or []),
        requires_tools=list(props.get("requires_tools") or []),
        default_reasoning_effort=props.get("default_reasoning_effort") or "medium",
        examples=list(props.get("examples") or []),
        manifest=json.loads(props.get("manifest_json") or "{}"),
    )


def run_from_props(props: dict[str, Any]) -> SkillRun:
    data = dict(props)
    data["started_at"] = as_datetime(data["started_at"])
    data["finished_at"] = as_datetime(data["finished_at"])
    data["tool_calls"] = list(data.get("tool_calls") or [])
    data["topic_ids"] = list(data.get("topic_ids") or [])
    return SkillRun.model_validate(data)


def redact_run(run: SkillRun, r: Redactor) -> SkillRun:
    """The copy of a skill run that is written: its error and tool-call notes redacted."""
    return run.model_copy(
        update={
            "error": r.text(run.error) if run.error else run.error,
            "tool_calls": [r.text(t) for t in run.tool_calls],
        }
    )


class SkillStore(Store):
    """Upsert, list, retire and search skills; record runs and the utility they earn."""

    def upsert(self, namespace: str, items: Sequence[SkillUpsert], now: datetime) -> list[str]:
        rows = []
        for item in items:
            if item.skill.namespace != namespace:
                raise ValueError(f"skill {item.skill.skill_id} is not in namespace {namespace}")
            rows.append(
                {
                    "skill_id": item.skill.skill_id,
                    "props": skill_props(item.skill, item.embedding_hash, item.embedding_model),
                    "embedding": check_vector(item.embedding)
                    if item.embedding is not None
                    else None,
                }
            )
        if not rows:
            return []
        records = self._run(
            query("upsert_skills"), {"namespace": namespace, "rows": rows, "now": ensure_utc(now)}
        )
        return [r["skill_id"] for r in records]

    def stored_hashes(self, namespace: str) -> dict[str, tuple[str | None, str | None, bool]]:
        """skill_id -> (embedding_hash, manifest_json, retired)."""
        records = self._run(query("get_skill_hashes"), {"namespace": namespace}, read=True)
        return {
            r["skill_id"]: (r["embedding_hash"], r["manifest_json"], bool(r["retired"]))
            for r in records
        }

    def retire_missing(self, namespace: str, keep: Sequence[str], now: datetime) -> list[str]:
        records = self._run(
            query("retire_skills"),
            {"namespace": namespace, "keep": list(keep), "now": ensure_utc(now)},
        )
        return [r["skill_id"] for r in records]

    def list_skills(self, namespace: str, include_retired: bool = False) -> list[Skill]:
        records = self._run(
            query("list_skills"),
            {"namespace": namespace, "include_retired": include_retired},
            read=True,
        )
        return [skill_from_props(r["s"]) for r in records]

    def __init__(
        self, driver: Driver, database: str = "neo4j", *, redactor: Redactor | None = None
    ) -> None:
        super().__init__(driver, database, redactor=redactor)
        self.vectors = SkillVectors()  # this process's cached skill vectors, checked by stamp

    def search_vector(
        self,
        namespace: str,
        vector: Sequence[float],
        k: int = 5,
        overfetch: int = 10,
        stamp: SkillStamp | None = None,
    ) -> list[ScoredSkill]:
        """Nearest skills by embedding. Under a ``stamp`` of this namespace (read in the
        request's first query) from the cached vectors; else a namespace of at most
        ``EXACT_VECTOR_MAX`` skill nodes scored exactly in Cypher (the shared index not asked),
        a larger one from the index over-fetched and filtered by namespace, and an exact scan
        of the namespace when that leaves fewer than ``k`` while the index had more."""
        vec = check_vector(vector)
        cached = self._cached(namespace, stamp)
        if cached is not None:
            return nearest(cached, vec, k)
        params = {"vector": vec, "k": k, "namespace": namespace}
        scanned = False

        def page(fetch: int) -> Page[Any]:
            nonlocal scanned
            records = self._run(
                query("search_skills_vector"),
                {**params, "fetch": fetch, "exact_max": EXACT_VECTOR_MAX},
                read=True,
            )
            scanned = bool(records[0]["scanned"])
            return Page(int(records[0]["raw"]), records[0]["hits"])

        def exact() -> list[Any]:
            return self._run(query("scan_skills_vector"), params, read=True)

        plan = Plan(first=min(max(k * overfetch, 50), MAX_FETCH), grow=1)
        found = run_overfetch(k, plan, page, exact)
        label = "vector" if found.source == "index" and not scanned else "vector-scan"
        return [ScoredSkill(skill_from_props(h["s"]), float(h["score"]), label) for h in found.hits]

    def find_by_tags(
        self, namespace: str, tags: Sequence[str], k: int = 10, stamp: SkillStamp | None = None
    ) -> list[ScoredSkill]:
        """Skills sharing tags with ``tags``; ``score`` is the number of shared tags (under a
        ``stamp`` of this namespace, from the cached skills)."""
        wanted = sorted({t.strip().lower() for t in tags if t.strip()})
        if not wanted:
            return []
        cached = self._cached(namespace, stamp)
        if cached is not None:
            return tagged(cached, wanted, k)
        records = self._run(
            query("find_skills_by_tags"),
            {"namespace": namespace, "tags": wanted, "k": k},
            read=True,
        )
        return [
            ScoredSkill(skill_from_props(r["s"]), float(r["tag_hits"]), "tags", tuple(r["matched"]))
            for r in records
        ]

    def _cached(self, namespace: str, stamp: SkillStamp | None) -> list[CachedSkill] | None:
        """The namespace's live skills if ``stamp`` (of this namespace) says the cache is
        current, read again (one round trip) when it is not; None without a stamp or when the
        namespace has too many skill nodes to cache."""
        if stamp is None or stamp.namespace != namespace:
            return None  # never another namespace's skills
        found = self.vectors.get(stamp)
        if found is not None:
            return found
        row = self._run(
            query("read_skill_vectors"), {"namespace": namespace, "cap": STAMP_CAP}, read=True
        )[0]
        if row["stamp"] is None:
            return None
        skills = [
            CachedSkill(skill_from_props(h["s"]), unit(h["embedding"])) for h in row["skills"]
        ]
        # cached under the stamp read with the vectors; when the skills changed between the two
        # reads, this request's stamp differs and the next request with a new stamp reads again
        self.vectors.put(SkillStamp(namespace, tuple(row["stamp"])), skills)
        return skills

    # -- runs ----------------------------------------------------------------------------------
    def record_run(self, run: SkillRun, utility_delta: float = 2.0) -> RecordedRun:
        """Store ``run`` linked to its skill and topics; a success bumps the topics' utility.
        The error and the tool-call notes are redacted."""
        run = redact_run(run, self.redactor)
        props = run.model_dump(exclude={"topic_ids", "parent_run_id", "namespace"})
        props["parent_run_id"] = run.parent_run_id
        props["started_at"] = ensure_utc(run.started_at)
        props["finished_at"] = ensure_utc(run.finished_at)

        def work(tx: ManagedTransaction) -> RecordedRun:
            created = tx.run(
                query("create_skill_run"),
                namespace=run.namespace,
                props=props,
                topic_ids=list(dict.fromkeys(run.topic_ids)),
                parent_run_id=run.parent_run_id,
            ).single(strict=True)
            linked = list(created["topic_ids"])
            utilities: dict[str, float] = {}
            if run.outcome == "success" and linked and utility_delta:
                bumped = tx.run(
                    query("bump_topic_utility"),
                    namespace=run.namespace,
                    topic_ids=linked,
                    delta=float(utility_delta),
                    now=props["finished_at"],
                )
                utilities = {r["topic_id"]: float(r["utility_score"]) for r in bumped}
            return RecordedRun(created["run_id"], linked, utilities)

        with self._driver.session(database=self._db) as session:
            return session.execute_write(work)

    def runs(self, namespace: str, skill_id: str | None = None, limit: int = 50) -> list[SkillRun]:
        records = self._run(
            query("list_skill_runs"),
            {"namespace": namespace, "skill_id": skill_id, "limit": limit},
            read=True,
        )
        return [run_from_props(r["r"]) for r in records]
