"""Namespace-local lexical ranking of full-text candidates (pure: no Neo4j).

Lucene's BM25 takes its statistics (how rare a word is, how long a field is on average) from the
whole index, and the index holds every namespace: 660 topics named "zanzibar" in one namespace
made the word common and lowered another namespace's "Zanzibar merger plan" from 13.3 to 8.9,
and could reorder that namespace's own topics. So Lucene only *finds* a namespace's candidates
(``graph/fulltext.py`` confines the query), and this module *ranks* them with BM25 computed over
those candidates alone: the score of a topic depends on its namespace's topics and on nothing
another tenant stores.

Same formula and parameters as Lucene (``k1 = 1.2``, ``b = 0.75``, per-field statistics, the
fields' scores summed per query word), over the terms the index holds: each field is analysed as
its index analyses it (``text/analysis.py``: the standard analyzer of ``topic_text`` by default,
the English one, stems and stop words, for ``message_text_en``), and so is each query word. Fuzzy words (``word~``) match tokens within two edits
(optimal string alignment, as Lucene counts a transposition as one edit), weighted by
``1 - edits / min(len)`` as Lucene's fuzzy rewrite does; the number of fuzzy comparisons per
call is bounded, so a long query over many candidates cannot take long.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from graph.fulltext import FUZZY_MIN_LENGTH
from text.analysis import english_terms, standard_tokens

K1, B = 1.2, 0.75
MAX_EDITS = 2
FUZZY_BUDGET = 10_000  # (word, token) pairs compared per call; beyond it, exact matches only
# a field's text -> its length in tokens and how often each token occurs, per process: every
# context request ranks ~200 candidates x 4 fields, mostly topics an earlier request met
# (tokenizing them was half of each ranking, docs/performance.md "Ninth pass"); keyed by the
# text itself, so an edited topic is tokenized afresh. ~1 KB an entry: ~16 MB when full
FIELD_CACHE = 16_384
_Counts = tuple[int, Counter[str]]
Analyzer = Callable[[str], list[str]]


def tokens(text: str) -> list[str]:
    """The standard analyzer's terms (``topic_text``): Lucene's standard tokenizer, lower case."""
    return standard_tokens(text)


STANDARD: Analyzer = tokens
ENGLISH: Analyzer = english_terms


def query_terms(words: Sequence[str], analyze: Analyzer = STANDARD) -> list[str]:
    """The index terms Lucene searches for ``words`` (each word analysed as the index analyses
    its fields: a stop word gives none, a word may give several; repeats kept, as Lucene sums
    a repeated clause twice)."""
    return [term for word in words for term in analyze(word)]


def edit_distance(a: str, b: str, limit: int = MAX_EDITS) -> int:
    """Optimal-string-alignment distance of ``a`` and ``b``, or ``limit + 1`` once it is
    certain to exceed ``limit`` (the rows are abandoned early)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1]


@dataclass
class _Matcher:
    """Which document tokens a query word matches, and how strongly (1.0 = exact)."""

    fuzzy: bool
    budget: int = FUZZY_BUDGET

    def __post_init__(self) -> None:
        self._memo: dict[tuple[str, str], float] = {}

    def freq(self, word: str, counts: Counter[str]) -> float:
        """How often ``word`` occurs in a field's token ``counts``, fuzzy matches weighted."""
        exact = float(counts.get(word, 0))
        if not self.fuzzy or len(word) < FUZZY_MIN_LENGTH:
            return exact
        near = (
            n * self._near(word, token)
            for token, n in counts.items()
            if token != word and abs(len(token) - len(word)) <= MAX_EDITS
        )
        return exact + sum(near)

    def _near(self, word: str, token: str) -> float:
        key = (word, token)
        if key not in self._memo:
            if self.budget <= 0:
                return 0.0
            self.budget -= 1
            edits = edit_distance(word, token)
            self._memo[key] = (
                max(0.0, 1.0 - edits / min(len(word), len(token))) if edits <= MAX_EDITS else 0.0
            )
        return self._memo[key]


def rank(
    words: Sequence[str],
    docs: Sequence[Mapping[str, str]],
    fields: Sequence[str],
    fuzzy: bool = False,
    analyze: Analyzer = STANDARD,
) -> list[float]:
    """BM25 score of each of ``docs`` (field name -> text) for the query ``words``, with the
    statistics of ``docs`` alone, fields and words analysed by ``analyze``. Scores are in the
    order of ``docs``."""
    return rank_many([words], docs, fields, fuzzy, analyze)[0]


def rank_many(
    queries: Sequence[Sequence[str]],
    docs: Sequence[Mapping[str, str]],
    fields: Sequence[str],
    fuzzy: bool = False,
    analyze: Analyzer = STANDARD,
) -> list[list[float]]:
    """``rank`` of each of ``queries`` over the same ``docs``, every field tokenized once (the
    topic search ranks its candidates by all the query's words and by its content words:
    tokenizing 200 candidates x 4 fields was most of each ranking's cost). Each query's scores
    are exactly ``rank``'s, its own fuzzy budget included."""
    queries = [query_terms(words, analyze) for words in queries]
    split = [
        {field: field_counts(doc.get(field) or "", analyze) for field in fields} for doc in docs
    ]
    if fuzzy:  # each query its own fuzzy budget, as ``rank`` gives it
        return [_rank(words, split, fields, fuzzy) for words in queries]
    # exact: every field's matches found once for all the queries' words (the content words
    # are a subset of the words: a second pass found nothing new), each query scored from them
    every = list(dict.fromkeys(w for words in queries for w in words))
    found = {field: _exact_field(every, split, field) for field in fields}
    return [_scores(words, found, fields, len(docs)) for words in queries]


@lru_cache(maxsize=FIELD_CACHE)
def field_counts(text: str, analyze: Analyzer = STANDARD) -> _Counts:
    """``text``'s length in terms and each term's count (shared: never to be changed)."""
    found = analyze(text)
    return len(found), Counter(found)


def _rank(
    words: Sequence[str],
    docs: Sequence[Mapping[str, _Counts]],
    fields: Sequence[str],
    fuzzy: bool,
) -> list[float]:
    matcher = _Matcher(fuzzy=True) if fuzzy else None  # one budget for the whole call
    found = {
        field: (
            _fuzzy_field(words, docs, field, matcher)
            if matcher
            else _exact_field(words, docs, field)
        )
        for field in fields
    }
    return _scores(words, found, fields, len(docs))


def _scores(
    words: Sequence[str], found: Mapping[str, _Field], fields: Sequence[str], n: int
) -> list[float]:
    """BM25 of ``n`` documents for ``words`` from each field's lengths and matches (``found``:
    ``_exact_field`` or ``_fuzzy_field`` of at least these words), fields summed in order."""
    scores = [0.0] * n
    for field in fields:
        lengths, matches = found[field]
        if not lengths:
            continue
        avgdl = sum(lengths.values()) / len(lengths)
        for word in words:
            matched = matches[word]
            if not matched:
                continue
            idf = math.log(1 + (len(lengths) - len(matched) + 0.5) / (len(matched) + 0.5))
            for i, freq in matched.items():
                norm = K1 * (1 - B + B * lengths[i] / avgdl)
                scores[i] += idf * freq / (freq + norm)
    return scores


_Field = tuple[dict[int, int], dict[str, dict[int, float]]]


def _exact_field(words: Sequence[str], docs: Sequence[Mapping[str, _Counts]], field: str) -> _Field:
    """One field of every document (as its ``field_counts``): its length in tokens (documents
    where it is not empty, in order) and word -> {document: how often the word occurs in it}."""
    matches: dict[str, dict[int, float]] = {w: {} for w in words}
    wanted = matches.keys()
    lengths: dict[int, int] = {}
    for i, doc in enumerate(docs):
        length, counts = doc[field]
        if not length:
            continue
        lengths[i] = length
        # the words this field holds, by a set intersection (most hold none of them); each
        # word's documents still go in in order, so every score sums in the same order
        for word in wanted & counts.keys():
            matches[word][i] = float(counts[word])
    return lengths, matches


def _fuzzy_field(
    words: Sequence[str], docs: Sequence[Mapping[str, _Counts]], field: str, matcher: _Matcher
) -> _Field:
    """As ``_exact_field``, each word's fuzzy matches weighted by ``matcher``."""
    counts = {i: doc[field][1] for i, doc in enumerate(docs)}
    lengths = {i: doc[field][0] for i, doc in enumerate(docs) if doc[field][0]}
    matches: dict[str, dict[int, float]] = {}
    for word in dict.fromkeys(words):
        freqs = {i: matcher.freq(word, counts[i]) for i in lengths}
        matches[word] = {i: f for i, f in freqs.items() if f > 0}
    return lengths, matches
