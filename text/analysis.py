"""The full-text indexes' analysis, in Python: the terms Lucene indexes for a text. Pure.

A namespace's own BM25 (``graph/lexical.py``) must count the same terms the index does, or a
document Lucene matched would score 0 here (or one it did not match would score). Two analyzers
are in use (cypher/schema/):

- ``standard`` (``topic_text``: Neo4j's default ``standard-no-stop-words``): Lucene's
  ``StandardTokenizer`` and lower case. ``standard_tokens``.
- ``english`` (``message_text_en``: Lucene's ``EnglishAnalyzer``): the same tokenizer, then
  ``EnglishPossessiveFilter`` (a trailing ``'s`` dropped), lower case, Lucene's English stop set
  (``ENGLISH_STOP_WORDS``) removed, and the Porter stemmer (``english_terms``).

The tokenizer follows the word-break rules of Unicode UAX #29 that matter for English text:
letters, digits and ``_`` form a word; ``.``, ``:`` and apostrophes join two letters ("e.g",
"o'neil", "node.js"); ``.``, ``,``, ``;`` and apostrophes join two digits ("3.5", "1,000"); every
other character separates words, and each Han ideograph or Hiragana character is a word of its
own. The Porter stemmer is Snowball's ``porter`` (the original algorithm Lucene's
``PorterStemFilter`` implements; PyStemmer's C code, through ``snowballstemmer``), leaving words
of one or two letters alone as Lucene does.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
ENGLISH_STOP_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with""".split()
)
_IDEOGRAPHIC = "\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD_CHAR = rf"[^\W{_IDEOGRAPHIC}]"
_LETTER = r"[^\W\d_]"
_TOKEN = re.compile(
    rf"[{_IDEOGRAPHIC}]"
    rf"|{_WORD_CHAR}+(?:(?:(?<={_LETTER})[.:'\u2018\u2019\u00b7](?={_LETTER})"
    rf"|(?<=\d)[.,;'\u2018\u2019](?=\d)){_WORD_CHAR}+)*"
)
# a first, cheap pass: runs of word characters with any joining character between them; the
# few runs that hold a joining character or a non-ASCII character are split by ``_TOKEN``
_RUN = re.compile(r"\w+(?:[.:'\u2018\u2019\u00b7,;]\w+)*")
_POSSESSIVE = ("'s", "'S", "\u2019s", "\u2019S", "\uff07s", "\uff07S")
MAX_TOKEN = 255  # StandardTokenizer's longest token; a longer run is cut into pieces
_STEMMER = snowballstemmer.stemmer("porter")  # keeps state between calls: one at a time
_STEMMING = threading.Lock()


def _split_long(token: str) -> list[str]:
    if len(token) <= MAX_TOKEN:
        return [token]
    return [token[i : i + MAX_TOKEN] for i in range(0, len(token), MAX_TOKEN)]


def raw_tokens(text: str) -> list[str]:
    """``StandardTokenizer``'s tokens of ``text``, case kept."""
    out: list[str] = []
    for run in _RUN.findall(text):
        if run.isalnum() and run.isascii() and len(run) <= MAX_TOKEN:
            out.append(run)  # the common case: one plain word
        else:
            out += [piece for t in _TOKEN.findall(run) for piece in _split_long(t)]
    return out


def standard_tokens(text: str) -> list[str]:
    """The terms of the ``standard`` analyzers (no stop words): tokens in lower case."""
    return [t.lower() for t in raw_tokens(text)]


@lru_cache(maxsize=1 << 16)  # ~100 bytes an entry; a miss costs a Snowball call (~1-2 us in C)
def english_term(token: str) -> str | None:
    """One token through the English analyzer's filters: None for a stop word."""
    if token.endswith(_POSSESSIVE):
        token = token[:-2]
    word = token.lower()
    if not word or word in ENGLISH_STOP_WORDS:
        return None
    if len(word) <= 2 or not word[-1].isalpha():
        # Lucene's PorterStemmer leaves words of one or two letters alone, and every rule of
        # Porter's removes or changes a suffix of letters: "4821", "v2" stay as they are
        return word
    with _STEMMING:
        stemmed: str = _STEMMER.stemWord(word)
    return stemmed


def english_terms(text: str) -> list[str]:
    """The terms of the ``english`` analyzer for ``text``, in order."""
    return [term for t in raw_tokens(text) if (term := english_term(t)) is not None]
