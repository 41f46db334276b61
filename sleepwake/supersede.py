"""Sleep marks a fact superseded when a later statement contradicts it on the same key. Pure.

A *claim* is what a fact asserts about one key, read from its text by a few conservative
patterns (linear-time: bounded repeats, text capped at ``MAX_CLAIM_CHARS``):

- a stated preference: "my favourite colour is blue", "Blue is my favorite color",
  "our preferred airline is KLM" -> key ``(speaker, my|our, favourite colour)``, value ``blue``;
- a stated value of a named quantity of the speaker's: "my budget is 500 dollars", "our rent
  is now $1,200" -> key ``(speaker, my|our, budget)``, value ``500 usd``.

Two currently valid facts of one topic with the same key and different values: the earlier is
closed at the later one's start (``invalid_at``) and points at it (``superseded_by``). A repeated
value supersedes nothing. Typed numbers follow the same rule on ``(key, unit)`` for numbers the
user stated under a specific key (generic keys such as ``cost`` or ``duration``, which only name
a unit, are never superseded: "$5 coffee" does not replace "$650 flight").

Questions and conditionals assert nothing and make no claim. Preferences and quantities are
superseded per topic (a statement filed under two topics is judged in each).

**States of a life** (``text.claims``: where a person lives, their job and employer, manager,
partner, car, school; owner by owner, "I" apart from "my sister") are superseded across the
topics of a namespace (``supersede_states``): a fact stating where the user lives is filed under
whatever the turn was about ("99% Invisible", a podcast tip beside it), and the move to Denver
under another topic, so the sleep reads the topics holding a current claim of each key its new
facts claim (``SleepStore.state_topics``) and closes the earlier fact wherever it is filed, in
the same commit. A fact claims all the states it states ("I live in Boston and I work as a
nurse"): a later change of any of them closes it (the conjunction is no longer true; the fact
stays, with its validity, and is shown as past). A repeated value closes nothing, and every
fact that held the old value is closed, not only the latest ("I live in Boston" then "still in
Boston" then "moved to Denver" closes both); moving back is a new, current fact.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.models import Fact, Topic, TypedNumber
from sleepwake.candidates import MAX_ONE_LINER
from sleepwake.config import DEFAULT, FormationConfig
from sleepwake.one_liners import compose_one_liner
from text.claims import StateClaim, mentions_state, state_claims
from text.gist import one_liner_part, quoted

MAX_CLAIM_CHARS = 400
SUPERSEDED = "superseded by a later statement"
GENERIC_NUMBER_KEYS = frozenset(
    {"number", "cost", "duration", "weight", "distance", "percentage", "usd", "eur", "gbp"}
)

_SPEAKER = re.compile(r"^([^:\n]{1,60}): ")
_OWNER = r"(?P<owner>my|our)"
_WHAT = r"(?P<what>[a-z][a-z'-]{0,30}(?: [a-z][a-z'-]{0,30}){0,3}?)"
_PREF_WORD = r"(?:favou?rite|preferred)"
_BE = r"(?:is|are|has become|became|is still|is now|are now)"
_VALUE = r"(?P<value>[^.,;!?()\n]{1,80})"
_PREFERENCE = re.compile(
    rf"\b{_OWNER} (?:new |current |all[- ]time |absolute |very )?{_PREF_WORD} {_WHAT} {_BE} "
    rf"{_VALUE}",
    re.I,
)
_PREFERENCE_FIRST = re.compile(
    rf"^(?P<value>[a-z0-9][\w'&-]{{0,30}}(?: [\w'&-]{{1,30}}){{0,3}}?) (?:is|are) "
    rf"(?:now |still |definitely )?{_OWNER} (?:new |current )?{_PREF_WORD} {_WHAT}\b",
    re.I,
)
_QUANTITY = re.compile(
    rf"\b{_OWNER} {_WHAT} "
    r"(?:is|are|(?:has|have) (?:gone|changed|risen|dropped|increased|decreased|grown) to|"
    r"changed to|went (?:up|down) to|is now|are now) (?:now )?"
    r"(?:about |around |roughly |only |just )?"
    r"(?P<value>[$€£]? ?\d[\d,]{0,12}(?:\.\d{1,6})?(?: ?(?:%|[a-z]{1,12}))?)",
    re.I,
)
_NOT_A_CLAIM = re.compile(r"^(?:if|when|whether|unless|what|which|is|are|do|does)\b", re.I)
_FILLER = re.compile(
    r"^(?:now|still|definitely|actually|probably|really|just|also) | "
    r"(?:now|these days|again|too|at the moment|anymore|nowadays|by far)$"
)
_SPELLING = {"colour": "color", "flavour": "flavor", "favourite": "favorite", "centre": "center"}


@dataclass(frozen=True)
class Claim:
    """What a fact asserts: the value of one key."""

    key: tuple[str, ...]
    value: str


def claim_of(text: str) -> Claim | None:
    """The claim a fact's text makes, or None when it asserts no keyed value."""
    text = text[:MAX_CLAIM_CHARS]
    speaker, body = "", text
    head = _SPEAKER.match(text)
    if head is not None:
        speaker, body = head.group(1).strip().lower(), text[head.end() :]
    body = body.strip()
    if body.endswith("?") or _NOT_A_CLAIM.match(body):
        return None
    for kind, pattern in (("pref", _PREFERENCE), ("pref", _PREFERENCE_FIRST), ("qty", _QUANTITY)):
        m = pattern.search(body)
        if m is not None:
            raw = m.group("value")
            value = _quantity(raw) if kind == "qty" else _normal(raw)
            if value:
                key = (kind, speaker, m.group("owner").lower(), _normal(m.group("what")))
                return Claim(key, value)
    return None


def supersede(facts: Sequence[Fact], fresh: Sequence[Fact] = ()) -> list[Fact]:
    """Close every currently valid fact that a later fact of the same key contradicts.

    ``fresh`` are the facts just added: when none of them makes a claim nothing can have
    changed, so the (rare) full pass is skipped. Returns a new list; facts are not mutated."""
    if fresh and not any(claim_of(f.text) for f in fresh if f.invalid_at is None):
        return list(facts)
    chains: dict[tuple[str, ...], list[tuple[int, Claim]]] = {}
    for i, fact in enumerate(facts):
        claim = claim_of(fact.text) if fact.invalid_at is None else None
        if claim is not None and fact.starts_at is not None:
            chains.setdefault(claim.key, []).append((i, claim))
    out = list(facts)
    for chain in chains.values():
        chain.sort(key=lambda item: (_start(facts[item[0]]), item[0]))
        for (i, before), (j, after) in itertools.pairwise(chain):
            later = facts[j]
            if before.value != after.value and _start(later) > _start(facts[i]):
                out[i] = _closed(out[i], later)
    return out


def state_keys(facts: Sequence[Fact]) -> set[tuple[str, str, str]]:
    """The state keys the currently valid ``facts`` claim."""
    return {
        c.key
        for f in facts
        if f.invalid_at is None and mentions_state(f.text)
        for c in state_claims(f.text)
    }


@dataclass(frozen=True)
class _Stated:
    """A currently valid, dated fact of a topic with the states it claims."""

    start: datetime
    order: int
    topic_id: str
    index: int
    fact: Fact
    claims: tuple[StateClaim, ...]


def supersede_states(
    topics: Sequence[Topic], formation: FormationConfig = DEFAULT.formation
) -> dict[str, Topic]:
    """Close every currently valid fact of ``topics`` whose state a later fact (of any of them)
    changed: ``invalid_at`` = the later fact's start, ``superseded_by`` = its id; a one-liner
    quoting a closed fact is composed again from the current ones. Returns the topics that
    changed, by id (new objects; ``topics`` are not mutated)."""
    stated = _stated(topics)
    open_by_key: dict[tuple[str, str, str], list[tuple[_Stated, str]]] = {}
    closed: dict[tuple[str, int], Fact] = {}
    for item in stated:
        for claim in item.claims:
            still = []
            for earlier, value in open_by_key.get(claim.key, []):
                place = (earlier.topic_id, earlier.index)
                if place in closed:
                    continue
                if value != claim.value and earlier.start < item.start:
                    closed[place] = _closed(earlier.fact, item.fact)
                    continue
                still.append((earlier, value))
            open_by_key[claim.key] = still
        if (item.topic_id, item.index) not in closed:
            for claim in item.claims:
                open_by_key.setdefault(claim.key, []).append((item, claim.value))
    changed: dict[str, Topic] = {}
    for topic in topics:
        ends = {i: f for (tid, i), f in closed.items() if tid == topic.topic_id}
        if ends:
            facts = [ends.get(i, f) for i, f in enumerate(topic.facts)]
            update: dict[str, object] = {"facts": facts}
            if any(quoted(f.text, topic.one_liner) for f in ends.values()):
                update["one_liner"] = _one_liner_now(topic, facts, formation)
            changed[topic.topic_id] = topic.model_copy(update=update)
    return changed


def _one_liner_now(topic: Topic, facts: list[Fact], formation: FormationConfig) -> str:
    """A topic whose one-liner quotes a fact now closed says what it holds now: composed
    again from its current facts (when none is news, its newest current fact; kept as it was
    when it has none)."""
    current = [f.text for f in facts if f.invalid_at is None]
    if not current:
        return topic.one_liner
    composed = compose_one_liner(topic.name, current, None, formation)
    return (composed or one_liner_part(current[-1]))[:MAX_ONE_LINER]


def _stated(topics: Sequence[Topic]) -> list[_Stated]:
    """The currently valid, dated facts of ``topics`` that claim a state, in time order."""
    out = []
    for order, topic in enumerate(topics):
        for i, fact in enumerate(topic.facts):
            start = fact.starts_at
            if fact.invalid_at is not None or start is None or not mentions_state(fact.text):
                continue
            claims = tuple(state_claims(fact.text))
            if claims:
                out.append(_Stated(start, order, topic.topic_id, i, fact, claims))
    out.sort(key=lambda s: (s.start, s.order, s.index))
    return out


def _closed(fact: Fact, later: Fact) -> Fact:
    """``fact`` closed where ``later`` starts, superseded by it."""
    return fact.model_copy(
        update={
            "invalid_at": later.starts_at,
            "superseded_by": later.fact_id,
            "invalid_reason": SUPERSEDED,
        }
    )


def supersede_numbers(
    numbers: Sequence[TypedNumber], fresh: Sequence[TypedNumber] = ()
) -> list[TypedNumber]:
    """Close user-stated typed numbers whose key (and unit) later took another value."""
    if fresh and not any(_number_key(n) for n in fresh):
        return list(numbers)
    chains: dict[tuple[str, str], list[int]] = {}
    for i, n in enumerate(numbers):
        key = _number_key(n)
        if key is not None and n.invalid_at is None:
            chains.setdefault(key, []).append(i)
    out = list(numbers)
    for chain in chains.values():
        chain.sort(key=lambda i: (numbers[i].at, i))
        for i, j in itertools.pairwise(chain):
            if numbers[i].value != numbers[j].value and numbers[j].at > numbers[i].at:
                out[i] = out[i].model_copy(update={"invalid_at": numbers[j].at})
    return out


def _number_key(n: TypedNumber) -> tuple[str, str] | None:
    key = n.key.strip().lower()
    if n.source != "user" or key in GENERIC_NUMBER_KEYS or key == (n.unit or "").lower():
        return None
    return key, (n.unit or "").lower()


def _start(fact: Fact) -> datetime:
    assert fact.starts_at is not None  # chains only hold dated facts
    return fact.starts_at


_AMOUNT = re.compile(r"^(?P<cur>[$€£])? ?(?P<num>\d[\d,]*(?:\.\d+)?) ?(?P<unit>%|[a-z]+)?$", re.I)
_CURRENCY_WORDS = {
    "$": "usd", "dollars": "usd", "dollar": "usd", "bucks": "usd", "usd": "usd",
    "€": "eur", "euros": "eur", "euro": "eur", "eur": "eur",
    "£": "gbp", "pounds": "gbp", "pound": "gbp", "gbp": "gbp",
}  # fmt: skip


def _quantity(text: str) -> str:
    """ "$1,200" and "1200 dollars" -> "1200 usd"; other units kept as written."""
    m = _AMOUNT.match(text.strip())
    if m is None:
        return _normal(text)
    number = float(m["num"].replace(",", ""))
    unit = (m["unit"] or "").lower()
    unit = _CURRENCY_WORDS.get(m["cur"] or "", "") or _CURRENCY_WORDS.get(unit, unit)
    return f"{number:g} {unit}".strip()


def _normal(text: str) -> str:
    """Lower case, tidy spaces, hedges and fillers dropped, British spellings folded."""
    words = " ".join(text.lower().replace(",", "").split())
    for _ in range(3):  # "now definitely" / "these days too": a few layers at most
        words = _FILLER.sub("", words).strip()
    return " ".join(_SPELLING.get(w, w) for w in words.split())
