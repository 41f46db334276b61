"""The shared state of the in-memory fakes: one ``FakeGraph`` plays the Neo4j database.

The fake stores of one test share a ``FakeGraph`` as the real stores share a database, so a
sleep committed through ``FakeSleepStore`` is what ``FakeTopicStore`` and ``FakeMessageStore``
read afterwards. Topics are kept as the node properties ``graph.mapping.topic_props`` writes and
read back through ``topic_from_props``, so a topic round-trips exactly as it does through Neo4j
(``light`` reads lose their facts, summaries lose their lists, versions count every write).

Full text is approximated, not reproduced: Lucene's standard analyzer (topics) is lower-cased
words; its English analyzer (messages) is that plus possessive removal, Lucene's English stop
words and a light suffix stemmer. Scores count the distinct query terms a document holds, ties in
insertion order (Lucene's doc order); the pipelines use ranks and relative scores, and the
contract test pins what the fakes and Neo4j agree on.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from graph.clock import ensure_utc
from graph.errors import ValidationFailed
from graph.fulltext import COMMON_WORDS
from graph.mapping import topic_from_props
from graph.models import EdgeType, Message, Subject, Topic, TopicEvent, WakeState

_WORD = re.compile(r"[\w']+", re.UNICODE)
# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
ENGLISH_STOP = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split()
)
LIGHT_DROP = ("facts", "facts_json", "notable_events_json")
SUMMARY_DROP = LIGHT_DROP  # a summary is a light read (get_topic_summaries.cypher)


@dataclass
class TopicNode:
    """A :Topic node: its properties (as ``topic_props`` writes them) and its vector."""

    props: dict[str, Any]
    embedding: list[float] | None

    def live(self, namespace: str) -> bool:
        return self.props["namespace"] == namespace and self.props.get("archived_at") is None

    def topic(self, drop: Sequence[str] = (), related: list[str] | None = None) -> Topic:
        """The topic as a read returns it, without the ``drop``-ped properties."""
        props = {k: v for k, v in self.props.items() if k not in drop}
        return topic_from_props(props, related)


@dataclass
class Edge:
    weight: float
    created_at: datetime
    last_updated_at: datetime


@dataclass
class Lease:
    holder: str | None
    acquired_at: datetime | None
    expires_at: datetime | None


@dataclass
class FakeGraph:
    """Every node and edge the fake stores hold. Ids are unique across namespaces, as the
    uniqueness constraints make them in Neo4j; every read filters by namespace."""

    messages: dict[str, Message] = field(default_factory=dict)
    next_seq: dict[str, int] = field(default_factory=dict)
    topics: dict[str, TopicNode] = field(default_factory=dict)
    edges: dict[tuple[str, str, EdgeType], Edge] = field(default_factory=dict)
    events: dict[str, tuple[TopicEvent, list[float] | None]] = field(default_factory=dict)
    mentions: set[tuple[str, str]] = field(default_factory=set)  # (topic_id, message_id)
    subjects: dict[str, tuple[Subject, list[str]]] = field(default_factory=dict)
    wake_packets: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> props
    leases: dict[str, Lease] = field(default_factory=dict)
    wake_states: dict[str, WakeState] = field(default_factory=dict)  # namespace -> state
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: on an exception every change made inside is rolled back."""
        with self.lock:
            saved = self._snapshot()
            try:
                yield
            except BaseException:
                for key, value in saved.items():
                    setattr(self, key, value)
                raise

    def _snapshot(self) -> dict[str, Any]:
        """Copies of everything a write may change. Messages, events, subjects and packets are
        replaced, never changed in place, so copying their maps is enough; topic properties,
        edges and leases are changed in place and copied one level deeper."""
        return {
            "messages": dict(self.messages),
            "next_seq": dict(self.next_seq),
            "topics": {k: TopicNode(dict(n.props), n.embedding) for k, n in self.topics.items()},
            "edges": {k: copy.copy(e) for k, e in self.edges.items()},
            "events": dict(self.events),
            "mentions": set(self.mentions),
            "subjects": dict(self.subjects),
            "wake_packets": dict(self.wake_packets),
            "leases": {k: copy.copy(lease) for k, lease in self.leases.items()},
            "wake_states": dict(self.wake_states),
        }

    # -- reads shared by the fake stores ---------------------------------------------------------
    def topic_nodes(self, namespace: str, topic_ids: Sequence[str]) -> list[TopicNode]:
        """The nodes of ``topic_ids`` in ``namespace`` (archived too), in the order asked."""
        found = (self.topics.get(tid) for tid in topic_ids)
        return [n for n in found if n is not None and n.props["namespace"] == namespace]

    def state_topics(
        self, namespace: str, tokens: Sequence[str], limit: int
    ) -> list[tuple[str, list[str]]]:
        """``find_state_topics.cypher``: live topics holding any of ``tokens``, the most
        recently seen first, at most ``limit``."""
        wanted = set(tokens)
        found = [n for n in self.live_topics(namespace) if wanted & set(n.props["state_keys"])]
        found.sort(key=lambda n: n.props["topic_id"])
        found.sort(key=lambda n: n.props["last_seen_at"], reverse=True)
        return [(n.props["topic_id"], list(n.props["state_keys"])) for n in found[:limit]]

    def live_topics(self, namespace: str) -> list[TopicNode]:
        """The namespace's live topics in creation order."""
        return [n for n in self.topics.values() if n.live(namespace)]

    def related(self, namespace: str, topic_id: str) -> list[str]:
        """Ids of the RELATES_TO neighbours of a topic (either direction) in the namespace."""
        out = set()
        for a, b, etype in self.edges:
            if etype is EdgeType.RELATES_TO and topic_id in (a, b):
                other = b if a == topic_id else a
                node = self.topics.get(other)
                if node is not None and node.props["namespace"] == namespace:
                    out.add(other)
        return sorted(out)

    def full_topic(self, node: TopicNode) -> Topic:
        return node.topic(related=self.related(node.props["namespace"], node.props["topic_id"]))


# -- time windows and vectors ----------------------------------------------------------------------
def window(since: datetime | None, until: datetime | None) -> tuple[datetime | None, ...]:
    """UTC bounds, refusing an empty window (as ``graph.topic_search._window``)."""
    s = ensure_utc(since, "since") if since is not None else None
    u = ensure_utc(until, "until") if until is not None else None
    if s is not None and u is not None and s > u:
        raise ValidationFailed(
            f"time window is empty: since {s.isoformat()} > until {u.isoformat()}"
        )
    return s, u


def seen_in(props: dict[str, Any], since: datetime | None, until: datetime | None) -> bool:
    """A topic overlaps ``[since, until)``: last seen at or after since, first seen before until."""
    if since is not None and props["last_seen_at"] < since:
        return False
    return until is None or props["first_seen_at"] < until


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Plain cosine in [-1, 1]."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm else 0.0


def similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Neo4j's ``vector.similarity.cosine`` and vector index score: (1 + cosine) / 2."""
    return (1.0 + cosine(a, b)) / 2.0


# -- text ------------------------------------------------------------------------------------------
def query_words(text: str) -> list[str]:
    """The words ``graph.topics.lucene_query`` puts in a query (longer than 1, at most 32)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1][:32]


def content_words(text: str) -> list[str]:
    """``query_words`` without common function words unless all are (the conversation's
    full-text query, ``graph.fulltext.content_words``)."""
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1]
    return ([w for w in words if w not in COMMON_WORDS] or words)[:32]


def standard_terms(text: str) -> list[str]:
    """Lucene's standard analyzer, approximately: lower-cased words."""
    return [w.strip("'") for w in _WORD.findall(text.lower()) if w.strip("'")]


def english_terms(text: str) -> list[str]:
    """Lucene's English analyzer, approximately: possessives dropped, stop words removed,
    suffixes stemmed."""
    out = []
    for word in standard_terms(text):
        word = word.removesuffix("'s").replace("'", "")
        if word and word not in ENGLISH_STOP:
            out.append(light_stem(word))
    return out


def light_stem(word: str) -> str:
    """A few Porter steps (plurals, -ed, -ing, final -y): "painted", "painting" and "paints" all
    give "paint"; "parties" and "party" give "parti"."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies"):
        word = word[:-3] + "i"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        stem = word.removesuffix(suffix)
        if stem != word and any(c in "aeiou" for c in stem) and len(stem) >= 3:
            word = stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] not in "lsz" else stem
            break
    if word.endswith("y") and any(c in "aeiou" for c in word[:-1]):
        word = word[:-1] + "i"
    return word


def within_edits(a: str, b: str, limit: int = 2) -> bool:
    """Levenshtein distance of ``a`` and ``b`` is at most ``limit`` (Lucene's fuzzy ``~``)."""
    if abs(len(a) - len(b)) > limit:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


def term_score(query: Sequence[str], doc: Sequence[str], fuzzy: bool = False) -> float:
    """How many distinct query terms the document holds (fuzzy: within two edits for terms of
    four letters or more, as ``lucene_query`` writes them)."""
    have = set(doc)
    hits = 0
    for term in dict.fromkeys(query):
        if term in have or (fuzzy and len(term) >= 4 and any(within_edits(term, d) for d in have)):
            hits += 1
    return float(hits)
