"""How topic names collide and how a new topic is named apart from a live one of its name. Pure.

``name_identity`` is the identity names collide on, ``number_variants`` a key in the other
grammatical number (matching looks both up), ``distinct_label`` the name a new topic takes when a
live topic has its own (``sleepwake.merge_plan``).
"""

from __future__ import annotations

import re
from collections import Counter

from sleepwake.candidates import Candidate, normalise_key


def name_identity(name: str) -> str:
    """How names collide: lower case, no punctuation, no plural "s" (docs EVALUATION §4)."""
    words = re.sub(r"[^\w\s]", " ", name.lower()).split()
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words)


def number_variants(key: str) -> set[str]:
    """``key`` with its last word in the other grammatical number ("business plans" <->
    "business plan"): the phrase lookup of matching compares whole tokens, and a second
    "business plans" topic beside "business plan" would be a duplicate name."""
    words = key.split()
    if not words or len(words[-1]) <= 3 or words[-1].endswith("ss"):
        return set()  # "glass" is not the plural of "glas"
    last = words[-1]
    other = last[:-1] if last.endswith("s") else last + "s"
    return {" ".join([*words[:-1], other])}


def distinct_label(cand: Candidate, taken: set[str]) -> str | None:
    """A name for a new topic whose own name a live topic already has (``taken``: their
    ``name_identity``), as a person would tell the two apart: a free alias of the same kind
    ("birthday party" for a second "party"), else the name with another phrase it goes by
    ("party (rooftop bar)"), else with the thing its facts name most ("painting (sunset)"). Never a
    date or a running number: "Apr 2022 game", "Apr 2022 game 2" told a reader nothing and
    hid one subject under eight names. None when the name is free."""
    if name_identity(cand.name) not in taken:
        return None
    head = cand.key.split()[-1] if cand.key else ""
    aliases = [
        next((s for s in cand.user_surfaces if normalise_key(s) == alias), alias)
        for alias in cand.alias_keys
    ]
    same_kind = [a for a in aliases if normalise_key(a).split()[-1:] == [head]]
    apart = [a for a in aliases if len(a.split()) >= 2 and a not in same_kind]
    labels = [*same_kind, *(f"{cand.name} ({a})" for a in apart)]
    labels += [f"{cand.name} ({word})" for word in _setting_apart(cand)]
    return next((label for label in labels if name_identity(label) not in taken), None)


def _setting_apart(cand: Candidate) -> list[str]:
    """The words a candidate's facts and entities say most, beyond its own name: what tells it
    from another topic of that name. Longer, rarer-looking words first on ties."""
    own = set(cand.key.split()) | {w.rstrip("s") for w in cand.key.split()}
    counts: Counter[str] = Counter()
    for entity in sorted(cand.co_entities):
        if entity and entity not in own and len(entity) >= 3:
            counts[entity] += 2
    for fact in cand.facts:
        body = re.sub(r"^[^:\n]{1,60}:\s+", "", fact.text.lower())
        for word in set(re.findall(r"[a-z][a-z-]{3,}", body)):
            if word not in own and word.rstrip("s") not in own and word not in PLAIN_WORDS:
                counts[word] += 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))][:5]


# everyday words that never tell two topics apart
PLAIN_WORDS = frozenset(
    """that this with have been were they them their there what when where which while about
    just really like love great good nice thanks thank also much very some more most well
    would could should will your yours mine ours from into over then than know think feel
    felt make made going want wanted time times yeah sure glad happy awesome amazing cool
    always never still even keep kept take took lots pretty look looks looking sounds sound
    things thing something anything everything being doing done didn does said says tell told
    wow totally definitely absolutely hope hoping other others people today yesterday week
    weeks last next first year years month months""".split()
)
