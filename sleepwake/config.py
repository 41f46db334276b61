"""Every tuning number of sleep in one frozen config (docs/sleep-and-wake.md, "Tuning").

``SleepConfig`` groups policy (when to sleep, what stays as the tail), merge (matching a
candidate to a topic, §8.1), formation (topic formation: episodes, heads, turn facts,
one-liners, assembly), extraction (how a slice's candidates are grouped), tiers (decay and
hot/warm/cold), utility (what a sleep adds to a topic's utility, its edges, its wake packet)
and subjects, and aspects (the last two in ``sleepwake.config_sections``). ``Settings.sleep`` builds it from the environment with ``__`` as the nesting
separator, e.g. ``SHERIFF_SLEEP__POLICY__TAIL_TURNS=8`` or ``SHERIFF_SLEEP__MERGE__THRESHOLD=4.5``;
the sleep receives it from the composition root (``Sleeper(config=...)``), and the pure
functions take their section, defaulting to ``DEFAULT``'s. Pure: no Neo4j, no model.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from graph.config_section import Section
from sleepwake.config_sections import AspectsConfig, SubjectsConfig


class SleepPolicy(Section):
    """When a sleep is due and what it compacts (docs/sleep-and-wake.md, "The conversation")."""

    context_budget_tokens: int = Field(
        default=8000, ge=500, description="the context budget the buffer's share is taken of"
    )
    buffer_share: float = Field(
        default=0.6, gt=0.0, le=1.0, description="a buffer over this share of the budget sleeps"
    )
    tail_turns: int = Field(
        default=12, ge=0, le=200, description="last turns kept verbatim (never compacted)"
    )
    idle_gap: timedelta = Field(
        default=timedelta(hours=6), description="a message this long after the last sleeps first"
    )
    fresh_window: timedelta = Field(
        default=timedelta(hours=12),
        description="after a wake, a task interrupted less than this long ago is resumed",
    )
    wake_silence: timedelta = Field(
        default=timedelta(hours=6),
        gt=timedelta(0),
        description="a turn after this long without one wakes",
    )
    subject_ttl: timedelta = Field(
        default=timedelta(days=7), description="how long a sleep's subjects are kept"
    )
    lease_ttl: timedelta = Field(
        default=timedelta(seconds=60),
        ge=timedelta(seconds=1),  # a shorter lease expires as it is taken: sleeps taken over
        description="a sleep's lease, renewed by a heartbeat every third of it while it runs",
    )
    max_slice_messages: int = Field(
        default=2000, ge=1, description="most messages one sleep compacts (the rest: the next)"
    )
    # a tail of long turns over the budget on its own must not make every new message a
    # one-message sleep
    min_slice_share: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="a budget sleep waits until its slice holds this share of the threshold "
        "(or as many messages as the tail)",
    )
    # twelve chat-assistant answers of ~2,000 characters filled two thirds of the threshold on
    # their own, so a sleep came every ~5-7 messages; capped, a sleep compacts three quarters
    # of the threshold whatever the turns' length
    tail_share: float = Field(
        default=0.25,
        gt=0.0,
        le=1.0,
        description="the tail holds at most this share of the buffer threshold in tokens "
        "(LongMemEval haystacks: 2,438 -> 1,301 sleeps)",
    )
    min_tail_turns: int = Field(
        default=2, ge=0, le=200, description="the tail never has fewer turns (token limit aside)"
    )


class MergeConfig(Section):
    """The merge score's weights and threshold (docs/topics.md, "Matching")."""

    alias: float = Field(default=3.0, ge=0, description="weight of a shared name or alias")
    embedding: float = Field(default=3.0, ge=0, description="weight of the one-liners' cosine")
    entity: float = Field(default=1.5, ge=0, description="weight of shared co-mentioned entities")
    time: float = Field(default=2.0, ge=0, description="weight of being talked about close in time")
    threshold: float = Field(default=4.0, gt=0, description="a score at or above merges")
    cos_floor: float = Field(default=0.3, ge=-1, le=1, description="cosine adding nothing")
    cos_full: float = Field(default=0.9, ge=-1, le=1, description="cosine adding it all")
    time_scale_days: float = Field(
        default=7.0,
        gt=0,
        description="time part = time x exp(-days outside the topic's span / this)",
    )
    event_veto_days: float = Field(
        default=14.0,
        gt=0,
        description="an event this far from a topic's span, sharing none of its entities, is "
        "another event ('the party' of May is not that of July)",
    )
    min_cosine: float = Field(
        default=0.45,
        ge=-1,
        le=1,
        description="one-liners less alike never merge, unless picked up the same day: a "
        "generic name said weeks apart ('photo', 'family') absorbed every session",
    )
    size_free_facts: int = Field(
        default=6, ge=1, description="a topic's facts before min_cosine starts to rise"
    )
    size_step: float = Field(
        default=0.1,
        ge=0,
        description="min_cosine rise per doubling of a topic's facts (a 'family' topic of 87 "
        "facts on one LoCoMo conversation took whatever shared a word)",
    )
    same_day_max_facts: int = Field(
        default=20, ge=0, description="a topic this big merges the same day only if alike"
    )
    max_facts: int = Field(
        default=20,
        ge=1,
        description="a merge never leaves a topic with more facts: the subject goes on in a new "
        "one (a topic of 30-40 facts is found by every question and fills a context alone; "
        "12 kept a subject from lasting past two sessions: LoCoMo dev multi-sleep share 0.12 "
        "at 12, 0.34 at 20, topic-only recall 0.654 -> 0.629)",
    )
    subject_cosine: float = Field(
        default=0.5,
        ge=-1,
        le=1,
        description="a candidate called by a topic's name (its words, 'painting' / 'abstract "
        "painting') merges across sessions at this cosine: the subject a person keeps coming "
        "back to is one topic, not one per session",
    )
    entity_cosine: float = Field(
        default=0.55,
        ge=-1,
        le=1,
        description="a candidate naming at least half of its people and things in a topic "
        "(Max, the dog, in May and in June) merges at this cosine, whatever its name: "
        "'certificate' (Max graduated) joins 'labrador puppy' (adopted Max)",
    )
    entities_cosine: float = Field(
        default=0.38,
        ge=-1,
        le=1,
        description="a candidate naming two or more of a topic's people and things (Max and "
        "Luna) merges at this cosine",
    )
    floor_cosine: float = Field(
        default=0.3,
        ge=-1,
        le=1,
        description="never merged below this cosine, not even the same day: a bank job "
        "named in the puppy's episode (cosine 0.14) is not the puppy",
    )
    person_kept_facts: int = Field(
        default=48, ge=1, description="current facts a person's topic keeps, by salience and "
        "recency (its facts are copies: each stays in its subject's topic)",
    )  # fmt: skip
    # 40 held too little of a pet or a hobby talked about for months: LoCoMo conv-44's
    # cross-session 0.35 -> 0.50 at 60, the largest topic <= 0.071 of all facts, §1 equal
    theme_kept_facts: int = Field(
        default=60, ge=1, description="current facts a theme's topic keeps, by salience and "
        "recency (copies: each stays in its episode's topic; sleepwake/themes.py)",
    )  # fmt: skip
    absorb_share: float = Field(
        default=0.5, ge=0, le=1, description="an episode that would make a new topic joins "
        "the durable (theme or area) topic of the sleep holding this share of its facts "
        "instead ('salon' beside 'Audrey's pets'; sleepwake/absorb.py); 0: never",
    )  # fmt: skip
    absorb_kept_facts: int = Field(
        default=60, ge=1, description="current facts a topic that took an episode keeps, by "
        "salience and recency (the rest stay in the conversation's passages)",
    )  # fmt: skip
    alias_share: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="what one of a candidate's other phrases counts for against its own name",
    )


class FormationConfig(Section):
    """Topic formation (``sleepwake.episodes`` and the modules it calls; docs/topics.md)."""

    person_facts: int = Field(
        default=6,
        ge=0,
        description="a named speaker's best first-person news of a slice filed under their "
        "own topic (sleepwake/people.py); 0: no topics of people",
    )
    chat_answer_chars: int = Field(
        default=500,
        ge=1,
        description="a slice holding an answer longer than this is a chat with an assistant "
        "(asides, answers weighed, composed vectors: sleepwake/side_topics.py); a quick "
        "'Noted.' among a person's own notes does not make one",
    )
    theme_facts: int = Field(
        default=3,
        ge=0,
        description="a speaker's facts about a theme of a slice filed under the theme's topic "
        "(sleepwake/themes.py); 0: no topics of themes",
    )
    theme_min_facts: int = Field(default=2, ge=1, description="an episode's theme is a noun at "
                                 "least this many of its owner's facts name")  # fmt: skip
    theme_new_facts: int = Field(
        default=2,
        ge=1,
        description="a theme an earlier episode was about makes its topic when its owner names "
        "it in this many facts of a later slice (or an episode of it is about it)",
    )
    theme_topic_facts: int = Field(
        default=4,
        ge=1,
        description="a theme's topic is made only with at least this many facts (its earlier "
        "ones and the slice's): a subject said in passing twice is not a subject of a life",
    )
    episode_themes: int = Field(
        default=2, ge=0, description="themes an episode's topic goes by, per speaker"
    )
    theme_word_cosine: float = Field(  # "pup"/"dog" .80, "mom"/"dad" .76: sleepwake/theme_words
        default=0.78, ge=0, le=1, description="a speaker's word at this cosine to another of "
        "their theme words is that theme ('pup' -> 'Audrey's dog'); 0: every word its own theme"
    )  # fmt: skip

    # -- segmentation (sleepwake/segments.py) --
    # between people a long turn often says what it is about after 200 characters (LoCoMo
    # topic-only recall conv-30 0.674 -> 0.580 at 200)
    turn_lead_chars: int = Field(
        default=400,
        ge=1,
        description="a turn's lead, embedded and read for lexical links (200 cost LoCoMo "
        "topic-only recall, conv-30 0.674 -> 0.580)",
    )
    answer_lead_chars: int = Field(
        default=160,
        ge=1,
        description="an answer is embedded by its opening, which says what it answers (long "
        "answers were two thirds of what a chat-assistant sleep embedded)",
    )
    long_answer_chars: int = Field(
        default=500, ge=0, description="a longer answer takes its question's vector"
    )
    window: int = Field(default=2, ge=1, description="turns either side of a gap in the gap score")
    min_turns: int = Field(default=4, ge=1, description="an episode of a long slice lasts this")
    max_turns: int = Field(
        default=14, ge=1, description="a longer episode is cut at its lowest gap"
    )
    same_subject: float = Field(
        default=0.45, description="a gap scoring above this never cuts (noise among alike turns)"
    )
    gap_sigma: float = Field(
        default=0.5, ge=0, description="a gap this many deviations under the mean cuts"
    )
    pause_seconds: float = Field(
        default=1800.0, gt=0, description="a longer pause between turns always cuts"
    )
    link_bonus: float = Field(
        default=0.15, ge=0, description="per content word two neighbours share (at most two)"
    )
    # -- heads (sleepwake/heads.py) --
    phrases_per_episode: int = Field(
        default=12, ge=1, description="phrases embedded per episode (most repeated first)"
    )
    max_heads: int = Field(default=3, ge=1, description="topics one episode may head")
    second_head_turns: int = Field(
        default=6, ge=1, description="an episode this long may have a second head"
    )
    second_head_gap: float = Field(
        default=0.15, ge=0, description="... scoring at most this much under the main one"
    )
    distinct_heads: float = Field(
        default=0.5, description="... and less similar to it than this (cosine)"
    )
    repeat_weight: float = Field(
        default=0.08, description="phrase score per further turn naming it (three count)"
    )
    word_weight: float = Field(
        default=0.12, description="phrase score per further word (two count): specific names"
    )
    event_bonus: float = Field(default=0.25, description="an event phrase (a party, a trip)")
    named_penalty: float = Field(
        default=0.4, description="a single capitalised word: a person or place, an alias"
    )
    shown_only: float = Field(
        default=0.3, description="a phrase said only inside an attachment's [description]"
    )
    answer_only: float = Field(
        default=0.2, description="a phrase only an assistant's turn said names a topic worse"
    )
    directive_only: float = Field(
        default=0.3, description="chat: a user's phrase no answer repeats (the request's form)"
    )
    generic_penalty: float = Field(
        default=0.3, description="a single word all over the slice, per share of spread"
    )
    generic_spread: float = Field(
        default=0.34, ge=0, le=1, description="... beyond this share of the slice's episodes"
    )
    slice_weight: float = Field(
        default=0.05, description="a phrase of several words the whole slice comes back to"
    )
    repeats_counted: int = Field(default=3, ge=0, description="further turns repeat_weight counts")
    words_counted: int = Field(default=2, ge=0, description="further words word_weight counts")
    slice_turns_counted: int = Field(
        default=4, ge=0, description="further slice turns slice_weight counts"
    )
    # -- turn facts (sleepwake/turn_facts.py) --
    max_fact_sentences: int = Field(default=2, ge=1, description="sentences of one turn's fact")
    # two long sentences per turn filled a context with the first topic's facts (conv-26
    # topic-only recall 0.558 -> 0.587 with short pairs)
    pair_chars: int = Field(
        default=120,
        ge=0,
        description="a second sentence only when both are this short (conv-26 topic-only "
        "recall 0.558 -> 0.587)",
    )
    turn_fact_chars: int = Field(default=400, ge=4, description="a turn's fact is cut at this")
    min_sentence_words: int = Field(
        default=4, ge=1, description="a shorter sentence is a fragment, worth no fact"
    )
    full_sentence_words: int = Field(
        default=25, ge=1, description="a sentence this long weighs fully for its length"
    )
    first_person_weight: float = Field(default=1.0, description="a person's 'I' is their news")
    decision_weight: float = Field(default=0.7, description="decisions, plans, likes")
    number_weight: float = Field(default=0.5, description="a number or a date")
    named_weight: float = Field(
        default=0.5, ge=0, description="a bounded topic keeps a fact naming someone or something "
        "rarely named in it ('Their names are Pepper, Precious and Panda') by this much more "
        "(sleepwake/retention.py): the names are what is asked for"
    )  # fmt: skip
    structural_weight: float = Field(
        default=2.0, description="a rule or a decision comes first in a turn's fact"
    )
    # -- one-liners (sleepwake/one_liners.py) --
    names_topic: float = Field(
        default=0.1, description="a summary fact naming its topic is worth this much cosine"
    )
    echo_penalty: float = Field(
        default=0.2, description="an assistant's turn as the summary (it restates) costs this"
    )
    decision_bonus: float = Field(
        default=0.15, description="a turn with a decision or a number sums a topic up better"
    )
    central_bonus: float = Field(
        default=0.25, description="the fact sharing most words with the topic's others"
    )
    reaction_penalty: float = Field(
        default=0.15, description="a remark on the listener's news sums up worse"
    )
    min_summary_chars: int = Field(
        default=25, ge=0, description="shorter facts never sum a topic up"
    )
    one_liner_people: int = Field(
        default=2, ge=1, description="a one-liner gives the news of at most this many people"
    )
    parts_per_person: int = Field(default=3, ge=1, description="... this many pieces of news each")
    one_liner_chars: int = Field(
        default=400, ge=1, description="... in at most this many characters"
    )
    news_weight: float = Field(
        default=0.2, description="a person's part: per point of sentence weight, vs centrality"
    )
    # -- assembly (sleepwake/episodes.py) --
    max_topic_facts: int = Field(
        default=12, ge=1, description="a head holding this many facts in a slice heads no more"
    )
    aside_facts: int = Field(
        default=2, ge=0, description="an episode of a long slice with this few facts is an aside"
    )
    long_slice: int = Field(default=16, ge=1, description="... a slice of at least this many turns")
    min_head_facts: int = Field(
        default=2, ge=1, description="a further head named in fewer fact turns is dropped"
    )
    aliases: int = Field(
        default=4, ge=0, description="the episode's next-best phrases kept as aliases"
    )


class ExtractionConfig(Section):
    """How the rule-based candidates of a slice are grouped (``sleepwake.candidates``) and a
    side remark is told (``sleepwake.side_topics``)."""

    continuation_gap: timedelta = Field(
        default=timedelta(minutes=30),
        description="a turn naming nothing this soon after the last continues its subjects",
    )
    # an answer's rest (steps, lists, caveats) names dozens of things the talk is not about
    answer_lead_sentences: int = Field(
        default=3,
        ge=1,
        description="an answer's first sentences read for phrases: its opening names what it "
        "answers, so a 2,000-character answer costs what a short turn does",
    )
    max_co_entities: int = Field(
        default=24,
        ge=0,
        description="entities of a message a candidate records as co-mentioned: a message "
        "naming thousands must not cost thousands squared",
    )
    max_entities_per_message: int = Field(
        default=64,
        ge=1,
        description="candidates one message yields; its other sentences attach to those (a "
        "pasted list of 10,000 names is not 10,000 topics)",
    )
    side_remark_facts: int = Field(
        default=1,
        ge=0,
        description="chat: a new topic of this few facts is a side remark and joins a topic of "
        "the sleep ('numbered format', 'web page' were topics)",
    )
    aside_topic_facts: int = Field(
        default=2, ge=0, description="talk between people: a new topic of this few facts is an "
        "aside and joins the nearest topic of the sleep ('John's rock', 'outside', 'word')",
    )  # fmt: skip


class TiersConfig(Section):
    """Decay and tiers (docs/sleep-and-wake.md, "Tiers and export")."""

    decay_per_day: float = Field(
        default=0.98, gt=0, le=1, description="utility kept per day since last seen"
    )
    decay_min_hours: float = Field(
        default=12.0, ge=0, description="a topic's stored utility is re-decayed at most this often"
    )
    hot_days: float = Field(default=3.0, ge=0, description="seen this recently: hot")
    warm_days: float = Field(default=30.0, ge=0, description="seen this recently: warm")
    hot_utility: float = Field(default=10.0, ge=0, description="this useful: hot")
    warm_utility: float = Field(default=3.0, ge=0, description="this useful: warm")
    recency_tau_days: float = Field(
        default=7.0, gt=0, description="wake packet ranking: recency's time constant"
    )

    @property
    def recency_tau(self) -> timedelta:
        return timedelta(days=self.recency_tau_days)


class UtilityConfig(Section):
    """What a sleep adds: utility, edges between topics, the wake packet's size."""

    corrected: float = Field(default=5.0, ge=0, description="a corrected topic matters most")
    constrained: float = Field(default=3.0, ge=0, description="a topic holding a rule")
    per_mention: float = Field(default=1.0, ge=0, description="each mention in a sleep")
    co_activation: float = Field(
        default=0.5, ge=0, description="RELATES_TO weight per message naming both topics"
    )
    max_co_activation: float = Field(default=3.0, ge=0, description="... up to this")
    linked_per_message: int = Field(
        default=6, ge=0, description="a message's first topics linked to each other"
    )
    top_topics: int = Field(default=10, ge=0, description="topics a wake packet ranks first")
    subject_hints: int = Field(default=5, ge=0, description="subjects a wake packet names")
    # a chat-assistant sleep composes long texts' vectors from their parts' (word pieces -22%
    # to -34%, recall unchanged at 600 and 1,000 on LongMemEval; docs/evaluation.md)
    blend_chars: int = Field(
        default=600,
        ge=0,
        description="chat: a longer text's vector is composed, not embedded (word pieces -34%, "
        "LongMemEval recall the same)",
    )


class SleepConfig(Section):
    """Every tuning number of sleep; the defaults are the production values."""

    policy: SleepPolicy = Field(default_factory=SleepPolicy)
    merge: MergeConfig = Field(default_factory=MergeConfig)
    formation: FormationConfig = Field(default_factory=FormationConfig)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    tiers: TiersConfig = Field(default_factory=TiersConfig)
    utility: UtilityConfig = Field(default_factory=UtilityConfig)
    subjects: SubjectsConfig = Field(default_factory=SubjectsConfig)
    aspects: AspectsConfig = Field(default_factory=AspectsConfig)


DEFAULT = SleepConfig()
