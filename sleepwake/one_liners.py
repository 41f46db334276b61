"""Topic formation, job 4: a topic's one-liner, the fact that sums it up and each person's
news. Pure. Knobs: ``FormationConfig`` (sleepwake/config.py), "one-liners".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from graph.models import Fact, Message
from sleepwake.candidates import Candidate
from sleepwake.config import FormationConfig
from sleepwake.segments import content_stems
from sleepwake.turn_facts import FIRST_PERSON, FORMATION, SECOND_PERSON, sentence_weight
from text.gist import central_facts, one_liner_part, speaker_of, unspoken


def summary_fact(
    cand: Candidate,
    turn_vectors: dict[str, np.ndarray],
    echoes: frozenset[str] | set[str] = frozenset(),
    decided: frozenset[str] | set[str] = frozenset(),
    cfg: FormationConfig = FORMATION,
) -> str | None:
    """The fact that sums a topic up: of its informative facts (25 characters or more), the one
    whose turn is nearest the centroid of the topic's turns, a fact naming the topic first and
    a statement before a reaction to the listener's news (``is_reaction``), a fact the user
    stated before one from an assistant's turn (``echoes``: "Good choice for
    the billing migration." restates what the user decided, without the decision), and a turn
    that decided something or gave a number (``decided``) before a remark, and the facts
    sharing most words with the others (``text.gist.central_facts``) before an aside.
    The one-liner is what topic search embeds and what a reader sees first, so the first
    fact said (often an aside) is a poor one."""
    vectors = [turn_vectors[m] for m in cand.message_ids if m in turn_vectors]
    facts = [f for f in cand.facts if len(f.text) >= cfg.min_summary_chars and f.source_message_ids]
    if not vectors or not facts:
        return None
    centroid = np.mean(vectors, axis=0)
    centroid = centroid / (np.linalg.norm(centroid) or 1.0)
    # a remark near the centroid ("Those moments make me thankful.") says less of the subject
    # than the statement sharing most words with the topic's other facts and its name
    order = central_facts([f.text for f in facts], cand.key, len(facts))
    central = {text: cfg.central_bonus * (1 - i / len(order)) for i, text in enumerate(order)}

    def fit(fact: Fact) -> float:
        vector = turn_vectors.get(fact.source_message_ids[0])
        near = float(vector @ centroid) if vector is not None else 0.0
        source = fact.source_message_ids[0]
        echo = cfg.echo_penalty if source in echoes else 0.0
        weight = cfg.decision_bonus if source in decided else 0.0
        named = cfg.names_topic if cand.key in fact.text.lower() else 0.0
        reaction = cfg.reaction_penalty if is_reaction(fact.text) else 0.0
        return near - echo - reaction + weight + named + central.get(fact.text, 0.0)

    return max(facts, key=fit).text


def compose_one_liner(
    name: str, facts: Sequence[str], lead: str | None = None, cfg: FormationConfig = FORMATION
) -> str:
    """A topic's one-liner from its facts: each person's news (at most ``cfg.one_liner_people``
    people, the one with most facts first), a ``one_liner_part`` per piece of news
    (``person_news``), first one piece of each person's, then a second, distinct one (sharing
    at most one content word with their first), up to ``cfg.parts_per_person`` each and
    ``cfg.one_liner_chars`` in all (facts without a speaker's name, a user's chat with an
    assistant, give one part: the lead, as before). ``lead`` (the fact ``summary_fact`` chose) is its
    speaker's first part and comes first. On LoCoMo an episode holds both friends' news ("I
    went to a support group" / "I painted that lake sunrise"), and a one-liner of one fact
    left the rest unsaid: topic search and a reader saw a quarter of what the topic holds.
    "" when no fact is news (all reactions and remarks)."""
    groups: dict[str, list[str]] = {}
    for fact in dict.fromkeys(facts):
        groups.setdefault(speaker_of(fact), []).append(fact)
    first = speaker_of(lead) if lead else None
    people = sorted(groups, key=lambda who: (who != first, -len(groups[who])))
    chosen: dict[str, list[str]] = {who: [] for who in people[: cfg.one_liner_people]}
    parts: list[str] = []
    for round_ in range(cfg.parts_per_person):
        for who in chosen:
            if round_ and not who:
                continue  # turns without a speaker's name (a user and an assistant): one part
            best = _next_news(groups[who], chosen[who], name, bool(parts), cfg)
            if round_ == 0 and lead and who == first:
                best = lead
            if best is None:
                continue
            part = one_liner_part(best)
            if len(" ".join([*parts, part])) > cfg.one_liner_chars:
                return " ".join(parts)
            chosen[who].append(best)
            parts.append(part)
    return " ".join(parts)


def _next_news(
    facts: list[str], said: list[str], name: str, own: bool, cfg: FormationConfig
) -> str | None:
    """A person's next piece of news: of their facts unlike what ``said`` already holds."""
    seen = {s for fact in said for s in content_stems(unspoken(fact))}
    rest = [f for f in facts if f not in said and len(content_stems(unspoken(f)) & seen) <= 1]
    # the first person's first part sums the topic up; any other must be news of their own
    return person_news(rest, name, own or bool(said), cfg) if rest else None


def person_news(
    facts: Sequence[str], name: str = "", own: bool = False, cfg: FormationConfig = FORMATION
) -> str | None:
    """Of one person's facts, the one that best says their news: central among them
    (``text.gist.central_facts``) and a statement worth keeping (``sentence_weight``: first
    person, plans, numbers), never a reaction to the listener's news; with ``own``, only a
    statement in the first person ("Ha, a lopsided bowl still counts" is a remark on the
    other's news, not news). None when there is none."""
    order = central_facts(facts, name, len(facts))
    rank = {fact: i / max(len(order), 1) for i, fact in enumerate(order)}
    parts = {f: one_liner_part(unspoken(f)) for f in order}
    weights = {f: sentence_weight(parts[f], cfg) for f in order}
    news = [
        f
        for f in order
        if weights[f] > 0
        and not is_reaction(f)
        and (not own or FIRST_PERSON.search(parts[f]) is not None)
    ]
    return min(news, key=lambda f: rank[f] - cfg.news_weight * weights[f], default=None)


def is_reaction(text: str) -> bool:
    """A remark on the listener's news ("Glad your son is okay!"): it speaks to "you" and
    says nothing in the first person. The one who did the thing sums it up better."""
    body = re.sub(r"^[^:\n]{1,40}:\s+", "", text)
    return bool(SECOND_PERSON.search(body)) and not FIRST_PERSON.search(body)


def owned_name(name: str, messages: Sequence[Message]) -> str:
    """``name`` as the thing of the one person who calls it theirs in ``messages`` ("my guinea
    pig" said by Caroline -> "Caroline's guinea pig"): a bare "family" or "kids" is every
    family, and both people of a conversation may have one. Unchanged when nobody or more
    than one person says "my ...", or when the name already is a name."""
    if len(name.split()) > 3 or name[:1].isupper():
        return name
    mine = re.compile(rf"\bmy\s+(?:\w+\s+){{0,2}}{re.escape(name.lower())}\b")
    owners = {m.speaker for m in messages if m.speaker and mine.search(m.content.lower())}
    return f"{owners.pop()}'s {name}" if len(owners) == 1 else name
