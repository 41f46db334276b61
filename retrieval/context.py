"""The awake-loop context for one user message (spec §4.1 steps 1-4, §5, §6.2, §8.2).

Light retrieval runs for every message but small talk (class C with no trigger: it injects
nothing, so nothing is searched): topics from the vector and full-text indexes (fused, K = 8) and
evidence from the conversation itself (English full-text over messages, each hit leading to the
topics it is MENTIONED_IN). A deep retrieval runs when a §5.2 trigger fires or the request is
explicit: K = 20 topics, 1-hop graph expansion, the resolved time window as filter and boost.
The request class and consult confidence (seed 003) decide whether anything is injected, the
session suppression cache keeps repeats out, and the packer fits the result into the budget with
a trace of every decision. Topics that reach the context are marked used.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel

from graph.clock import ensure_utc
from graph.context import ContextStart, ContextTexts, TextSearch
from graph.messages import MessageHit
from graph.models import Message, Topic
from graph.protocols import (
    ContextStoreProtocol,
    EventStoreProtocol,
    MessageStoreProtocol,
    SuppressionStoreProtocol,
    TopicStoreProtocol,
)
from graph.skill_vectors import SkillStamp
from graph.suppression import SessionState, SessionTurn
from graph.topics import ScoredTopic, TextRank, TopicBrief
from retrieval.classify import ConsultDecision, ConsultSignals, RequestClass, classify, consult
from retrieval.config import ContextConfig, RetrievalConfig
from retrieval.facts import asks_decision, fact_relevance, rank_facts
from retrieval.packer import Candidate, Packed, Snippet, pack, prefer_newest
from retrieval.search import CandidatePool, TopicHit, TopicSearch, unnamed
from retrieval.snippets import best_sentences, overlap, sentences, terms
from retrieval.suppression import LocalSuppression, SuppressionCache, retention, task_fingerprint
from retrieval.triggers import (
    RetrievalSignals,
    TriggerContext,
    after_search,
    fired,
    latest_cue,
    past_question,
    personal_cue,
    time_text,
)
from text.english import drop_names, name_candidates, noun_phrases, timed_names
from text.timephrases import SleepHistory, TimeWindow, resolve

log = logging.getLogger(__name__)
_SKILL_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skill-routing")
_EVIDENCE_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evidence-search")


class SkillRouter(Protocol):
    """Routes a message to skills (§5.3); ``vector`` is the message's embedding when the topic
    search already computed it (None: the router embeds the message itself); ``stamp`` is the
    routing skills' stamp read before the search (None: not read; the skill store then asks
    the vector index)."""

    def __call__(
        self,
        text: str,
        last_tool_output: str | None,
        vector: list[float] | None = None,
        stamp: SkillStamp | None = None,
    ) -> dict[str, Any]: ...


class ContextRequest(BaseModel):
    namespace: str
    message: str
    now: datetime
    budget: int = 1000
    session_id: str | None = None
    explicit: bool = False  # an explicit search: class A, no suppression
    full_records: bool = False  # L2: the full record of the best topic
    last_tool_output: str | None = None
    as_of: datetime | None = None  # the memory as it stood then (facts valid then, no later)


class ContextResult(BaseModel):
    context_text: str
    items: list[dict[str, Any]]
    skills: list[dict[str, Any]] = []  # light: 0-2 manifests; deep (a §5.3 trigger): 3-6
    skill_routing: dict[str, Any] = {}  # intent, mode, triggers, trace
    request_class: str
    triggers: list[str]
    deep: bool
    consult: dict[str, Any]
    time_window: dict[str, str | None] | None
    retrieval_signals: dict[str, float] = {}  # what the low-confidence trigger judged
    degraded: bool
    trace: list[dict[str, Any]]
    used_tokens: int
    budget: int
    timings_ms: dict[str, float]


@dataclass
class _Plan:
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
    # speaker field); topic search drops them too (``speakers``)
    evidence_text: str = ""
    skills: SkillStamp | None = None  # the routing skills' stamp (graph.context.ContextStart)
    # the participants the message names (lower case): topic search reads the message without
    # them (retrieval.search.unnamed)
    speakers: frozenset[str] = frozenset()
    # the suppression session's state, read with the start (None: not read)
    session: Callable[[], SessionState] | None = None


@dataclass
class _Gathered:
    signals: RetrievalSignals = field(default_factory=RetrievalSignals)
    skills: Future[tuple[list[dict[str, Any]], dict[str, Any]]] | None = None  # routing
    topics: dict[str, Topic] = field(default_factory=dict)
    # the topics reached only through matching messages, as much as a context shows of them
    briefs: dict[str, TopicBrief] = field(default_factory=dict)
    topic_hits: list[TopicHit] = field(default_factory=list)
    evidence: list[MessageHit] = field(default_factory=list)
    one_liner_sources: dict[str, list[str]] = field(default_factory=dict)
    # message id -> the id to cite it by, as read with the topics and evidence (no lookup)
    cited: dict[str, str] = field(default_factory=dict)
    whole: dict[str, Topic] = field(default_factory=dict)  # the best topics with their facts
    degraded: bool = False
    # hits whose topic the search scored from its full-text row alone (``partial_topic``):
    # ``_read_topics`` puts the topic as read in its place
    partial: set[str] = field(default_factory=set)


class _SeparateReads:
    """The reads before the search and the writes after packing from the separate stores, one
    round trip each (a builder given no ``ContextStore``: what it does in one,
    ``graph/context.py``)."""

    def __init__(
        self,
        topics: TopicStoreProtocol,
        messages: MessageStoreProtocol,
        sleep_history: Any,
        suppression: SuppressionStoreProtocol,
        events: EventStoreProtocol,
    ) -> None:
        self.topics, self.messages, self.sleep_history = topics, messages, sleep_history
        self.suppression, self.events = suppression, events

    def start(
        self,
        namespace: str,
        tail_turns: int,
        names: Sequence[str],
        people: Sequence[str] | None = None,
        session: tuple[str, datetime] | None = None,
    ) -> ContextStart:
        """As ``ContextStore.start``, a store at a time; the session is left to the builder's
        suppression store (``ContextStart.session`` None)."""
        history = self.sleep_history(namespace) if self.sleep_history else SleepHistory()
        return ContextStart(
            self.messages.tail(namespace, tail_turns),
            history,
            self.topics.known_names(namespace, names),
            self.messages.speakers_named(namespace, names if people is None else people),
        )

    def search_texts(
        self,
        namespace: str,
        evidence: TextSearch,
        topics: TextSearch,
        window: TextSearch | None = None,
        read_topics: bool = True,
    ) -> ContextTexts:
        """The evidence, the topics' full-text candidates (and with a ``window``, its own
        evidence and event topics), one round trip each (the topics read whatever
        ``read_topics`` says: ``TopicStore.search_text`` reads them)."""
        e, t = evidence, topics
        out = ContextTexts(
            self.messages.search_text(namespace, e.text, e.k, e.since, e.until),
            self.topics.search_text(
                namespace, t.text, t.k, t.since, t.until, fuzzy=False, light=True
            ),
        )
        if window is not None:
            w = window
            out.windowed = self.messages.search_text(namespace, w.text, w.k, w.since, w.until)
            out.event_topic_ids = self.events.topic_ids_in_window(namespace, t.since, t.until)
        return out

    def finish(
        self, namespace: str, used: Sequence[str], now: datetime, turn: SessionTurn | None
    ) -> None:
        """The use mark (its failure is the request's), then the session's turn (never fatal:
        the context is answered all the same)."""
        self.topics.mark_used(namespace, used, now)
        if turn is None:
            return
        try:
            self.suppression.record(
                namespace, turn.session_id, used, now, turn.confidence, turn.fingerprint,
                turn.retention,
            )  # fmt: skip
        except Exception as exc:
            log.warning("suppression state not recorded: %s", exc)


class ContextBuilder:
    def __init__(
        self,
        topics: TopicStoreProtocol,
        messages: MessageStoreProtocol,
        search: TopicSearch,
        sleep_history: Any = None,
        tz: str = "UTC",
        config: RetrievalConfig | None = None,
        skill_router: SkillRouter | None = None,
        suppression: SuppressionStoreProtocol | None = None,
        start: ContextStoreProtocol | None = None,
    ) -> None:
        self.topics = topics
        self.messages = messages
        self.search = search
        self.sleep_history = sleep_history  # callable(namespace) -> SleepHistory, optional
        self.tz = tz
        self.config = config or RetrievalConfig()
        self.cfg = self.config.context
        self.skill_router = skill_router  # (message, last tool output, vector) -> route dict
        # shared by every worker (Neo4j) when the composition root passes it (or a ContextStore,
        # whose ``finish`` counts the turns in its own); else this process's
        if suppression is None:
            suppression = start.suppression if start is not None else LocalSuppression()
        self.suppression = suppression
        # the reads before the search (tail, sleep history, known names) in one round trip and
        # the writes after packing in one transaction when the composition root passes a
        # ContextStore (its ``suppression`` must be the one given here, or none be given)
        self.reads = start or _SeparateReads(
            topics, messages, sleep_history, suppression, search.events
        )

    def build(self, req: ContextRequest) -> ContextResult:
        """The memory context for one message: triggers, one light search (deep when a trigger
        fires, the light search's own low confidence included), evidence, policy, packing."""
        now = ensure_utc(req.now)
        clock: dict[str, float] = {}
        mark = time.perf_counter()
        plan = self._plan(req, now)
        clock["triggers"] = _lap(mark)
        # small talk (class C) that no trigger named injects nothing whatever a search finds:
        # no search (it was ~80% of such a request's cost); the turn still counts for the
        # session's suppression and the skills are still routed
        quiet = plan.cls is RequestClass.NONE and not plan.deep
        got = _Gathered() if quiet else self._gather(req, now, plan)
        clock["retrieve"] = _lap(mark) - clock["triggers"]
        qterms = terms(plan.evidence_text or req.message)
        candidates, snippets = self._candidates(req, got, qterms, plan.window)
        if latest_cue(req.message):  # "most recent", "currently": an update outranks the old
            snippets = prefer_newest(snippets, self.cfg.latest_gain)
        floor = self.config.consult.personal_floor if plan.personal else "skip"
        signals = _signals(got, qterms, snippets, self.cfg)
        decision = consult(signals, self.config.consult, floor, plan.personal or "")
        packed = self._pack(req, now, plan.cls, decision, candidates, snippets, plan.session)
        skills, routing = (
            got.skills.result() if got.skills else self._route_skills(req, None, plan.skills)
        )
        clock["total"] = _lap(mark)
        window = plan.window
        return ContextResult(
            context_text=packed.text,
            items=[i.payload() for i in packed.items],
            skills=skills,
            skill_routing=routing,
            request_class=plan.cls.value,
            triggers=plan.triggers,
            deep=plan.deep,
            consult={
                "confidence": decision.confidence,
                "band": decision.band,
                "components": decision.components,
                **({"personal_request": plan.personal} if plan.personal else {}),
                **({"raised_by": decision.raised_by} if decision.raised_by else {}),
            },
            time_window=window.as_dict() if window else None,
            retrieval_signals=got.signals.as_dict(),
            degraded=got.degraded,
            trace=packed.trace,
            used_tokens=packed.used_tokens,
            budget=packed.budget,
            timings_ms=clock,
        )

    def _pack(
        self,
        req: ContextRequest,
        now: datetime,
        request_class: RequestClass,
        decision: ConsultDecision,
        candidates: list[Candidate],
        snippets: list[Snippet],
        session: Callable[[], SessionState] | None = None,
    ) -> Packed:
        """Policy (consult band, suppression), packing into the budget, the use mark."""
        self._apply_policy(req, now, request_class, decision, candidates, session)
        silent = request_class is RequestClass.NONE or (
            request_class is RequestClass.IMPLICIT and decision.band == "skip"
        )
        packed = pack(
            [] if silent else candidates,
            [] if silent else snippets,
            req.budget
            if decision.band != "consult" or request_class is RequestClass.EXPLICIT
            else min(req.budget, self.cfg.consult_budget),
            full_records=1 if req.full_records else 0,
        )
        used_topics = [i.record_id for i in packed.items if i.kind == "topic"]
        # the use mark and the session's turn (in the shared store): one write transaction
        self.reads.finish(req.namespace, used_topics, now, self._turn(req, decision.confidence))
        return packed

    def _plan(self, req: ContextRequest, now: datetime) -> _Plan:
        """The triggers that can be read off the message before searching, and its class."""
        begun = self.reads.start(
            req.namespace,
            self.cfg.tail_turns,
            # names a time phrase begins ("this month's novel") too: a topic may be named so
            [*noun_phrases(req.message), *timed_names(req.message)],
            name_candidates(req.message),
            # the session's suppression state comes with it (no round trip of its own)
            (req.session_id, now) if req.session_id is not None else None,
        )
        tail, history, known = begun.tail, begun.history, begun.known
        # a window still ahead of now holds nothing said: neither a filter nor a trigger
        # (a time phrase inside a known name is part of the name: ``time_text``)
        window = resolve(time_text(req.message, known), now, self.tz, history, past_only=True)
        ctx = TriggerContext(
            now, self.tz, history, " ".join(m.content for m in tail),
            known_names=frozenset(known), held_names=self._held_names(req, now, begun),
            search_pending=True,
        )  # fmt: skip
        # the triggers that need no search; a past-tense question and low confidence wait for
        # the light search's signals (``_gather``)
        triggers = fired(req.message, ctx)
        cues = (
            [*triggers, "memory_reference: past-tense question"]
            if past_question(req.message)
            else triggers
        )
        # a question naming a known topic or a participant of the conversation asks memory
        # (people are a topic's entities, not topics: "When did Caroline ...?" names no topic)
        named = bool(known or begun.speakers)
        cls = RequestClass.EXPLICIT if req.explicit else classify(req.message, cues, named)
        # deep only when a trigger names why (or the caller asked for an explicit search): a
        # class-A question the light search answers clearly stays light
        deep = bool(triggers) or req.explicit
        # advice, a recommendation, a question about the user's own life: consulted even when
        # the consult confidence is low (the trigger widens it to deep after a vague search)
        personal = personal_cue(req.message) if cls is RequestClass.IMPLICIT else None
        evidence_text = drop_names(req.message, begun.speakers)
        return _Plan(
            tail, window, triggers, cls, deep, personal, evidence_text, begun.skills,
            frozenset(begun.speakers), begun.session,
        )  # fmt: skip

    def _held_names(
        self, req: ContextRequest, now: datetime, begun: ContextStart
    ) -> frozenset[str]:
        """The known names the session holds: a topic so named was injected into it within
        the suppression cool-down (``SuppressionCache.holds``), so naming it again re-introduces
        nothing. Read with the start (``ContextStart.held``), else from the stores."""
        if req.session_id is None or not begun.known:
            return frozenset()
        try:
            named = (
                begun.held if begun.held is not None else self._named_in_session(req, now, begun)
            )
        except Exception as exc:  # an add-on to the trigger: never fatal
            log.warning("session's topics unavailable: %s", exc)
            return frozenset()
        if not named:
            return frozenset()
        cache = self._session(req, now, begun.session)
        if cache is None:
            return frozenset()
        return frozenset(n for n, ids in named.items() if any(cache.holds(i, now) for i in ids))

    def _named_in_session(
        self, req: ContextRequest, now: datetime, begun: ContextStart
    ) -> dict[str, set[str]]:
        """What ``ContextStart.held`` says, from the suppression and topic stores (a start that
        did not read it)."""
        assert req.session_id is not None
        read = begun.session
        state = read() if read else self.suppression.load(req.namespace, req.session_id, now)
        named: dict[str, set[str]] = {}
        for topic in self.topics.get(req.namespace, list(state.injections)):
            if topic.archived_at is not None:
                continue
            for name in {topic.name.lower(), *(a.lower() for a in topic.aliases)} & begun.known:
                named.setdefault(name, set()).add(topic.topic_id)
        return named

    def _session(
        self,
        req: ContextRequest,
        now: datetime,
        read: Callable[[], SessionState] | None = None,
    ) -> SuppressionCache | None:
        """The session's suppression state (``read`` with the context's start, else loaded),
        or None (no session, or the store failed: the context is built without suppression
        rather than not at all)."""
        if req.session_id is None:
            return None
        try:
            state = read() if read else self.suppression.load(req.namespace, req.session_id, now)
        except Exception as exc:  # suppression is an add-on to the memory context: never fatal
            log.warning("suppression state unavailable: %s", exc)
            return None
        return SuppressionCache.of(state, self.config.suppression)

    def _route_skills(
        self, req: ContextRequest, vector: list[float] | None, stamp: SkillStamp | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Skill routing (§4.1 step 2, §5.3) with the message's vector when the topic search
        already embedded it; a failure leaves the memory context intact."""
        if self.skill_router is None:
            return [], {"mode": "off", "trace": ["no skill router configured"]}
        try:
            # the stamp only when there is one: a router that takes none keeps working
            extra = {"stamp": stamp} if stamp is not None else {}
            route = self.skill_router(req.message, req.last_tool_output, vector, **extra)
        except Exception as exc:  # skills are an add-on to the memory context: never fatal
            log.warning("skill routing failed: %s", exc)
            return [], {"mode": "error", "trace": [f"skill routing failed: {exc}"]}
        routing = {
            k: route.get(k) for k in ("intent", "intent_reason", "mode", "triggers", "trace")
        }
        return list(route.get("skills") or []), routing

    # -- retrieval ------------------------------------------------------------------------------
    def _gather(self, req: ContextRequest, now: datetime, plan: _Plan) -> _Gathered:
        """One topic search and the message evidence. The message is embedded once; the
        candidates are fetched for the request's k (``light_pool``), so when the light
        search's own signals fire the low-confidence trigger the deep ranking searches again
        (about 1 request in 60 of the benchmark mix)."""
        got = _Gathered()
        if plan.cls is RequestClass.NONE:  # small talk: nothing is injected, so nothing searched
            plan.deep = False
            if self.skill_router is not None:
                got.skills = _SKILL_POOL.submit(self._route_skills, req, None, plan.skills)
            return got
        query = req.message
        if len(terms(query)) < 3 and plan.tail:  # "and then?": lean on the recent tail
            query = " ".join([*(m.content for m in plan.tail[-2:]), query])
        # topic search reads it without the participants' names (as TopicSearch.run does)
        query = unnamed(query, plan.speakers)
        # a light request's candidates are fetched for its own k (light_pool): 16 per ranking
        # instead of 40, most of the vector search's Neo4j work and ~50 topic maps fewer; the
        # low-confidence signals are the same either way (the best two cosines, the best BM25)
        light = self.cfg.light_pool and not plan.deep
        sized = self.cfg.light_topics if light else self.cfg.deep_topics
        # the conversation's evidence and the topics' full-text candidates need no vector: both
        # are read in one round trip while the message is embedded (the evidence again, deep,
        # if a late trigger widens the search)
        evidence = self._texts(req, query, plan, sized)
        vector = self.search.embed_query(query)
        if self.skill_router is not None:  # routed beside the topic search, same vector
            # (the message's own, names aside: a skill is not about a participant)
            own = vector if query == unnamed(req.message, plan.speakers) else None
            got.skills = _SKILL_POOL.submit(self._route_skills, req, own, plan.skills)
        pool = self._pool(req, query, now, plan, sized, vector, evidence)
        got.signals = RetrievalSignals.of(pool.cosine, pool.text_scores)
        if not plan.deep:
            cue = TriggerContext(now, signals=got.signals, config=self.config.triggers)
            late = after_search(req.message, cue)
            if late:
                plan.triggers.append(late)
                plan.deep = True  # the light evidence is dropped: searched again, deep
                # a window no trigger named (rare), or a light-sized pool: search again, the
                # texts with the deep evidence in one read as before
                if plan.window is not None or light:
                    evidence = self._texts(req, query, plan, self.cfg.deep_topics)
                    pool = self._pool(req, query, now, plan, self.cfg.deep_topics, vector, evidence)
                else:
                    evidence = _EVIDENCE_POOL.submit(self._evidence, req, plan.window, True)
        k = self.cfg.deep_topics if plan.deep else self.cfg.light_topics
        found = self.search.rank(pool, k, expand=plan.deep)
        got.topic_hits, got.degraded = found.hits, found.degraded
        got.partial = {h.topic.topic_id for h in got.topic_hits} & pool.partial
        known_by = _after(req.as_of)  # as_of: no topic first seen later
        if known_by is not None:
            got.topic_hits = [h for h in got.topic_hits if h.topic.time.first_seen_at < known_by]
        said = evidence.result()
        got.evidence = said.evidence + said.windowed
        for hit in got.topic_hits:
            got.topics[hit.topic.topic_id] = hit.topic
        return got

    def _texts(
        self, req: ContextRequest, query: str, plan: _Plan, sized: int
    ) -> Future[ContextTexts]:
        """The evidence and the topics' full-text candidates for ``query`` (a search of
        ``sized`` topics), with a deep window's own evidence and event topics, in one round
        trip, on the evidence pool."""
        first, *rest = self._evidence_searches(req, plan.window, plan.deep)
        window = plan.window if plan.deep else None
        topics = TextSearch(
            query, self.search.fetch_size(sized), window.start if window else None,
            window.end if window else None,
        )  # fmt: skip
        # the topics ranked, not read: the vector query reads them (one round trip fewer)
        return _EVIDENCE_POOL.submit(
            self.reads.search_texts, req.namespace, first, topics, rest[0] if rest else None,
            read_topics=False,
        )  # fmt: skip

    def _pool(
        self,
        req: ContextRequest,
        query: str,
        now: datetime,
        plan: _Plan,
        sized: int,
        vector: list[float] | None,
        texts: Future[ContextTexts],
    ) -> CandidatePool:
        """The topic search's candidates for ``sized`` topics, the full-text ones (and a deep
        window's event topics, read with the window's own evidence) from ``texts``."""
        window = plan.window if plan.deep else None
        given = self._windowed(req, plan.window, plan.deep)
        # the full-text candidates the vector query did not return are scored partial, not
        # read by id: _read_topics reads the ones that rank (it reads every hit anyway)
        return self.search.pool(
            req.namespace, query, now, sized, window, vector, lambda: _text_topics(texts),
            (lambda: texts.result().event_topic_ids) if given else None, texts.done,
            partial=True,
        )  # fmt: skip

    def _evidence(self, req: ContextRequest, window: TimeWindow | None, deep: bool) -> ContextTexts:
        """The evidence searches alone (no topics), as ``_texts`` reads them."""
        found: list[MessageHit] = []
        for s in self._evidence_searches(req, window, deep):
            found += self.messages.search_text(req.namespace, s.text, s.k, s.since, s.until)
        return ContextTexts(found, [])

    def _evidence_searches(
        self, req: ContextRequest, window: TimeWindow | None, deep: bool
    ) -> list[TextSearch]:
        """Messages matching the request (and, in a deep search with a window, the window's
        own matches, so old hits cannot crowd it out)."""
        since, until = (window.start, window.end) if window and deep else (None, None)
        known_by = _after(req.as_of)  # as_of: nothing said later is evidence
        if known_by is not None:
            until = min(until, known_by) if until else known_by
        k = self.cfg.deep_evidence if deep else self.cfg.light_evidence
        searches = [TextSearch(req.message, k, None, known_by)]
        if since or until != known_by:
            searches.append(TextSearch(req.message, k // 2, since, until))
        return searches

    def _windowed(self, req: ContextRequest, window: TimeWindow | None, deep: bool) -> bool:
        """Whether the evidence has a window search of its own (``_evidence_searches``)."""
        return len(self._evidence_searches(req, window, deep)) > 1

    def _candidates(
        self,
        req: ContextRequest,
        got: _Gathered,
        qterms: frozenset[str],
        window: TimeWindow | None,
    ) -> tuple[list[Candidate], list[Snippet]]:
        strength = _topic_strength(got.topic_hits)
        snippets: dict[str, Snippet] = {}
        best = [h.topic.topic_id for h in got.topic_hits[: self.cfg.fact_topics]]
        self._read_topics(req.namespace, got, best)
        stored = [got.whole[tid] for tid in best if tid in got.whole]
        full = [t.view(req.as_of) for t in stored]
        hidden = _hidden_sentences(full, stored)
        top = max((h.score for h in got.evidence), default=1.0) or 1.0
        evidence_topics: dict[str, tuple[str, float]] = {}
        for hit in got.evidence:
            m = _without(hit.message, hidden.get(hit.message.message_id, ()))
            if m.message_id in snippets or not m.content.strip():
                continue  # empty: all it said was superseded (or said after as_of)
            homes = sorted((tid for tid, _ in hit.topics), key=lambda t: -strength.get(t, 0.0))
            base = hit.score / top
            for tid, name in hit.topics:
                prev = evidence_topics.get(tid, (name, 0.0))
                evidence_topics[tid] = (name, max(prev[1], base))
            boost = 1 + self.cfg.topic_boost * max((strength.get(t, 0.0) for t in homes), default=0)
            snippets[m.message_id] = self._snippet(m, base * boost, homes, qterms, window)
        for topic in full:
            strong = strength.get(topic.topic_id, 0.0)
            for snip in self._fact_snippets(topic, qterms, strong, asks_decision(req.message)):
                if snip.message_id not in snippets:
                    snippets[snip.message_id] = snip
        candidates = [
            _topic_candidate(h.topic, strength.get(h.topic.topic_id, 0.0), h)
            for h in got.topic_hits
        ]
        known = {c.record_id for c in candidates}
        ranked = sorted(evidence_topics.items(), key=lambda kv: -kv[1][1])
        ranked = ranked[: self.cfg.evidence_topics]
        for tid, (name, score) in ranked:
            if tid not in known:
                candidates.append(Candidate(
                    record_id=tid, kind="topic", title=name,
                    score=score * self.cfg.evidence_topic_factor,
                    reason_label="conversation_match",
                    reason_summary="mentioned in messages that match the request",
                    components={"evidence": score},
                ))  # fmt: skip
        self._fill_topic_details(req, candidates, got)
        self._cite(req.namespace, list(snippets.values()), candidates, got.cited)
        return candidates, [_windowed(s, window, self.cfg) for s in snippets.values()]

    def _read_topics(self, namespace: str, got: _Gathered, best: list[str]) -> None:
        """One read of every topic a context may show: the search's hits as summaries (a hit
        scored from its full-text row alone gets its light record), the topics only the
        matching messages reached as briefs (title, dates, one-liner: all a context shows of
        them), each with its one-liner's sources, and the ``best`` whole (their facts make
        fact snippets and hide superseded statements)."""
        by_evidence: dict[str, float] = {}
        for hit in got.evidence:
            for tid, _ in hit.topics:
                by_evidence[tid] = max(by_evidence.get(tid, 0.0), hit.score)
        reached = sorted(by_evidence, key=lambda t: -by_evidence[t])
        # twice the evidence topics kept: a few are dropped later (all their text superseded)
        ids = [h.topic.topic_id for h in got.topic_hits]
        hit_ids = set(ids)
        briefs = [t for t in reached[: 2 * self.cfg.evidence_topics] if t not in hit_ids]
        found, got.cited = self.topics.cited_summaries(
            namespace, list(dict.fromkeys(ids + briefs)), best, brief_ids=briefs
        )
        for hit in got.evidence:  # read whole: its id to cite by is known
            m = hit.message
            got.cited.setdefault(m.message_id, m.external_id or m.message_id)
        for topic, sources in found:
            got.one_liner_sources[topic.topic_id] = sources
            if isinstance(topic, TopicBrief):
                got.briefs[topic.topic_id] = topic
                continue
            if topic.topic_id in got.partial:
                got.topics[topic.topic_id] = topic  # the topic as read, for its partial hit
            got.topics.setdefault(topic.topic_id, topic)
            if topic.topic_id in best:
                got.whole[topic.topic_id] = topic
        if got.partial:  # each partial hit gets its topic as read (gone since: left out)
            kept = []
            for found_hit in got.topic_hits:
                tid = found_hit.topic.topic_id
                if tid in got.partial:
                    read = got.topics.get(tid)
                    if read is None or read is found_hit.topic:
                        got.topics.pop(tid, None)
                        continue
                    found_hit.topic = read
                kept.append(found_hit)
            got.topic_hits = kept

    def _snippet(
        self,
        m: Message,
        score: float,
        homes: list[str],
        qterms: frozenset[str],
        window: TimeWindow | None,
    ) -> Snippet:
        keep = best_sentences(m.content, qterms, self.cfg.max_sentences)
        if not keep:
            keep, score = (
                sentences(m.content)[:1] or [m.content[: self.cfg.fallback_chars]],
                score * self.cfg.fallback_weight,
            )
        return Snippet(
            message_id=m.message_id,
            source_id=m.external_id or m.message_id,
            at=m.at,
            speaker=m.speaker or ("" if m.role == "user" else m.role),
            text=" ".join(keep)[: self.cfg.max_chars],
            score=score,
            record_ids=homes,
        )

    def _fact_snippets(
        self, topic: Topic, qterms: frozenset[str], strength: float, decision: bool = False
    ) -> list[Snippet]:
        """Facts of a semantically retrieved topic that share terms with the request (or state
        a choice, ``decision``: the request asks what was decided), the most relevant and then
        the newest first (``retrieval.facts.rank_facts``)."""
        out = []
        # best first (relevance, then recency): equal scores keep this order in the packer
        for fact in rank_facts(topic.facts[-self.cfg.facts_scanned :], qterms, decision=decision):
            share = fact_relevance(fact.text, qterms, decision)
            if share <= 0:
                break  # ranked: nothing after this shares a term either
            if not fact.source_message_ids:
                continue
            speaker, _, text = (
                fact.text.partition(": ") if ": " in fact.text[:40] else ("", "", fact.text)
            )
            out.append(
                Snippet(
                    message_id=fact.source_message_ids[0],
                    source_id=fact.source_message_ids[0],
                    at=fact.at,
                    speaker=speaker,
                    text=text[: self.cfg.fact_chars],
                    score=self.cfg.fact_weight * strength * share,
                    record_ids=[topic.topic_id],
                )
            )
        return sorted(out, key=lambda s: -s.score)[: self.cfg.fact_snippets]

    def _fill_topic_details(
        self, req: ContextRequest, candidates: list[Candidate], got: _Gathered
    ) -> None:
        """Titles, dates and one-liners for every candidate (read once by ``_read_topics``), the
        full record of the best one when L2 was asked for."""
        for c in candidates:
            found = got.topics.get(c.record_id) or got.briefs.get(c.record_id)
            if found is not None:
                _describe(c, found, got.one_liner_sources.get(c.record_id, []))
        if req.full_records and candidates:
            best = max(candidates, key=lambda c: c.score)
            whole = got.whole.get(best.record_id)
            stored = [whole] if whole else self.topics.get(req.namespace, [best.record_id])
            for topic in stored:
                _full_record(
                    best, topic.view(req.as_of), self.cfg.full_record_facts, terms(req.message),
                    asks_decision(req.message),
                )  # fmt: skip

    def _cite(
        self,
        namespace: str,
        snippets: list[Snippet],
        candidates: list[Candidate],
        cited: dict[str, str],
    ) -> None:
        """Cite messages by the id the caller knows them by (external id when there is one):
        snippets found through facts, one-liners and full records. ``cited`` holds the ids read
        with the topics and the evidence; the rest (rare) in one read."""
        unresolved = [s for s in snippets if s.source_id == s.message_id]
        ids = {s.message_id for s in unresolved}
        ids |= {m for c in candidates for m in (*c.one_liner_sources, *c.full_record_sources)}
        missing = sorted(ids - cited.keys())
        if not ids:
            return
        known = {m: cited[m] for m in ids if m in cited}
        if missing:
            known.update(self.messages.source_ids(namespace, missing))
        for s in unresolved:
            s.source_id = known.get(s.message_id, s.message_id)
        for c in candidates:
            c.one_liner_sources = [known.get(m, m) for m in c.one_liner_sources]
            c.full_record_sources = list(
                dict.fromkeys(known.get(m, m) for m in c.full_record_sources)
            )

    # -- policy ---------------------------------------------------------------------------------
    def _apply_policy(
        self,
        req: ContextRequest,
        now: datetime,
        request_class: RequestClass,
        decision: ConsultDecision,
        candidates: list[Candidate],
        session: Callable[[], SessionState] | None = None,
    ) -> None:
        if request_class is RequestClass.IMPLICIT and decision.band == "skip":
            for c in candidates:
                c.blocked = (
                    f"consult confidence below {self.config.consult.skip_below}: "
                    "implicit resurfacing skipped"
                )
            return
        # an explicit search is never suppressed; small talk injects nothing, so its session's
        # state need not be read (a round trip per such message)
        if request_class in (RequestClass.EXPLICIT, RequestClass.NONE):
            return
        cache = self._session(req, now, session)
        if cache is None:
            return
        fingerprint = task_fingerprint(req.message)
        for c in candidates:
            c.blocked = c.blocked or cache.blocked(
                c.record_id, now, decision.confidence, fingerprint, False
            )

    def _turn(self, req: ContextRequest, confidence: float) -> SessionTurn | None:
        """The session's turn this request counts (None without a session)."""
        if req.session_id is None:
            return None
        keep = retention(self.config.suppression)
        return SessionTurn(req.session_id, confidence, task_fingerprint(req.message), keep)


def _text_topics(texts: Future[ContextTexts]) -> list[ScoredTopic] | list[TextRank]:
    """The topics' full-text candidates of a ``search_texts`` read: their ranking when it left
    them to the vector query to read, else the topics read."""
    found = texts.result()
    return found.topics if found.topic_ranks is None else found.topic_ranks


def _after(as_of: datetime | None) -> datetime | None:
    """The exclusive bound of what was known ``as_of`` (messages at ``as_of`` included)."""
    return ensure_utc(as_of, "as_of") + timedelta(microseconds=1) if as_of else None


def _hidden_sentences(shown: list[Topic], stored: list[Topic]) -> dict[str, set[str]]:
    """message id -> the statements of it that these topics hide from the view shown (closed,
    or said after ``as_of``) and show nowhere: a superseded "my favourite colour is blue" is not
    evidence for the colour now, but the rest of its message still is."""
    visible = {f.text for t in shown for f in t.facts}
    hidden: dict[str, set[str]] = {}
    for topic in stored:
        for fact in topic.facts:
            if fact.text not in visible:
                for m in fact.source_message_ids:
                    hidden.setdefault(m, set()).add(fact.text)
    return hidden


def _without(message: Message, statements: Collection[str]) -> Message:
    """The message with hidden statements cut out (a fact is a sentence, maybe "Speaker: "
    first)."""
    content = message.content
    for text in statements:
        said = text.split(": ", 1)[1] if text not in content and ": " in text[:102] else text
        content = content.replace(said, " ")
    if content == message.content:
        return message
    return message.model_copy(update={"content": content})


def _lap(mark: float) -> float:
    return (time.perf_counter() - mark) * 1000


def _topic_strength(hits: list[TopicHit]) -> dict[str, float]:
    """Each retrieved topic's score relative to the best (0..1)."""
    top = max((h.score for h in hits), default=0.0)
    return {h.topic.topic_id: (h.score / top if top else 0.0) for h in hits}


def _windowed(s: Snippet, window: TimeWindow | None, cfg: ContextConfig) -> Snippet:
    if window is None or s.at is None:
        return s
    s.score *= cfg.window_boost if window.contains(s.at) else cfg.outside_window
    return s


def _topic_candidate(topic: Topic, strength: float, hit: TopicHit) -> Candidate:
    return Candidate(
        record_id=topic.topic_id,
        kind="topic",
        title=topic.name,
        score=hit.score,
        reason_label="graph_neighbour"
        if any(s.startswith("graph:") for s in hit.sources)
        else "topic_match",
        reason_summary=hit.reason,
        components={**hit.components, "strength": strength},
    )


def _describe(c: Candidate, topic: Topic | TopicBrief, one_liner_sources: list[str]) -> None:
    c.title = topic.name
    if isinstance(topic, TopicBrief):
        c.first_seen_at, c.last_seen_at = topic.first_seen_at, topic.last_seen_at
    else:
        c.first_seen_at, c.last_seen_at = topic.time.first_seen_at, topic.time.last_seen_at
    c.one_liner = topic.one_liner if one_liner_sources else ""  # never show uncitable text
    c.one_liner_sources = list(one_liner_sources)


def _full_record(
    c: Candidate, topic: Topic, facts: int, qterms: frozenset[str], decision: bool = False
) -> None:
    """The L2 rendering of a topic: its ``facts`` facts best for the request (relevance, then
    recency), numbers, open loops and events."""
    chosen = rank_facts(topic.facts, qterms, facts, decision)
    lines = [
        f"## {topic.name} (first seen {topic.time.first_seen_at:%-d %b %Y}, "
        f"last seen {topic.time.last_seen_at:%-d %b %Y})"
    ]
    lines += [f"- {f.at:%-d %b %Y} {f.text}" if f.at else f"- {f.text}" for f in chosen]
    lines += [
        f"- number: {n.key} = {n.value:g} {n.unit or ''} ({n.at:%-d %b %Y})" for n in topic.numbers
    ]
    lines += [f"- open: {o.text}" for o in topic.open_loops]
    lines += [f"- {e.at:%-d %b %Y} event: {e.event}" for e in topic.time.notable_events]
    c.full_record = "\n".join(lines)
    groups = (chosen, topic.numbers, topic.open_loops, topic.time.notable_events)
    c.full_record_sources = list(
        dict.fromkeys(m for g in groups for x in g for m in x.source_message_ids)
    )


def _signals(
    got: _Gathered, qterms: frozenset[str], snippets: list[Snippet], cfg: ContextConfig
) -> ConsultSignals:
    best = max(snippets, key=lambda s: s.score, default=None)
    top_topic = got.topic_hits[0].topic if got.topic_hits else None
    lexical = overlap(best.text, qterms) if best else 0.0
    # the nearest of the ranked topics, not the first: a topic that only full text found may
    # rank first with no cosine of its own while a near one ranks second ("What's the plan for
    # the roof repair this weekend?" on a Monday: 0 against 0.69 made a clear match "skip")
    semantic = max((h.components.get("vector_cosine", 0.0) for h in got.topic_hits), default=0.0)
    record_type = 0.0
    if top_topic is not None and (
        top_topic.time.notable_events or top_topic.open_loops or top_topic.stats.constraint_count
    ):
        record_type = 1.0
    importance = got.topic_hits[0].components.get("utility_boost", 0.0) if got.topic_hits else 0.0
    return ConsultSignals(
        lexical=min(1.0, lexical * cfg.lexical_gain),
        semantic=semantic,
        same_task=cfg.same_task_signal if best and best.record_ids else 0.0,
        record_type=record_type,
        importance_recency=importance,
        provenance=1.0 if best else 0.0,
    )
