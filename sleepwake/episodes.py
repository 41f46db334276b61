"""Sleep step 3, second half: from phrases to topics, by the conversation's structure. Pure.

The rule-based extraction (``sleepwake.candidates``) finds every noun phrase of the slice; most
are words, not topics. ``form_topics`` forms the topics a note-taker would keep, one job per
module, read top to bottom:

1. **Episodes** (``sleepwake.segments``): the slice is cut where neighbouring turns stop being
   about the same thing, or the conversation paused.
2. **Heads** (``sleepwake.heads``): each episode's phrases ranked; the best names the topic, a
   rule's or a dependency's phrase heads one of its own.
3. **Facts** (``sleepwake.turn_facts``): each turn yields at most one fact, filed under the head
   the turn names (else the episode's main head), relative dates resolved.
4. **One-liners** (``sleepwake.one_liners``): the fact that sums a topic up, and each person's
   news.
5. **Assembly** (here): asides join their neighbour, a full head gives way to the episode's next
   phrase, heads named once are thinned, and each head becomes a candidate.

Every knob is in ``FormationConfig`` (sleepwake/config.py).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence

from graph.models import Message
from sleepwake.candidates import Candidate, SliceCandidates, normalise_key
from sleepwake.config import FormationConfig
from sleepwake.extract import Extraction
from sleepwake.heads import (
    Episode,
    choose_heads,
    continue_requests,
    gather_phrases,
    is_named,
    structural_keys,
    weigh_by_answers,
)
from sleepwake.one_liners import compose_one_liner, owned_name, summary_fact
from sleepwake.policy import ANSWER_ROLES
from sleepwake.segments import (
    FORMATION,
    Embed,
    content_stems,
    min_turns_for,
    pauses,
    segment,
    turn_vectors,
)
from sleepwake.side_topics import with_assistant
from sleepwake.turn_facts import turn_fact

_BRACKETS = re.compile(r"\[[^\]]*\]")


def form_topics(
    piece: Sequence[Message],
    cands: SliceCandidates,
    extractions: dict[str, Extraction],
    embed: Embed,
    tz: str = "UTC",
    cfg: FormationConfig = FORMATION,
) -> SliceCandidates:
    """Replace the slice's phrase candidates by episode topics (see the module docstring).
    ``extractions`` holds each message's extraction; ``embed`` is one batched embedding call
    (made twice: the turns, then the phrases worth ranking)."""
    if not piece or not cands.candidates:
        return cands
    episodes = _episodes(piece, embed, cfg)
    by_key = {c.key: c for c in cands.candidates}
    said = {m.message_id: _BRACKETS.sub(" ", m.content).lower() for m in piece}
    users = {m.message_id for m in piece if m.role == "user"}
    people = {m.speaker for m in piece if m.role == "user" and m.speaker}
    structural = structural_keys(cands, extractions, users, among_people=len(people) > 1)
    gather_phrases(episodes, cands, structural, said, users)
    chat = with_assistant(piece, cfg.chat_answer_chars)
    if chat:
        weigh_by_answers(episodes, by_key, cfg)
    choose_heads(episodes, by_key, embed, cfg)
    if chat:
        continue_requests(episodes, pauses(piece, cfg))
    # a chat moves in exchanges: one passing exchange is an aside however short the slice
    return _assemble(episodes, by_key, extractions, cands, tz, asides=chat or None, cfg=cfg)


def _episodes(piece: Sequence[Message], embed: Embed, cfg: FormationConfig) -> list[Episode]:
    """Job 1: the slice's turns embedded and cut into episodes (``sleepwake.segments``)."""
    vectors = turn_vectors(piece, embed, cfg)
    # a short slice (a few turns of a quick exchange) changes subject within two or three turns
    words = [content_stems(m.content[: cfg.turn_lead_chars]) for m in piece]
    links = [len(a & b) for a, b in itertools.pairwise(words)]
    joined = [m.role in ANSWER_ROLES for m in piece[1:]]
    spans = segment(
        vectors,
        pauses(piece, cfg),
        min_turns=min_turns_for(len(piece), cfg),
        links=links,
        joined=joined,
        cfg=cfg,
    )
    return [Episode(list(piece[s:e]), vectors[s:e]) for s, e in spans]


def _assemble(
    episodes: list[Episode],
    by_key: dict[str, Candidate],
    extractions: dict[str, Extraction],
    cands: SliceCandidates,
    tz: str,
    asides: bool | None = None,
    cfg: FormationConfig = FORMATION,
) -> SliceCandidates:
    """Job 5: each episode's heads become candidates holding the turns that name them."""
    out: dict[str, Candidate] = {}
    per_message: dict[str, list[str]] = {}
    # the people talking are in every episode: as a topic's entities they would tie every
    # topic of the conversation to every other one (and merge them across sessions)
    speakers = {normalise_key(m.speaker) for ep in episodes for m in ep.messages if m.speaker}
    previous: list[str] = []
    counts = [_fact_count(ep, extractions, tz, cfg) for ep in episodes]
    long = asides or sum(len(ep.messages) for ep in episodes) >= cfg.long_slice
    aside = cfg.aside_facts if long else 0  # a short slice may change subject every turn or two
    for i, ep in enumerate(episodes):
        heads = _episode_heads(episodes, counts, i, aside, previous, out, cfg)
        if not heads:
            continue
        heads = _thin_heads(ep, heads, by_key, extractions, tz, cfg)
        previous = heads
        phrase_cands = [by_key[p.key] for p in ep.phrases]
        for head in heads:
            if head not in out:
                out[head] = _empty(by_key[head], phrase_cands, heads, speakers)
                out[head].label = owned_name(by_key[head].name, ep.messages)
            target = out[head]
            before = len(target.message_ids)
            _fold_messages(target, ep, heads, head, by_key, extractions, phrase_cands, tz, cfg)
            if len(target.message_ids) > before:
                target.returns = (target.returns or 0) + 1
            _add_aliases(target, phrase_cands, heads, cfg)
        for message in ep.messages:
            per_message[message.message_id] = [
                h for h in heads if message.message_id in out[h].message_ids
            ]
    return _summed_up(episodes, out, per_message, extractions, cands, cfg)


def _episode_heads(
    episodes: list[Episode],
    counts: list[int],
    i: int,
    aside: int,
    previous: list[str],
    out: dict[str, Candidate],
    cfg: FormationConfig,
) -> list[str]:
    """The heads episode ``i`` files its turns under ([]: none, it makes no topic)."""
    ep = episodes[i]
    if not counts[i]:
        return []  # greetings and sign-offs ("ok, that's all for today"): no topic, no fact
    heads = ep.heads or previous  # an episode naming nothing continues the one before
    if counts[i] <= aside:
        # a remark or two between two subjects ("Nature": a photo and a "wow") is an aside
        # of the talk before it (or, first in the slice, after it), not a topic: on LoCoMo
        # such topics were most of those citing one message, and a tenth of all topics
        neighbour = previous or _next_heads(episodes, counts, i, aside)
        if neighbour:
            return neighbour
    if not heads:
        return []
    # an aside joins its neighbour even when that is full (one or two facts past the
    # cap): renamed by its own phrase it made a topic of one fact ("peaceful presence
    # around", "feel sureal": 7 of LoCoMo conv-42's 84 topics cited one message)
    return _room_for(ep, heads, out, cfg)


def _summed_up(
    episodes: list[Episode],
    out: dict[str, Candidate],
    per_message: dict[str, list[str]],
    extractions: dict[str, Extraction],
    cands: SliceCandidates,
    cfg: FormationConfig,
) -> SliceCandidates:
    """The candidates with their one-liners (job 4), in order of first mention."""
    turn_vectors = {
        m.message_id: v for ep in episodes for m, v in zip(ep.messages, ep.vectors, strict=True)
    }
    echoes = {m.message_id for ep in episodes for m in ep.messages if m.role != "user"}
    decided = {mid for mid, e in extractions.items() if e.decisions or e.numbers}
    for cand in out.values():
        lead = summary_fact(cand, turn_vectors, echoes, decided, cfg)
        facts = [f.text for f in cand.facts]
        cand.summary = compose_one_liner(cand.name, facts, lead, cfg) or lead
    ordered = sorted(out.values(), key=lambda c: (c.first_seq or 0, c.key))
    return SliceCandidates(
        ordered,
        cands.dependencies,
        cands.in_progress,
        per_message,
        cands.extractions,
        {mid: v.tolist() for mid, v in turn_vectors.items()},
    )


def _thin_heads(
    ep: Episode,
    heads: list[str],
    by_key: dict[str, Candidate],
    extractions: dict[str, Extraction],
    tz: str,
    cfg: FormationConfig = FORMATION,
) -> list[str]:
    """Of several ``heads``, those that at least ``cfg.min_head_facts`` of the episode's turns worth
    a fact name: a head named once is a remark within the talk of another ("peaceful presence
    around" beside "dog", named in three turns), and its turn goes to the head most like it. A
    head carrying a rule or a dependency stays (worth remembering alone, and DEPENDS_ON needs
    its ends); when none is named twice the first stays; and a kept head that is a part of the
    first one's name ("moments" of "happy moments") gives way to it, the more specific name.
    Named in one turn, such heads made 8 of the 9 topics of one fact on LoCoMo conv-42."""
    if len(heads) < 2:
        return heads
    structural = {p.key for p in ep.phrases if p.structural}
    named = Counter[str]()
    for message in ep.messages:
        extraction = extractions.get(message.message_id)
        if extraction is None or turn_fact(message, extraction, tz, cfg) is None:
            continue
        named.update(h for h in heads if message.message_id in by_key[h].message_ids)
    kept = [h for h in heads if named[h] >= cfg.min_head_facts or h in structural]
    first = set(heads[0].split())
    kept = [heads[0] if set(h.split()) <= first else h for h in kept]
    return list(dict.fromkeys(kept)) or heads[:1]


def _next_heads(episodes: list[Episode], counts: list[int], i: int, aside: int) -> list[str]:
    """The heads of the first episode after ``i`` that is more than an aside, [] if none."""
    later = (
        ep.heads for ep, n in zip(episodes[i + 1 :], counts[i + 1 :], strict=True) if n > aside
    )
    return next((h for h in later if h), [])


def _room_for(
    ep: Episode, heads: list[str], out: dict[str, Candidate], cfg: FormationConfig
) -> list[str]:
    """``heads`` with each head that already holds ``cfg.max_topic_facts`` facts in this slice
    replaced by the episode's best other phrase (one that can name a topic and is not itself
    full): a chat that keeps coming back to "game" for an hour makes "game" and then
    "basketball court", not one topic of 30 facts that every question finds and that fills a
    context alone (``sleepwake.matching.full`` keeps the same bound across sleeps)."""
    chosen: list[str] = []
    for head in heads:
        if head in out and len(out[head].facts) >= cfg.max_topic_facts:
            spare = [
                p.key
                for p in ep.phrases
                if not p.named
                and p.key not in heads
                and p.key not in chosen
                and len(out[p.key].facts if p.key in out else ()) < cfg.max_topic_facts
            ]
            if spare:
                if head in ep.head_vectors:  # the new head stands for what the old one did
                    ep.head_vectors[spare[0]] = ep.head_vectors.pop(head)
                head = spare[0]
        chosen.append(head)
    return list(dict.fromkeys(chosen))


def _fact_count(
    ep: Episode, extractions: dict[str, Extraction], tz: str, cfg: FormationConfig = FORMATION
) -> int:
    """How many turns of the episode are worth a fact."""
    return sum(
        turn_fact(m, extractions[m.message_id], tz, cfg) is not None
        for m in ep.messages
        if m.message_id in extractions
    )


def _empty(
    head: Candidate, phrases: list[Candidate], heads: list[str], speakers: set[str]
) -> Candidate:
    """A topic candidate named by ``head``; the episode's names (not its speakers) and other
    heads are its entities."""
    cand = Candidate(key=head.key, label=head.name, returns=0)
    cand.surfaces.update(head.surfaces)
    cand.user_surfaces.update(head.user_surfaces or head.surfaces)
    cand.co_entities = {p.key for p in phrases if is_named(p)} | set(heads)
    cand.co_entities -= speakers | {head.key}
    return cand


def _fold_messages(
    target: Candidate,
    ep: Episode,
    heads: list[str],
    head: str,
    by_key: dict[str, Candidate],
    extractions: dict[str, Extraction],
    phrases: list[Candidate],
    tz: str,
    cfg: FormationConfig,
) -> None:
    """Give ``target`` the turns of ``ep`` that name it (a turn naming no head goes to the
    head most like it), with their fact and the numbers, loops and decisions they carry."""
    for i, message in enumerate(ep.messages):
        mid = message.message_id
        named = [h for h in heads if mid in by_key[h].message_ids]
        if head not in (named or [_nearest(ep, i, heads)]):
            continue
        _touch(target, message)
        extraction = extractions.get(mid)
        if extraction is None:
            continue
        fact = turn_fact(message, extraction, tz, cfg)
        if fact is not None:
            target.add_fact(fact)
        _take_structure(target, mid, phrases)
        target.constraint_count += len(extraction.constraints)
        target.corrected = target.corrected or extraction.is_correction


def _add_aliases(
    target: Candidate, phrases: list[Candidate], heads: list[str], cfg: FormationConfig
) -> None:
    """The episode's leading phrases said in the turns ``target`` got become its aliases
    (names stay entities): what else a person would call the topic."""
    owned = set(target.message_ids)
    others = [
        p
        for p in phrases
        if p.key not in heads and not is_named(p) and owned.intersection(p.message_ids)
    ][: cfg.aliases]
    for other in others:
        target.user_surfaces[other.name] += 0  # an alias, never the name
        if other.key not in target.alias_keys:
            target.alias_keys.append(other.key)


def _nearest(ep: Episode, turn: int, heads: list[str]) -> str:
    """The head whose phrase is most like turn ``turn`` (heads of a continued episode: the
    first)."""
    scored = [
        (float(ep.head_vectors[h] @ ep.vectors[turn]), h) for h in heads if h in ep.head_vectors
    ]
    return max(scored)[1] if scored else heads[0]


def _touch(cand: Candidate, message: Message) -> None:
    cand.seen_in(message)
    if cand.time_hint is None:
        # when it was talked about: a subject picked up the same day (a conversation a sleep
        # cut in two) is the same one; an event is anchored there, for the event veto
        cand.time_hint = message.at
        cand.hint_is_mention = not cand.event_like


def _take_structure(target: Candidate, mid: str, phrases: list[Candidate]) -> None:
    """The numbers, open loops and decisions that message ``mid`` gave any of the episode's
    phrases, once each."""
    numbers = {(n.key, n.value, n.unit) for n in target.numbers}
    loops = {o.text for o in target.open_loops}
    events = {e.event for e in target.events}
    for phrase in phrases:
        for n in phrase.numbers:
            if mid in n.source_message_ids and (n.key, n.value, n.unit) not in numbers:
                numbers.add((n.key, n.value, n.unit))
                target.numbers.append(n)
        for o in phrase.open_loops:
            if mid in o.source_message_ids and o.text not in loops:
                loops.add(o.text)
                target.open_loops.append(o)
        for e in phrase.events:
            if mid in e.source_message_ids and e.event not in events:
                events.add(e.event)
                target.events.append(e)
