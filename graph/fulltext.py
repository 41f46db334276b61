"""Lucene query text for the full-text indexes, always confined to one namespace.

The full-text indexes (``topic_text``, ``message_text_en``) hold every namespace. Filtering by
namespace *after* Lucene ranked its top ``limit`` let one tenant push another's documents out
of the window (660 topics named "zanzibar" in one namespace hid another's "Zanzibar merger
plan"). So every node carries ``ns_token``, a single-token encoding of its namespace, indexed
with the text, and every query is ``ns_token:<token>^0 AND (<query>)``: Lucene only ever ranks
the caller's documents, and the namespace clause adds nothing to the score (boost 0).

The token survives both analyzers unchanged: only ``[a-z0-9_]`` (one word for the standard
tokenizer), upper case and punctuation escaped so distinct namespaces never share a token, and a
trailing ``0`` so the English analyzer's stemmer leaves it alone. The same encoding is written
in Cypher by the migration that back-fills existing nodes (``009_namespace_search.cypher``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

from text.analysis import english_terms, standard_tokens

MAX_QUERY_WORDS = 32
T = TypeVar("T")
FUZZY_MIN_LENGTH = 4
# Function words left out of the conversation's full-text query (``MessageStore.search_text``).
# ``message_text_en``'s English analyzer drops Lucene's stop set ("the", "was", "with"), but
# pronouns, auxiliaries and question words are indexed, and a message is full of them: "what",
# "did", "we", "you" matched most of a namespace's messages, and Lucene scored every one of
# them, for hits ranked by the content words anyway. The topic search keeps them: its
# namespace-local BM25 (``graph/lexical.py``) ranks Lucene's candidates with statistics over
# the candidates, which these words fill, and the low-confidence trigger's full-text
# threshold was calibrated on those scores (docs/performance.md).
COMMON_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with
    i i'm i've i'd i'll me my mine myself we we're we've us our ours you you're your yours he
    him his she her hers its it's them theirs what when where who whom which why how am been
    being were do does did doing done don't didn't doesn't have has had having can could would
    should shall may might must about from so just also any some than too very there's what's
    let's""".split()
)
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_WORD = re.compile(r"[\w']+", re.UNICODE)
_ESCAPES = {"_": "_0", ".": "_1", ":": "_2", "-": "_3"}


def namespace_token(namespace: str) -> str:
    """The one-word Lucene token of ``namespace`` (distinct namespaces, distinct tokens).

    ``a-z0-9`` stay, ``A-Z`` become ``_`` + lower case, ``_ . : -`` become ``_0 _1 _2 _3``;
    anything else (refused by the namespace pattern before it gets here) becomes ``_9_``."""
    out = ["ns"]
    for ch in namespace:
        if ch.isascii() and (ch.islower() or ch.isdigit()):
            out.append(ch)
        elif ch.isascii() and ch.isupper():
            out.append("_" + ch.lower())
        else:
            out.append(_ESCAPES.get(ch, "_9_"))
    out.append("0")
    return "".join(out)


def query_words(text: str) -> list[str]:
    """The words of ``text`` a full-text query searches for (lower case, 2+ characters)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1][:MAX_QUERY_WORDS]


def content_words(text: str) -> list[str]:
    """``query_words`` without ``COMMON_WORDS``, unless that leaves none (a search for "The
    Who" still finds the band)."""
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1]
    content = [w for w in words if w not in COMMON_WORDS]
    return (content or words)[:MAX_QUERY_WORDS]


def lucene_query(text: str, fuzzy: bool = True, common: bool = True) -> str:
    """Turn free text into a safe Lucene query: words escaped, OR-ed, fuzzy for longer words;
    without ``COMMON_WORDS`` unless ``common`` (see ``content_words``)."""
    parts = []
    for word in query_words(text) if common else content_words(text):
        escaped = _LUCENE_SPECIAL.sub(r"\\\1", word)
        parts.append(f"{escaped}~" if fuzzy and len(word) >= FUZZY_MIN_LENGTH else escaped)
    return " OR ".join(parts)


# The topic search's candidate query (``pool_query``): every clause scores a constant, so the
# score of a topic is the weight of the query terms each of its fields holds, computed from
# that topic and the query alone. A term query's BM25 takes its statistics from every tenant
# in the index, and so did the choice of a large namespace's candidates (the pool of Lucene's
# best ``RERANK_POOL``): a 300k-topic neighbour moved which of a 10,000-topic tenant's
# topics were ranked (docs/security.md, "Exact for small namespaces, exact groups for large
# ones"). A content word weighs more than all the common words a topic can hold together (at
# most 32 words in 6 fields), so topics holding more of the rarer words come first.
COMMON_WEIGHT = 1
CONTENT_WEIGHT = 256


def _constant(term: str, weight: int) -> str:
    """A clause matching ``term`` exactly in any field, scoring ``weight`` per field holding
    it: a range ``[t TO t]`` is a constant-score query in Lucene (its bounds are lower-cased,
    not tokenized: ``term`` is already one of the analyzer's terms)."""
    escaped = term.replace("\\", "\\\\").replace('"', '\\"')
    return f'["{escaped}" TO "{escaped}"]^{weight}'


def pool_query(text: str, fuzzy: bool = True) -> str:
    """The topic search's Lucene query for ``text`` (``TopicSearchStore.text_query``): each
    standard-analyzer term of ``query_words`` a constant-score clause (``CONTENT_WEIGHT`` for a
    term of ``content_words``, ``COMMON_WEIGHT`` for the others), and with ``fuzzy`` each word
    of four letters or more also as a fuzzy clause of boost 0: it matches the near spellings
    but adds nothing to the score (a fuzzy rewrite's weights come from the whole index). The
    same topics match as ``lucene_query``'s; "" when the text has no word."""
    words = query_words(text)
    content = {t for w in content_words(text) for t in standard_tokens(w)}
    terms = dict.fromkeys(t for w in words for t in standard_tokens(w))
    parts = [_constant(t, CONTENT_WEIGHT if t in content else COMMON_WEIGHT) for t in terms]
    if fuzzy:
        near = (w for w in dict.fromkeys(words) if len(w) >= FUZZY_MIN_LENGTH)
        parts += [_LUCENE_SPECIAL.sub(r"\\\1", w) + "~^0" for w in near]
    return " OR ".join(parts)


def message_query(text: str) -> str:
    """The conversation search's Lucene query for ``text`` (``MessageStore.text_query``): each
    English-analyzer term (``message_text_en``: stems, no stop words) of ``content_words`` a
    constant-score clause of weight 1, so a message's score is how many of the terms each of
    its fields holds, computed from that message and the text alone (``pool_query`` for
    topics). The same messages match as ``lucene_query(text, fuzzy=False, common=False)``'s;
    "" when no term is left."""
    terms = dict.fromkeys(t for w in content_words(text) for t in english_terms(w))
    return " OR ".join(_constant(t, 1) for t in terms)


def whole_groups(ordered: Sequence[T], score: Callable[[T], float], size: int, k: int) -> list[T]:
    """The first rows of ``ordered`` (by ``score``, highest first) in whole groups of one score,
    while they fit in ``size`` or fewer than ``k`` are taken: never a part of a group, since
    which of a group's rows Lucene returned first follows its document order, which every
    tenant's writes move (``TopicSearchStore``'s pool, ``MessageStore``'s groups)."""
    pool: list[T] = []
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and score(ordered[j]) == score(ordered[i]):
            j += 1
        if len(pool) >= k and j > size:
            break
        pool += ordered[i:j]
        i = j
    return pool


def name_query(namespace: str, names: Sequence[str]) -> str:
    """A Lucene query of ``topic_names`` (keyword-analysed: each lower-cased name and alias
    one token) for the topics of ``namespace`` whose name or an alias is exactly one of
    ``names`` (lower-cased, ``wanted_names``). A quoted phrase reaches the keyword analyzer
    whole, so only ``"`` and ``\\`` need escaping inside it."""
    parts = []
    for name in names:
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'name_lc:"{escaped}" OR aliases_lc:"{escaped}"')
    return in_namespace(namespace, " OR ".join(parts) or 'name_lc:"__none__"')


def in_namespace(namespace: str, lucene: str) -> str:
    """``lucene`` restricted to the documents of ``namespace``, scored as if alone."""
    return f"ns_token:{namespace_token(namespace)}^0 AND ({lucene})"


# -- time windows inside the message index ------------------------------------------------------
# A deep search's time window used to filter Lucene's rows after the index ranked them, so a
# narrow window of a large conversation read 320, then 1,280, then 5,120 rows to keep a few
# (docs/performance.md, thirteenth pass). Every message now carries ``at_days``: the UTC year,
# month and day of its ``at`` as three tokens ("y2026 m202602 d20260223"), indexed by
# ``message_text_en`` (migration 016), and a windowed query names the days, months and years
# that cover the window, so Lucene ranks only the messages of those days. The cover is whole UTC
# days: the exact window (any time zone, any time of day) still filters after, on ``at``.
MAX_WINDOW_CLAUSES = 400  # a cover longer than this is not sent (the filter after still runs)


def day_tokens(at: datetime) -> str:
    """The ``at_days`` of a message said at ``at`` (aware or UTC): its UTC year, month and day
    as tokens. Migration 016 writes the same text in Cypher for the messages stored before."""
    d = (at if at.tzinfo is None else at.astimezone(UTC)).date()
    return f"y{d.year:04d} m{d.year:04d}{d.month:02d} d{d.year:04d}{d.month:02d}{d.day:02d}"


def _first_of_next_month(d: date) -> date:
    return date(d.year + 1, 1, 1) if d.month == 12 else date(d.year, d.month + 1, 1)


def _window_days(since: datetime, until: datetime) -> tuple[date, date] | None:
    """The first and last UTC day holding an instant of ``[since, until)`` (``until`` itself
    left out); None when the window is empty."""
    start, end = since.astimezone(UTC), until.astimezone(UTC)
    if end <= start:
        return None
    return start.date(), (end - timedelta(microseconds=1)).date()


def _confined(field: str, cover: list[str], lucene: str) -> str:
    """``lucene`` restricted to the documents whose ``field`` holds a token of ``cover``
    (scoring 0); unchanged when the cover is empty or longer than ``MAX_WINDOW_CLAUSES``."""
    if not cover or len(cover) > MAX_WINDOW_CLAUSES:
        return lucene
    return f"{field}:({' '.join(cover)})^0 AND {lucene}"


def day_cover(since: datetime, until: datetime) -> list[str]:
    """The fewest ``at_days`` tokens whose days hold every instant of ``[since, until)``: whole
    years, then whole months, then single days, UTC. Empty when the window is empty."""
    days = _window_days(since, until)
    if days is None:
        return []
    first, last = days
    tokens: list[str] = []
    d = first
    while d <= last:
        if d.month == 1 and d.day == 1 and date(d.year, 12, 31) <= last:
            tokens.append(f"y{d.year:04d}")
            if d.year == 9999:
                break
            d = date(d.year + 1, 1, 1)
        elif d.day == 1 and _end_of_month(d) <= last:
            tokens.append(f"m{d.year:04d}{d.month:02d}")
            if d.year == 9999 and d.month == 12:
                break
            d = _first_of_next_month(d)
        else:
            tokens.append(f"d{d.year:04d}{d.month:02d}{d.day:02d}")
            if d == date.max:
                break
            d += timedelta(days=1)
    return tokens


def in_window(lucene: str, since: datetime | None, until: datetime | None) -> str:
    """``lucene`` (``in_namespace``'s) confined to the days of ``[since, until)`` when both
    ends are given and the cover is short (``MAX_WINDOW_CLAUSES``); the clause scores 0, so
    every message keeps the score it has without it."""
    if since is None or until is None:
        return lucene
    return _confined("at_days", day_cover(since, until), lucene)


# A topic lasts from its first to its last mention, so a window asks which topics' spans overlap
# it. Every topic carries ``span_days`` (migration 017), indexed by ``topic_text``: an "m" token
# for every UTC month its span touches, an "f" token for every month it spans whole (strictly
# between its first and last month), and a "d" token for each of its days in its first and last
# month. A window names the "m" token of each month it holds whole, and for a month it holds in
# part, that month's "f" token and the "d" tokens of its days there: a topic matches exactly when
# its span and the window share a UTC day.


def _month(d: date) -> str:
    return f"{d.year:04d}{d.month:02d}"


def _day(d: date) -> str:
    return f"d{d.year:04d}{d.month:02d}{d.day:02d}"


def _months(first: date, last: date) -> list[date]:
    """The first day of every month from ``first``'s to ``last``'s."""
    out, d = [], first.replace(day=1)
    while d <= last:
        out.append(d)
        if d.year == 9999 and d.month == 12:
            break
        d = _first_of_next_month(d)
    return out


def _days(first: date, last: date) -> list[str]:
    return [_day(first + timedelta(days=i)) for i in range((last - first).days + 1)]


def _end_of_month(d: date) -> date:
    return date(9999, 12, 31) if (d.year, d.month) == (9999, 12) else (
        _first_of_next_month(d) - timedelta(days=1)
    )  # fmt: skip


def span_tokens(first_seen: datetime, last_seen: datetime) -> str:
    """The ``span_days`` of a topic seen from ``first_seen`` to ``last_seen`` (UTC days; a last
    before the first counts as the first). Migration 017 writes the same in Cypher."""
    first = first_seen.astimezone(UTC).date()
    last = max(first, last_seen.astimezone(UTC).date())
    months = _months(first, last)
    tokens = [f"m{_month(m)}" for m in months]
    tokens += [f"f{_month(m)}" for m in months[1:-1]]
    if len(months) == 1:
        tokens += _days(first, last)
    else:
        tokens += _days(first, _end_of_month(first)) + _days(last.replace(day=1), last)
    return " ".join(tokens)


def span_cover(since: datetime, until: datetime) -> list[str]:
    """The ``span_days`` tokens a topic overlapping ``[since, until)`` on some UTC day has one
    of (and a topic that does not has none of). Empty when the window is empty."""
    days = _window_days(since, until)
    if days is None:
        return []
    first, last = days
    tokens: list[str] = []
    for m in _months(first, last):
        lo, hi = max(first, m), min(last, _end_of_month(m))
        if lo == m and hi == _end_of_month(m):
            tokens.append(f"m{_month(m)}")
        else:
            tokens += [f"f{_month(m)}", *_days(lo, hi)]
    return tokens


def in_span(lucene: str, since: datetime | None, until: datetime | None) -> str:
    """``lucene`` (``in_namespace``'s, over ``topic_text``) confined to the topics whose span
    shares a UTC day with ``[since, until)``, when both ends are given and the cover is short;
    the clause scores 0."""
    if since is None or until is None:
        return lucene
    return _confined("span_days", span_cover(since, until), lucene)


MAX_NAMES = 50  # phrases looked up per message at most (TopicStore.known_names and others)


def wanted_names(names: Sequence[str]) -> list[str]:
    """The phrases a known-name lookup asks about: stripped, lower-cased, distinct, sorted."""
    return sorted({n.strip().lower() for n in names if n.strip()})[:MAX_NAMES]


def state_query(namespace: str, tokens: Sequence[str]) -> str:
    """A Lucene query of ``topic_states`` (keyword-analysed) for the topics of ``namespace``
    holding any of the state ``tokens`` (``text.claims.state_token``: ``[sp][0-9a-f]{20}``,
    nothing to escape; anything else is refused)."""
    for token in tokens:
        if not re.fullmatch(r"[sp][0-9a-f]{20}", token):
            raise ValueError(f"not a state token: {token[:40]!r}")
    wanted = " OR ".join(f"state_keys:{t}" for t in tokens) or "state_keys:__none__"
    return in_namespace(namespace, wanted)
