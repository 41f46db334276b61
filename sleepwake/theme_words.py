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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from text.tokens import stem

Embed = Callable[[Sequence[str]], list[list[float]]]


@dataclass(frozen=True)
class ThemeWords:
    """``canon``: (speaker, word) -> the word of the theme it belongs to (words that are their own
    theme's are left out)."""

    canon: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def word(self, owner: str, word: str) -> str:
        """The word ``owner``'s theme of ``word`` goes by."""
        return self.canon.get((owner, word), word)

    def stems(self, owner: str, word: str) -> frozenset[str]:
        """The stems of every word of ``owner``'s theme ``word`` (``word``'s own included)."""
        return frozenset(
            {stem(word)} | {stem(w) for (o, w), c in self.canon.items() if o == owner and c == word}
        )


SAME = ThemeWords()  # every word its own theme: no embedding, or the knob at 0


def known_words(names: Sequence[str], owners: Sequence[str]) -> dict[str, list[str]]:
    """owner -> the words of the themes they already have, from lower-cased topic names and
    aliases ("audrey's dog" -> Audrey: ["dog"]); names of more than one word after the owner
    ("audrey's dog park") are no theme's."""
    by_prefix = {f"{o.lower()}'s ": o for o in owners}
    out: dict[str, list[str]] = {}
    for name in names:
        for prefix, owner in by_prefix.items():
            rest = name[len(prefix) :] if name.startswith(prefix) else ""
            if rest and " " not in rest.strip():
                out.setdefault(owner, []).append(rest.strip())
    return out


def theme_words(
    said: Mapping[str, Counter[str]],
    known: Mapping[str, Sequence[str]],
    embed: Embed,
    min_cosine: float,
) -> ThemeWords:
    """Each speaker's words of ``said`` (word -> times said in the slice) mapped to the word of
    the theme they mean: the nearest of the speaker's ``known`` theme words at ``min_cosine`` or
    more, else the nearest word said more often (ties: alphabetical) at that cosine, else itself.
    ``min_cosine`` 0 (or nothing said) maps nothing and embeds nothing."""
    if min_cosine <= 0 or not any(said.values()):
        return SAME
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
    return ThemeWords(canon)


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
