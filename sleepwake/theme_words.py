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

A word a speaker says only in front of another of their words is the compound's, when the
compound means its head: "video" of "video games" and "video game tournament" is Nate's game
(MiniLM: "video game" .70 to "game", .45 to "video"), so "Nate's video" is no theme of its own;
"pottery" of "pottery class" stays Melanie's pottery (.85 / .58) (``fixed_pairs``,
``_means_head``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from text.analysis import ENGLISH_STOP_WORDS
from text.words import ELLIPTIC, MODIFIERS

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

# a name, not the first word of a title or a place ("Lord of the Rings", "New York")
_NAME = r"(?P<name>[A-Z][a-z]{2,})(?! (?:of (?:the )?)?[A-Z])"
_NOUN = r"(?:[a-z]+ )?(?P<noun>[a-z]{3,})"  # "my childhood dog Max": the noun, not "childhood"
# how a speaker names a member of a theme: "my dog Max", "Toby, my puppy", "a puppy called Pixie"
_MEMBER = (
    re.compile(rf"\b[Mm]y {_NOUN},? {_NAME}\b"),
    re.compile(rf"\b[a-z]+ {_NAME}, my {_NOUN}\b"),  # "meet Toby, my puppy"; not "Yeah, my dog"
    re.compile(rf"\b{_NOUN} (?:called|named) {_NAME}\b"),
)
# what an adjective stands for when it stands alone ("my favorite, Lord of the Rings": the
# favourite book): not the noun a member is called by
_NOT_NOUNS = MODIFIERS | ELLIPTIC | frozenset("only dear darling".split())
_WORDS = re.compile(r"[a-z][a-z-]*")
# how much nearer its head a compound must be than its first word for that word to be only its
# modifier ("video game": .70 vs .45; "chocolate cake", .80 vs .77, stays chocolate's)
_HEAD_MARGIN = 0.1
_MEMBER_ALIAS = re.compile(r"(?P<name>[a-z]+) \((?P<owner>.+)'s (?P<word>[a-z]+)\)")


def member_alias(owner: str, word: str, name: str) -> str:
    """The alias a theme's topic files a member's name under: "Toby (Andrew's dog)"."""
    return f"{name.capitalize()} ({owner}'s {word})"


def members(owner: str, texts: Iterable[str]) -> dict[str, str]:
    """name (lower case) -> the noun ``texts`` (``owner``'s turns) call it by ("meet Toby, my
    puppy": "toby" -> "puppy"); not the owner, not an adjective standing alone ("my favorite,
    Lord of the Rings" was the alias "Lord (Tim's favorite)" and made a theme "Tim's favorite"
    of 23 facts on LoCoMo conv-43), not the first word of a title ("Lord of the Rings")."""
    out: dict[str, str] = {}
    for text in texts:
        for pattern in _MEMBER:
            for m in pattern.finditer(text):
                noun, name = m.group("noun"), m.group("name").lower()
                noun_like = noun not in ENGLISH_STOP_WORDS and noun not in _NOT_NOUNS
                if name != owner.lower() and name != noun and noun_like:
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
    speaker's first-person ``texts`` of the slice introduce (``members``). A word said only as
    the modifier of a compound that means its head ("video" of "video games") maps to the
    head's theme (``fixed_pairs``). One batch of embeddings for all of it.
    ``min_cosine`` 0 (or nothing said) maps nothing and embeds nothing."""
    if min_cosine <= 0 or not any(said.values()):
        return SAME
    met = {o: members(o, lines) for o, lines in sorted((texts or {}).items())}
    words = {o: Counter(c) for o, c in said.items()}
    for owner, found_here in met.items():  # a member's noun is matched like a word said
        words.setdefault(owner, Counter()).update({n: 0 for n in found_here.values()})
    pairs = {
        o: fixed_pairs(words[o], (texts or {}).get(o, ()), known.get(o, ())) for o in sorted(words)
    }
    vectors = _vectors(words, known, pairs, embed)
    # a word that means a theme the speaker has is that theme's, never a compound's modifier
    first = _by_meaning(words, known, vectors, min_cosine)
    heads = {
        o: {
            w: n
            for w, n in p.items()
            if first.get((o, w), w) not in known.get(o, ()) and _means_head(w, n, vectors)
        }
        for o, p in pairs.items()
    }
    for owner, modifiers in heads.items():  # "video" of "video games" is no subject of its own
        for word in modifiers:
            del words[owner][word]
    canon = _by_meaning(words, known, vectors, min_cosine)
    theme_of = ThemeWords(canon).word
    for owner, modifiers in sorted(heads.items()):
        for word, head in sorted(modifiers.items()):
            canon[(owner, word)] = theme_of(owner, head)
    for (owner, name), word in sorted((named or {}).items()):
        canon.setdefault((owner, name), theme_of(owner, word))
    found: dict[tuple[str, str], str] = {}
    for owner, found_here in met.items():
        for name, noun in found_here.items():
            if (owner, name) not in canon:
                found[(owner, name)] = canon[(owner, name)] = theme_of(owner, noun)
    return ThemeWords(canon, found)


def fixed_pairs(said: Counter[str], texts: Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """word -> the word it is always said right before in ``texts`` ("video" of "video games",
    "video game tournament": "game"), when that word is one of the speaker's ``said`` words too;
    not a theme they already have (``known``: a theme keeps its name; nor, in ``theme_words``, a
    word of one by meaning: "dog" of "dog agility contest" stays James's puppy). A candidate
    compound: ``_means_head`` decides whether the first word is only its modifier."""
    after: dict[str, Counter[str]] = {}
    for text in texts:
        tokens = [_said_form(t, said) for t in _WORDS.findall(text.lower())]
        for word, nxt in zip(tokens, [*tokens[1:], ""][: len(tokens)], strict=True):
            if word in said:
                after.setdefault(word, Counter())[nxt] += 1
    out: dict[str, str] = {}
    for word, nexts in sorted(after.items()):
        nxt, times = nexts.most_common(1)[0]
        if times == sum(nexts.values()) and nxt in said and nxt != word and word not in set(known):
            out[word] = nxt
    return out


def _said_form(word: str, said: Counter[str]) -> str:
    """``word`` as ``said`` counts it (singular: "games" -> "game")."""
    return word[:-1] if word not in said and word.endswith("s") and word[:-1] in said else word


def _means_head(word: str, head: str, vectors: Mapping[str, np.ndarray]) -> bool:
    """Whether the compound "<word> <head>" means its head rather than its first word, by the
    sleep's model: "video game" is a game (cosine .70 to "game", .45 to "video"), "dog park" a
    park; "pottery class" is pottery (.85 / .58), "basketball game" basketball, "camping trip"
    camping: the first word of those is the subject a person files them under."""
    compound = vectors[f"{word} {head}"]
    return float(compound @ vectors[head]) - float(compound @ vectors[word]) >= _HEAD_MARGIN


def _vectors(
    said: Mapping[str, Counter[str]],
    known: Mapping[str, Sequence[str]],
    pairs: Mapping[str, Mapping[str, str]],
    embed: Embed,
) -> dict[str, np.ndarray]:
    """Unit vectors of every word said or known and of each candidate compound: one batch."""
    words = {w for c in said.values() for w in c} | {w for k in known.values() for w in k}
    compounds = {f"{w} {n}" for p in pairs.values() for w, n in p.items()}
    texts = sorted(words | compounds)
    matrix = np.asarray(embed(texts), dtype=float)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return dict(zip(texts, matrix, strict=True))


def _by_meaning(
    said: Mapping[str, Counter[str]],
    known: Mapping[str, Sequence[str]],
    vectors: Mapping[str, np.ndarray],
    min_cosine: float,
) -> dict[tuple[str, str], str]:
    canon: dict[tuple[str, str], str] = {}
    for owner, counts in sorted(said.items()):
        heads = sorted(set(known.get(owner, ())))  # existing themes: each stays its own
        order = sorted(counts, key=lambda w: (-counts[w], w))
        known_heads = len(heads)
        for word in order:
            if word in heads:
                continue
            best = _nearest(vectors[word], heads[:known_heads], vectors, min_cosine)
            best = best or _nearest(vectors[word], heads[known_heads:], vectors, min_cosine)
            if best is None:
                heads.append(word)
            else:
                canon[(owner, word)] = best
    return canon


def _nearest(
    vector: np.ndarray, heads: Sequence[str], vectors: Mapping[str, np.ndarray], floor: float
) -> str | None:
    """The head nearest ``vector`` at ``floor`` or more (ties: the first), else None."""
    best, best_cos = None, floor
    for head in heads:
        cos = float(vector @ vectors[head])
        if cos > best_cos or (best is None and cos >= floor):
            best, best_cos = head, cos
    return best
