"""Sleep step 4: merge a candidate into an existing topic or create a new one (spec §8.1). Pure.

score = alias (0 or up to +3.0) + embedding similarity (0..3.0) + entity overlap (0..1.5)
        + time proximity (0..2.0, only when the candidate has a time hint);  >= 4.0 merges.

Alias: +3.0 when the candidate's phrase equals the topic's name or an alias; otherwise +3.0 times
the share of the shorter phrase's stemmed content words found in the longer ("billing migration"
vs "migrating the billing tables" -> 3.0), so varied wording of one concept still matches.
A candidate whose one-liner has cosine under ``min_cosine`` with the topic's is never merged
either, unless it continues a conversation of the same day: a generic name said weeks apart
("photo", "family") would otherwise absorb every session. The bar rises with the topic's size
(``required_cosine``), and a topic of ``same_day_max_facts`` facts or more takes nothing unlike
it even on the same day: one topic per subject, not one topic per conversation.
Time anchors: an event-like candidate ("the party") whose time hint lies more than
``event_veto_days`` from everything the topic covers, and that shares none of its people or
things, is a different event: it is never merged, whatever the other signals say.
Weights and threshold: ``MergeConfig`` (sleepwake/config.py), ``SHERIFF_SLEEP__MERGE__...``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

from sleepwake.candidates import Candidate
from sleepwake.config import MergeConfig
from sleepwake.names_apart import name_identity
from text.tokens import stems


@dataclass(frozen=True)
class PoolTopic:
    """What matching needs to know of a topic (existing, or created earlier in this sleep)."""

    topic_id: str
    names: tuple[str, ...]  # lower-cased name and aliases
    text: str  # lower-cased name, one-liner and facts, for entity overlap
    first_seen_at: datetime
    last_seen_at: datetime
    facts: int = 0  # how many facts it holds (a big topic merges only what is like it)


@dataclass(frozen=True)
class MatchScore:
    topic_id: str
    alias: float
    embedding: float
    entity: float
    time: float
    vetoed: bool
    shared_words: int = 0  # tie-break: the topic that shares more of the candidate's words
    subject: bool = False  # called by the topic's name and alike: the same subject, any day

    @property
    def total(self) -> float:
        return self.alias + self.embedding + self.entity + self.time


def alias_score(key: str, names: tuple[str, ...], w: MergeConfig) -> float:
    if key in names:
        return w.alias
    mine = stems(key)
    best = 0.0
    for name in names:
        theirs = stems(name)
        if mine and theirs:
            shorter, longer = sorted((mine, theirs), key=len)
            share = len(shorter & longer) / len(shorter)
            if share >= 0.5 and len(shorter & longer) >= 1:
                best = max(best, w.alias * share)
    return best


def shared_words(key: str, names: tuple[str, ...]) -> int:
    """The most stemmed words ``key`` shares with any of ``names``."""
    mine = stems(key)
    return max((len(mine & stems(name)) for name in names), default=0)


def embedding_score(cosine: float, w: MergeConfig) -> float:
    span = w.cos_full - w.cos_floor
    return w.embedding * min(1.0, max(0.0, (cosine - w.cos_floor) / span))


def shared_entities(cand: Candidate, topic: PoolTopic) -> int:
    """How many of the candidate's people and things the topic's text names."""
    return sum(1 for e in cand.co_entities if e and re.search(rf"\b{re.escape(e)}\b", topic.text))


def entity_score(shared: int, cand: Candidate, w: MergeConfig) -> float:
    """The entity part for ``shared`` of the candidate's people and things in the topic."""
    return w.entity * shared / len(cand.co_entities) if cand.co_entities else 0.0


def days_outside(when: datetime, start: datetime, end: datetime) -> float:
    """Days from ``when`` to the interval [start, end] (0 inside it)."""
    if start <= when <= end:
        return 0.0
    edge = start if when < start else end
    return abs((when - edge).total_seconds()) / 86400.0


def candidate_alias_score(cand: Candidate, names: tuple[str, ...], w: MergeConfig) -> float:
    """The alias part for ``cand``: its own phrase, or (at ``w.alias_share``) one of the other
    phrases it goes by when that phrase is exactly a name or alias of the topic."""
    own = alias_score(cand.key, names, w)
    if own >= w.alias or not any(a in names for a in cand.alias_keys):
        return own
    return max(own, w.alias_share * w.alias)


def required_cosine(facts: int, w: MergeConfig) -> float:
    """The least cosine a merge into a topic of ``facts`` facts needs: ``min_cosine``, rising
    by ``size_step`` per doubling beyond ``size_free_facts``. A topic that already holds dozens
    of facts absorbing whatever shares a word with its aliases grows into a topic about
    everything (a 'family' topic of 87 facts on one LoCoMo conversation); the bigger it is,
    the more alike a newcomer must be."""
    doublings = math.log2(max(facts, w.size_free_facts) / w.size_free_facts)
    return w.min_cosine + w.size_step * doublings


def full(facts: int, adding: int, w: MergeConfig) -> bool:
    """Whether a topic of ``facts`` facts is too big to take ``adding`` more (``max_facts``).
    Topic search finds a topic by its name, its one-liner and a few central facts, and a
    context shows a found topic's facts best first: a topic of 30 or 40 facts (LoCoMo's
    "dairy-free chocolate cake" of 46, gathered over five sessions) is found for questions
    about any of them and then fills the budget alone, while the topic that answers, ranked
    second, shows nothing. Those topics grew by taking in what was said under other names
    ("dairy-free recipe", "recipe", "dairy-free vanilla"); past ``max_facts`` such a newcomer
    makes a topic of its own (named apart, ``sleepwake.names_apart.distinct_label``, when its
    name is taken), while the subject called by the topic's own name (``named_as``: "pottery
    class", then "advanced pottery class", in three sessions) still merges."""
    return facts > 0 and facts + adding > w.max_facts


def named_as(cand: Candidate, topic: PoolTopic) -> bool:
    """Whether ``cand`` is called by the topic's name or a kind of it: every word of the name
    is in the candidate's ("pottery class", "advanced pottery class" for "pottery class"),
    not only a word or an alias in common ("dairy-free vanilla" for "dairy-free chocolate
    cake"). Only a name of two words or more is that specific: "painting" is in "horse
    painting", "lake sunrise painting" and every other painting (one LoCoMo topic of that
    name took 34 facts). The candidate's name counts as well as its phrase: an episode its
    speaker calls "my family" is named "John's family" and joins John's topic of that name
    (it made "John's family (carefree joy)" beside it on LoCoMo conv-41)."""
    name = stems(topic.names[0]) if topic.names else set()
    return len(name) >= 2 and (name <= stems(cand.key) or name <= stems(cand.name))


_OWNER = re.compile(r"^[^\s']{1,40}'s\s+")


def called_by_name(cand: Candidate, topic: PoolTopic) -> bool:
    """Whether ``cand`` is called by the topic's name (its owner left aside): one name holds
    the other's words ("painting" / "abstract painting" / "Melanie's horse painting"), or
    they share half the shorter one's words ("pottery workshop" / "pottery project")."""
    if not topic.names:
        return False
    name = stems(_OWNER.sub("", topic.names[0]))
    mine = stems(_OWNER.sub("", cand.key))
    if not name or not mine:
        return False
    shorter = min(len(name), len(mine))
    return len(name & mine) >= max(1, math.ceil(shorter / 2))


def score(cand: Candidate, topic: PoolTopic, cosine: float, w: MergeConfig) -> MatchScore:
    """The §8.1 score of merging ``cand`` into ``topic``, with the time-anchor veto. A person's
    candidate (``sleepwake.people``) or a theme's (``sleepwake.themes``) goes to the topic of
    its name and nowhere else."""
    if cand.person or cand.theme:
        # "Nate's games" (an area) and "Nate's game" (a theme) are one name, as for duplicates
        own = bool(topic.names) and name_identity(topic.names[0]) == name_identity(cand.key)
        alias = w.alias if own else 0.0
        emb = embedding_score(cosine, w)
        return MatchScore(topic.topic_id, alias, emb, 0.0, 0.0, not own, 0, own)
    alias = candidate_alias_score(cand, topic.names, w)
    shared = shared_entities(cand, topic)
    entity = entity_score(shared, cand, w)
    time_part, vetoed = 0.0, False
    if cand.time_hint is not None:
        gap = days_outside(cand.time_hint, topic.first_seen_at, topic.last_seen_at)
        if cand.hint_is_mention:  # talked about the same day, or no time signal at all
            time_part = w.time if gap < 1.0 else 0.0
        else:
            time_part = w.time * math.exp(-gap / w.time_scale_days)
        vetoed = cand.event_like and gap > w.event_veto_days and entity == 0.0
    # the same name said weeks apart about something else ("photo", "family") is not the same
    # subject: a merge needs the one-liners to agree, unless the talk was picked up the same day
    same_day = cand.hint_is_mention and time_part >= w.time
    same_day = same_day and topic.facts < w.same_day_max_facts
    # the subject a person keeps coming back to, called by the topic's name months later
    # ("painting" in May, "abstract painting" in September), is the same topic
    bar = required_cosine(topic.facts, w)
    named = called_by_name(cand, topic) and cosine >= max(w.subject_cosine, bar)
    # ... or by the people and things it names: Max the dog, adopted in May, graduated in June
    same_things = entity >= w.entity / 2 and cosine >= max(w.entity_cosine, bar)
    # two of them at once (Max and Luna, the dogs) is the same subject at a lower cosine
    both = shared >= 2 and cosine >= max(w.entities_cosine, bar - 0.1)
    same_things = same_things or both
    subject = (named or same_things) and not vetoed
    vetoed = vetoed or (cosine < bar and not same_day and not subject)
    vetoed = vetoed or cosine < w.floor_cosine  # the same day excuses a moderate cosine only
    # a topic past max_facts is found by every question near any of its facts and fills a
    # context with its own (``full``): what comes under another name goes to a topic of its
    # own; the subject itself, called by the topic's name, still comes back to it
    vetoed = vetoed or (full(topic.facts, len(cand.facts), w) and not named_as(cand, topic))
    return MatchScore(
        topic.topic_id,
        alias,
        embedding_score(cosine, w),
        entity,
        time_part,
        vetoed,
        shared_words(cand.key, topic.names),
        subject,
    )


def best_match(scores: list[MatchScore], w: MergeConfig) -> MatchScore | None:
    """The highest-scoring topic at or over the threshold, if any. Ties go to the topic that
    shares more of the candidate's words, then to the lowest id (stable)."""
    eligible = [s for s in scores if not s.vetoed and (s.total >= w.threshold or s.subject)]
    if not eligible:
        return None
    return min(eligible, key=lambda s: (-round(s.total, 9), -s.shared_words, s.topic_id))
