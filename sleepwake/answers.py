"""A speaker's answers to the other speaker's questions, filed by the area the question asks
about (``sleepwake.aspects``): "What are their names? Pets sure do bring so much joy!" -
"Luna and Oliver! They are so sweet and playful" says no "I" and names no pet, yet it is
Melanie's pets' news (LoCoMo conv-26: her pets' names were in a topic about her mental health,
filed by the episode that held the turn). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from graph.models import Fact, Message
from sleepwake.candidates import Candidate, SliceCandidates, fact_text, happened_at
from sleepwake.retention import names_in
from sleepwake.themes import words_of
from sleepwake.turn_facts import SECOND_PERSON, sentence_weight
from text.english import split_sentences

Asked = Mapping[str, tuple[list[str], list[str]]]  # answer's text -> (question's, turn's words)


def answers(
    piece: Sequence[Message],
    cands: SliceCandidates,
    owned: dict[str, list[tuple[Fact, Candidate]]],
    tz: str = "UTC",
) -> dict[str, tuple[list[str], list[str]]]:
    """A speaker's answers to the other speaker's questions, added to ``owned`` as their own
    facts: "What are their names? Pets sure do bring so much joy!" - "Luna and Oliver! They
    are so sweet and playful", said of no "I" and no pet, is Melanie's pets' news (LoCoMo
    conv-26). The answer is the turn's first sentences that say something or name someone
    (two at most, up to its own question; none to the listener, no photo); returned: its text
    -> the words of the question's sentences and of the whole asking turn, which place it
    (``with_aspects``). A turn that gave its speaker's own facts is filed by their words
    (``own_facts``), and a turn no episode holds answers nothing."""
    speakers = {m.speaker for m in piece if m.role == "user" and m.speaker}
    held: dict[str, Candidate] = {}
    for cand in cands.candidates:
        if not (cand.person or cand.theme or cand.returns is None):
            for fact in cand.facts:
                for mid in fact.source_message_ids:
                    held.setdefault(mid, cand)
    done = {m for facts in owned.values() for f, _ in facts for m in f.source_message_ids}
    out: dict[str, tuple[list[str], list[str]]] = {}
    for before, turn in pairwise(piece):
        if (
            turn.speaker not in speakers
            or before.speaker not in speakers
            or before.speaker == turn.speaker
            or turn.message_id not in held
            or turn.message_id in done  # its own news is filed by its own words
            or "?" not in before.content
        ):
            continue
        said = _answer(split_sentences(turn.content))
        if not said:
            continue
        fact = Fact(
            text=fact_text(turn, " ".join(said)),
            at=turn.at,
            valid_from=happened_at(" ".join(said), turn.at, tz),
            source_message_ids=[turn.message_id],
        )
        asking = split_sentences(before.content)
        question = [w for s in asking if s.rstrip().endswith("?") for w in words_of(f"x: {s}")]
        out[fact.text] = (question, [w for s in asking for w in words_of(f"x: {s}")])
        owned.setdefault(turn.speaker, []).append((fact, held[turn.message_id]))
    return out


def _answer(sentences: Sequence[str]) -> list[str]:
    """The first sentences of a reply that answer: past the thanks and the cheers (nothing
    said, nobody named), two at most, up to the reply's own question."""
    out: list[str] = []
    for sentence in sentences:
        if sentence.rstrip().endswith("?") or len(out) == 2:
            break
        if sentence.lstrip().startswith("[") or SECOND_PERSON.search(sentence):
            if out:
                break
            continue
        if out or sentence_weight(sentence) > 0 or names_in(f"x: {sentence}"):
            out.append(sentence)
    return out
