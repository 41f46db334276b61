"""The one read of every topic a context may show (``read_topics``), with the best topics' own
passages searched in the same round trip (``graph.context.ContextStore.read_topics``).

The briefs a context reads are the topics its evidence reached, and the best topics' passages
are part of that evidence (``retrieval.evidence.with_scoped``): read one after the other, the
passages and then the topics took two round trips in a row. Read together, the topics asked
are every one the evidence reached so far and the query adds those the passages' messages
reach; once the passages are fused in, the briefs are picked as before and the rest of what was
read is dropped, so the context is the one the two reads made (the same items, order, scores
and trace; ``tests/integration/test_fast_path.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graph.context import ContextTopics
from graph.errors import SheriffError
from graph.messages import MessageHit
from graph.models import Topic
from graph.topics import TopicBrief
from retrieval.context_state import RunView
from retrieval.evidence import fuse_evidence, with_scoped
from retrieval.gather import Gathered

log = logging.getLogger(__name__)


def read_topics(run: RunView, got: Gathered, best: list[str], extra: Sequence[str] = ()) -> None:
    """One read of every topic a context may show: the search's hits as summaries (a hit
    scored from its full-text row alone gets its light record), the topics only the
    matching messages reached as briefs (title, dates, one-liner: all a context shows of
    them), each with its one-liner's sources, and the ``best`` whole (their facts make
    fact snippets and hide superseded statements); ``extra``: topics no search found that the
    context shows (those holding the state a question asks about). With ``got.within``, the
    best topics' own passages come in the same read and join ``got.evidence``."""
    ids = [h.topic.topic_id for h in got.topic_hits]
    ids += [tid for tid in extra if tid not in ids]
    hit_ids = set(ids)
    if got.within is None:
        briefs = _briefs(got.evidence, hit_ids, run.cfg.evidence_topics)
        found, got.cited = run.builder.topics.cited_summaries(
            run.req.namespace, list(dict.fromkeys(ids + briefs)), best, brief_ids=briefs
        )
    else:
        found = _with_passages(run, got, ids, best)
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
    if got.partial:
        _replace_partial(got)


def _with_passages(
    run: RunView, got: Gathered, ids: list[str], best: list[str]
) -> list[tuple[Topic | TopicBrief, list[str]]]:
    """The topics (``ids``, ``best`` whole) and the passages of ``got.within`` in one read;
    ``got.evidence`` with the passages fused in, and of the briefs read (every topic the
    evidence may reach) those ``_briefs`` picks from it, as a read after the passages would
    have asked for."""
    assert got.within is not None
    hit_ids, namespace = set(ids), run.req.namespace
    maybe = [t for t in _reached(got.evidence) if t not in hit_ids]
    asked = list(dict.fromkeys(ids + maybe))
    try:
        read = run.builder.reads.read_topics(namespace, asked, best, maybe, got.within)
    except SheriffError as exc:  # the passages are an add-on to the evidence: never fatal
        log.warning("topic passages unavailable: %s", exc)
        read = ContextTopics(
            *run.builder.topics.cited_summaries(namespace, asked, best, brief_ids=maybe)
        )
    near = with_scoped(got.near, read.hits)
    got.evidence = fuse_evidence(got.said, near, run.cfg.dense_weight)
    briefs = set(_briefs(got.evidence, hit_ids, run.cfg.evidence_topics))
    got.cited = read.cited
    return [
        (topic, sources)
        for topic, sources in read.found
        if not isinstance(topic, TopicBrief) or topic.topic_id in briefs
    ]


def _reached(evidence: Sequence[MessageHit]) -> list[str]:
    """The topics the evidence's messages are mentioned in, by their best hit's score."""
    by_evidence: dict[str, float] = {}
    for hit in evidence:
        for tid, _ in hit.topics:
            by_evidence[tid] = max(by_evidence.get(tid, 0.0), hit.score)
    return sorted(by_evidence, key=lambda t: -by_evidence[t])


def _briefs(evidence: Sequence[MessageHit], hit_ids: set[str], evidence_topics: int) -> list[str]:
    """The topics read as briefs: those the evidence reached first that no hit holds (twice
    the evidence topics kept: a few are dropped later, all their text superseded)."""
    return [t for t in _reached(evidence)[: 2 * evidence_topics] if t not in hit_ids]


def _replace_partial(got: Gathered) -> None:
    """Each partial hit gets its topic as read (gone since: left out)."""
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
