"""``SkillService``: the skills facade the CLI, the API and the agent loop use.

Built once from ``SkillSettings`` plus what the composition root already has (skill store,
embedder, topic store, optional LLM). It discovers the skill packages at start-up (a new folder
with a valid manifest needs no code change), syncs them into Neo4j, and offers the spec's skill
tools: ``search``, ``route``, ``run`` (and, for skills calling skills, ``validate`` and
``run_nested``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graph.clock import Clock, SystemClock
from graph.skill_vectors import SkillStamp
from graph.skills import SkillRun, SkillStore
from graph.topics import TopicStore
from skills.config import SkillSettings
from skills.errors import SkillArgsInvalid, SkillNotFound, ToolRefused
from skills.loader import discover
from skills.registry import SkillRegistry, SyncReport, TextEmbedder
from skills.router import RouteResult, model_manifest, route
from skills.runner import SkillResult, SkillRunner
from skills.tools import LLM, CallInfo, RepoTools, ToolHost

TOPIC_FACTS_SHOWN = 8


class TopicSearchTool:
    """``topics.search``: vector and full-text hits of one namespace as compact snippets."""

    def __init__(self, topics: TopicStore, embedder: TextEmbedder, namespace: str) -> None:
        self._topics = topics
        self._embedder = embedder
        self._namespace = namespace

    def __call__(self, query: str, k: int) -> list[dict[str, Any]]:
        vector = self._embedder.embed([query])[0]
        found: dict[str, dict[str, Any]] = {}
        for hit in [
            *self._topics.search_vector(self._namespace, vector, k=k),
            *self._topics.search_text(self._namespace, query, k=k),
        ]:
            t = hit.topic
            if t.topic_id in found:
                found[t.topic_id]["sources"].append(hit.source)
                continue
            found[t.topic_id] = {
                "topic_id": t.topic_id,
                "name": t.name,
                "one_liner": t.one_liner,
                "aliases": t.aliases,
                "facts": [f.text for f in t.facts[:TOPIC_FACTS_SHOWN]],
                "last_seen_at": t.time.last_seen_at.isoformat(),
                "score": round(hit.score, 4),
                "sources": [hit.source],
            }
        return list(found.values())[: max(k, 1) * 2]


class SkillService:
    """Registry + router + runner for one namespace and (at most) one workspace."""

    def __init__(
        self,
        settings: SkillSettings,
        *,
        store: SkillStore | None = None,
        embedder: TextEmbedder | None = None,
        topics: TopicStore | None = None,
        llm: LLM | None = None,
        clock: Clock | None = None,
        workspace: Path | None = None,
        repo: RepoTools | None = None,
        with_repo: bool = True,
    ) -> None:
        """``repo`` is a prepared ``RepoTools`` (a tenant's workspace); without one, one is made
        on ``workspace`` (default ``settings.workspace``) unless ``with_repo`` is False, in
        which case the repo tools are unavailable to this service's skills."""
        self.settings = settings
        self.clock = clock or SystemClock()
        self.store = store
        self.registry = SkillRegistry(
            discover(settings.skill_dirs()), settings.namespace, store, embedder
        )
        topic_tool = (
            TopicSearchTool(topics, embedder, settings.namespace)
            if topics is not None and embedder is not None
            else None
        )
        if repo is None and with_repo:
            repo = RepoTools(workspace or settings.workspace, settings)
        self.host = ToolHost(repo, topics=topic_tool, skills=self, llm=llm)
        self.runner = SkillRunner(self.registry, self.host, settings, store, self.clock)

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    def sync(self) -> SyncReport:
        return self.registry.sync(self.clock.now())

    def search(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        """``skills.search(query, k)`` -> compact manifests, best first."""
        return [hit.summary() for hit in self.registry.search(query, k)]

    def route(
        self,
        text: str,
        last_tool_output: str | None = None,
        k: int | None = None,
        vector: Sequence[float] | None = None,
        stamp: SkillStamp | None = None,
    ) -> RouteResult:
        """Skills for ``text`` (``vector``: its embedding when the caller already has it;
        ``stamp``: the skills' stamp, when the caller read it: cached vectors serve the search)."""
        return route(self.registry, text, last_tool_output, k, vector, stamp)

    def manifests(self, skill_ids: Sequence[str]) -> list[dict[str, Any]]:
        """What the model sees of each skill, with a ready call (the wake's recent skills,
        spec §4.3 step 5); ids no longer loaded (a retired skill) are left out."""
        out = []
        for skill_id in skill_ids:
            try:
                package = self.registry.get(skill_id)
            except SkillNotFound:
                continue
            out.append(model_manifest(package, template=True))
        return out

    def run(
        self,
        skill_id: str,
        args: dict[str, Any],
        ctx_refs: dict[str, Any] | list[str] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> SkillResult:
        """``skills.run(skill_id, args, ctx_refs)`` -> SkillResult (recorded as a :SkillRun)."""
        return self.runner.run(skill_id, args, ctx_refs, timeout_s=timeout_s)

    def validate(self, skill_id: str, args: dict[str, Any]) -> list[str]:
        try:
            return self.registry.arg_violations(skill_id, args)
        except SkillNotFound as exc:
            return [str(exc)]

    def run_nested(self, skill_id: str, args: dict[str, Any], call: CallInfo) -> dict[str, Any]:
        """``skills.run`` called by a running skill: depth-limited, within the caller's time."""
        if call.depth + 1 >= self.settings.max_depth:
            raise ToolRefused(
                f"skill {call.skill_id!r} may not start {skill_id!r}: nesting depth "
                f"{self.settings.max_depth} reached"
            )
        if skill_id == call.skill_id:
            raise ToolRefused(f"skill {skill_id!r} may not run itself")
        try:
            result = self.runner.run(skill_id, args, parent=call)
        except SkillArgsInvalid as exc:
            raise ToolRefused(str(exc)) from exc
        return result.model_dump(mode="json")

    def runs(self, skill_id: str | None = None, limit: int = 50) -> Sequence[SkillRun]:
        if self.store is None:
            return []
        return self.store.runs(self.namespace, skill_id, limit)
