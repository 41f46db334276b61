"""Skills for callers, scoped to the caller's namespace.

An API key must never reach another namespace, so each namespace gets its own ``SkillService``
(same skill folders, same limits) whose skills, runs and topic tool are all in that namespace.
Services are built on first use (syncing the skills in, which embeds only what changed) and the
most recently used few are kept; how one is built is the composition root's business. A kept
service syncs again once it is ``resync_s`` old (one read when nothing changed): with several
API workers, a namespace forgotten whole through one worker gets its skills back in the others
within that time.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from skills.config import SkillSettings
from skills.service import SkillService


@dataclass(eq=False)
class NamespaceSkills:
    """The skill service of each namespace, built by ``build(namespace)`` on first use;
    ``settings`` are the ones every namespace's service starts from (what tools are offered)."""

    settings: SkillSettings
    build: Callable[[str], SkillService]
    keep: int = 32
    resync_s: float = 60.0
    _services: OrderedDict[str, tuple[SkillService, float]] = field(
        default_factory=OrderedDict, init=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def get(self, namespace: str) -> SkillService:
        """The namespace's skill service, built and synced on first use (synced again when
        ``resync_s`` old)."""
        with self._lock:
            found = self._services.get(namespace)
            service = found[0] if found is not None else self.build(namespace)
            if found is None or time.monotonic() - found[1] >= self.resync_s:
                service.sync()
                self._services[namespace] = (service, time.monotonic())
                while len(self._services) > self.keep:
                    self._services.popitem(last=False)
            self._services.move_to_end(namespace)
            return service

    def drop(self, namespace: str) -> None:
        """Forget the namespace's service (its data was deleted; the next use re-syncs)."""
        with self._lock:
            self._services.pop(namespace, None)
