"""The states of a person's life a statement asserts: where they live, their job, employer,
manager, partner, car and school (issue #32, "what is true now"). Pure.

A *state claim* is ``(speaker, owner, kind) = value``: "I live in Boston and I work as a nurse
at Mass General" said by the user asserts ``("", "self", "residence") = "boston"``,
``("", "self", "role") = "nurse"`` and ``("", "self", "employer") = "mass general"``; "my sister
moved to Denver" asserts ``("", "sister", "residence") = "denver"``, another owner. Sleep closes
an earlier fact when a later one gives the same key another value (``sleepwake.supersede``), and
retrieval answers "Where do I live now?" from the facts holding the current claim
(``state_question``).

Conservative by design: a sentence that asks, supposes, plans, hedges or denies asserts nothing
("If I moved to Denver...", "I might move to Denver", "I don't live in Boston anymore", "I
lived in Boston for years": past tense, no current state), places and names must be written as
proper nouns, and a role needs a job word ("I'm a nurse", not "I'm a big fan"). Every pattern
is linear-time: bounded repeats only, sentences capped at ``MAX_SENTENCE_CHARS``, a text at
``MAX_TEXT_CHARS``. Kept as rules rather than a parser: spaCy's tagger and parser would find
owners in more wordings, but its English models on PyPI are third-party re-uploads of unknown
provenance, and parsing every sentence of a sleep costs more than these patterns (docs/topics.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from text.patterns import longest_first

MAX_TEXT_CHARS = 1200
MAX_SENTENCE_CHARS = 300
KINDS = ("residence", "role", "employer", "manager", "partner", "car", "school")

# "Caroline: ..." (a fact of a named speaker); "Big news: ..." or "Update: ..." is not a name
_SPEAKER = re.compile(r"^([A-Z][\w.'-]{0,30}(?: [A-Z][\w.'-]{0,30}){0,2}): ")
_NOT_NAMES = frozenset({"update", "note", "news", "ps", "p.s.", "edit", "fyi", "btw", "also", "ok"})
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\s+(?:-|\u2013|\u2014)\s+|\.\.\.\s*")
# someone whose life the speaker reports: "my sister", "our son"
RELATIONS = (
    "wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee", "sister",
    "brother", "mom", "mother", "dad", "father", "son", "daughter", "kid", "friend",
    "best friend", "roommate", "cousin", "aunt", "uncle", "grandma", "grandpa", "parents",
)  # fmt: skip
_REL = longest_first(RELATIONS)
_SUBJ = rf"(?P<subj>\bI|\b[Ww]e|\b[Mm]y (?:{_REL})|\b[Oo]ur (?:{_REL}))"
_ADV = r"(?:(?:now|just|recently|finally|officially|currently|still|actually|also) ){0,2}"
_BE_I = r"(?:\bI'm|\bI am)"
_CAP = r"[A-Z][\w'&.-]{0,30}"
_NEXT = r"[A-Z0-9][\w'&.-]{0,30}"
_PROPER = rf"(?P<value>{_CAP}(?: (?:(?:of|de|del|la|le|upon|on) )?{_NEXT}){{0,4}})"
_STOP = r"(?!(?:and|in|since|for|where|which|who|that|as|but|so|now|because|with|to|on|of)\b)"
_ARTICLE_ORG = (
    rf"(?!a living\b)(?:a|an|the) {_STOP}[\w&'-]{{1,30}}(?: {_STOP}[\w&'-]{{1,30}}){{0,3}}"
)
_ORG = rf"(?P<org>{_CAP}(?: (?:{_CAP}|of|for|and|&)){{0,4}}|{_ARTICLE_ORG})"
ROLE_WORDS = (
    "nurse", "doctor", "physician", "surgeon", "dentist", "pharmacist", "therapist",
    "counselor", "counsellor", "teacher", "professor", "lecturer", "tutor", "engineer",
    "developer", "programmer", "designer", "architect", "manager", "director", "analyst",
    "scientist", "researcher", "consultant", "accountant", "lawyer", "attorney", "paralegal",
    "writer", "editor", "journalist", "chef", "cook", "baker", "barista", "bartender", "waiter",
    "waitress", "server", "cashier", "clerk", "assistant", "paramedic", "firefighter", "officer",
    "pilot", "driver", "mechanic", "electrician", "plumber", "carpenter", "technician",
    "librarian", "veterinarian", "vet", "artist", "musician", "photographer", "founder",
    "ceo", "cto", "cfo", "intern", "lead", "owner", "specialist", "coordinator", "administrator",
    "salesperson", "recruiter", "marketer", "student", "caregiver", "social worker", "midwife",
)  # fmt: skip
_ROLE_WORD = longest_first(ROLE_WORDS)
_PRE_ROLE = r"(?!(?:of|for|and|at|with|in|to|fan|the|huge|big)\b)[\w-]{1,25} "
_ROLE = rf"(?P<role>(?:{_PRE_ROLE}){{0,3}}?(?:{_ROLE_WORD})s?(?: (?:{_ROLE_WORD})s?)?)\b"
_A = r"(?:a|an) "
_WORKPLACE = rf"(?: (?:at|for|with) {_ORG})?"

# (kind, pattern); value groups: ``value`` (the state), ``role`` and ``org`` (a job's parts)
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(p))
    for kind, p in (
        ("residence", rf"{_SUBJ}(?:'m|'re|'s)? {_ADV}(?:live|lives|reside|resides|(?:am |are |is )?living) in {_PROPER}"),
        ("residence", rf"{_SUBJ}(?:'ve| have| has)? {_ADV}(?:moved|relocated)(?: back)? to {_PROPER}"),
        ("residence", rf"{_SUBJ}(?: am|'m| are|'re| is|'s) {_ADV}based (?:in|out of) {_PROPER}"),
        ("residence", rf"\b(?P<subj>[Mm]y|[Oo]ur) new (?:place|home|house|apartment|flat|condo) (?:is )?in {_PROPER}"),
        ("role", rf"{_SUBJ} {_ADV}(?:work|works) as {_A}{_ROLE}{_WORKPLACE}"),
        ("role", rf"(?P<subj>{_BE_I}) {_ADV}{_A}{_ROLE}{_WORKPLACE}"),
        ("role", rf"(?P<subj>\bI)(?:'ve| have)? {_ADV}(?:started|start|began) (?:a |my )?new (?:job|role|position) as (?:{_A})?{_ROLE}{_WORKPLACE}"),
        ("role", rf"(?P<subj>\bI) {_ADV}(?:got|was|have been|'ve been) promoted to (?:{_A})?{_ROLE}"),
        ("employer", rf"{_SUBJ} {_ADV}(?:work|works) (?:at|for) {_ORG}"),
        ("employer", rf"(?P<subj>\bI)(?:'ve| have)? {_ADV}left {_CAP}(?: {_CAP}){{0,3}} (?:for|to join) {_ORG}"),
        ("employer", rf"(?P<subj>\bI)(?:'ve| have)? {_ADV}joined {_ORG} as (?:{_A})?{_ROLE}"),
        ("manager", rf"\b(?P<subj>[Mm]y) (?:new )?(?:manager|boss|supervisor) is {_PROPER}"),
        ("manager", rf"(?P<subj>\bI) {_ADV}report to {_PROPER}"),
        ("partner", rf"\b(?P<subj>[Mm]y) (?:new )?(?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?) is {_PROPER}"),
        ("partner", rf"(?P<subj>{_BE_I}|\bI've been|\bI have been) {_ADV}(?:dating|married to|engaged to) {_PROPER}"),
        ("car", rf"\b(?P<subj>[Mm]y) (?:new |current )?car is (?:{_A})?{_PROPER}"),
        ("car", rf"(?P<subj>\bI) {_ADV}drive {_A}{_PROPER}"),
        ("school", rf"(?P<subj>{_BE_I}) {_ADV}(?:studying|enrolled|a student) at {_PROPER}"),
        ("school", rf"{_SUBJ} {_ADV}(?:attend|attends|go to|goes to) {_PROPER}"),
    )
)  # fmt: skip
# a sentence that asks, supposes, wishes, plans or denies asserts no state
_NOT_ASSERTED = re.compile(
    r"^(?:if|when|whenever|whether|unless|suppose|supposing|imagine|maybe|perhaps|once|should|"
    r"would|could|do|does|did|are|is|am|where|what|which|how|why|who|can)\b|"
    r"\b(?:if|would|could|might|may|wish|hope|hoping|plan|planning|want|wants|wanted|going to|"
    r"gonna|thinking|considering|not|never|no longer|n't|used to|dream|dreams|pretend|"
    r"before I|until|anymore|any more)\b",
    re.I,
)
_SCHOOL_WORDS = re.compile(
    r"\b(?:(?i:university|college|school|academy|institute|polytechnic|conservatory)|[A-Z]{2,5})\b"
)
_ARTICLE = re.compile(r"^(?:a|an|the|my|our) ", re.I)
_TRAILING = re.compile(r"(?: (?:now|too|again|these days|last \w+|this \w+))+$", re.I)


@dataclass(frozen=True)
class StateClaim:
    """One state a statement asserts: ``key`` = (speaker, owner, kind), and its value."""

    key: tuple[str, str, str]
    value: str


def state_claims(text: str) -> list[StateClaim]:
    """The state claims ``text`` makes, in order, one per key (the first wins)."""
    return list(_claims(text[:MAX_TEXT_CHARS]))


@lru_cache(maxsize=8192)
def _claims(text: str) -> tuple[StateClaim, ...]:
    """``state_claims`` of a capped text, kept per text: every write of a topic reads its
    facts' claims again (``graph.mapping.topic_props``), and most facts are written many times."""
    if not mentions_state(text):
        return ()
    text = text.replace("\u2019", "'")
    speaker, body = "", text
    head = _SPEAKER.match(text)
    if head is not None and head.group(1).lower() not in _NOT_NAMES:
        speaker, body = head.group(1).strip().lower(), text[head.end() :]
    found: dict[tuple[str, str, str], str] = {}
    for sentence in _SENTENCE_END.split(body):
        for kind, owner, value in _sentence_claims(sentence.strip()[:MAX_SENTENCE_CHARS]):
            found.setdefault((speaker, owner, kind), value)
    return tuple(StateClaim(key, value) for key, value in found.items())


def _sentence_claims(sentence: str) -> list[tuple[str, str, str]]:
    """(kind, owner, value) of each state one sentence asserts."""
    if not sentence or sentence.endswith("?"):
        return []
    out = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(sentence):
            if _NOT_ASSERTED.search(sentence[: m.end()]):
                continue  # "if I moved to Denver", "I don't work at X": nothing asserted
            out += _claims_of_match(kind, m)
    return out


def _claims_of_match(kind: str, m: re.Match[str]) -> list[tuple[str, str, str]]:
    owner = _owner(m.group("subj"))
    groups = m.groupdict()
    if kind == "school" and not _SCHOOL_WORDS.search(groups.get("value") or ""):
        return []  # "I go to Paris" is a trip, "I go to Boston University" a school
    out = []
    if groups.get("value"):
        out.append((kind, owner, normal_value(groups["value"])))
    if groups.get("role"):
        out.append(("role", owner, normal_value(groups["role"])))
    if groups.get("org"):
        out.append(("employer", owner, normal_value(groups["org"])))
    return [c for c in out if c[2]]


def _owner(subject: str) -> str:
    """ "I", "I'm", "we" -> "self"; "my sister" -> "sister"."""
    words = subject.lower().split()
    if words[0] in ("my", "our") and len(words) > 1:
        return " ".join(words[1:])
    return "self"


def normal_value(text: str) -> str:
    """A value as compared: lower case, articles and trailing time words dropped."""
    words = " ".join(text.replace("\u2019", "'").split()).rstrip(".,!;:")
    words = _TRAILING.sub("", _ARTICLE.sub("", words))
    return words.lower().strip()


# --- questions about a state ------------------------------------------------------------------

_ASKS = (
    ("residence", re.compile(r"\bwhere (?:do|does|did) (?P<who>I|we|[A-Z]\w{1,30}) (?:\w+ ){0,2}?(?:live|stay|reside|based)\b|\bwhere (?:am|are|is|was|were) (?P<who2>I|we|[A-Z]\w{1,30}) (?:now |currently )?(?:living|based)\b|\bwhere (?:did|has|have) (?P<who3>I|we|[A-Z]\w{1,30}) (?:move|moved|relocate|relocated)\b", re.I)),
    ("role", re.compile(r"\bwhat (?:is|was|'s) (?P<who>my|our|[A-Z]\w{1,30}'s) (?:current |new |old |previous |former )?(?:job|role|position|occupation|profession|title)\b|\bwhat do(?:es)? (?P<who2>I|[A-Z]\w{1,30}) do for (?:a )?(?:living|work)\b|\bwhat (?:do|does|did) (?P<who3>I|[A-Z]\w{1,30}) work as\b", re.I)),
    ("employer", re.compile(r"\bwhere (?:do|does|did) (?P<who>I|we|[A-Z]\w{1,30}) work\b|\bwho (?:do|does|did) (?P<who2>I|[A-Z]\w{1,30}) work for\b|\b(?P<who3>my|[A-Z]\w{1,30}'s) (?:current |old |previous )?(?:employer|company)\b", re.I)),
    ("manager", re.compile(r"\bwho (?:is|was|'s) (?P<who>my|[A-Z]\w{1,30}'s) (?:new |current |old )?(?:manager|boss|supervisor)\b|\bwho (?:do|does|did) (?P<who2>I|[A-Z]\w{1,30}) report to\b", re.I)),
    ("partner", re.compile(r"\bwho (?:is|was|'s) (?P<who>my|[A-Z]\w{1,30}'s) (?:wife|husband|partner|girlfriend|boyfriend)\b|\bwho (?:am|is|was) (?P<who2>I|[A-Z]\w{1,30}) (?:dating|married to|seeing)\b", re.I)),
    ("car", re.compile(r"\bwhat (?:car|kind of car) (?:do|does|did) (?P<who>I|[A-Z]\w{1,30}) (?:drive|have|own)\b|\bwhat (?:is|was|'s) (?P<who2>my|[A-Z]\w{1,30}'s) car\b", re.I)),
    ("school", re.compile(r"\bwhere (?:do|does|did) (?P<who>I|[A-Z]\w{1,30}) (?:go to school|study|attend)\b|\bwhat (?:school|university|college) (?:do|does|did) (?P<who2>I|[A-Z]\w{1,30})\b", re.I)),
)  # fmt: skip
_PAST = re.compile(
    r"\b(?:before|previously|previous|used to|formerly|former|old|earlier|originally|at first|"
    r"in (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|\d{4})|last (?:year|month)|back then|did|was|were)\b",
    re.I,
)


@dataclass(frozen=True)
class StateQuestion:
    """A question about a state: whose (speaker, owner), which kind, and whether it asks about
    the past ("Where did I live before?") rather than now."""

    speaker: str
    owner: str
    kind: str
    past: bool


def state_question(text: str) -> StateQuestion | None:
    """The state ``text`` asks about, or None. "I"/"my" is the user (speaker ""); a name
    ("Where does Caroline live?") is that speaker's own state."""
    text = text[:MAX_SENTENCE_CHARS]
    for kind, pattern in _ASKS:
        m = pattern.search(text)
        if m is None:
            continue
        who = next((g for g in m.groups() if g), "I")
        speaker = _asker(who)
        return StateQuestion(speaker, "self", kind, bool(_PAST.search(text)))
    return None


def _asker(who: str) -> str:
    word = who.lower().removesuffix("'s")
    return "" if word in ("i", "my", "we", "our") else word


# --- index tokens ------------------------------------------------------------------------------

# a word every pattern needs one of (a verb or noun of a state, a job word, a school word)
_STATE_WORDS = (
    frozenset(
        """live lives living reside resides moved relocated based place home house apartment flat
    condo work works job role position promoted left joined manager boss supervisor report wife
    husband partner girlfriend boyfriend fiance fiancee fiancé fiancée dating married engaged
    car drive studying enrolled student attend attends university college school academy
    institute polytechnic conservatory worker""".split()
    )
    | {w for role in ROLE_WORDS for w in role.split()}
    | {f"{role}s" for role in ROLE_WORDS}
)
_WORDS = re.compile(r"[a-zé]+")


def mentions_state(text: str) -> bool:
    """A cheap test before ``state_claims``: False when ``text`` has none of the words every
    pattern needs (a set lookup per word: most statements claim no state)."""
    return not _STATE_WORDS.isdisjoint(_WORDS.findall(text[:MAX_TEXT_CHARS].lower()))


def state_token(key: tuple[str, str, str], past: bool = False) -> str:
    """The one-word index token of a state key: ``s...`` held now, ``p...`` held once. A hash,
    so a value's words never leak into it and every key is one keyword token."""
    digest = hashlib.sha256("\x1f".join(key).encode()).hexdigest()[:20]
    return ("p" if past else "s") + digest


def state_tokens(current: Iterable[str], past: Iterable[str] = ()) -> list[str]:
    """The tokens of a topic whose facts ``current`` hold now and ``past`` held once (sorted,
    each once): what its ``state_keys`` index them by."""
    tokens = {
        state_token(c.key, flag)
        for texts, flag in ((current, False), (past, True))
        for text in texts
        if mentions_state(text)
        for c in state_claims(text)
    }
    return sorted(tokens)
