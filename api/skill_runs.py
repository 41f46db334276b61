"""Skills for API callers, scoped to the caller's namespace.

The container's ``SkillService`` lives in ``SHERIFF_SKILLS_NAMESPACE``; a skill it runs searches
that namespace's topics and records its run (and the utility it earns) there. An API key must
never reach another namespace, so each caller's namespace gets its own ``SkillService`` (same
skill folders, same workspace and limits) whose skills, runs and topic tool are all in that
namespace. Services are built on first use (syncing the skills in, which embeds only what
changed) and the most recently used few are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from graph.skills import SkillStore
from skills.config import SkillSettings
from skills.llm import build_llm
from skills.service import SkillService

if TYPE_CHECKING:
    from api.container import Container


class NamespaceSkills:
    def __init__(
        self, container: Container, base: SkillSettings | None = None, keep: int = 32
    ) -> None:
        self.container = container
        self.base = base or SkillSettings()
        self.keep = keep
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

    def drop(self, namespace: str) -> None:
        """Forget the namespace's service (its data was deleted; the next use re-syncs)."""
        with self._lock:
            self._services.pop(namespace, None)

    def _build(self, namespace: str) -> SkillService:
        c = self.container
        settings = self.base.model_copy(update={"namespace": namespace})
        service = SkillService(
            settings,
            store=SkillStore(c.driver, c.settings.neo4j_database),
            embedder=c.embedder,
            topics=c.topics,
            llm=build_llm(
                c.settings.openai_api_key, c.settings.openai_base_url, settings.llm_model
            ),
            clock=c.clock,
        )
        service.sync()
        return service
