"""The awake-loop context for one user message (spec §4.1 steps 1-4, §5, §6.2, §8.2).

Light retrieval runs for every message but small talk (class C with no trigger: it injects
nothing, so nothing is searched): topics from the vector and full-text indexes (fused, K = 8) and
evidence from the conversation itself (English full-text over messages, each hit leading to the
topics it is MENTIONED_IN). A deep retrieval runs when a §5.2 trigger fires or the request is
explicit: K = 20 topics, 1-hop graph expansion, the resolved time window as filter and boost.
The request class and consult confidence (seed 003) decide whether anything is injected, the
session suppression cache keeps repeats out, and the packer fits the result into the budget with
a trace of every decision. Topics that reach the context are marked used.

Where each part lives: this module holds the builder (the shared stores and settings);
``retrieval.context_result`` the request and the typed result; ``retrieval.context_run.ContextRun`` is one request's run, its steps
read top to bottom (plan, search, expand, pack, finish); ``retrieval.gather`` the searches,
``retrieval.candidates`` the evidence turned into candidates and snippets, and
``retrieval.message.ParsedMessage`` the message read once.
"""

from __future__ import annotations

from graph.protocols import (
    ContextStoreProtocol,
    MessageStoreProtocol,
    PassageStoreProtocol,
    TopicStoreProtocol,
)
from retrieval.config import RetrievalConfig
from retrieval.context_result import ContextRequest, ContextResult, SkillRouter
from retrieval.context_run import ContextRun
from retrieval.search import TopicSearch

__all__ = ["ContextBuilder", "ContextRequest", "ContextResult", "SkillRouter"]


class ContextBuilder:
    """The stores, search and settings every context shares; ``build`` runs one request.

    ``start`` is the context's own store: the reads before the search (tail, sleep history,
    known names, the suppression session) in one round trip and the writes after packing in
    one transaction (``graph.context.ContextStore``); its ``suppression`` is the session state
    every worker shares."""

    def __init__(
        self,
        topics: TopicStoreProtocol,
        messages: MessageStoreProtocol,
        search: TopicSearch,
        start: ContextStoreProtocol,
        tz: str = "UTC",
        config: RetrievalConfig | None = None,
        skill_router: SkillRouter | None = None,
        passages: PassageStoreProtocol | None = None,
    ) -> None:
        self.topics = topics
        self.messages = messages
        self.passages = passages  # the conversation searched by meaning too (None: by words)
        self.search = search
        self.tz = tz
        self.config = config or RetrievalConfig()
        self.cfg = self.config.context
        self.skill_router = skill_router  # (message, last tool output, vector) -> route dict
        self.reads = start
        self.suppression = start.suppression
        # per namespace: whether its last context's message named a participant of the
        # conversation (``ContextStart.speakers``); when not, the next message is embedded
        # beside the first read (``ContextRun.embed``). A hint for speed only, never for answers
        self.named_speakers: dict[str, bool] = {}

    def build(self, req: ContextRequest) -> ContextResult:
        """The memory context for one message: triggers, one light search (deep when a trigger
        fires, the light search's own low confidence included), evidence, policy, packing."""
        return ContextRun(self, req).run()
