"""Consolidation: a session's episode about what a durable topic holds joins that topic. Pure.

A theme's or an area's topic ("Audrey's dogs", "Melanie's music") gathers a person's facts about
it from every session (``sleepwake.themes``, ``sleepwake.aspects``), but the episode of the
session that said them still made a topic of its own, touched by that one sleep and never met
again ("puppy", "salon", "road trip" beside "Audrey's dogs"): the memory held each session
twice, once as a segment nobody comes back to. Here (``absorb_share``; 0: off):

- **an episode of the sleep** that would make a new topic, at least ``absorb_share`` of whose
  facts the sleep files under durable topics (a theme's, an area's or a person's own), joins
  the theme's or area's topic holding most of them instead (unless it is about a named
  subject, ``_named``: "Luna", "Lisbon" are topics of their own that come back): its facts no other durable topic
  files join it, its turns and summary are that topic's event of this sleep
  (``merge_plan.fold``);
- **the earlier topics a new durable topic is seeded from** become its history
  (``absorb_seeds``): an event each, dated when their facts were said, and a one-session topic
  whose facts it mostly holds is archived into it.

A topic that took one keeps its ``absorb_kept_facts`` most telling current facts
(``sleepwake.retention``); the others stay in the conversation and its passages. A person's
own topic never takes an episode (a digest of them, not a subject).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from graph.models import Fact, Topic, TopicEvent
from sleepwake.candidates import Candidate
from sleepwake.config import SleepConfig
from sleepwake.merge_plan import Work
from sleepwake.normalise import MAX_ALIASES, stable_id
from sleepwake.retention import kept_facts

Target = tuple[str, bool]


def absorb_episodes(
    candidates: list[Candidate],
    vectors: list[list[float]],
    targets: list[Target],
    cfg: SleepConfig,
) -> tuple[tuple[list[Candidate], list[list[float]], list[Target]], set[str]]:
    """The candidates, vectors and targets with each absorbed episode sent to its durable
    topic's target (folded after it, so that topic is made or merged by its own candidate
    first; see the module), and the ids of the topics that took one (``bounded`` bounds
    them)."""
    share = cfg.merge.absorb_share
    durable = [j for j, c in enumerate(candidates) if c.theme and not c.person]
    if share <= 0 or not durable:
        return (candidates, vectors, targets), set()
    users = Counter(tid for tid, _ in targets)
    held = {j: {f.text for f in candidates[j].facts} for j in durable}
    # what the sleep files under any durable topic, a person's own included
    filed = {f.text for c in candidates if c.theme or c.person for f in c.facts}
    out_cands, out_targets = list(candidates), list(targets)
    folded: list[int] = []
    took: set[str] = set()
    for i, cand in enumerate(candidates):
        tid, new = targets[i]
        if not new or users[tid] != 1 or cand.person or cand.theme or not cand.facts:
            continue
        if _named(cand):  # a named subject (Luna, Lisbon) is a topic that lasts
            continue
        texts = [f.text for f in cand.facts]
        best = max(durable, key=lambda j: (sum(t in held[j] for t in texts), -j))
        if not any(t in held[best] for t in texts):
            continue
        if sum(t in filed for t in texts) < share * len(texts):
            continue
        out_targets[i] = targets[best]
        # what another durable topic files stays there (the friend's parade is not Melanie's
        # music); its names are not the durable topic's (a later "moments" must not merge in)
        own = [f for f in cand.facts if f.text in held[best] or f.text not in filed]
        out_cands[i] = replace(cand, facts=own, user_surfaces=Counter(), theme_names=[])
        folded.append(i)
        took.add(targets[best][0])
    order = [k for k in range(len(candidates)) if k not in set(folded)] + folded
    return (
        [out_cands[k] for k in order],
        [vectors[k] for k in order],
        [out_targets[k] for k in order],
    ), took


def _named(cand: Candidate) -> bool:
    """An episode about a named subject: named by a name ("Lisbon"), or about a member a theme
    names ("Luna (James's collie)", ``sleepwake.theme_words``): it makes the topic the name's
    next episode joins (Luna's agility contest in July, her adoption in May)."""
    return cand.name[:1].isupper() or any(" (" in name for name in cand.theme_names)


def bounded(work: Work, took: set[str], cfg: SleepConfig) -> None:
    """Each topic that took an episode keeps its ``absorb_kept_facts`` most telling current
    facts (``sleepwake.retention``): a durable topic grows with every session, never into a
    catch-all."""
    for tid in sorted(took):
        topic = work.topics[tid]
        facts = kept_facts(topic.facts, cfg.merge.absorb_kept_facts, cfg.formation)
        if len(facts) != len(topic.facts):
            work.topics[tid] = topic.model_copy(update={"facts": facts})


def absorb_seeds(
    work: Work,
    seeded: dict[str, list[str]],
    read: Callable[[list[str]], list[Topic]],
    cfg: SleepConfig,
    slice_id: str,
    now: datetime,
) -> set[str]:
    """What a new durable topic was seeded from (``seeded``: its key -> the earlier topics,
    ``read`` whole, in one call) becomes its history. An earlier topic that was one session's
    segment ("puppy", filed in April, whose news is now "Audrey's pets"' first) and of whose
    current facts it holds the share ``absorb_share`` joins it: its other facts added, its
    name an alias (the old name finds it), and it is archived (kept, as every archived topic
    is, for export and ``as_of``). Any other that gave it facts stays as it is. Either way the
    new topic gets an event for each, at the time those facts were said, naming the topic
    they came from: "Melanie's music" shows May (the violin, from 'charity race') and June.
    Returns the ids of the topics that took a whole one."""
    if cfg.merge.absorb_share <= 0 or not seeded:
        return set()
    ids = sorted({t for sources in seeded.values() for t in sources})
    by_id = {t.topic_id: t for t in read(ids)}
    took: set[str] = set()
    for key, sources in seeded.items():
        tid = work.by_key.get(key)
        if tid is None or work.versions.get(tid, 0) is not None:
            continue  # seeds only start a topic this sleep makes
        for old in (by_id[sid] for sid in sources if sid in by_id and sid not in work.topics):
            gave = _gave(work.topics[tid], old)
            if not gave:
                continue
            whole = _segment(old) and len(gave) >= cfg.merge.absorb_share * len(_current(old))
            if whole:
                gave = _absorb(work, tid, old, now)
                took.add(tid)
            _history(work, tid, old, gave, slice_id, "joined" if whole else "gathered from")
    return took


def _current(topic: Topic) -> list[Fact]:
    return [f for f in topic.facts if f.invalid_at is None]


def _gave(durable: Topic, old: Topic) -> list[Fact]:
    """The current facts of ``old`` that ``durable`` holds (its seeds are copies)."""
    have = {f.text for f in durable.facts}
    return [f for f in _current(old) if f.text in have]


def _segment(topic: Topic) -> bool:
    """A live topic of one session: everything it holds was said within a day."""
    span = topic.time.last_seen_at - topic.time.first_seen_at
    return topic.archived_at is None and span <= timedelta(days=1)


def _absorb(work: Work, tid: str, old: Topic, now: datetime) -> list[Fact]:
    """``old`` joins the topic ``tid``: its facts, its name as an alias, its time span; it is
    archived. Returns its current facts."""
    durable = work.topics[tid]
    have = {f.text for f in durable.facts}
    current = _current(old)
    known = {a.lower() for a in [durable.name, *durable.aliases]}
    aliases = list(durable.aliases)
    if old.name.lower() not in known and len(aliases) < MAX_ALIASES:
        aliases.append(old.name)
    time = durable.time.model_copy(
        update={
            "first_seen_at": min(durable.time.first_seen_at, old.time.first_seen_at),
            "last_seen_at": max(durable.time.last_seen_at, old.time.last_seen_at),
        }
    )
    facts = [*durable.facts, *(f for f in current if f.text not in have)]
    work.topics[tid] = durable.model_copy(update={"facts": facts, "aliases": aliases, "time": time})
    work.topics[old.topic_id] = old.model_copy(update={"archived_at": now})
    work.versions[old.topic_id] = old.version
    return current


def _history(work: Work, tid: str, old: Topic, facts: list[Fact], slice_id: str, how: str) -> None:
    """The event of the topic ``tid`` for what it took of ``old``: at the time it was said."""
    times = [f.at for f in facts if f.at is not None] or [old.time.last_seen_at]
    sources = list(dict.fromkeys(m for f in facts for m in f.source_message_ids))
    event = TopicEvent(
        event_id=stable_id(old.namespace, slice_id, tid, "seed", old.topic_id),
        namespace=old.namespace,
        topic_id=tid,
        at=max(times),
        delta_summary=f"{how} '{old.name}': {facts[0].text}"[:2000],
        source_message_ids=sources[:500],
    )
    work.events.append((event, work.vectors[tid]))
