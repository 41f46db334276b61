"""A topic per person of a conversation between people: what each of them told, across sessions.
Pure.

Episodes make a topic per subject (the pottery class, the guinea pig); a question about a person
("What activities does Melanie partake in?", "Which cities did Dave travel to?") has its answer
spread over many of them, one per session. So each sleep also files, for every named speaker of
the slice, their best first-person news of the slice (one per subject topic, the most telling
first: ``sentence_weight``) under a topic named by them. That topic merges only with the topic
of the same name (``sleepwake.matching``), nothing else merges into it, and it keeps its most
telling and most recent facts (``sleepwake.retention``): the people in a conversation are the
subjects it keeps coming back to. Its facts are copies: each also stays in its subject's topic.
A chat with an assistant (no speaker names) makes none. Knobs: ``FormationConfig.person_facts``,
``MergeConfig.person_kept_facts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from graph.models import Fact, Message
from sleepwake.candidates import Candidate, SliceCandidates, normalise_key
from sleepwake.config import FormationConfig
from sleepwake.turn_facts import FIRST_PERSON, FORMATION, sentence_weight
from text.gist import speaker_of, unspoken


def speakers_of(piece: Sequence[Message]) -> set[str]:
    """The named people speaking in ``piece`` (normalised keys)."""
    return {normalise_key(m.speaker) for m in piece if m.role == "user" and m.speaker}


def with_people(
    piece: Sequence[Message], cands: SliceCandidates, cfg: FormationConfig = FORMATION
) -> SliceCandidates:
    """``cands`` and one person candidate per named speaker with news in the slice."""
    by_id = {m.message_id: m for m in piece}
    names = sorted({m.speaker for m in piece if m.role == "user" and m.speaker})
    people = [p for who in names if (p := _person(who, cands.candidates, by_id, cfg))]
    if not people:
        return cands
    return replace(cands, candidates=[*cands.candidates, *people])


def _person(
    who: str, candidates: list[Candidate], by_id: dict[str, Message], cfg: FormationConfig
) -> Candidate | None:
    def weight(fact: Fact) -> float:
        return sentence_weight(unspoken(fact.text), cfg)

    picks: list[Fact] = []
    for cand in candidates:
        own = [
            f
            for f in cand.facts
            if speaker_of(f.text) == who
            and FIRST_PERSON.search(unspoken(f.text))
            and weight(f) > 0
            and all(m in by_id for m in f.source_message_ids)
        ]
        if own:
            picks.append(max(own, key=weight))
    picks = sorted(picks, key=lambda f: -weight(f))[: cfg.person_facts]
    if not picks:
        return None
    person = Candidate(key=normalise_key(who), label=who, returns=1, person=True)
    for fact in sorted(picks, key=lambda f: f.at.timestamp() if f.at else 0.0):
        person.add_fact(fact)
        for mid in fact.source_message_ids:
            person.seen_in(by_id[mid])
    person.summary = picks[0].text
    return person
