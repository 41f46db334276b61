"""Skills for API callers, scoped to the caller's namespace, working in the caller's workspace.

The container's ``SkillService`` lives in ``SHERIFF_SKILLS_NAMESPACE``; a skill it runs searches
that namespace's topics and records its run (and the utility it earns) there. An API key must
never reach another namespace, so each caller's namespace gets its own ``SkillService`` (same
skill folders and limits) whose skills, runs, topic tool and repo tools are all its own:

- the repo tools work in the namespace's workspace ``<workspaces_dir>/<slug>-<hash>`` (default
  ``<state folder>/workspaces``), never in the server's folder; the root is checked at start-up
  (``skills/workspace.py``) so it cannot contain the code, the skills or the state folder;
- ``SHERIFF_SKILLS_TENANT_REPO_TOOLS=false`` removes the repo tools for API callers (their
  skills then see them as unavailable);
- ``repo.run_tests`` follows ``SHERIFF_SKILLS_TENANT_RUN_TESTS`` (default ``off``).

Services are built on first use (syncing the skills in, which embeds only what changed) and the
most recently used few are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from graph.skills import SkillStore
from skills.config import SkillSettings
from skills.llm import build_llm
from skills.service import SkillService
from skills.testrun import RunMode
from skills.tools import RepoTools
from skills.workspace import TenantWorkspaces, protected_paths

if TYPE_CHECKING:
    from api.container import Container

TEST_MODES: dict[str, RunMode | None] = {
    "off": None,
    "sandboxed": "sandboxed",
    "unsandboxed": "unsandboxed",
}


class NamespaceSkills:
    def __init__(
        self, container: Container, base: SkillSettings | None = None, keep: int = 32
    ) -> None:
        self.container = container
        self.base = base or SkillSettings()
        self.keep = keep
        self.home = container.settings.home
        self.workspaces: TenantWorkspaces | None = None
        if self.base.tenant_repo_tools:  # checked now, at start-up: a bad root stops the server
            root = self.base.workspaces_dir or self.home / "workspaces"
            self.workspaces = TenantWorkspaces(root, protected_paths(self.base), self.home)
        self._services: OrderedDict[str, SkillService] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, namespace: str) -> SkillService:
        """The namespace's skill service, built and synced on first use."""
        with self._lock:
            service = self._services.get(namespace)
            if service is None:
                service = self._build(namespace)
                self._services[namespace] = service
                while len(self._services) > self.keep:
                    self._services.popitem(last=False)
            self._services.move_to_end(namespace)
            return service

    def repo_for(self, namespace: str, settings: SkillSettings) -> RepoTools | None:
        """The repo tools of a namespace's own workspace; None when turned off."""
        if self.workspaces is None:
            return None
        return RepoTools(
            self.workspaces.for_namespace(namespace),
            settings,
            tests=TEST_MODES[settings.tenant_run_tests],
            readonly=settings.skill_dirs(),
            keep_out=[self.home, self.workspaces.root],
            quota=True,
        )

    def _build(self, namespace: str) -> SkillService:
        c = self.container
        settings = self.base.model_copy(update={"namespace": namespace})
        repo = self.repo_for(namespace, settings)
        service = SkillService(
            settings,
            store=SkillStore(c.driver, c.settings.neo4j_database),
            embedder=c.embedder,
            topics=c.topics,
            llm=build_llm(
                c.settings.openai_api_key, c.settings.openai_base_url, settings.llm_model
            ),
            clock=c.clock,
            repo=repo,
            with_repo=repo is not None,
        )
        service.sync()
        return service
