"""The context's search step: one topic search and the conversation's evidence for a planned
request (``retrieval.context_run``), gathered into a ``Gathered``.

The message is embedded once while the evidence and the topics' full-text candidates are read
in one round trip; the candidates are fetched for the request's k (``light_pool``), so when the
light search's own signals fire the low-confidence trigger the deep ranking searches again
(about 1 request in 60 of the benchmark mix).
"""

from __future__ import annotations

import contextvars
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from graph.clock import ensure_utc
from graph.context import ContextTexts, TextSearch, Within
from graph.errors import SheriffError
from graph.messages import MessageHit
from graph.models import Topic
from graph.topics import ScoredTopic, TextRank, TopicBrief
from retrieval.classify import RequestClass
from retrieval.context_result import RoutedSkill, SkillRouting
from retrieval.context_state import Early, RunView
from retrieval.evidence import fuse_evidence, with_scoped
from retrieval.search import CandidatePool, TopicHit, unnamed
from retrieval.triggers import RetrievalSignals, TriggerContext, after_search
from text.timephrases import TimeWindow

log = logging.getLogger(__name__)

SKILL_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skill-routing")
_EVIDENCE_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evidence-search")
_EMBED_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="early-embedding")


@dataclass
class Gathered:
    """What the search step found (and the reads of its topics added)."""

    signals: RetrievalSignals = field(default_factory=RetrievalSignals)
    skills: Future[tuple[list[RoutedSkill], SkillRouting]] | None = None  # routing
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
    # ``retrieval.topic_reads.read_topics`` puts the topic as read in its place
    partial: set[str] = field(default_factory=set)
    # the evidence's parts: the messages found by words (the request's, and a deep window's),
    # by meaning over the namespace, and the search within the best topics still to run with
    # their read (``retrieval.topic_reads.read_topics`` fuses its hits into ``evidence``)
    said: list[MessageHit] = field(default_factory=list)
    near: list[MessageHit] = field(default_factory=list)
    within: Within | None = None


def gather(run: RunView) -> Gathered:
    """One topic search and the message evidence of ``run``'s plan (small talk: nothing is
    injected, so nothing is searched; the skills are still routed)."""
    plan, got = run.plan, Gathered()
    if plan.cls is RequestClass.NONE:
        plan.deep = False
        if run.builder.skill_router is not None:
            got.skills = SKILL_POOL.submit(run.route_skills, None, plan.skills)
        return got
    query = run.msg.text
    if len(run.msg.terms) < 3 and plan.tail:  # "and then?": lean on the recent tail
        query = " ".join([*(m.content for m in plan.tail[-2:]), query])
    # topic search reads it without the participants' names (as TopicSearch.run does)
    query = unnamed(query, plan.speakers) if query != run.msg.text else plan.topic_text
    # a light request's candidates are fetched for its own k (light_pool): 16 per ranking
    # instead of 40, most of the vector search's Neo4j work and ~50 topic maps fewer; the
    # low-confidence signals are the same either way (the best two cosines, the best BM25)
    light = run.cfg.light_pool and not plan.deep
    sized = run.cfg.light_topics if light else run.cfg.deep_topics
    # the conversation's evidence and the topics' full-text candidates need no vector: both
    # are read in one round trip while the message is embedded (the evidence again, deep,
    # if a late trigger widens the search)
    evidence = _texts(run, query, sized)
    # the passages nearest the same vector, beside the topics; both usually begun beside the
    # first read (``early``)
    vector, dense = _embedded(run, query)
    spoken = _spoken(run, vector)
    if run.builder.skill_router is not None:  # routed beside the topic search, same vector
        # (the message's own, names aside: a skill is not about a participant)
        own = vector if query == plan.topic_text else None
        got.skills = SKILL_POOL.submit(run.route_skills, own, plan.skills)
    pool = _pool(run, query, sized, vector, evidence)
    got.signals = RetrievalSignals.of(pool.cosine, pool.text_scores)
    if not plan.deep:
        pool, evidence = _widened(run, got.signals, query, light, vector, pool, evidence)
    _ranked(run, got, pool, evidence, dense, vector, spoken)
    return got


def _widened(
    run: RunView,
    signals: RetrievalSignals,
    query: str,
    light: bool,
    vector: list[float] | None,
    pool: CandidatePool,
    evidence: Future[ContextTexts],
) -> tuple[CandidatePool, Future[ContextTexts]]:
    """The pool and evidence after the triggers that judge the light search's ``signals``:
    as they were, or searched again deep when one fires (the light evidence is dropped)."""
    plan = run.plan
    cue = TriggerContext(run.now, signals=signals, config=run.config.triggers)
    late = after_search(run.msg, cue)
    if not late:
        return pool, evidence
    plan.triggers.append(late)
    plan.deep = True
    # a window no trigger named (rare), or a light-sized pool: search again, the texts with
    # the deep evidence in one read as before
    if plan.window is not None or light:
        evidence = _texts(run, query, run.cfg.deep_topics)
        return _pool(run, query, run.cfg.deep_topics, vector, evidence), evidence
    return pool, _EVIDENCE_POOL.submit(_evidence, run, plan.window, True)


def _ranked(
    run: RunView,
    got: Gathered,
    pool: CandidatePool,
    evidence: Future[ContextTexts],
    dense: Future[list[MessageHit]] | None = None,
    vector: list[float] | None = None,
    spoken: Future[list[MessageHit]] | None = None,
) -> None:
    """The pool ranked into ``got``'s topic hits (as known ``as_of``), with the evidence: the
    messages found by words fused with those found by meaning (``fuse_evidence``); the best
    topics' own passages join the latter when the topics are read (``_within``)."""
    deep = run.plan.deep
    k = run.cfg.deep_topics if deep else run.cfg.light_topics
    found = run.builder.search.rank(pool, k, expand=deep, facts=run.cfg.fact_signal)
    got.topic_hits, got.degraded = found.hits, found.degraded
    got.partial = {h.topic.topic_id for h in got.topic_hits} & pool.partial
    known_by = after(run.req.as_of)  # as_of: no topic first seen later
    if known_by is not None:
        got.topic_hits = [h for h in got.topic_hits if h.topic.time.first_seen_at < known_by]
    said = evidence.result()
    got.said = said.evidence + said.windowed
    got.near = dense.result() if dense is not None else []
    if spoken is not None:  # what the people the message names said, nearest it
        got.near = with_scoped(got.near, spoken.result())
    got.within = _within(run, got, vector)
    # the best topics' own passages are searched with the topics' read and fused in then
    # (``retrieval.topic_reads.read_topics``): one round trip, not two in a row
    got.evidence = fuse_evidence(got.said, got.near, run.cfg.dense_weight)
    for hit in got.topic_hits:
        got.topics[hit.topic.topic_id] = hit.topic


def _within(run: RunView, got: Gathered, vector: list[float] | None) -> Within | None:
    """The search of the passages of the messages the best topic hits cite, nearest
    ``vector``: a fact of the topic found that shares no word with the question
    (``read_context_topics.cypher``); None when there is nothing to search."""
    cfg = run.cfg
    if run.builder.passages is None or vector is None or cfg.scoped_evidence == 0:
        return None
    ids = [h.topic.topic_id for h in got.topic_hits[: cfg.scoped_topics]]
    if not ids:
        return None
    return Within(ids, vector, cfg.scoped_evidence, after(run.req.as_of))


def early(run: RunView) -> Future[Early]:
    """The message embedded and its passages searched on a thread of their own, in this
    context's vector-cache scope, while the first read runs (``ContextRun._embed_early``):
    neither needs the plan, and the search uses both when it reads the message as it is."""

    def work() -> Early:
        vector = run.builder.search.embed_query(run.msg.text)
        return Early(vector, _dense(run, vector))

    return _EMBED_POOL.submit(contextvars.copy_context().run, work)


def _embedded(
    run: RunView, query: str
) -> tuple[list[float] | None, Future[list[MessageHit]] | None]:
    """The vector of ``query`` and the search of the passages nearest it: those begun early
    when ``query`` is the message itself, else embedded and begun now."""
    if run.early is not None and query == run.msg.text:
        done = run.early.result()
        return done.vector, done.dense
    vector = run.builder.search.embed_query(query)
    return vector, _dense(run, vector)


def _dense(run: RunView, vector: list[float] | None) -> Future[list[MessageHit]] | None:
    """The search of the conversation's passages by ``vector`` (the message's), said before
    ``as_of``, on the evidence pool; None without a passage store, a vector or a size."""
    store, k = run.builder.passages, run.cfg.dense_evidence
    if store is None or vector is None or k == 0:
        return None
    namespace, until = run.req.namespace, after(run.req.as_of)

    def search() -> list[MessageHit]:
        try:
            return store.search(namespace, vector, k, until)
        except SheriffError as exc:  # an add-on to the words' evidence: never fatal
            log.warning("evidence by meaning unavailable: %s", exc)
            return []

    return _EVIDENCE_POOL.submit(search)


def _spoken(run: RunView, vector: list[float] | None) -> Future[list[MessageHit]] | None:
    """The search of the passages the participants the message names said, nearest
    ``vector``, before ``as_of``: a question about a person answered by their own turns of
    any session (``PassageStore.search_spoken``); None when it names none."""
    store, k, speakers = run.builder.passages, run.cfg.spoken_evidence, run.plan.speakers
    if store is None or vector is None or k == 0 or not speakers:
        return None
    namespace, until = run.req.namespace, after(run.req.as_of)

    def search() -> list[MessageHit]:
        try:
            return store.search_spoken(namespace, sorted(speakers), vector, k, until)
        except SheriffError as exc:  # an add-on to the words' evidence: never fatal
            log.warning("evidence spoken by the named unavailable: %s", exc)
            return []

    return _EVIDENCE_POOL.submit(search)


def _texts(run: RunView, query: str, sized: int) -> Future[ContextTexts]:
    """The evidence and the topics' full-text candidates for ``query`` (a search of ``sized``
    topics), with a deep window's own evidence and event topics, in one round trip, on the
    evidence pool."""
    plan = run.plan
    first, *rest = _evidence_searches(run, plan.window, plan.deep)
    window = plan.window if plan.deep else None
    topics = TextSearch(
        query, run.builder.search.fetch_size(sized), window.start if window else None,
        window.end if window else None,
    )  # fmt: skip
    # the topics ranked, not read: the vector query reads them (one round trip fewer)
    return _EVIDENCE_POOL.submit(
        run.builder.reads.search_texts, run.req.namespace, first, topics,
        rest[0] if rest else None, read_topics=False,
    )  # fmt: skip


def _pool(
    run: RunView,
    query: str,
    sized: int,
    vector: list[float] | None,
    texts: Future[ContextTexts],
) -> CandidatePool:
    """The topic search's candidates for ``sized`` topics, the full-text ones (and a deep
    window's event topics, read with the window's own evidence) from ``texts``."""
    plan = run.plan
    window = plan.window if plan.deep else None
    given = len(_evidence_searches(run, plan.window, plan.deep)) > 1  # a window search
    # the full-text candidates the vector query did not return are scored partial, not
    # read by id: read_topics reads the ones that rank (it reads every hit anyway)
    pool = run.builder.search.pool(
        run.req.namespace, query, run.now, sized, window, vector, lambda: _text_topics(texts),
        (lambda: texts.result().event_topic_ids) if given else None, texts.done,
        partial=True,
    )  # fmt: skip
    pool.speakers = frozenset(plan.speakers)  # their facts weigh more (``fact_signal``)
    return pool


def _evidence(run: RunView, window: TimeWindow | None, deep: bool) -> ContextTexts:
    """The evidence searches alone (no topics), as ``_texts`` reads them."""
    found: list[MessageHit] = []
    for s in _evidence_searches(run, window, deep):
        found += run.builder.messages.search_text(run.req.namespace, s.text, s.k, s.since, s.until)
    return ContextTexts(found, [])


def _evidence_searches(run: RunView, window: TimeWindow | None, deep: bool) -> list[TextSearch]:
    """Messages matching the request (and, in a deep search with a window, the window's
    own matches, so old hits cannot crowd it out)."""
    since, until = (window.start, window.end) if window and deep else (None, None)
    known_by = after(run.req.as_of)  # as_of: nothing said later is evidence
    if known_by is not None:
        until = min(until, known_by) if until else known_by
    k = run.cfg.deep_evidence if deep else run.cfg.light_evidence
    searches = [TextSearch(run.msg.text, k, None, known_by)]
    if since or until != known_by:
        searches.append(TextSearch(run.msg.text, k // 2, since, until))
    return searches


def _text_topics(texts: Future[ContextTexts]) -> list[ScoredTopic] | list[TextRank]:
    """The topics' full-text candidates of a ``search_texts`` read: their ranking when it left
    them to the vector query to read, else the topics read."""
    found = texts.result()
    return found.topics if found.topic_ranks is None else found.topic_ranks


def after(as_of: datetime | None) -> datetime | None:
    """The exclusive bound of what was known ``as_of`` (messages at ``as_of`` included)."""
    return ensure_utc(as_of, "as_of") + timedelta(microseconds=1) if as_of else None
