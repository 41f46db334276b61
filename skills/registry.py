"""The skill registry: discovered packages in memory, synced into Neo4j as :Skill nodes.

``sync`` embeds each manifest's description, tags and examples (only when that text or the
model changed), upserts the nodes and retires nodes whose folder is gone. ``search`` ranks
skills by embedding similarity plus the tags the query shares with them (spec §11.2).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from graph.skill_vectors import SkillStamp
from graph.skills import SkillStore, SkillUpsert
from skills.errors import SkillArgsInvalid, SkillNotFound
from skills.loader import LoadProblem, LoadReport, SkillPackage
from skills.schemas import violations

log = logging.getLogger(__name__)

TAG_WEIGHT = 0.05  # per shared tag, up to MAX_TAGS_COUNTED
MAX_TAGS_COUNTED = 3
_WORD = re.compile(r"[a-z][a-z0-9_-]+")


class TextEmbedder(Protocol):
    model_name: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class SkillHit:
    """A skill found by search: similarity (None when found by tags only) and shared tags."""

    package: SkillPackage
    score: float
    similarity: float | None
    matched_tags: tuple[str, ...]

    @property
    def skill_id(self) -> str:
        return self.package.skill_id

    def summary(self) -> dict[str, Any]:
        """The compact manifest a model sees (spec §4.1 step 2: 'manifest only')."""
        m = self.package.manifest
        return {
            "skill_id": m.skill_id,
            "name": m.name,
            "description": m.description,
            "tags": m.tags,
            "requires_tools": m.requires_tools,
            "inputs_schema": m.inputs_schema,
            "score": round(self.score, 4),
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "matched_tags": list(self.matched_tags),
        }


@dataclass
class SyncReport:
    upserted: list[str] = field(default_factory=list)
    embedded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)


def query_tags(text: str, vocabulary: Iterable[str]) -> list[str]:
    """Tags of ``vocabulary`` that occur in ``text`` as words (plural 's' forgiven)."""
    words = set(_WORD.findall(text.lower()))
    words |= {w[:-1] for w in words if w.endswith("s")}
    return sorted(t for t in set(vocabulary) if t in words or t.replace("-", " ") in text.lower())


class SkillRegistry:
    """Packages of one load, for one namespace; Neo4j (store + embedder) for sync and search."""

    def __init__(
        self,
        report: LoadReport,
        namespace: str,
        store: SkillStore | None = None,
        embedder: TextEmbedder | None = None,
    ) -> None:
        self.report = report
        self.namespace = namespace
        self._store = store
        self._embedder = embedder

    @property
    def packages(self) -> list[SkillPackage]:
        return [self.report.skills[k] for k in sorted(self.report.skills)]

    @property
    def problems(self) -> list[LoadProblem]:
        return list(self.report.problems)

    def get(self, skill_id: str) -> SkillPackage:
        try:
            return self.report.skills[skill_id]
        except KeyError:
            known = ", ".join(sorted(self.report.skills)) or "none"
            raise SkillNotFound(f"no skill {skill_id!r}; known skills: {known}") from None

    def check_args(self, skill_id: str, args: Any) -> None:
        """``SkillArgsInvalid`` listing every violation of the skill's inputs_schema."""
        problems = self.arg_violations(skill_id, args)
        if problems:
            raise SkillArgsInvalid(skill_id, problems)

    def arg_violations(self, skill_id: str, args: Any) -> list[str]:
        package = self.get(skill_id)
        if not isinstance(args, dict):
            return [f"$: args must be a JSON object, got {type(args).__name__}"]
        return violations(package.manifest.inputs_schema, args)

    def vocabulary(self) -> set[str]:
        return {t for p in self.packages for t in p.manifest.tags}

    # -- Neo4j -----------------------------------------------------------------------------------
    def _require(self) -> tuple[SkillStore, TextEmbedder]:
        if self._store is None or self._embedder is None:
            raise RuntimeError("this registry has no store/embedder (sync and search need Neo4j)")
        return self._store, self._embedder

    def embedding_hash(self, package: SkillPackage) -> str:
        _, embedder = self._require()
        text = f"{embedder.model_name}\n{package.manifest.embedding_text()}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def sync(self, now: datetime) -> SyncReport:
        """Bring the namespace's :Skill nodes in line with the packages on disk."""
        store, embedder = self._require()
        stored = store.stored_hashes(self.namespace)
        report = SyncReport(problems=self.problems)
        changed: list[tuple[SkillPackage, str, bool]] = []  # package, hash, needs embedding
        for package in self.packages:
            digest = self.embedding_hash(package)
            manifest_json = json.dumps(package.manifest.model_dump(mode="json"), sort_keys=True)
            old = stored.get(package.skill_id)
            if old == (digest, manifest_json, False):
                report.unchanged.append(package.skill_id)
                continue
            changed.append((package, digest, old is None or old[0] != digest))
        to_embed = [p for p, _, needs in changed if needs]
        vectors = iter(embedder.embed([p.manifest.embedding_text() for p in to_embed]))
        items = [
            SkillUpsert(
                skill=p.manifest.to_skill(self.namespace),
                embedding=next(vectors) if needs else None,
                embedding_hash=digest,
                embedding_model=embedder.model_name,
            )
            for p, digest, needs in changed
        ]
        report.upserted = store.upsert(self.namespace, items, now)
        report.embedded = [p.skill_id for p in to_embed]
        report.retired = store.retire_missing(self.namespace, list(self.report.skills), now)
        log.info(
            "skills synced",
            extra={"namespace": self.namespace, "upserted": len(report.upserted),
                   "retired": len(report.retired), "problems": len(report.problems)},
        )  # fmt: skip
        return report

    def search(
        self,
        text: str,
        k: int = 3,
        vector: Sequence[float] | None = None,
        stamp: SkillStamp | None = None,
    ) -> list[SkillHit]:
        """Skills for ``text``: similarity of its embedding (``vector`` when the caller already
        embedded it) to each skill's, plus the tags that occur in ``text`` as words. With the
        namespace's ``stamp`` (read by the caller) both come from the store's cached vectors
        when they are current: no query."""
        store, embedder = self._require()
        tags = query_tags(text, self.vocabulary())
        fetch = max(k * 2, 8)
        query = list(vector) if vector is not None else embedder.embed([text])[0]
        similar = store.search_vector(self.namespace, query, k=fetch, stamp=stamp)
        tagged = store.find_by_tags(self.namespace, tags, k=fetch, stamp=stamp) if tags else []
        sims = {s.skill.skill_id: s.score for s in similar}
        matched = {s.skill.skill_id: s.matched_tags for s in tagged}
        hits = []
        for skill_id in dict.fromkeys([*sims, *matched]):
            if skill_id not in self.report.skills:
                continue  # stored but not loaded in this process (e.g. another skills dir)
            shared = matched.get(skill_id, ())
            sim = sims.get(skill_id)
            score = (sim if sim is not None else 0.5) + TAG_WEIGHT * min(
                len(shared), MAX_TAGS_COUNTED
            )
            hits.append(SkillHit(self.report.skills[skill_id], score, sim, tuple(shared)))
        hits.sort(key=lambda h: (-h.score, h.skill_id))
        return hits[:k]
