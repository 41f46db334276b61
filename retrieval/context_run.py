"""One memory context's run: the request, its clock, the parsed message, the plan and what was
found, with one method per step, read top to bottom in ``run``:

1. ``make_plan``: the reads before the search (tail, sleep history, known names, the session),
   the time window, the triggers that need no search, the request class;
2. ``search``: the topic search and the conversation's evidence (``retrieval.gather``);
3. ``expand``: the candidates and snippets (``retrieval.candidates``);
4. ``decide``: the consult confidence and its band;
5. ``pack``: the policy (consult band, suppression) and the packing into the budget;
6. ``finish``: the use mark and the session's turn, one write (``ContextStore.finish``).

The message is read through ``self.msg`` (``retrieval.message.ParsedMessage``): every step
shares its readings instead of scanning the text again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import cast

from graph.clock import ensure_utc
from graph.context import ContextStart
from graph.skill_vectors import SkillStamp
from graph.suppression import SessionState, SessionTurn
from graph.tracing import traced
from retrieval.candidates import consult_signals, expand
from retrieval.classify import ConsultDecision, RequestClass, classify, consult
from retrieval.context_result import (
    ConsultReport,
    ContextRequest,
    ContextResult,
    RoutedSkill,
    SkillRouting,
    WindowReport,
)
from retrieval.context_state import Early, Plan, Shared
from retrieval.gather import Gathered, early, gather
from retrieval.message import ParsedMessage
from retrieval.packer import Candidate, Packed, Snippet, pack, prefer_newest
from retrieval.search import tidied
from retrieval.snippets import terms
from retrieval.suppression import SuppressionCache, retention
from retrieval.triggers import TriggerContext, fired
from text.english import drop_names
from text.timephrases import most_specific

log = logging.getLogger(__name__)


class ContextRun:
    """One request's context (``ContextBuilder.build`` makes one per request)."""

    plan: Plan
    got: Gathered

    def __init__(self, builder: Shared, req: ContextRequest) -> None:
        self.builder, self.req = builder, req
        self.config, self.cfg = builder.config, builder.cfg
        self.now = ensure_utc(req.now)
        self.msg = ParsedMessage(req.message)
        self.timings: dict[str, float] = {}
        # the message's vector and its passage search, begun while the first read runs
        self.early: Future[Early] | None = None

    @traced("context", namespace="self.req.namespace")
    def run(self) -> ContextResult:
        """The steps, in order; the timings of the plan, the search and the whole."""
        mark = time.perf_counter()
        self.plan = self.make_plan()
        self.timings["triggers"] = _lap(mark)
        self.got = self.search()
        self.timings["retrieve"] = _lap(mark) - self.timings["triggers"]
        qterms, candidates, snippets = self.expand()
        decision = self.decide(qterms, snippets)
        packed = self.pack(decision, candidates, snippets)
        self.finish(packed, decision)
        got = self.got
        skills, routing = (
            got.skills.result() if got.skills else self.route_skills(None, self.plan.skills)
        )
        self.timings["total"] = _lap(mark)
        return self.result(decision, packed, skills, routing)

    # -- 1. plan ------------------------------------------------------------------------------
    @traced("context.plan")
    def make_plan(self) -> Plan:
        """The triggers that can be read off the message before searching, and its class."""
        req, msg, now = self.req, self.msg, self.now
        self.early = self._embed_early()
        begun = self.builder.reads.start(
            req.namespace,
            self.cfg.tail_turns,
            # names a time phrase begins ("this month's novel") too: a topic may be named so
            list(msg.names),
            list(msg.name_candidates),
            # the session's suppression state comes with it (no round trip of its own)
            (req.session_id, now) if req.session_id is not None else None,
        )
        tail, history, known = begun.tail, begun.history, begun.known
        self._remember_speakers(bool(begun.speakers))
        # the windows found once: the filter is the most specific, the relative-time trigger
        # reads the same (a window still ahead of now holds nothing said: neither)
        window = most_specific(msg.windows(now, self.builder.tz, history, known))
        ctx = TriggerContext(
            now, self.builder.tz, history, " ".join(m.content for m in tail),
            known_names=frozenset(known), held_names=self._held_names(begun), search_pending=True,
        )  # fmt: skip
        # the triggers that need no search; a past-tense question and low confidence wait for
        # the light search's signals (``retrieval.gather``)
        triggers = fired(msg, ctx)
        past = msg.past_question is not None
        cues = [*triggers, "memory_reference: past-tense question"] if past else triggers
        # a question naming a known topic or a participant of the conversation asks memory
        # (people are a topic's entities, not topics: "When did Caroline ...?" names no topic)
        named = bool(known or begun.speakers)
        cls = RequestClass.EXPLICIT if req.explicit else classify(msg, cues, named)
        # deep only when a trigger names why (or the caller asked for an explicit search): a
        # class-A question the light search answers clearly stays light
        deep = bool(triggers) or req.explicit
        # advice, a recommendation, a question about the user's own life: consulted even when
        # the consult confidence is low (the trigger widens it to deep after a vague search)
        personal = msg.personal if cls is RequestClass.IMPLICIT else None
        evidence_text = drop_names(msg.text, begun.speakers)
        return Plan(
            tail, window, triggers, cls, deep, personal, evidence_text, begun.skills,
            frozenset(begun.speakers), begun.session, tidied(msg.text, evidence_text),
        )  # fmt: skip

    def _embed_early(self) -> Future[Early] | None:
        """The message embedded, and its passages searched, beside the first read
        (``retrieval.gather.early``): the topic search embeds the message itself unless it is
        short ("and then?" leans on the tail, small talk searches nothing) or names the
        conversation's participants (dropped first: which are, the first read says), so its
        vector and passages are ready sooner: the same ones, about an embedding's time off the
        request's wall time (docs/performance.md, Session 25). Not when the namespace's last
        message named a participant (LoCoMo's questions mostly do): the work would be wasted."""
        named = self.builder.named_speakers.get(self.req.namespace, True)
        if named or self.builder.search.embedder is None or len(self.msg.terms) < 3:
            return None
        return early(self)

    def _remember_speakers(self, named: bool) -> None:
        """Whether this message named a participant: the next one of the namespace is embedded
        early only when it did not (``_embed_early``); at most 10,000 namespaces kept."""
        hints = self.builder.named_speakers
        if len(hints) >= 10_000 and self.req.namespace not in hints:
            hints.clear()
        hints[self.req.namespace] = named

    def _held_names(self, begun: ContextStart) -> frozenset[str]:
        """The known names the session holds: a topic so named was injected into it within
        the suppression cool-down (``SuppressionCache.holds``), so naming it again re-introduces
        nothing. Read with the start (``ContextStart.held``), else from the stores."""
        if self.req.session_id is None or not begun.known:
            return frozenset()
        try:
            named = begun.held if begun.held is not None else self._named_in_session(begun)
        except Exception as exc:  # an add-on to the trigger: never fatal
            log.warning("session's topics unavailable: %s", exc)
            return frozenset()
        if not named:
            return frozenset()
        cache = self.session(begun.session)
        if cache is None:
            return frozenset()
        now = self.now
        return frozenset(n for n, ids in named.items() if any(cache.holds(i, now) for i in ids))

    def _named_in_session(self, begun: ContextStart) -> dict[str, set[str]]:
        """What ``ContextStart.held`` says, from the suppression and topic stores (a start that
        did not read it)."""
        req = self.req
        assert req.session_id is not None
        read = begun.session
        state = (
            read()
            if read
            else self.builder.suppression.load(req.namespace, req.session_id, self.now)
        )
        named: dict[str, set[str]] = {}
        for topic in self.builder.topics.get(req.namespace, list(state.injections)):
            if topic.archived_at is not None:
                continue
            for name in {topic.name.lower(), *(a.lower() for a in topic.aliases)} & begun.known:
                named.setdefault(name, set()).add(topic.topic_id)
        return named

    def session(self, read: Callable[[], SessionState] | None = None) -> SuppressionCache | None:
        """The session's suppression state (``read`` with the context's start, else loaded),
        or None (no session, or the store failed: the context is built without suppression
        rather than not at all)."""
        req = self.req
        if req.session_id is None:
            return None
        try:
            state = (
                read()
                if read
                else self.builder.suppression.load(req.namespace, req.session_id, self.now)
            )
        except Exception as exc:  # suppression is an add-on to the memory context: never fatal
            log.warning("suppression state unavailable: %s", exc)
            return None
        return SuppressionCache.of(state, self.config.suppression)

    # -- 2. search ----------------------------------------------------------------------------
    @traced("context.search")
    def search(self) -> Gathered:
        """The topic search and the evidence (``retrieval.gather``). Small talk (class C) that
        no trigger named injects nothing whatever a search finds: no search (it was ~80% of
        such a request's cost); the turn still counts for the session's suppression and the
        skills are still routed."""
        quiet = self.plan.cls is RequestClass.NONE and not self.plan.deep
        return Gathered() if quiet else gather(self)

    def route_skills(
        self, vector: list[float] | None, stamp: SkillStamp | None = None
    ) -> tuple[list[RoutedSkill], SkillRouting]:
        """Skill routing (§4.1 step 2, §5.3) with the message's vector when the topic search
        already embedded it; a failure leaves the memory context intact."""
        router = self.builder.skill_router
        if router is None:
            return [], {"mode": "off", "trace": ["no skill router configured"]}
        try:
            # the stamp only when there is one: a router that takes none keeps working
            extra = {"stamp": stamp} if stamp is not None else {}
            route = router(self.req.message, self.req.last_tool_output, vector, **extra)
        except Exception as exc:  # skills are an add-on to the memory context: never fatal
            log.warning("skill routing failed: %s", exc)
            return [], {"mode": "error", "trace": [f"skill routing failed: {exc}"]}
        routing: SkillRouting = {
            "intent": route.get("intent"),
            "intent_reason": route.get("intent_reason"),
            "mode": route.get("mode"),
            "triggers": route.get("triggers"),
            "trace": route.get("trace"),
        }
        return list(route.get("skills") or []), routing

    # -- 3. expand ----------------------------------------------------------------------------
    @traced("context.expand")
    def expand(self) -> tuple[frozenset[str], list[Candidate], list[Snippet]]:
        """The message's terms (its participants' names aside), the candidates and the
        snippets, the newest first when the message asks for the value as it stands now."""
        msg, evidence_text = self.msg, self.plan.evidence_text
        qterms = msg.terms if evidence_text in ("", msg.text) else terms(evidence_text)
        candidates, snippets = expand(self, self.got, qterms)
        if msg.latest:  # "most recent", "currently": an update outranks the old
            snippets = prefer_newest(snippets, self.cfg.latest_gain)
        return qterms, candidates, snippets

    # -- 4. decide ----------------------------------------------------------------------------
    @traced("context.decide")
    def decide(self, qterms: frozenset[str], snippets: list[Snippet]) -> ConsultDecision:
        """The consult confidence of what was found, at least the personal floor for a
        personal request."""
        personal = self.plan.personal
        floor = self.config.consult.personal_floor if personal else "skip"
        signals = consult_signals(self.got, qterms, snippets, self.cfg)
        return consult(signals, self.config.consult, floor, personal or "")

    # -- 5. pack ------------------------------------------------------------------------------
    @traced("context.pack")
    def pack(
        self, decision: ConsultDecision, candidates: list[Candidate], snippets: list[Snippet]
    ) -> Packed:
        """Policy (consult band, suppression), then packing into the budget."""
        request_class, req = self.plan.cls, self.req
        self._apply_policy(decision, candidates)
        silent = request_class is RequestClass.NONE or (
            request_class is RequestClass.IMPLICIT and decision.band == "skip"
        )
        return pack(
            [] if silent else candidates,
            [] if silent else snippets,
            req.budget
            if decision.band != "consult" or request_class is RequestClass.EXPLICIT
            else min(req.budget, self.cfg.consult_budget),
            full_records=1 if req.full_records else 0,
        )

    def _apply_policy(self, decision: ConsultDecision, candidates: list[Candidate]) -> None:
        """Block what the policy holds back: every candidate of an implicit request that
        skips, and what the session's suppression holds (never for an explicit search)."""
        request_class = self.plan.cls
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
        cache = self.session(self.plan.session)
        if cache is None:
            return
        fingerprint, now = self.msg.fingerprint, self.now
        for c in candidates:
            c.blocked = c.blocked or cache.blocked(
                c.record_id, now, decision.confidence, fingerprint, False
            )

    # -- 6. finish ----------------------------------------------------------------------------
    @traced("context.finish")
    def finish(self, packed: Packed, decision: ConsultDecision) -> None:
        """The use mark and the session's turn (in the shared store): one write transaction."""
        used_topics = [i.record_id for i in packed.items if i.kind == "topic"]
        self.builder.reads.finish(
            self.req.namespace, used_topics, self.now, self._turn(decision.confidence)
        )

    def _turn(self, confidence: float) -> SessionTurn | None:
        """The session's turn this request counts (None without a session)."""
        if self.req.session_id is None:
            return None
        keep = retention(self.config.suppression)
        return SessionTurn(self.req.session_id, confidence, self.msg.fingerprint, keep)

    # -- the answer ---------------------------------------------------------------------------
    def result(
        self,
        decision: ConsultDecision,
        packed: Packed,
        skills: list[RoutedSkill],
        routing: SkillRouting,
    ) -> ContextResult:
        """The typed answer: what was packed, why (consult, triggers, trace) and the timings."""
        plan, window = self.plan, self.plan.window
        consulted: ConsultReport = {
            "confidence": decision.confidence,
            "band": decision.band,
            "components": decision.components,
        }
        if plan.personal:
            consulted["personal_request"] = plan.personal
        if decision.raised_by:
            consulted["raised_by"] = decision.raised_by
        return ContextResult(
            context_text=packed.text,
            items=[i.payload() for i in packed.items],
            skills=skills,
            skill_routing=routing,
            request_class=plan.cls.value,
            triggers=plan.triggers,
            deep=plan.deep,
            consult=consulted,
            time_window=cast(WindowReport, window.as_dict()) if window else None,
            retrieval_signals=self.got.signals.as_dict(),
            degraded=self.got.degraded,
            trace=packed.trace,
            used_tokens=packed.used_tokens,
            budget=packed.budget,
            timings_ms=self.timings,
        )


def _lap(mark: float) -> float:
    return (time.perf_counter() - mark) * 1000
