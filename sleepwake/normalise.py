"""Sleep steps 5 and 7: fold a candidate into a topic, the event that records it, and utility.

A one-liner the sleep composed from the topic's facts (``sleepwake.one_liners.compose_one_liner``)
follows them: when a merge adds facts it is composed again from the current ones, so a topic
that grew over many sessions says what it holds now, not what its first episode said. One a
person or a model wrote (it quotes no fact of the topic) is kept. Facts and open loops are de-duplicated, numbers are
typed and de-duplicated on (key, value, unit), aliases come from the user's own words, and every
item keeps the message ids it came from. Utility follows spec §8.3; decay and tiers are in
``sleepwake.tiers``. Pure.
"""

from __future__ import annotations

import re
import uuid
from typing import TypeVar

from graph.models import (
    EmbeddingMeta,
    Fact,
    NotableEvent,
    OpenLoop,
    Topic,
    TopicStats,
    TopicTime,
    TypedNumber,
)
from retrieval.embedding import text_hash
from sleepwake.candidates import MAX_ONE_LINER, Candidate
from sleepwake.config import DEFAULT, SleepConfig, UtilityConfig
from sleepwake.one_liners import compose_one_liner
from sleepwake.retention import kept_facts
from sleepwake.supersede import supersede, supersede_numbers
from text.gist import lead_fact, one_liner_part

MAX_ALIASES = 40
_Item = TypeVar("_Item", Fact, OpenLoop)
_NS = uuid.UUID("6f1c1c1e-5a1e-4c1a-9e55-5eeff0c1a0c1")


def stable_id(*parts: str) -> str:
    """Deterministic ids, so a sleep re-run after a crash writes the same nodes (MERGE)."""
    return str(uuid.uuid5(_NS, "\x1f".join(parts)))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def utility_delta(cand: Candidate, cfg: UtilityConfig = DEFAULT.utility) -> float:
    """§8.3: +5 corrected, +3 constrained output, +1 per mention in the slice."""
    delta = cfg.per_mention * cand.mentions
    if cand.corrected:
        delta += cfg.corrected
    if cand.constraint_count:
        delta += cfg.constrained
    return delta


def new_topic(
    cand: Candidate,
    namespace: str,
    topic_id: str,
    embedding_model: str,
    cfg: SleepConfig = DEFAULT,
) -> Topic:
    """A topic created from a candidate; the one-liner is its first informative sentence."""
    assert cand.first_at is not None and cand.last_at is not None
    one_liner = cand.one_liner()
    topic = Topic(
        topic_id=topic_id,
        namespace=namespace,
        name=cand.name[:200],
        one_liner=one_liner,
        time=TopicTime(first_seen_at=cand.first_at, last_seen_at=cand.last_at),
        stats=TopicStats(touch_count=0),
    )
    topic, _ = merge_candidate(topic, cand, cfg)
    semantic = topic.semantic_text()
    topic.embedding = EmbeddingMeta(model=embedding_model, hash=text_hash(semantic))
    return topic


def merge_candidate(topic: Topic, cand: Candidate, cfg: SleepConfig = DEFAULT) -> tuple[Topic, str]:
    """Fold ``cand`` into ``topic``; return the new topic and a one-line summary of the change."""
    facts = _merge_items(topic.facts, cand.facts)
    facts = supersede(facts, fresh=facts[len(topic.facts) :])
    fresh = facts[len(topic.facts) :]
    if cand.person:  # copies of the subjects' facts: a bounded digest (sleepwake/retention)
        facts = kept_facts(facts, cfg.merge.person_kept_facts, cfg.formation)
    elif cand.theme:  # likewise for what a person keeps coming back to (sleepwake/themes)
        facts = kept_facts(facts, cfg.merge.theme_kept_facts, cfg.formation)
    loops = _merge_items(topic.open_loops, cand.open_loops)
    numbers = _merge_numbers(topic.numbers, cand.numbers)
    numbers = supersede_numbers(numbers, fresh=numbers[len(topic.numbers) :])
    events = _merge_events(topic.time.notable_events, cand.events)
    aliases = _merge_aliases(topic, cand)
    added = {
        "facts": len(fresh),
        "open loops": len(loops) - len(topic.open_loops),
        "numbers": len(numbers) - len(topic.numbers),
        "decisions": len(events) - len(topic.time.notable_events),
    }
    assert cand.first_at is not None and cand.last_at is not None
    time = TopicTime(
        first_seen_at=min(topic.time.first_seen_at, cand.first_at),
        last_seen_at=max(topic.time.last_seen_at, cand.last_at),
        notable_events=events,
    )
    stats = topic.stats.model_copy(
        update={
            "utility_score": topic.stats.utility_score + utility_delta(cand, cfg.utility),
            "touch_count": topic.stats.touch_count + cand.mentions,
            "correction_count": topic.stats.correction_count + int(cand.corrected),
            "constraint_count": topic.stats.constraint_count + cand.constraint_count,
        }
    )
    one_liner = _next_one_liner(topic, facts, cand, cfg, grown=bool(fresh))
    merged = topic.with_items(facts, loops, numbers, aliases, time=time, stats=stats,
                              one_liner=one_liner)  # fmt: skip
    return merged, _summary(cand, added, fresh)


def _next_one_liner(
    topic: Topic, facts: list[Fact], cand: Candidate, cfg: SleepConfig, grown: bool
) -> str:
    """The one-liner after a merge: a topic's first one is the candidate's; a composed one
    (its parts quote the topic's facts) is composed again when facts were added; one someone
    wrote is kept (following the fact it quotes when that was superseded)."""
    if not topic.one_liner:
        return cand.one_liner()
    if grown and topic.facts and _composed(topic.one_liner, topic.facts):
        current = [f.text for f in facts if f.invalid_at is None]
        # the fact that summed the topic up stays its first part while it holds
        lead = lead_fact(topic.one_liner, current)
        composed = compose_one_liner(topic.name, current, lead, cfg.formation)
        if composed:
            return composed[:MAX_ONE_LINER]
    return _current_one_liner(topic.one_liner, facts)


def _composed(one_liner: str, facts: list[Fact]) -> bool:
    """Whether the sleep composed ``one_liner`` from ``facts``: it starts with one of them
    (whole, as stored before one-liners had parts, or as a part)."""
    return any(
        one_liner == f.text[:MAX_ONE_LINER] or one_liner.startswith(one_liner_part(f.text))
        for f in facts
    )


def _current_one_liner(one_liner: str, facts: list[Fact]) -> str:
    """The one-liner is kept once set, unless the fact it quotes was superseded: then it
    follows the fact that replaced it (so the topic's gist is what is true now)."""
    by_id = {f.fact_id: f for f in facts}
    for _ in range(len(facts)):  # follow a chain of supersessions, never loop forever
        quoted = [f for f in facts if f.text[:300] == one_liner]
        if not quoted or any(f.invalid_at is None for f in quoted):
            return one_liner
        successor = by_id.get(quoted[-1].superseded_by or "")
        if successor is None:
            return one_liner
        one_liner = successor.text[:300]
    return one_liner


def _merge_items(old: list[_Item], new: list[_Item]) -> list[_Item]:
    """Append the new items whose text is not already current (a statement made again after it
    was superseded is a new, current fact: "blue", then "green", then "blue" again)."""
    seen = {_norm(i.text) for i in old if _current(i)}
    out = list(old)
    for item in new:
        key = _norm(item.text)
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _current(item: Fact | OpenLoop) -> bool:
    return not isinstance(item, Fact) or item.invalid_at is None


def _merge_numbers(old: list[TypedNumber], new: list[TypedNumber]) -> list[TypedNumber]:
    seen = {(n.key.lower(), n.value, (n.unit or "").lower()) for n in old if n.invalid_at is None}
    out = list(old)
    for n in new:
        key = (n.key.lower(), n.value, (n.unit or "").lower())
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


def _merge_events(old: list[NotableEvent], new: list[NotableEvent]) -> list[NotableEvent]:
    seen = {(_norm(e.event), e.at) for e in old}
    out = list(old)
    for e in new:
        if (_norm(e.event), e.at) not in seen:
            seen.add((_norm(e.event), e.at))
            out.append(e)
    return sorted(out, key=lambda e: e.at)


def _merge_aliases(topic: Topic, cand: Candidate) -> list[str]:
    """Aliases from how the user referred to it (their own surface forms)."""
    known = {a.lower() for a in topic.aliases} | {topic.name.lower()}
    out = list(topic.aliases)
    themes = [(name, 0) for name in cand.theme_names]  # first: a theme is how it is found again
    for surface, _ in [*themes, *cand.user_surfaces.most_common()]:
        clean = surface.strip()[:200]
        if clean and clean.lower() not in known and len(out) < MAX_ALIASES:
            known.add(clean.lower())
            out.append(clean)
    return out


def _summary(cand: Candidate, added: dict[str, int], new_facts: list[Fact]) -> str:
    parts = [f"{n} {label}" for label, n in added.items() if n > 0]
    head = f"'{cand.name}' mentioned in {cand.mentions} message(s)"
    detail = f"; added {', '.join(parts)}" if parts else "; nothing new"
    sample = f": {new_facts[0].text[:200]}" if new_facts else ""
    return head + detail + sample
