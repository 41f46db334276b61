"""Which of a speaker's subject words mean the same thing: "pup", "puppy" and "pet" said of
Audrey's dogs are one theme, "Audrey's dog", not four. Pure but for the ``embed`` it is given.

Themes (``sleepwake.themes``) are identified by a noun's stem, so a person who says "my dogs" in
March, "the pups" in May and "our new puppy" in July made three themes, each too thin to become
the durable topic the three sessions are about. Here each speaker's subject words of a slice are
matched by meaning, the word alone embedded by the sleep's model (MiniLM: "puppy"/"dog" 0.80,
"pet"/"dog" 0.80, "mother"/"mom" 0.90, "kids"/"children" 0.88; but "mom"/"dad" 0.76,
"girlfriend"/"boyfriend" 0.75, "book"/"novel" 0.77, "painting"/"art" 0.72, "hike"/"trail" 0.67,
so ``FormationConfig.theme_word_cosine`` is 0.78: a pair a person would keep apart stays apart).
A word joins, in this order, a theme the speaker already has (a topic or alias named
"<speaker>'s <word>", read by ``SleepStoreProtocol.theme_names``), else the slice's word said more
often before it; it never joins another speaker's theme. Why not a thesaurus: none is packaged
here without a download (WordNet's data), and the model already says what a word means in the
sense this conversation's vectors use.

The names a speaker gives the members of a theme are its words too: "meet Toby, my puppy", "my
dog Max", "a puppy called Pixie" make "Toby", "Max" and "Pixie" words of "Andrew's dog" /
"Audrey's dog", so "Toby and I hiked the trail" joins it without saying "dog". A sleep that finds
such a name files it as an alias of the theme's topic, "Toby (Andrew's dog)" (``member_alias``),
which is how later sleeps know it (``known_words``) and how a search for "Toby" finds the topic.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from text.analysis import ENGLISH_STOP_WORDS

Embed = Callable[[Sequence[str]], list[list[float]]]


@dataclass(frozen=True)
class ThemeWords:
    """``canon``: (speaker, word) -> the word of the theme it belongs to (words that are their own
    theme's are left out)."""

    canon: Mapping[tuple[str, str], str] = field(default_factory=dict)
    # (speaker, member name) -> the theme word the slice named it by ("toby" -> "dog"): the
    # aliases the sleep files ("Toby (Andrew's dog)")
    found: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def word(self, owner: str, word: str) -> str:
        """The word ``owner``'s theme of ``word`` goes by."""
        return self.canon.get((owner, word), word)

    def aliases(self, owner: str, word: str) -> list[str]:
        """The member aliases the slice found for ``owner``'s theme ``word``."""
        found = sorted(n for (o, n), w in self.found.items() if o == owner and w == word)
        return [member_alias(owner, word, n) for n in found]


SAME = ThemeWords()  # every word its own theme: no embedding, or the knob at 0

_NAME = r"(?P<name>[A-Z][a-z]{2,})"
_NOUN = r"(?:[a-z]+ )?(?P<noun>[a-z]{3,})"  # "my childhood dog Max": the noun, not "childhood"
# how a speaker names a member of a theme: "my dog Max", "Toby, my puppy", "a puppy called Pixie"
_MEMBER = (
    re.compile(rf"\b[Mm]y {_NOUN},? {_NAME}\b"),
    re.compile(rf"\b[a-z]+ {_NAME}, my {_NOUN}\b"),  # "meet Toby, my puppy"; not "Yeah, my dog"
    re.compile(rf"\b{_NOUN} (?:called|named) {_NAME}\b"),
)
_MEMBER_ALIAS = re.compile(r"(?P<name>[a-z]+) \((?P<owner>.+)'s (?P<word>[a-z]+)\)")


def member_alias(owner: str, word: str, name: str) -> str:
    """The alias a theme's topic files a member's name under: "Toby (Andrew's dog)"."""
    return f"{name.capitalize()} ({owner}'s {word})"


def members(owner: str, texts: Iterable[str]) -> dict[str, str]:
    """name (lower case) -> the noun ``texts`` (``owner``'s turns) call it by ("meet Toby, my
    puppy": "toby" -> "puppy"); not the owner."""
    out: dict[str, str] = {}
    for text in texts:
        for pattern in _MEMBER:
            for m in pattern.finditer(text):
                noun, name = m.group("noun"), m.group("name").lower()
                if name != owner.lower() and name != noun and noun not in ENGLISH_STOP_WORDS:
                    out.setdefault(name, noun[:-1] if noun.endswith("s") else noun)
    return out


def known_words(
    names: Sequence[str], owners: Sequence[str]
) -> tuple[dict[str, list[str]], dict[tuple[str, str], str]]:
    """From lower-cased topic names and aliases: owner -> the words of the themes they already
    have ("audrey's dog" -> Audrey: ["dog"]; names of more than one word after the owner,
    "audrey's dog park", are no theme's), and (owner, member name) -> its theme's word
    ("toby (andrew's dog)")."""
    by_prefix = {f"{o.lower()}'s ": o for o in owners}
    lower = {o.lower(): o for o in owners}
    out: dict[str, list[str]] = {}
    named: dict[tuple[str, str], str] = {}
    for name in names:
        if (m := _MEMBER_ALIAS.fullmatch(name)) and m.group("owner") in lower:
            named[(lower[m.group("owner")], m.group("name"))] = m.group("word")
            continue
        for prefix, owner in by_prefix.items():
            rest = name[len(prefix) :] if name.startswith(prefix) else ""
            if rest and " " not in rest.strip():
                out.setdefault(owner, []).append(rest.strip())
    return out, named


def theme_words(
    said: Mapping[str, Counter[str]],
    known: Mapping[str, Sequence[str]],
    embed: Embed,
    min_cosine: float,
    named: Mapping[tuple[str, str], str] | None = None,
    texts: Mapping[str, Sequence[str]] | None = None,
) -> ThemeWords:
    """Each speaker's words of ``said`` (word -> times said in the slice) mapped to the word of
    the theme they mean: the nearest of the speaker's ``known`` theme words at ``min_cosine`` or
    more, else the nearest word said more often (ties: alphabetical) at that cosine, else itself.
    Member names map to their theme's word: the ``named`` ones the graph holds, and those the
    speaker's first-person ``texts`` of the slice introduce (``members``).
    ``min_cosine`` 0 (or nothing said) maps nothing and embeds nothing."""
    if min_cosine <= 0 or not any(said.values()):
        return SAME
    met = {o: members(o, lines) for o, lines in sorted((texts or {}).items())}
    words = {o: Counter(c) for o, c in said.items()}
    for owner, found_here in met.items():  # a member's noun is matched like a word said
        words.setdefault(owner, Counter()).update({n: 0 for n in found_here.values()})
    canon = _by_meaning(words, known, embed, min_cosine)
    theme_of = ThemeWords(canon).word
    for (owner, name), word in sorted((named or {}).items()):
        canon.setdefault((owner, name), theme_of(owner, word))
    found: dict[tuple[str, str], str] = {}
    for owner, found_here in met.items():
        for name, noun in found_here.items():
            if (owner, name) not in canon:
                found[(owner, name)] = canon[(owner, name)] = theme_of(owner, noun)
    return ThemeWords(canon, found)


def _by_meaning(
    said: Mapping[str, Counter[str]],
    known: Mapping[str, Sequence[str]],
    embed: Embed,
    min_cosine: float,
) -> dict[tuple[str, str], str]:
    words = sorted({w for c in said.values() for w in c} | {w for k in known.values() for w in k})
    matrix = np.asarray(embed(words), dtype=float)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    row = {w: i for i, w in enumerate(words)}
    canon: dict[tuple[str, str], str] = {}
    for owner, counts in sorted(said.items()):
        heads = sorted(set(known.get(owner, ())))  # existing themes: each stays its own
        order = sorted(counts, key=lambda w: (-counts[w], w))
        known_heads = len(heads)
        for word in order:
            if word in heads:
                continue
            best = _nearest(matrix[row[word]], heads[:known_heads], matrix, row, min_cosine)
            best = best or _nearest(matrix[row[word]], heads[known_heads:], matrix, row, min_cosine)
            if best is None:
                heads.append(word)
            else:
                canon[(owner, word)] = best
    return canon


def _nearest(
    vector: np.ndarray, heads: Sequence[str], matrix: np.ndarray, row: dict[str, int], floor: float
) -> str | None:
    """The head nearest ``vector`` at ``floor`` or more (ties: the first), else None."""
    best, best_cos = None, floor
    for head in heads:
        cos = float(vector @ matrix[row[head]])
        if cos > best_cos or (best is None and cos >= floor):
            best, best_cos = head, cos
    return best
