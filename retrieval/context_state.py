"""What a context's steps share: the plan (``ContextRun.make_plan``) and the view of a run
the search and expansion steps read (``retrieval.gather``, ``retrieval.candidates``), so they
need not import the run itself."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from graph.messages import MessageHit
from graph.models import Message
from graph.protocols import (
    ContextStoreProtocol,
    MessageStoreProtocol,
    PassageStoreProtocol,
    SuppressionStoreProtocol,
    TopicStoreProtocol,
)
from graph.skill_vectors import SkillStamp
from graph.suppression import SessionState
from retrieval.classify import RequestClass
from retrieval.config import ContextConfig, RetrievalConfig
from retrieval.context_result import ContextRequest, RoutedSkill, SkillRouter, SkillRouting
from retrieval.message import ParsedMessage
from retrieval.search import TopicSearch
from text.timephrases import TimeWindow


@dataclass
class Early:
    """The message's vector (None: no model) and its passage search, begun before the plan
    (``retrieval.gather.early``)."""

    vector: list[float] | None
    dense: Future[list[MessageHit]] | None


@dataclass
class Plan:
    """One request's plan (``ContextRun.make_plan``); the search step may widen it to deep."""

    tail: list[Message]
    window: TimeWindow | None
    triggers: list[str]
    cls: RequestClass
    deep: bool
    personal: str | None = None  # why an implicit message consults memory whatever the score
    # the message as the sentences of what the search found are picked and scored: without the
    # names of the conversation's participants, which every greeting matches ("When did Audrey
    # see a hummingbird?" packed "Hey Audrey!" lines). The conversation's search keeps them: a
    # speaker's own turns are often the evidence of a question about them (it matches the
    # speaker field); topic search drops them too (``topic_text``)
    evidence_text: str = ""
    skills: SkillStamp | None = None  # the routing skills' stamp (graph.context.ContextStart)
    # the participants the message names (lower case)
    speakers: frozenset[str] = frozenset()
    # the suppression session's state, read with the start (None: not read)
    session: Callable[[], SessionState] | None = None
    # the message as topic search reads it: without the participants' names
    # (retrieval.search.unnamed)
    topic_text: str = ""


class Shared(Protocol):
    """The stores, search and settings every context shares (``ContextBuilder``)."""

    topics: TopicStoreProtocol
    messages: MessageStoreProtocol
    passages: PassageStoreProtocol | None  # evidence by meaning (None: by words alone)
    search: TopicSearch
    reads: ContextStoreProtocol
    skill_router: SkillRouter | None
    suppression: SuppressionStoreProtocol
    tz: str
    config: RetrievalConfig
    cfg: ContextConfig
    named_speakers: dict[str, bool]


class RunView(Protocol):
    """What the search and expansion steps read of one request's run (``ContextRun``)."""

    builder: Shared
    req: ContextRequest
    now: datetime
    msg: ParsedMessage
    plan: Plan
    cfg: ContextConfig
    config: RetrievalConfig
    # the message's vector and passage search begun beside the first read (None: not begun)
    early: Future[Early] | None

    def route_skills(
        self, vector: list[float] | None, stamp: SkillStamp | None = None
    ) -> tuple[list[RoutedSkill], SkillRouting]:
        """The skills routed for the message (never raises)."""
        ...
