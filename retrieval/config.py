"""Every tuning number of retrieval in one frozen config (docs/retrieval.md, "Tuning").

``RetrievalConfig`` groups search (hybrid topic search, §8.2), context (light/deep sizes, snippet
weights, packing), consult (seed 003's weights and bands), suppression (the session cache) and
triggers (the low-confidence trigger). ``Settings.retrieval`` builds it from the environment with
``__`` as the nesting separator, e.g. ``SHERIFF_RETRIEVAL__SEARCH__WINDOW_BOOST=2.5`` or
``SHERIFF_RETRIEVAL__CONSULT__SKIP_BELOW=0.5``; code receives it from the composition root and
never reads a bare number of its own. Pure: no Neo4j, no model.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, model_validator

from graph.config_section import Section


class SearchConfig(Section):
    """Topic search (§8.2): relevance x (1 + utility) x recency x window boosts."""

    # 10, not the customary 60: with 60, ranks 1 and 10 score within 13% of each other, so
    # the other factors (recency) decided the order; measured on LoCoMo (docs/topics.md)
    rrf_k: float = Field(default=10.0, gt=0, description="reciprocal rank fusion constant")
    # "score": relevance = vector_weight x the cosine (min-max over the vector candidates) +
    # the rest x BM25 / the best BM25, BM25 of the question's content words (docs/retrieval.md,
    # "How topic search ranks"); "rrf": rank fusion. RRF dropped a topic ranked 6th by
    # its vector and not matched by text under topics ranked ~10th by both (LoCoMo topic-only
    # recall 0.542 -> 0.588, mean of six conversations, docs/topics.md)
    fusion: Literal["score", "rrf"] = Field(default="score", description="how rankings fuse")
    vector_weight: float = Field(
        default=0.4, ge=0, le=1, description="share of the vector in score fusion"
    )
    tau_days: float = Field(default=30.0, gt=0, description="recency decay time constant")
    window_boost: float = Field(default=3.0, ge=1, description="topic seen inside the window")
    event_in_window_boost: float = Field(default=1.5, ge=1, description="topic event in window")
    # a window bounded on both sides ("on 4 August, 2023", "in May 2023"): a candidate holding a
    # live fact said inside it (docs/topics.md, branch topics11); first..last seen alone holds
    # for nearly every topic of a months-long conversation
    said_in_window_boost: float = Field(
        default=2.0, ge=1, description="topic with a fact said in a bounded window"
    )
    utility_scale: float = Field(default=20.0, gt=0, description="utility/(utility+scale)")
    neighbour_factor: float = Field(default=0.5, ge=0, le=1, description="1-hop share of seed")
    neighbour_limit: int = Field(default=5, ge=0, description="neighbours per seed (deep)")
    fetch_factor: int = Field(default=2, ge=1, description="candidates per ranking = k x this")
    min_fetch: int = Field(default=12, ge=1, description="...and at least this many")
    vector_overfetch: int = Field(
        default=2, ge=1, description="vector index over-fetch before the namespace filter"
    )
    # 1.0: recency does not scale topic search (a question about May found the topics of
    # October); a time phrase in the question still favours its window (window_boost)
    recency_floor: float = Field(
        default=1.0, ge=0, le=1, description="share of the score an old topic keeps"
    )
    # a topic's facts as a signal (retrieval/fact_rank.py): the best candidates' best fact for
    # the question (its passage's cosine and its words) joins their relevance; 0: off
    fact_weight: float = Field(
        default=2.0, ge=0, description="weight of a candidate's best fact beside its relevance"
    )
    fact_share: float = Field(
        default=0.8, ge=0, le=1, description="share of meaning (vs words) in a fact's score"
    )
    fact_topics: int = Field(default=24, ge=0, description="best candidates whose facts are read")
    fact_speaker_gain: float = Field(
        default=0.25, ge=0, description="a fact said by a participant the query names: x (1 + gain)"
    )
    fact_passages: int = Field(
        default=300, ge=1, description="passages of their messages scored for the facts"
    )

    @property
    def tau(self) -> timedelta:
        return timedelta(days=self.tau_days)


class ContextConfig(Section):
    """The context of one message: sizes of the light and deep gathers, snippet weights."""

    light_topics: int = Field(default=8, ge=1)
    deep_topics: int = Field(default=20, ge=1)
    light_pool: bool = Field(
        default=True,
        description="a light request fetches candidates for light_topics (a late low-confidence "
        "trigger searches again for deep_topics); false: for deep_topics, so it needs no second "
        "search (docs/performance.md, fourth pass)",
    )
    # topic search's facts signal (search.fact_weight) in a context's topic ranking: off, as
    # it cost LoCoMo multi-hop recall there (0.668 -> 0.655, docs/evaluation.md); the
    # context's evidence already reaches the answering facts
    fact_signal: bool = Field(default=False, description="rank a context's topics by facts too")
    light_evidence: int = Field(default=40, ge=1, description="matching messages (light)")
    deep_evidence: int = Field(default=80, ge=1, description="matching messages (deep)")
    dense_evidence: int = Field(
        default=30, ge=0, description="passages found by meaning (graph/passages.py); 0: none"
    )
    dense_weight: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="weight of the passages' cosine against the messages' BM25 in the evidence",
    )
    # the passages of the messages the best topics cite, scored against the question's vector:
    # the facts of the topic found that share no word with the question and are not among the
    # namespace's nearest (docs/retrieval.md, "The best topics' own passages"); LoCoMo dev
    # @1000 on a kept memory 0.8093 -> 0.8293 at 8 / 80 (multi-hop 0.608 -> 0.642,
    # open-domain 0.529 -> 0.593), 0.8133 at 5 / 10, 0.8218 at 8 / 40, 0.8257 at 8 / 120;
    # the namespace's nearest 80 instead of 30 alone: 0.8194. Since then (a person's words
    # weighed up, lines that say nothing weighed down) the evidence 80 left out is what the
    # budget can take: on a later kept memory, 8 / 320 against 8 / 80 multi-hop
    # 0.694 -> 0.709, open-domain 0.613 -> 0.654 (docs/evaluation.md, "More of the best
    # topics' own passages")
    scoped_topics: int = Field(
        default=8, ge=0, description="best topics whose cited passages are searched by meaning"
    )
    scoped_evidence: int = Field(
        default=320, ge=0, description="passages of those topics found by meaning; 0: none"
    )
    # a question naming a participant ("What activities does Melanie partake in?"): the passages
    # of what that person said, nearest the question, across every session and topic
    # (docs/retrieval.md, "A question about a person")
    spoken_evidence: int = Field(
        default=40, ge=0, description="passages of the named participants found by meaning"
    )
    speaker_gain: float = Field(
        default=0.5,
        ge=0,
        description="a message naming participants: what they said x (1 + gain) in the context",
    )
    tail_turns: int = Field(default=6, ge=0, description="recent turns read for triggers")
    evidence_topics: int = Field(default=25, ge=0, description="topics reached via messages")
    fact_topics: int = Field(default=5, ge=0, description="best topics whose facts are read")
    fact_snippets: int = Field(default=5, ge=0, description="fact snippets per topic")
    state_topics: int = Field(
        default=8, ge=0, description="a question about a state: topics holding it read"
    )
    state_snippets: int = Field(
        default=4, ge=0, description="a question about a state: its facts shown (now first)"
    )
    topic_boost: float = Field(default=0.5, ge=0, description="x(1 + boost x topic strength)")
    evidence_topic_factor: float = Field(
        default=0.5, ge=0, description="score of a topic reached only through its messages"
    )
    window_boost: float = Field(default=2.0, ge=1)
    outside_window: float = Field(default=0.5, ge=0, le=1)
    fact_weight: float = Field(default=0.6, ge=0, description="snippets found through facts")
    fallback_weight: float = Field(default=0.5, ge=0, description="hit with no shared term")
    # a question about the user's own life ("How much did I spend on workshops?"): the user's
    # own words answer it, an assistant's reply echoes them ("Great that you're attending
    # workshops!") and matched as well, crowding the user's statements out of the budget
    # (docs/retrieval.md, "Whose words answer")
    assistant_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="a question about the user's own life: x this for the assistant's messages",
    )
    # a sentence that only asks ("What's been the best part of it?", "Anything fun over the
    # weekend?") states nothing its speaker knows: between people it is turn-taking, and it
    # shared the question's words with the answers it preceded (docs/retrieval.md, "Bare
    # questions and headers")
    question_weight: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="a snippet that only asks, with no first-person word: x this",
    )
    listener_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="a message naming participants: a remark about the listener ('you', no "
        "first person, no question) x this",
    )
    latest_gain: float = Field(
        default=0.5, ge=0, description="a question for the current value: newest x (1 + gain)"
    )
    max_sentences: int = Field(default=1, ge=1, description="sentences kept of a message")
    max_chars: int = Field(default=400, ge=40, description="characters of a message snippet")
    fallback_chars: int = Field(default=300, ge=40, description="a hit with no shared term")
    facts_scanned: int = Field(default=200, ge=1, description="newest facts read per topic")
    full_record_facts: int = Field(default=20, ge=1, description="facts in an L2 record")
    fact_chars: int = Field(default=600, ge=40, description="characters of a fact snippet")
    consult_budget: int = Field(
        default=250, ge=1, description="token budget of the 'consult' band (one summary)"
    )
    lexical_gain: float = Field(default=1.5, ge=0, description="lexical signal = overlap x gain")
    same_task_signal: float = Field(default=0.5, ge=0, le=1, description="snippet with a topic")


SIGNALS = (
    "lexical",
    "semantic",
    "same_task",
    "scope",
    "record_type",
    "importance_recency",
    "provenance",
)


class ConsultConfig(Section):
    """Consult confidence (seed 003): weighted signals and the bands they fall in."""

    weights: dict[str, float] = Field(
        default_factory=lambda: {
            "lexical": 0.30,
            "semantic": 0.25,
            "same_task": 0.20,
            "scope": 0.10,
            "record_type": 0.05,
            "importance_recency": 0.05,
            "provenance": 0.05,
        }
    )
    skip_below: float = Field(default=0.55, ge=0, le=1)
    normal_from: float = Field(default=0.72, ge=0, le=1)
    related_from: float = Field(default=0.82, ge=0, le=1)
    personal_floor: Literal["skip", "consult", "normal", "related"] = Field(
        default="normal",
        description="the least band of a personal request (advice, a recommendation, a "
        "question about the user's own life); skip: no floor",
    )

    @model_validator(mode="after")
    def _ordered(self) -> ConsultConfig:
        if not self.skip_below <= self.normal_from <= self.related_from:
            raise ValueError("consult bands must satisfy skip_below <= normal_from <= related_from")
        unknown = sorted(set(self.weights) - set(SIGNALS))
        if unknown:
            raise ValueError(f"unknown consult signal(s) {unknown}; known: {list(SIGNALS)}")
        if any(w < 0 for w in self.weights.values()):
            raise ValueError("consult weights must not be negative")
        return self


class SuppressionConfig(Section):
    """A record injected is not injected again for ``cool_turns`` or ``cool_minutes``."""

    cool_turns: int = Field(default=5, ge=0)
    cool_minutes: float = Field(default=15.0, ge=0)
    rise: float = Field(default=0.15, ge=0, description="confidence rise that lifts suppression")
    session_ttl_hours: float = Field(
        default=24.0, gt=0, description="a session idle this long starts afresh (its state expires)"
    )
    max_entries: int = Field(
        default=256, ge=1, description="injections remembered per session at most (the newest)"
    )

    @property
    def cool_time(self) -> timedelta:
        return timedelta(minutes=self.cool_minutes)


class TriggerConfig(Section):
    """The low-confidence trigger (§5.2 trigger 4) over calibrated signals of the light search:
    vector cosine (-1..1), its margin, namespace-local BM25. Chosen on the dev data
    (docs/retrieval.md, "Low confidence")."""

    cosine_floor: float = Field(
        default=0.45, ge=-1, le=1, description="no topic this near the message: low"
    )
    cosine_clear: float = Field(
        default=0.55, ge=-1, le=1, description="a topic this near is clear whatever the margin"
    )
    margin_gap: float = Field(
        default=0.02, ge=0, le=2, description="best two cosines closer than this: ambiguous"
    )
    text_floor: float = Field(
        default=4.0, ge=0, description="best full-text BM25 at or above this: lexically clear"
    )


class RetrievalConfig(Section):
    """All of retrieval's tuning, one frozen object built from ``Settings``."""

    search: SearchConfig = Field(default_factory=SearchConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    consult: ConsultConfig = Field(default_factory=ConsultConfig)
    suppression: SuppressionConfig = Field(default_factory=SuppressionConfig)
    triggers: TriggerConfig = Field(default_factory=TriggerConfig)


DEFAULT = RetrievalConfig()
