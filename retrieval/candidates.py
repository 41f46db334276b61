"""The context's expansion step: the gathered evidence and topics turned into the packer's
candidates (topics) and snippets (sentences that answer the message, facts of the best topics),
every one described and citable (``retrieval.context_run``).

The topics a context may show are read once (``retrieval.topic_reads.read_topics``): the
search's hits, the topics only the matching messages reached (as briefs) and the best ones whole
(their facts make fact snippets and hide superseded statements from the evidence).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import UTC, datetime

from graph.models import Fact, Message, Topic
from graph.protocols import MessageStoreProtocol
from graph.topics import TopicBrief
from retrieval.classify import ConsultSignals
from retrieval.config import ContextConfig
from retrieval.context_state import RunView
from retrieval.facts import fact_relevance, rank_facts
from retrieval.gather import Gathered
from retrieval.packer import Candidate, Snippet, day
from retrieval.search import TopicHit
from retrieval.snippets import about_listener, bare_question, best_sentences, overlap, sentences
from retrieval.topic_reads import read_topics
from text.claims import state_claims, state_token
from text.timephrases import TimeWindow

_EPOCH = datetime.min.replace(tzinfo=UTC)
CORRECTED = (
    "corrected by the user"  # service/facts.py: a mistake put right, not a state that changed
)


def expand(
    run: RunView, got: Gathered, qterms: frozenset[str]
) -> tuple[list[Candidate], list[Snippet]]:
    """The candidates and snippets of what ``got`` holds, for a message of ``qterms``."""
    cfg, window = run.cfg, run.plan.window
    strength = _topic_strength(got.topic_hits)
    best = [h.topic.topic_id for h in got.topic_hits[: cfg.fact_topics]]
    states = _state_topics(run)
    best += [tid for tid in states if tid not in best]
    read_topics(run, got, best, extra=states)
    stored = [got.whole[tid] for tid in best if tid in got.whole]
    full = [t.view(run.req.as_of) for t in stored]
    # a question about the user's own life is answered by what the user said
    assistant = cfg.assistant_weight if run.msg.own_life else 1.0
    snippets, evidence_topics = _evidence_snippets(
        cfg, got, strength, qterms, window, _hidden_sentences(full, stored), assistant
    )
    for topic in full:
        strong = strength.get(topic.topic_id, 0.0)
        for snip in _fact_snippets(cfg, topic, qterms, strong, run.msg.asks_decision):
            if snip.message_id not in snippets:
                snippets[snip.message_id] = snip
    _favour_speakers(snippets.values(), run.plan.speakers, cfg.speaker_gain)
    # a remark about the listener only between people: an assistant's advice speaks to "you"
    listener = cfg.listener_weight if run.plan.speakers else 1.0
    weigh_remarks(snippets.values(), cfg.question_weight, listener)
    candidates = [
        _topic_candidate(h.topic, strength.get(h.topic.topic_id, 0.0), h) for h in got.topic_hits
    ]
    if states:
        _add_states(run, [got.whole[t] for t in states if t in got.whole], snippets, candidates)
    known = {c.record_id for c in candidates}
    ranked = sorted(evidence_topics.items(), key=lambda kv: -kv[1][1])
    ranked = ranked[: cfg.evidence_topics]
    for tid, (name, score) in ranked:
        if tid not in known:
            candidates.append(Candidate(
                record_id=tid, kind="topic", title=name,
                score=score * cfg.evidence_topic_factor,
                reason_label="conversation_match",
                reason_summary="mentioned in messages that match the request",
                components={"evidence": score},
            ))  # fmt: skip
    _fill_topic_details(run, candidates, got)
    _cite(run.builder.messages, run.req.namespace, list(snippets.values()), candidates, got.cited)
    return candidates, [_windowed(s, window, cfg) for s in snippets.values()]


def _evidence_snippets(
    cfg: ContextConfig,
    got: Gathered,
    strength: dict[str, float],
    qterms: frozenset[str],
    window: TimeWindow | None,
    hidden: dict[str, set[str]],
    assistant: float = 1.0,
) -> tuple[dict[str, Snippet], dict[str, tuple[str, float]]]:
    """A snippet per matching message (what the best topics hide of it cut out), an
    assistant's at ``assistant`` times its score, and the topics the messages reached with
    their best evidence score."""
    snippets: dict[str, Snippet] = {}
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
        boost = 1 + cfg.topic_boost * max((strength.get(t, 0.0) for t in homes), default=0)
        if m.role == "assistant":
            boost *= assistant
        # a passage holding a statement cut out above is not shown (the cut text has it not)
        shown = hit.passages if m is hit.message else tuple(
            p for p in hit.passages if p in m.content
        )  # fmt: skip
        snippets[m.message_id] = _snippet(cfg, m, base * boost, homes, qterms, window, shown)
    return snippets, evidence_topics


def speaker_weight(speaker: str, named: Collection[str], gain: float) -> float:
    """The weight of a sentence ``speaker`` said for a message naming the participants
    ``named`` (lower case): 1 + ``gain`` when the speaker is one of them, else 1. "What
    activities does Melanie partake in?" is answered by what Melanie said (97% of the evidence
    of LoCoMo's dev multi-hop and open-domain questions naming one participant), not by her friend's replies, which
    match the same words ("You'd be a great counselor!")."""
    return 1.0 + gain if named and speaker.strip().lower() in named else 1.0


def _favour_speakers(snippets: Iterable[Snippet], named: Collection[str], gain: float) -> None:
    """Each snippet's score times its ``speaker_weight`` (nothing when the message names no
    participant, or names them all: every sentence is weighed alike then)."""
    if not named or gain == 0:
        return
    for snip in snippets:
        snip.score *= speaker_weight(snip.speaker, named, gain)


def weigh_remarks(snippets: Iterable[Snippet], question: float, listener: float = 1.0) -> None:
    """Each snippet that only asks (``retrieval.snippets.bare_question``) times ``question``,
    each remark about the listener (``about_listener``) times ``listener``: neither states
    what its speaker knows, the answer or the news it reacts to does. In a chat between
    people they are the turn-taking ("What's been the best part of it?", "It must feel great
    to be recognized for your gaming skills.") and share the request's words as well as the
    answers do (docs/retrieval.md, "Lines that say nothing of their speaker")."""
    if question == 1 and listener == 1:
        return
    for snip in snippets:
        if bare_question(snip.text):
            snip.score *= question
        elif listener != 1 and about_listener(snip.text):
            snip.score *= listener


def _state_topics(run: RunView) -> list[str]:
    """The topics holding (or once holding) the state the message asks about, most recently
    seen first (none when it asks about no state)."""
    ask = run.msg.state_question
    if ask is None or not run.cfg.state_topics:
        return []
    key = (ask.speaker, ask.owner, ask.kind)
    tokens = [state_token(key), state_token(key, past=True)]
    rows = run.builder.topics.state_topics(run.req.namespace, tokens, run.cfg.state_topics)
    return [tid for tid, _ in rows]


def _add_states(
    run: RunView, topics: list[Topic], snippets: dict[str, Snippet], candidates: list[Candidate]
) -> None:
    """A question about a state ("Where do I live now?") is answered by the facts that claim
    it: the one holding it now first, the ones it replaced after it, each marked as past with
    its validity ("(until 3 Mar 2026)"); a question about the past ("Where did I live
    before?") gets them the other way round. They lead the context: above every other
    snippet, their topics above every other candidate."""
    ask = run.msg.state_question
    assert ask is not None
    key, when = (ask.speaker, ask.owner, ask.kind), run.req.as_of
    now: list[tuple[Fact, str]] = []
    past: list[tuple[Fact, str]] = []
    for topic in topics:
        for fact in topic.facts:
            said = fact.at or fact.starts_at
            if when is not None and said is not None and said > when:
                continue  # not yet said as of the request
            if not fact.source_message_ids or all(c.key != key for c in state_claims(fact.text)):
                continue
            held = fact.valid_at(when) if when is not None else fact.invalid_at is None
            if held:
                now.append((fact, topic.topic_id))
            elif fact.superseded_by and fact.invalid_reason != CORRECTED:
                past.append((fact, topic.topic_id))  # a state that changed, not a mistake
    if not now and not past:
        return
    now.sort(key=lambda x: x[0].starts_at or _EPOCH, reverse=True)
    past.sort(key=lambda x: x[0].starts_at or _EPOCH, reverse=True)
    ordered = [*past, *now] if ask.past else [*now, *past]
    top = max((s.score for s in snippets.values()), default=0.0)
    best = max((c.score for c in candidates), default=0.0)
    shown: set[str] = set()
    for rank, (fact, tid) in enumerate(ordered[: run.cfg.state_snippets]):
        ended = fact.invalid_at if (fact, tid) in past else None
        snip = _fact_snippet(run.cfg, fact, tid, top + 1.0 + len(ordered) - rank, ended)
        snippets.pop(snip.message_id, None)  # the fact, marked, stands for its message
        snippets[snip.message_id] = snip
        if tid not in shown:
            shown.add(tid)
            _lead(candidates, tid, best + 1.0 + len(ordered) - rank)


def _fact_snippet(
    cfg: ContextConfig, fact: Fact, topic_id: str, score: float, ended: datetime | None = None
) -> Snippet:
    """A topic's fact as a snippet of the message it came from, its speaker's "Name: " read
    off; a state's fact that ``ended`` says until when it held."""
    speaker, _, text = fact.text.partition(": ") if ": " in fact.text[:40] else ("", "", fact.text)
    text = text[: cfg.fact_chars]
    if ended is not None:
        text += f" (until {day(ended)})"
    return Snippet(
        message_id=fact.source_message_ids[0],
        source_id=fact.source_message_ids[0],
        at=fact.at,
        speaker=speaker,
        text=text,
        score=score,
        record_ids=[topic_id],
    )


def _lead(candidates: list[Candidate], topic_id: str, score: float) -> None:
    """The topic of a state's fact leads the candidates (added when no search found it)."""
    for c in candidates:
        if c.record_id == topic_id:
            c.score = max(c.score, score)
            c.components["state"] = 1.0
            return
    candidates.append(Candidate(
        record_id=topic_id, kind="topic", title=topic_id, score=score,
        reason_label="current_state",
        reason_summary="holds the state the request asks about",
        components={"state": 1.0},
    ))  # fmt: skip


def _snippet(
    cfg: ContextConfig,
    m: Message,
    score: float,
    homes: list[str],
    qterms: frozenset[str],
    window: TimeWindow | None,
    passages: tuple[str, ...] = (),
) -> Snippet:
    """The message's sentences that share the most words with the request; with none, the
    passage a search by meaning found (``passages``, best first: it is what matched), else
    its first sentence at ``fallback_weight``."""
    keep = best_sentences(m.content, qterms, cfg.max_sentences)
    if not keep and passages:
        keep = list(passages[: cfg.max_sentences])
    if not keep:
        keep, score = (
            sentences(m.content)[:1] or [m.content[: cfg.fallback_chars]],
            score * cfg.fallback_weight,
        )
    return Snippet(
        message_id=m.message_id,
        source_id=m.external_id or m.message_id,
        at=m.at,
        speaker=m.speaker or ("" if m.role == "user" else m.role),
        text=" ".join(keep)[: cfg.max_chars],
        score=score,
        record_ids=homes,
    )


def _fact_snippets(
    cfg: ContextConfig,
    topic: Topic,
    qterms: frozenset[str],
    strength: float,
    decision: bool = False,
) -> list[Snippet]:
    """Facts of a semantically retrieved topic that share terms with the request (or state
    a choice, ``decision``: the request asks what was decided), the most relevant and then
    the newest first (``retrieval.facts.rank_facts``)."""
    out = []
    # best first (relevance, then recency): equal scores keep this order in the packer
    for fact in rank_facts(topic.facts[-cfg.facts_scanned :], qterms, decision=decision):
        share = fact_relevance(fact.text, qterms, decision)
        if share <= 0:
            break  # ranked: nothing after this shares a term either
        if not fact.source_message_ids:
            continue
        out.append(_fact_snippet(cfg, fact, topic.topic_id, cfg.fact_weight * strength * share))
    return sorted(out, key=lambda s: -s.score)[: cfg.fact_snippets]


def _fill_topic_details(run: RunView, candidates: list[Candidate], got: Gathered) -> None:
    """Titles, dates and one-liners for every candidate (read once by ``read_topics``), the
    full record of the best one when L2 was asked for."""
    for c in candidates:
        found = got.topics.get(c.record_id) or got.briefs.get(c.record_id)
        if found is not None:
            _describe(c, found, got.one_liner_sources.get(c.record_id, []))
    req = run.req
    if req.full_records and candidates:
        best = max(candidates, key=lambda c: c.score)
        whole = got.whole.get(best.record_id)
        stored = [whole] if whole else run.builder.topics.get(req.namespace, [best.record_id])
        for topic in stored:
            _full_record(
                best, topic.view(req.as_of), run.cfg.full_record_facts, run.msg.terms,
                run.msg.asks_decision,
            )  # fmt: skip


def _cite(
    messages: MessageStoreProtocol,
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
        known.update(messages.source_ids(namespace, missing))
    for s in unresolved:
        s.source_id = known.get(s.message_id, s.message_id)
    for c in candidates:
        c.one_liner_sources = [known.get(m, m) for m in c.one_liner_sources]
        c.full_record_sources = list(dict.fromkeys(known.get(m, m) for m in c.full_record_sources))


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


def consult_signals(
    got: Gathered, qterms: frozenset[str], snippets: list[Snippet], cfg: ContextConfig
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
