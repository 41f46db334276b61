"""A topic's facts as a signal of topic search.

Topic search finds a topic by its vector ("name: lead fact" and its most central facts) and its
full-text entry (name, aliases, one-liner, gist): what the topic is about as a whole. A question
about one detail of a large topic ("What did Caroline research?" of a 47-fact topic about her)
shares little with that whole, and the topic holding the answering fact ranked below topics
whose name or one-liner happens to resemble the question. So once the candidates are fused,
each of the best is also scored by its **best fact** for the question, added to its score at
``fact_weight`` beside relevance x utility x recency (``retrieval.scoring.final_score``; a
topic's use says nothing about whether this fact answers: scaled by utility, the person topics
every sleep touches came first and filled the budget; ``TopicSearch.rank``, docs/retrieval.md
"How topic search ranks"):

- a fact's *meaning*: the cosine of the question to its message's nearest passage (a topic's
  facts are sentences of the turns it is ``MENTIONED_IN``; the passages carry their vectors,
  ``PassageStore.scores_within``), rescaled over the candidates' facts (lowest 0, highest 1);
- a fact's *words*: BM25 of the question's content words over the candidates' facts alone
  (each fact one document, English analysis, ``graph.lexical``): statistics of the namespace's
  own candidates, so no other tenant moves it (docs/security.md);
- fact score = ``share`` x meaning + (1 - ``share``) x words / the best words, x (1 +
  ``fact_speaker_gain``) when said by a participant the question names; a topic's signal is
  its best fact's score.

A context's topic ranking leaves it out (``ContextConfig.fact_signal``): its evidence already
reaches the answering facts, and reordering its topics cost LoCoMo multi-hop recall.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from graph.errors import SheriffError
from graph.fulltext import content_words
from graph.lexical import ENGLISH, rank_many
from graph.models import Topic
from graph.protocols import TopicStoreProtocol
from retrieval.config import SearchConfig
from text.gist import speaker_of, unspoken

log = logging.getLogger(__name__)
FIELD = "fact"
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fact-passages")
# (namespace, topic ids, vector, k) -> message id -> its best passage's similarity to the
# vector, among the best k passages of the messages those topics cite
# (``PassageStore.scores_within``)
PassagesWithin = Callable[[str, Sequence[str], Sequence[float], int], dict[str, float]]


def read_signals(
    topics: TopicStoreProtocol,
    passages: PassagesWithin | None,
    cfg: SearchConfig,
    namespace: str,
    query: tuple[str, Sequence[float] | None, Collection[str]],
    relevance: Mapping[str, float],
) -> dict[str, float]:
    """Topic id -> the best fact's signal (``fact_signals``) of the best ``cfg.fact_topics``
    candidates by ``relevance`` for ``query`` (its text as searched, its vector, None when
    degraded, and the participants it names, lower case): their whole topics and their cited
    messages' passages nearest the vector, read side by side (two reads of the namespace's own
    nodes). Off (``fact_weight`` 0) or no candidate: empty. Without a vector or passages the
    facts' words alone count."""
    if cfg.fact_weight == 0 or cfg.fact_topics == 0 or not relevance:
        return {}
    best = sorted(relevance, key=lambda t: -relevance[t])[: cfg.fact_topics]
    text, vector, speakers = query
    near = None
    if passages is not None and vector is not None:
        near = _POOL.submit(passages, namespace, best, list(vector), cfg.fact_passages)
    whole = topics.get(namespace, best)
    cosines: dict[str, float] = {}
    try:
        cosines = near.result() if near is not None else {}
    except SheriffError as exc:  # the words still count
        log.warning("facts' passages unavailable: %s", exc)
    share = cfg.fact_share if cosines else 0.0
    return fact_signals(whole, content_words(text), cosines, share, speakers, cfg.fact_speaker_gain)


def fact_signals(
    topics: Sequence[Topic],
    words: Sequence[str],
    cosines: Mapping[str, float],
    share: float,
    speakers: Collection[str] = (),
    gain: float = 0.0,
) -> dict[str, float]:
    """Topic id -> the score of its best live fact for a question of content ``words``, in
    [0, 1 + ``gain``]; ``cosines``: message id -> the question's cosine to that message's
    nearest passage (a fact takes the best of its source messages'; one without any takes the
    lowest found). A fact said by one of ``speakers`` (the participants the question names,
    lower case: "What did Caroline research?" is answered by what she said) counts
    1 + ``gain`` times. A topic without live facts gets 0."""
    facts = [(t.topic_id, f) for t in topics for f in t.facts if f.invalid_at is None]
    if not facts:
        return {t.topic_id: 0.0 for t in topics}
    docs = [{FIELD: unspoken(f.text)} for _, f in facts]
    lexical = rank_many([words], docs, [FIELD], analyze=ENGLISH)[0] if words else [0.0] * len(docs)
    floor = min(cosines.values(), default=0.0)
    near = [
        max((cosines.get(m, floor) for m in f.source_message_ids), default=floor) for _, f in facts
    ]
    lo, hi = min(near), max(near)
    top = max(lexical)
    out = {t.topic_id: 0.0 for t in topics}
    for (tid, fact), cos, bm25 in zip(facts, near, lexical, strict=True):
        meaning = (cos - lo) / (hi - lo) if hi > lo else 0.0
        said = bm25 / top if top > 0 else 0.0
        score = share * meaning + (1 - share) * said
        if speakers and speaker_of(fact.text).lower() in speakers:
            score *= 1 + gain
        out[tid] = max(out[tid], score)
    return out
