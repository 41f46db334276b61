"""What a person's topic keeps (``sleepwake.people``): a bounded set of current facts, by
salience and recency. Pure.

A person's topic gains a few facts at every sleep, for months. Past
``MergeConfig.person_kept_facts`` current facts it keeps first the most telling fact of each day
it was talked about (newest days first, up to half of what it keeps: it still spans its
sessions), then the rest by how much each is worth keeping (``sentence_weight``: first person,
plans, decisions, numbers) and how recent it is. What it lets go is a copy: every fact stays in
its subject's topic. Superseded and retracted facts are history and are never dropped here.
Measured on every topic (not only people's) it cost LoCoMo dev observation coverage 0.86 -> 0.62:
a subject's own topic keeps all its facts (its size is bounded by ``MergeConfig.max_facts``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from graph.models import Fact
from sleepwake.config import FormationConfig
from sleepwake.turn_facts import FORMATION, sentence_weight
from text.gist import unspoken

RECENCY_WEIGHT = 0.5  # the newest fact's edge over the oldest, in sentence_weight units
# a capitalised word inside a sentence (not its first word): a name, a place, a title
_INNER_NAME = re.compile(r"(?<=[^.!?\s])\s+[\"'(]?([A-Z][a-z][\w'-]*)")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"})
_GREETING = re.compile(r"\b(?:hey|hi|hello|thanks|thank you|wow|congrats|dear|bye)[\s,]*$", re.I)
COMMON_NAME_SHARE = 0.2  # a name in this share of a topic's facts is its subject or a speaker


def kept_facts(facts: Sequence[Fact], keep: int, cfg: FormationConfig = FORMATION) -> list[Fact]:
    """``facts`` with at most ``keep`` current ones, in their order; see the module."""
    current = [f for f in facts if f.invalid_at is None]
    if len(current) <= keep:
        return list(facts)
    order = sorted(range(len(current)), key=lambda i: _when(current[i]))
    newness = {i: rank / max(len(current) - 1, 1) for rank, i in enumerate(order)}
    named = _rarely_named(current)
    value = {
        i: sentence_weight(unspoken(f.text), cfg)
        + RECENCY_WEIGHT * newness[i]
        + (cfg.named_weight if i in named else 0.0)
        for i, f in enumerate(current)
    }
    by_day: dict[str, list[int]] = {}
    for i, fact in enumerate(current):
        by_day.setdefault(_day(fact), []).append(i)
    chosen: list[int] = []
    for day in sorted(by_day, reverse=True)[: max(keep // 2, 1)]:
        chosen.append(max(by_day[day], key=lambda i: (value[i], i)))
    rest = sorted((i for i in range(len(current)) if i not in chosen), key=lambda i: -value[i])
    chosen.extend(rest[: keep - len(chosen)])
    keep_ids = {id(current[i]) for i in chosen}
    return [f for f in facts if f.invalid_at is not None or id(f) in keep_ids]


def _when(fact: Fact) -> float:
    return fact.at.timestamp() if fact.at is not None else 0.0


def _day(fact: Fact) -> str:
    return fact.at.date().isoformat() if fact.at is not None else ""


def names_in(text: str) -> set[str]:
    """The capitalised words inside the sentences of ``text`` (its speaker prefix left out),
    not the listener called by name ("Thanks, Melanie!", "Hey Andrew, ..."): "Their names are
    Pepper, Precious and Panda." -> {"Pepper", "Precious", "Panda"}."""
    said = unspoken(text)
    out = set()
    for match in _INNER_NAME.finditer(said):
        name, before, after = match.group(1), said[: match.start(1)], said[match.end(1) :]
        called = (before.rstrip().endswith(",") and after[:1] in ("!", ".", "?", ",", "")) or (
            _GREETING.search(before) is not None
        )
        if name not in _NOT_NAMES and not called:
            out.add(name)
    return out


def _rarely_named(facts: Sequence[Fact]) -> set[int]:
    """The indexes of the facts naming someone or something few of ``facts`` name: the
    speakers and the topic's own subject ("Caroline", "Max" in Max's topic) are named in many
    and tell nothing; "Pepper, Precious and Panda", "Scout", "Charlotte's Web" are what a
    question about them asks for."""
    names = [names_in(f.text) for f in facts]
    counts = Counter(n for found in names for n in found)
    common = max(2.0, COMMON_NAME_SHARE * len(facts))
    return {i for i, found in enumerate(names) if any(counts[n] < common for n in found)}
