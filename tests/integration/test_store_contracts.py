"""The fakes of ``tests/fakes/`` against the Neo4j stores: one table of operations, both sides.

Every scenario runs once on the real stores (a fresh namespace of the test database) and once on
the in-memory fakes, and must observe the same: returned models, order, errors, and what a later
read sees. Full-text scores are not compared (Lucene's BM25 against a term count), only which
items come back and, where one item clearly matches more of the query, which comes first. The
last scenarios run the whole sleep pipeline on both sides with the same deterministic embedder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver
from pydantic import BaseModel

from graph.context import ContextStore, TextSearch
from graph.events import EventStore
from graph.models import (
    EdgeType,
    InProgress,
    Message,
    OpenLoop,
    Subject,
    TailTurn,
    Topic,
    TopicEvent,
    WakeCheck,
    WakePacket,
    parse,
)
from graph.sleep import DecayParams, SleepCommit, SleepStore, TopicWrite
from graph.sleep_queue import SleepQueueStore, SleepRun
from graph.suppression import Retention, SessionTurn
from graph.topics import LinkRequest, TextRank, TopicStore
from sleepwake.policy import SleepPolicy
from sleepwake.sleep import Sleeper
from sleepwake.tiers import TIERS
from sleepwake.wake import resume_plan
from tests.conftest import T0
from tests.fakes import FakeStores, HashEmbedder
from tests.integration.stores import CompactingMessageStore
from text.claims import state_token

EMBED = HashEmbedder()


@dataclass
class Side:
    """One implementation of the four stores."""

    name: str
    messages: Any
    topics: Any
    events: Any
    sleep: Any
    queue: Any = None
    context: Any = None


Scenario = Callable[[Side, str, str], Any]


class Near(float):
    """A score that equals another within 0.05: Neo4j 5.26's vector index quantizes vectors
    (int8), so its scores are a little off the exact cosine the fake (and the exact scan) use;
    the order of the hits is compared exactly."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, float) and abs(self - other) <= 0.05

    __hash__ = float.__hash__

    def __repr__(self) -> str:
        return f"~{float(self):.4f}"


@pytest.fixture
def sides(driver: Driver) -> tuple[Side, Side]:
    fake = FakeStores()
    return (
        Side(
            "neo4j",
            CompactingMessageStore(driver),
            TopicStore(driver),
            EventStore(driver),
            SleepStore(driver),
            SleepQueueStore(driver),
            ContextStore(driver),
        ),
        Side("fake", fake.messages, fake.topics, fake.events, fake.sleep, fake.queue, fake.context),
    )


def plain(value: Any) -> Any:
    """A comparable rendering: models as dicts, floats rounded, times in UTC ISO form."""
    if isinstance(value, BaseModel):
        return plain(value.model_dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(plain(v) for v in value)
    if isinstance(value, Near):
        return value
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return value


def outcome(call: Callable[[], Any]) -> Any:
    """The call's result, or the name of the error it raised."""
    try:
        return plain(call())
    except Exception as exc:
        return f"raises {type(exc).__name__}"


def message(ns: str, i: int, text: str, role: str = "user", **extra: Any) -> Message:
    data = {
        "message_id": f"{ns}-m{i}",
        "namespace": ns,
        "role": role,
        "content": text,
        "at": T0 + timedelta(hours=i),
        "token_estimate": len(text) // 4,
        **extra,
    }
    return parse(Message, data)


def topic(ns: str, key: str, name: str, one_liner: str = "", days: int = 0, **extra: Any) -> Topic:
    at = T0 + timedelta(days=days)
    data = {
        "topic_id": f"{ns}-{key}",
        "namespace": ns,
        "name": name,
        "one_liner": one_liner,
        "time": {"first_seen_at": at, "last_seen_at": at},
        **extra,
    }
    return parse(Topic, data)


def seed_topics(s: Side, ns: str, topics: list[Topic], with_vectors: bool = True) -> None:
    vectors = [EMBED.vector(t.semantic_text()) if with_vectors else None for t in topics]
    s.topics.create(topics, vectors, T0)


# -- messages --------------------------------------------------------------------------------------
def append_numbers_each_namespace_from_zero(s: Side, ns: str, other: str) -> Any:
    first = s.messages.append(ns, [message(ns, i, f"turn {i}") for i in range(3)])
    elsewhere = s.messages.append(other, [message(other, 0, "elsewhere")])
    more = s.messages.append(ns, [message(ns, i, f"turn {i}") for i in range(3, 5)])
    return {
        "seqs": [m.seq for m in first + elsewhere + more],
        "tail": plain(s.messages.tail(ns, 10)),
        "last_two": [m.content for m in s.messages.tail(ns, 2)],
        "none": s.messages.tail(ns, 0),
        "empty": s.messages.append(ns, []),
    }


def append_refuses_a_foreign_or_taken_id_and_writes_nothing(s: Side, ns: str, other: str) -> Any:
    s.messages.append(ns, [message(ns, 0, "kept")])
    foreign = [message(ns, 1, "mine"), message(other, 2, "not mine")]
    taken = [message(ns, 3, "new"), message(ns, 0, "same id again")]
    return {
        "foreign": outcome(lambda: s.messages.append(ns, foreign)),
        "taken": outcome(lambda: s.messages.append(ns, taken)),
        "stored": [m.content for m in s.messages.tail(ns, 10)],
        "next_seq": s.messages.append(ns, [message(ns, 4, "after")])[0].seq,
    }


def compaction_leaves_the_buffer_and_keeps_the_message(s: Side, ns: str, other: str) -> Any:
    stored = s.messages.append(ns, [message(ns, i, "x" * (8 * i + 4)) for i in range(4)])
    s.messages.append(other, [message(other, 0, "theirs")])
    ids = [m.message_id for m in stored[:2]] + [f"{other}-m0"]
    return {
        "before": plain(s.messages.buffer_stats(ns)),
        "marked": s.messages.mark_compacted(ns, ids, T0 + timedelta(days=1)),
        "again": s.messages.mark_compacted(ns, ids, T0 + timedelta(days=2)),
        "buffer": [m.seq for m in s.messages.buffer(ns)],
        "first_of_buffer": [m.seq for m in s.messages.buffer(ns, limit=1)],
        "after": plain(s.messages.buffer_stats(ns)),
        "theirs": plain(s.messages.buffer_stats(other)),
        "empty": plain(s.messages.buffer_stats(ns + "-nobody")),
        "kept": plain(s.messages.tail(ns, 10)),
    }


def get_and_range_stay_in_the_namespace_in_seq_order(s: Side, ns: str, other: str) -> Any:
    s.messages.append(ns, [message(ns, i, f"turn {i}") for i in range(5)])
    s.messages.append(other, [message(other, 0, "theirs")])
    ids = [f"{ns}-m3", f"{ns}-m1", "missing", f"{other}-m0"]
    return {
        "get": [m.content for m in s.messages.get(ns, ids)],
        "range": [
            m.content
            for m in s.messages.in_range(ns, T0 + timedelta(hours=1), T0 + timedelta(hours=3))
        ],
        "open_end": [m.content for m in s.messages.in_range(ns, T0 + timedelta(hours=3), None)],
        "open_start": [m.content for m in s.messages.in_range(ns, None, T0 + timedelta(hours=1))],
    }


def the_reads_before_an_append_come_in_one(s: Side, ns: str, other: str) -> Any:
    empty = s.messages.append_state(ns, ["x-1"], 3)
    s.messages.append(
        ns, [message(ns, i, f"turn number {i}", external_id=f"x-{i}") for i in range(5)]
    )
    s.messages.append(other, [message(other, 9, "theirs", external_id="x-2")])
    s.messages.mark_compacted(ns, [f"{ns}-m0", f"{ns}-m1"], T0 + timedelta(days=1))
    state = s.messages.append_state(ns, ["x-2", "x-4", "x-9"], 3)
    alone = (
        s.messages.by_external_id(ns, ["x-2", "x-4", "x-9"]),
        s.messages.newest_at(ns),
        s.messages.buffer_stats(ns),
        s.messages.tail(ns, 3),
    )
    return {
        "empty": plain(empty),
        "state": plain(state),
        "same_as_alone": plain((state.stored, state.newest_at, state.stats, state.tail))
        == plain(alone),
        "no_ids_no_tail": plain(s.messages.append_state(ns, [], 0)),
    }


def source_ids_cite_by_external_id_within_the_namespace(s: Side, ns: str, other: str) -> Any:
    s.messages.append(
        ns, [message(ns, 0, "plain"), message(ns, 1, "imported", external_id="ext-1")]
    )
    s.messages.append(other, [message(other, 0, "theirs", external_id="ext-theirs")])
    ids = [f"{ns}-m1", f"{ns}-m0", "missing", f"{other}-m0", f"{ns}-m1"]
    return {"ids": s.messages.source_ids(ns, ids), "none": s.messages.source_ids(ns, [])}


def message_search_stems_filters_and_ranks(s: Side, ns: str, other: str) -> Any:
    s.messages.append(
        ns,
        [
            message(ns, 0, "I painted the fence green yesterday."),
            message(ns, 1, "Caroline paints landscapes on weekends.", speaker="Caroline"),
            message(ns, 2, "The weather was cold and grey."),
            message(ns, 3, "Painting the green fence took all day, the fence needed two coats."),
        ],
    )
    s.messages.append(other, [message(other, 0, "I painted the shed.")])

    def ids(text: str, **kw: Any) -> list[str]:
        return sorted(h.message.message_id for h in s.messages.search_text(ns, text, **kw))

    window = {"since": T0 + timedelta(hours=1), "until": T0 + timedelta(hours=3)}
    return {
        "stemmed": ids("painting"),
        "speaker": ids("caroline"),
        "window": ids("painting", **window),
        "k": len(s.messages.search_text(ns, "painting", k=2)),
        "stop_words_only": ids("the was"),
        "no_words": ids("!! ?"),
        "best_first": s.messages.search_text(ns, "green fence coats")[0].message.message_id,
        "no_topics_yet": [h.topics for h in s.messages.search_text(ns, "weather")],
    }


# -- topics ----------------------------------------------------------------------------------------
def topics_by_id_in_the_order_asked_with_related(s: Side, ns: str, other: str) -> Any:
    seed_topics(
        s,
        ns,
        [
            topic(ns, "a", "Alpha", "the alpha project"),
            topic(ns, "b", "Beta", "the beta project"),
            topic(ns, "c", "Gamma"),
        ],
    )
    seed_topics(s, other, [topic(other, "x", "Theirs")])
    s.topics.link(
        ns,
        [
            LinkRequest(f"{ns}-a", f"{ns}-b", EdgeType.RELATES_TO, 0.5),
            LinkRequest(f"{ns}-c", f"{ns}-a", EdgeType.DEPENDS_ON),
        ],
        T0,
    )
    asked = [f"{ns}-c", f"{ns}-a", "missing", f"{other}-x", f"{ns}-b"]
    return {
        "get": plain(s.topics.get(ns, asked)),
        "summaries": plain(s.topics.summaries(ns, asked)),
        "no_summaries": s.topics.summaries(ns, []),
        "missing_one": outcome(lambda: s.topics.get_one(ns, f"{other}-x")),
        "duplicate": outcome(lambda: seed_topics(s, ns, [topic(ns, "a", "Again")])),
        "short_vector": outcome(lambda: s.topics.create([topic(ns, "d", "D")], [[0.1] * 3], T0)),
        "self_link": outcome(
            lambda: s.topics.link(ns, [LinkRequest(f"{ns}-a", f"{ns}-a", EdgeType.NEXT)], T0)
        ),
    }


def summaries_carry_the_one_liner_sources_not_the_lists(s: Side, ns: str, other: str) -> Any:
    rich = topic(
        ns,
        "r",
        "Rich",
        "Rich has a fact.",
        facts=[
            {"text": "Rich has a fact.", "source_message_ids": ["m1", "m2"]},
            {"text": "Another fact.", "source_message_ids": ["m3"]},
        ],
        open_loops=[{"text": "Ask about Rich.", "source_message_ids": ["m3"]}],
        numbers=[{"key": "guests", "value": 30, "at": T0, "source_message_ids": ["m1"]}],
    )
    plain_one = topic(ns, "p", "Plain", "Plain has a fact.",
                      facts=[{"text": "Plain has a fact.", "source_message_ids": ["m4"]}])  # fmt: skip
    seed_topics(s, ns, [rich, plain_one])
    return {
        "summary": plain(s.topics.summaries(ns, [rich.topic_id])),
        "whole": plain(s.topics.get(ns, [rich.topic_id])),
        # the context's one read: the best topics whole, the others as summaries, in order
        "mixed": plain(
            s.topics.summaries(ns, [plain_one.topic_id, rich.topic_id], [rich.topic_id])
        ),
    }


def summaries_cite_the_one_liners_and_the_whole_topics_messages(
    s: Side, ns: str, other: str
) -> Any:
    """The context's one read also carries the ids to cite by: the one-liners' sources, and
    every message a whole topic is mentioned in (external id when there is one)."""
    s.messages.append(ns, [message(ns, 0, "plain"), message(ns, 1, "imported", external_id="x-1")])
    s.messages.append(other, [message(other, 0, "theirs", external_id="x-theirs")])
    sources = [f"{ns}-m0", f"{ns}-m1", f"{other}-m0", "missing"]
    cited = topic(ns, "c", "Cited", "Cited has a fact.",
                  facts=[{"text": "Cited has a fact.", "source_message_ids": sources}])  # fmt: skip
    seed_topics(s, ns, [topic(ns, "old", "Old Topic", "was here", days=-20), cited])
    s.sleep.commit(a_commit(ns, existing_version=1))  # n1 is mentioned in m1 (its event's)
    asked = [f"{ns}-n1", f"{ns}-c", f"{ns}-old", "missing", f"{other}-m0"]
    found, ids = s.topics.cited_summaries(ns, asked, [f"{ns}-n1"])
    return {
        "summaries": plain(found) == plain(s.topics.summaries(ns, asked, [f"{ns}-n1"])),
        "ids": ids,
        "only_summaries": s.topics.cited_summaries(ns, [f"{ns}-old"]),
        "none": s.topics.cited_summaries(ns, []),
        # a topic reached only through messages comes as a brief (name, one-liner, first and
        # last seen) with its one-liner's citations; a whole one is never a brief
        "briefs": s.topics.cited_summaries(
            ns, asked, [f"{ns}-n1"], brief_ids=[f"{ns}-c", f"{ns}-n1", "missing"]
        ),
    }


def known_names_are_whole_names_and_aliases(s: Side, ns: str, other: str) -> Any:
    """A name is known only when it is a topic's whole name or alias (quotes, backslashes,
    colons and apostrophes included), however many other topics' names and aliases contain it:
    210 topics named "Lake House <n>", aliased "lake house trip <n>", do not hide the one whose
    31st alias is "lake house" (a phrase lookup read the 200 best-scored containing it)."""
    many = [
        topic(ns, f"m{i}", f"Lake House {i}", aliases=[f"lake house trip {i}"]) for i in range(210)
    ]
    aliases = [f"extra alias {i}" for i in range(30)] + [
        "lake house",
        "c:\\temp",
        "this month's novel",
    ]
    odd = topic(ns, "odd", 'The "Big" One', aliases=aliases)
    seed_topics(s, ns, [*many, odd], with_vectors=False)
    seed_topics(s, other, [topic(other, "q", "Quiet Lake")], with_vectors=False)
    names = ["Lake House", 'the "big" one', "C:\\temp", "this month's novel", "big", "lake",
             "house 3", "lake house 3", "quiet lake", "extra alias"]  # fmt: skip
    return {
        "known": sorted(s.topics.known_names(ns, names)),
        "at_start": sorted(s.context.start(ns, 0, names).known),
        "alone": sorted(s.topics.known_names(ns, ["lake house"])),
        "alone_at_start": sorted(s.context.start(ns, 0, ["lake house"]).known),
    }


def names_aliases_archive_and_use(s: Side, ns: str, other: str) -> Any:
    seed_topics(
        s,
        ns,
        [
            topic(ns, "l", "Lake House", aliases=["the cabin"]),
            topic(ns, "p", "Party Planning", days=1),
            topic(ns, "o", "Old Plan", aliases=["lake house"], days=2),
        ],
    )
    seed_topics(s, other, [topic(other, "q", "Quiet")])
    names = ["LAKE HOUSE", " the cabin ", "party planning", "old plan", "quiet", "nothing", ""]
    before = s.topics.known_names(ns, names)
    archived = s.topics.archive(ns, f"{ns}-o", T0 + timedelta(days=3))
    return {
        "known": before,
        "archived_version": archived,
        "archive_twice": s.topics.archive(ns, f"{ns}-o", T0 + timedelta(days=4)),
        "archive_missing": outcome(lambda: s.topics.archive(ns, f"{other}-q", T0)),
        "known_after": s.topics.known_names(ns, names),
        "alias": [t.topic_id for t in s.topics.find_by_alias(ns, " Lake House ")],
        "alias_all": [t.topic_id for t in s.topics.find_by_alias(ns, "lake house", True)],
        "live": [t.topic_id for t in s.topics.list_live(ns)],
        "marked": s.topics.mark_used(
            ns, [f"{ns}-l", f"{ns}-p", f"{ns}-l", f"{other}-q"], T0 + timedelta(days=5)
        ),
        "used": plain([t.stats for t in s.topics.get(ns, [f"{ns}-l", f"{ns}-p"])]),
        "theirs": plain(s.topics.get(other, [f"{other}-q"])[0].stats),
        "none": s.topics.mark_used(ns, [], T0),
    }


def full_text_search_of_topics(s: Side, ns: str, other: str) -> Any:
    seed_topics(
        s,
        ns,
        [
            topic(ns, "lake", "Lake House", "The lake house by the pines.", aliases=["the cabin"]),
            topic(
                ns,
                "bill",
                "Billing Migration",
                "Moving billing to Postgres.",
                days=10,
                aliases=["payments move"],
            ),
            topic(ns, "rome", "Roman Aqueducts", "A book about aqueducts.", days=20),
            topic(ns, "gone", "Lake Trip", "A lake trip that was cancelled.", days=5),
        ],
    )
    seed_topics(s, other, [topic(other, "lake", "Lake Other", "Another lake.")])
    s.topics.archive(ns, f"{ns}-gone", T0)

    def ids(text: str, **kw: Any) -> list[str]:
        return sorted(h.topic.topic_id for h in s.topics.search_text(ns, text, **kw))

    return {
        "name": ids("lake", fuzzy=False),
        "alias": ids("payments", fuzzy=False),
        "one_liner": ids("postgres", fuzzy=False),
        "typo_fuzzy": ids("biling", fuzzy=True),
        "typo_exact": ids("biling", fuzzy=False),
        "window": ids(
            "lake billing aqueducts", since=T0 + timedelta(days=5), until=T0 + timedelta(days=15)
        ),
        "best_first": s.topics.search_text(ns, "billing postgres lake")[0].topic.topic_id,
        # "the" finds the lake house too, but only "billing" is a content word
        "content": {
            h.topic.topic_id.removeprefix(f"{ns}-"): (h.score > 0, (h.content_score or 0) > 0)
            for h in s.topics.search_text(ns, "how is the billing", fuzzy=False)
        },
        "light": plain(s.topics.search_text(ns, "lake", light=True)[0].topic.facts),
        "source": {h.source for h in s.topics.search_text(ns, "lake")},
        "empty": outcome(lambda: s.topics.search_text(ns, "x")),
        "bad_window": outcome(
            lambda: s.topics.search_text(ns, "lake", since=T0, until=T0 - timedelta(days=1))
        ),
    }


def vector_search_of_topics(s: Side, ns: str, other: str) -> Any:
    texts = [
        "planning the surprise party at the lake",
        "billing migration to postgres",
        "a book about roman aqueducts",
        "the lake house needs new windows",
    ]
    topics = [topic(ns, f"t{i}", f"Topic {i}", text, days=5 * i) for i, text in enumerate(texts)]
    seed_topics(s, ns, topics)
    seed_topics(s, ns, [topic(ns, "novec", "No Vector", texts[0])], with_vectors=False)
    seed_topics(s, other, [topic(other, "t0", "Theirs", texts[0])])
    query = EMBED.vector("party at the lake house")

    def hits(**kw: Any) -> list[Any]:
        return [
            # "vector" (index) or "vector-scan" (exact, chosen when the namespace is a small share
            # of a large index): the store's plan depends on the database, the hits must not.
            (h.topic.topic_id, Near(h.score), h.source.split("-")[0])
            for h in s.topics.search_vector(ns, query, **kw)
        ]

    everything = hits(k=10)
    s.topics.archive(ns, f"{ns}-t3", T0)
    return {
        "all": everything,
        "k": hits(k=2),
        "window": hits(k=10, since=T0 + timedelta(days=4), until=T0 + timedelta(days=11)),
        "until_only": hits(k=10, until=T0 + timedelta(days=6)),
        "archived": hits(k=10),
        "light": plain(s.topics.search_vector(ns, query, light=True)[0].topic.facts),
        "bad_vector": outcome(lambda: s.topics.search_vector(ns, [0.0] * 384)),
        "reading": reading(s, ns, other, query),
    }


def reading(s: Side, ns: str, other: str, query: list[float]) -> Any:
    """``search_vector_reading``: the hits of ``search_vector`` and, in the same read, the
    topics asked by id that are not among them, in the order asked and as ``ranked_topics``
    (``get_topics_by_id``) reads them; another namespace's and unknown ids left out."""
    asked = [f"{ns}-t2", f"{ns}-t0", f"{other}-t0", f"{ns}-novec", "nope", f"{ns}-t3"]
    out = {}
    for light in (True, False):
        hits, read = s.topics.search_vector_reading(ns, query, k=2, light=light, topic_ids=asked)
        alone = s.topics.search_vector(ns, query, k=2, light=light)
        ranks = [TextRank(t, 1.0) for t in asked]
        out[light] = {
            "read": [t.topic_id for t in read],
            "hits_as_alone": plain(hits) == plain(alone),
            "as_by_id": plain(s.topics.ranked_topics(ns, ranks, light=light))
            == plain(s.topics.ranked_topics(ns, ranks, light, [h.topic for h in hits] + read)),
            "none_asked": plain(s.topics.search_vector_reading(ns, query, k=2, light=light)[1]),
        }
    return out


def neighbours_strongest_first_per_seed(s: Side, ns: str, other: str) -> Any:
    seed_topics(s, ns, [topic(ns, k, k.upper()) for k in ("a", "b", "c", "d", "e")])
    s.topics.link(
        ns,
        [
            LinkRequest(f"{ns}-a", f"{ns}-b", EdgeType.RELATES_TO, 0.5),
            LinkRequest(f"{ns}-c", f"{ns}-a", EdgeType.DEPENDS_ON, 2.0),
            LinkRequest(f"{ns}-a", f"{ns}-d", EdgeType.NEXT, 1.0),
            LinkRequest(f"{ns}-d", f"{ns}-a", EdgeType.PREV, 1.5),
            LinkRequest(f"{ns}-a", f"{ns}-e", EdgeType.RELATES_TO, 3.0),
            LinkRequest(f"{ns}-a", f"{ns}-b", EdgeType.RELATES_TO, 0.25),
        ],
        T0,
    )
    s.topics.archive(ns, f"{ns}-e", T0)

    def around(ids: list[str], **kw: Any) -> list[Any]:
        return [
            (n.seed_id, n.topic.topic_id, n.type.value, n.weight, n.outgoing)
            for n in s.topics.neighbours(ns, ids, **kw)
        ]

    return {
        "all": around([f"{ns}-a"]),
        "typed": around([f"{ns}-a"], types=["depends_on", EdgeType.RELATES_TO]),
        "limited": around([f"{ns}-a"], limit_per_seed=2),
        "two_seeds": sorted(around([f"{ns}-b", f"{ns}-c"])),
        "edges": sorted(
            (e.from_topic_id, e.to_topic_id, e.type.value, e.weight)
            for e in s.topics.edges(ns, f"{ns}-a")
        ),
        "other_namespace": s.topics.neighbours(other, [f"{ns}-a"]),
        "bad_type": outcome(lambda: s.topics.neighbours(ns, [f"{ns}-a"], types=["LIKES"])),
    }


# -- events ----------------------------------------------------------------------------------------
def neighbours_of_equal_weight_by_name(s: Side, ns: str, other: str) -> Any:
    """Equal weights by the neighbour's name (then id, type, direction), whatever order the
    edges were written in: the store's own order of a node's relationships follows where
    its records were allocated, which another tenant's writes move (issue #33)."""
    names = {"x": "Seed X", "y": "Seed Y", "amy": "Amy", "zed": "Zed", "bea": "Bea"}
    seed_topics(s, ns, [topic(ns, k, name) for k, name in names.items()])
    edges = [("x", "zed"), ("x", "amy"), ("y", "amy"), ("y", "zed")]  # opposite orders
    s.topics.link(
        ns,
        [LinkRequest(f"{ns}-{a}", f"{ns}-{b}", EdgeType.RELATES_TO, 1.0) for a, b in edges]
        + [
            LinkRequest(f"{ns}-x", f"{ns}-bea", EdgeType.NEXT, 1.0),
            LinkRequest(f"{ns}-bea", f"{ns}-x", EdgeType.PREV, 1.0),
        ],
        T0,
    )
    return {
        seed: [
            (n.topic.name, n.type.value, n.outgoing)
            for n in s.topics.neighbours(ns, [f"{ns}-{seed}"])
        ]
        for seed in ("x", "y")
    }


def event(ns: str, key: str, topic_key: str, hours: int) -> TopicEvent:
    return TopicEvent(
        event_id=f"{ns}-{key}",
        namespace=ns,
        topic_id=f"{ns}-{topic_key}",
        at=T0 + timedelta(hours=hours),
        delta_summary=f"event {key}",
        source_message_ids=[f"{ns}-m{hours}"],
    )


def events_by_window_and_topic(s: Side, ns: str, other: str) -> Any:
    seed_topics(s, ns, [topic(ns, "a", "A"), topic(ns, "b", "B")])
    seed_topics(s, other, [topic(other, "a", "Theirs")])
    s.events.record(ns, [event(ns, "e3", "a", 3), event(ns, "e1", "b", 1), event(ns, "e2", "a", 2)])
    s.events.record(other, [event(other, "e1", "a", 1)])
    first = event(ns, "e1", "a", 9)  # the same id again: the first write stands
    return {
        "again": s.events.record(ns, [first]),
        "window": [
            e.event_id
            for e in s.events.in_window(ns, T0 + timedelta(hours=1), T0 + timedelta(hours=3))
        ],
        "open": plain(s.events.in_window(ns, None, None)),
        "limit": [e.event_id for e in s.events.in_window(ns, None, None, limit=1)],
        "topic_ids": sorted(
            s.events.topic_ids_in_window(ns, T0 + timedelta(hours=2), T0 + timedelta(hours=4))
        ),
        "topic_ids_open": sorted(s.events.topic_ids_in_window(ns, None, None)),
        "topic_ids_limit": len(s.events.topic_ids_in_window(ns, None, None, limit=1)),
        "topic": [e.event_id for e in s.events.for_topics(ns, [f"{ns}-a"])],
        "missing_topic": outcome(
            lambda: s.events.record(ns, [event(ns, "e4", "b", 4), event(ns, "e5", "zz", 5)])
        ),
        "after_missing": [e.event_id for e in s.events.in_window(ns, None, None)],
        "foreign": outcome(lambda: s.events.record(ns, [event(other, "e9", "a", 1)])),
    }


# -- sleep -----------------------------------------------------------------------------------------
def the_lease_admits_one_holder_until_it_expires(s: Side, ns: str, other: str) -> Any:
    t = T0

    def take(holder: str, at: datetime, minutes: int = 15) -> str:
        return (
            outcome(lambda: s.sleep.acquire_lease(ns, holder, at, at + timedelta(minutes=minutes)))
            or "ok"
        )

    return [
        take("one", t),
        take("two", t + timedelta(minutes=5)),
        take("one", t + timedelta(minutes=6)),  # the holder may renew
        outcome(lambda: s.sleep.acquire_lease(other, "two", t, t + timedelta(minutes=15))) or "ok",
        outcome(lambda: s.sleep.release_lease(ns, "two")) or "ok",  # not the holder: no effect
        take("two", t + timedelta(minutes=7)),
        take("two", t + timedelta(minutes=22)),  # one's lease ended at 21
        outcome(lambda: s.sleep.release_lease(ns, "two")) or "ok",
        take("three", t + timedelta(minutes=23)),
        s.sleep.renew_lease(ns, "three", t + timedelta(minutes=60)),  # the heartbeat
        s.sleep.renew_lease(ns, "two", t + timedelta(minutes=60)),  # not the holder: False
        take("four", t + timedelta(minutes=50)),  # renewed to 60: still three's
        take("four", t + timedelta(minutes=61)),
        s.sleep.renew_lease(ns, "three", t + timedelta(minutes=90)),  # taken over: False
    ]


def a_wake_is_claimed_once_per_sleep_or_silence(s: Side, ns: str, other: str) -> Any:
    t = T0
    hour = timedelta(hours=1)

    def claim(at: datetime, **check: Any) -> Any:
        state = s.sleep.claim_wake(ns, at, WakeCheck(silent_before=at - 6 * hour, **check))
        return state and (state.reason, state.woke_at, state.previous_woke_at)

    return [
        claim(t, last_turn_at=t - hour),  # no packet, a recent turn: nothing to wake from
        s.sleep.wake_state(ns),
        claim(t, packet_id="p1", slept_at=t - hour),  # a sleep: wake once
        claim(t + hour, packet_id="p1", slept_at=t - hour),  # the same packet: not again
        claim(t + 2 * hour, packet_id="p2", slept_at=t - 2 * hour),  # older than the wake
        claim(t + 3 * hour, packet_id="p2", slept_at=t - 2 * hour, last_turn_at=t + hour),
        claim(t + 9 * hour, packet_id="p2", slept_at=t - 2 * hour, last_turn_at=t + hour),
        claim(t + 10 * hour, packet_id="p2", slept_at=t - 2 * hour, last_turn_at=t + hour),
        claim(t + 11 * hour, packet_id="p3", slept_at=t + 10 * hour),  # the next sleep
        claim(t + 12 * hour, force=True),  # explicit: always
        s.sleep.wake_state(ns),
        s.sleep.wake_state(other),
        *released(s, ns, t + 13 * hour),
    ]


def released(s: Side, ns: str, at: datetime) -> list[Any]:
    """A claim given back (its turn failed) restores the wake before it; a stale release (a
    later wake replaced the claim) changes nothing."""
    due = WakeCheck(packet_id="p4", slept_at=at)
    first = s.sleep.claim_wake(ns, at, due)
    assert first is not None
    s.sleep.release_wake(ns, first)
    after_release = s.sleep.wake_state(ns)
    again = s.sleep.claim_wake(ns, at + timedelta(minutes=1), due)  # due again: p4 not woken on
    s.sleep.release_wake(ns, first)  # stale: no effect
    return [first, after_release, again, s.sleep.wake_state(ns)]


def the_sleep_queue_claims_retries_and_records_runs(s: Side, ns: str, other: str) -> Any:
    """Due marks, claims (one holder at a time, none before retry_at), done vs marked again
    while sleeping, and the run records (abandoned when another holder starts, paged)."""
    q, t = s.queue, T0
    m = timedelta(minutes=1)

    def claim(holder: str, at: int, namespace: str = ns) -> Any:
        return q.claim(holder, t + at * m, t + (at + 1) * m, f"{ns}-{holder}", namespace)

    out: list[Any] = [
        q.mark_due(ns, t + 60 * m, "budget", t, f"{ns}-a"),
        q.mark_due(ns, t + 30 * m, "idle", t + m, f"{ns}-b"),  # a is still the promised run
    ]
    first = claim("h1", 2)
    out += [first, claim("h2", 2), claim("h2", 2, other), q.finish(first, retry_at=t + 10 * m)]
    out += [claim("h2", 5)]  # before retry_at: nothing
    second = claim("h2", 10)
    out += [second, q.mark_due(ns, t + 90 * m, "budget", t + 10 * m, f"{ns}-z")]
    out += [q.finish(second), q.finish(second)]  # the second time: not the holder any more
    third = claim("h3", 12)  # marked again while it slept: due still
    out += [third, q.finish(third), claim("h4", 14)]
    for i, holder in enumerate(["h1", "h2"]):
        q.start_run(SleepRun(run_id=f"{ns}-r{i}", namespace=ns, reason="budget", holder=holder,
                             started_at=t + i * m))  # fmt: skip
    done = q.get_run(ns, f"{ns}-r1")
    done.outcome, done.finished_at, done.step_ms = "done", t + 2 * m, {"slice": 1.5}
    q.finish_run(done)
    runs = q.list_runs(ns, 10)
    out += [runs, q.list_runs(ns, 1, runs[0]), q.get_run(other, f"{ns}-r0"), q.list_runs(other)]
    return out


def match_pool_nearest_and_named(s: Side, ns: str, other: str) -> Any:
    seed_topics(
        s,
        ns,
        [
            topic(ns, "party", "Party", "planning the surprise party", aliases=["do"]),
            topic(ns, "bill", "Billing", "billing migration to postgres"),
            topic(ns, "rome", "Rome", "a book about roman aqueducts"),
            topic(ns, "gone", "Party Old", "planning the surprise party"),
        ],
    )
    seed_topics(s, ns, [topic(ns, "novec", "Lake House")], with_vectors=False)
    seed_topics(s, other, [topic(other, "party", "Party", "planning the surprise party")])
    s.topics.archive(ns, f"{ns}-gone", T0)
    # No two topics tie on cosine for a row: the top k of a tie is the index's choice, not a contract.
    rows = [
        {"idx": 0, "vector": EMBED.vector("the surprise party book"), "names": ["party"]},
        {"idx": 1, "vector": EMBED.vector("postgres billing party"), "names": ["lake house", "do"]},
    ]
    hits = s.sleep.match_pool(ns, rows, k=2)
    return {
        "hits": sorted((h.idx, h.fields.topic_id, round(h.cosine, 4)) for h in hits),
        "fields": sorted({h.fields.topic_id: plain(h.fields) for h in hits}.items()),
        "none": s.sleep.match_pool(ns, []),
        "rows_annotated": sorted(rows[1]),
    }


def theme_names_of_the_speakers_live_topics(s: Side, ns: str, other: str) -> Any:
    seed_topics(
        s,
        ns,
        [
            topic(ns, "dog", "Audrey's dog", "her dogs"),
            topic(ns, "hike", "Hiking trip", "a hike", aliases=["Audrey's hike", "Andrew's trail"]),
            topic(ns, "old", "Audrey's pup", "her puppy"),
            topic(ns, "job", "Andrew's job", "his job", aliases=["Toby (Andrew's dog)"]),
        ],
    )
    seed_topics(s, other, [topic(other, "cat", "Audrey's cat", "a cat")])
    s.topics.archive(ns, f"{ns}-old", T0)
    return {
        "audrey": s.sleep.theme_names(ns, ["Audrey's "]),
        "both": s.sleep.theme_names(ns, ["audrey's ", "andrew's "]),
        "limited": s.sleep.theme_names(ns, ["audrey's ", "andrew's "], limit=2),
        "none": s.sleep.theme_names(ns, []),
        "elsewhere": s.sleep.theme_names(other, ["audrey's "]),
    }


def sleep_reads_are_the_pool_and_the_top_topics(s: Side, ns: str, other: str) -> Any:
    seed_topics(
        s,
        ns,
        [
            topic(
                ns, "party", "Party", "planning the surprise party", stats={"utility_score": 3.0}
            ),
            topic(ns, "bill", "Billing", "billing migration to postgres"),
            topic(ns, "rome", "Rome", "a book about roman aqueducts", stats={"utility_score": 2.0}),
        ],
    )
    seed_topics(s, other, [topic(other, "party", "Party", "planning the surprise party")])

    def rows() -> list[dict[str, Any]]:
        return [{"idx": 0, "vector": EMBED.vector("the surprise party book"), "names": ["rome"]}]

    reads = s.sleep.sleep_reads(ns, rows(), k=2, top=2)
    hits = sorted((h.idx, h.fields.topic_id, round(h.cosine, 4)) for h in reads.hits)
    alone = sorted(
        (h.idx, h.fields.topic_id, round(h.cosine, 4)) for h in s.sleep.match_pool(ns, rows(), k=2)
    )
    empty = s.sleep.sleep_reads(ns, [], top=5)
    return {
        "hits": hits,
        "same_as_match_pool": hits == alone,
        "top": plain(reads.top),
        "same_as_top_scores": reads.top == s.sleep.top_topic_scores(ns, 2),
        "no_rows": (empty.hits, [t for t, _, _ in empty.top]),
    }


def stored_vectors_by_id_within_the_namespace(s: Side, ns: str, other: str) -> Any:
    """``SleepStore.topic_vectors``: what a sleep blends a changed topic's vector from."""
    seed_topics(s, ns, [topic(ns, "party", "Party", "planning the surprise party")])
    seed_topics(s, ns, [topic(ns, "novec", "Lake House")], with_vectors=False)
    seed_topics(s, other, [topic(other, "bill", "Billing", "billing migration")])
    ids = [f"{ns}-party", f"{ns}-novec", f"{other}-bill", f"{ns}-missing"]
    found = s.sleep.topic_vectors(ns, ids)
    return {
        "ids": sorted(found),
        "as_stored": found.get(f"{ns}-party")
        == pytest.approx(EMBED.vector("Party: planning the surprise party")),
        "none": s.sleep.topic_vectors(ns, []),
    }


def topics_holding_a_state_within_the_namespace(s: Side, ns: str, other: str) -> Any:
    """``state_topics``: the topics whose facts hold a state now (``s``) or once (``p``), the
    most recently seen first, in the caller's namespace only, archived ones left out."""

    def fact(text: str, days: int, **extra: Any) -> dict[str, Any]:
        return {"text": text, "at": T0 + timedelta(days=days), "source_message_ids": ["m"],
                **extra}  # fmt: skip

    closed = fact("I live in Boston.", 0, invalid_at=T0 + timedelta(days=5), superseded_by="f-x")
    seed_topics(s, ns, [
        topic(ns, "podcast", "Podcast", days=0, facts=[closed, fact("Try 99% Invisible.", 0)]),
        topic(ns, "move", "Move", days=6, facts=[fact("I moved to Denver.", 6)]),
        topic(ns, "sister", "Sister", days=7, facts=[fact("My sister moved to Denver.", 7)]),
        topic(ns, "gone", "Gone", days=8, facts=[fact("I moved to Austin.", 8)]),
    ])  # fmt: skip
    seed_topics(s, other, [topic(other, "move", "Move", facts=[fact("I moved to Denver.", 1)])])
    s.topics.archive(ns, f"{ns}-gone", T0 + timedelta(days=9))
    key = ("", "self", "residence")
    now, once = state_token(key), state_token(key, past=True)
    return {
        "now": s.topics.state_topics(ns, [now]),
        "now_and_once": s.sleep.state_topics(ns, [now, once]),
        "sister": [
            t for t, _ in s.topics.state_topics(ns, [state_token(("", "sister", "residence"))])
        ],
        "limited": [t for t, _ in s.topics.state_topics(ns, [now, once], limit=1)],
        "none": s.topics.state_topics(ns, []),
    }


def a_commit_gives_its_lease_back_only_when_it_commits(s: Side, ns: str, other: str) -> Any:
    s.messages.append(ns, [message(ns, i, f"first new turn {i}") for i in range(3)])
    seed_topics(s, ns, [topic(ns, "old", "Old Topic", "was here", days=-20)])
    t = T0 + timedelta(days=2)
    s.sleep.acquire_lease(ns, "me", t, t + timedelta(minutes=10))

    def plan(version: int, holder: str) -> SleepCommit:
        commit = a_commit(ns, existing_version=version)
        commit.lease_holder, commit.release_lease = holder, True
        return commit

    def take(holder: str) -> str:
        return (
            outcome(lambda: s.sleep.acquire_lease(ns, holder, t, t + timedelta(minutes=10))) or "ok"
        )

    return [
        outcome(lambda: s.sleep.commit(plan(7, "me"))),  # stale: nothing written, lease kept
        take("two"),
        outcome(lambda: s.sleep.commit(plan(1, "two"))),  # not the holder: refused
        len(s.messages.buffer(ns)),
        outcome(lambda: s.sleep.commit(plan(1, "me"))) or "ok",
        len(s.messages.buffer(ns)),
        take("two"),  # given back in the commit
    ]


def a_commit(ns: str, existing_version: int) -> SleepCommit:
    now = T0 + timedelta(days=2)
    old = topic(ns, "old", "Old Topic", "was here", days=-20)
    old.one_liner, old.version = "was here and changed", existing_version
    created = [
        topic(
            ns,
            "n1",
            "New One",
            "first new",
            days=1,
            stats={"utility_score": 2.0},
            open_loops=[OpenLoop(text="Still open.", source_message_ids=[f"{ns}-m1"])],
        ),
        topic(ns, "n2", "New Two", "second new", days=1, stats={"utility_score": 5.0}),
    ]
    return SleepCommit(
        namespace=ns,
        now=now,
        topics=[TopicWrite(t, EMBED.vector(t.one_liner), None) for t in created]
        + [TopicWrite(old, EMBED.vector(old.one_liner), existing_version)],
        events=[
            (event(ns, "ev1", "n1", 1), EMBED.vector("first new")),
            (event(ns, "ev0", "old", 0), None),
        ],
        links=[
            LinkRequest(f"{ns}-n1", f"{ns}-n2", EdgeType.RELATES_TO, 0.5),
            LinkRequest(f"{ns}-n1", f"{ns}-n2", EdgeType.RELATES_TO, 0.5),
            LinkRequest(f"{ns}-n2", f"{ns}-old", EdgeType.NEXT, 1.0),
        ],
        subjects=[
            Subject(
                subject_id=f"{ns}-s1",
                namespace=ns,
                label="new things",
                salience=1.0,
                created_at=now,
                expires_at=now + timedelta(days=7),
                topic_ids=[f"{ns}-n1", f"{ns}-n2"],
            )
        ],
        wake_packet=WakePacket(
            packet_id=f"{ns}-w1",
            namespace=ns,
            slept_at=now,
            conversation_tail=[TailTurn(role="user", content="bye", at=now)],
            top_topic_ids=[f"{ns}-n1"],
            in_progress=InProgress(status="running", resume_hint="do it"),
        ),
        compacted_message_ids=[f"{ns}-m0", f"{ns}-m1"],
        decay=DecayParams(
            TIERS.decay_min_hours,
            TIERS.decay_per_day,
            TIERS.hot_days,
            TIERS.warm_days,
            TIERS.hot_utility,
            TIERS.warm_utility,
        ),
    )


def a_commit_writes_everything_or_nothing(s: Side, ns: str, other: str) -> Any:
    s.messages.append(ns, [message(ns, i, f"first new turn {i}") for i in range(3)])
    old = topic(ns, "old", "Old Topic", "was here", days=-20, stats={"utility_score": 8.0})
    seed_topics(s, ns, [old])
    stale = outcome(lambda: s.sleep.commit(a_commit(ns, existing_version=7)))
    after_stale = {
        "buffer": len(s.messages.buffer(ns)),
        "packets": s.sleep.wake_packets(ns),
        "topics": [t.topic_id for t in s.topics.list_live(ns)],
    }
    s.sleep.commit(a_commit(ns, existing_version=1))
    ids = [f"{ns}-n1", f"{ns}-n2", f"{ns}-old"]
    return {
        "stale": stale,
        "after_stale": plain(after_stale),
        "topics": plain(s.sleep.get_topics(ns, ids)),
        "scores": plain(s.sleep.top_topic_scores(ns)),
        "events": [e.event_id for e in s.events.for_topics(ns, ids)],
        "edges": sorted(
            (e.from_topic_id, e.to_topic_id, e.type.value, e.weight)
            for e in s.topics.edges(ns, f"{ns}-n2")
        ),
        "packets": plain(s.sleep.wake_packets(ns)),
        "buffer": [m.message_id for m in s.messages.buffer(ns)],
        "mentions": sorted(
            (h.message.message_id, h.topics) for h in s.messages.search_text(ns, "turn")
        ),
        "vector": [
            h.topic.topic_id for h in s.topics.search_vector(ns, EMBED.vector("first new"), k=1)
        ],
    }


def participants_are_found_by_name(s: Side, ns: str, other: str) -> Any:
    """``MessageStore.speakers_named``: which phrases name a speaker of this namespace's
    messages (case and spaces aside), never another namespace's."""
    s.messages.append(
        ns,
        [
            message(ns, 0, "I went to the support group.", speaker="Caroline"),
            message(ns, 1, "That's great!", speaker=" Melanie "),
            message(ns, 2, "Agent answer.", role="assistant"),
        ],
    )
    s.messages.append(other, [message(other, 0, "hello", speaker="Gina")])
    names = ["CAROLINE", "melanie", " Gina", "support group", "", "caroline"]
    return {
        "named": s.messages.speakers_named(ns, names),
        "theirs": s.messages.speakers_named(other, names),
        "none": s.messages.speakers_named(ns, []),
        "round_trip": [m.speaker for m in s.messages.tail(ns, 3)],
    }


def the_reads_before_a_search_come_in_one(s: Side, ns: str, other: str) -> Any:
    """``ContextStore.start``: the tail, the sleep history and the known names (topics and
    participants), as the separate reads give them (before anything is stored, after a sleep,
    after a wake)."""
    names = ["New One", " old topic ", "new two", "gone", "nothing", "", "Anna", "bo"]
    empty = s.context.start(ns, 3, names)
    s.messages.append(
        ns, [message(ns, i, f"turn {i}", speaker="Anna" if i else None) for i in range(5)]
    )
    s.messages.append(other, [message(other, 0, "elsewhere", speaker="Bo")])
    seed_topics(s, ns, [topic(ns, "old", "Old Topic", "was here", days=-20)])
    seed_topics(s, ns, [topic(ns, "g", "Gone", days=-5)])
    seed_topics(s, other, [topic(other, "x", "Nothing")])
    s.topics.archive(ns, f"{ns}-g", T0)
    s.sleep.commit(a_commit(ns, existing_version=1))
    slept = s.context.start(ns, 3, names)
    woke_at = T0 + timedelta(days=3)
    check = WakeCheck(packet_id=f"{ns}-w1", slept_at=T0 + timedelta(days=2), silent_before=T0)
    s.sleep.claim_wake(ns, woke_at, check)
    woke = s.context.start(ns, 2, names)
    return {
        "empty": empty,
        "slept": slept,
        "woke": woke,
        "same_tail": [m.message_id for m in woke.tail]
        == [m.message_id for m in s.messages.tail(ns, 2)],
        "same_known": woke.known == s.topics.known_names(ns, names),
        "same_speakers": woke.speakers == s.messages.speakers_named(ns, names) == {"anna"},
        "people": s.context.start(ns, 1, names, [" ANNA", "bo", "turn"]).speakers,
        "no_tail": s.context.start(ns, 0, []),
        "other": s.context.start(other, 3, names),
    }


def the_text_searches_of_a_context_come_in_one(s: Side, ns: str, other: str) -> Any:
    """``ContextStore.search_texts``: the conversation's matches and the topics' full-text
    candidates (with a window, the window's own matches and the topics with an event in it)
    exactly as the stores' own searches give them (hits, scores, order, the topics read by
    id): open, windowed, and with nothing to search for on either side."""
    s.messages.append(
        ns,
        [
            message(ns, 0, "We drove to the lake house for the weekend."),
            message(ns, 1, "Billing moves to Postgres next month.", speaker="Anna"),
            message(ns, 2, "The lake was cold, the cabin warm."),
        ],
    )
    s.messages.append(other, [message(other, 0, "Another lake entirely.")])
    seed_topics(
        s,
        ns,
        [
            topic(ns, "lake", "Lake House", "The lake house by the pines.", aliases=["cabin"]),
            topic(ns, "bill", "Billing Migration", "Moving billing to Postgres.", days=10),
            topic(ns, "trip", "Lake Trip", "A lake trip in the spring.", days=5),
        ],
    )
    seed_topics(s, other, [topic(other, "lake", "Lake Other", "Another lake.")])
    s.events.record(ns, [event(ns, "e1", "lake", 30), event(ns, "e2", "bill", 300)])
    s.events.record(other, [event(other, "e1", "lake", 30)])
    day = timedelta(days=1)
    window = (TextSearch("lake billing", 2, T0 + timedelta(hours=1), T0 + 3 * day),)
    cases = {
        "open": (TextSearch("lake cabin", 5), TextSearch("lake cabin", 12)),
        "windowed": (
            TextSearch("lake billing", 2, None, T0 + timedelta(hours=2)),
            TextSearch("lake billing", 12, T0 + day, T0 + 11 * day),
            *window,
        ),
        "open_sided": (
            TextSearch("lake", 2),
            TextSearch("lake", 12, None, T0 + 6 * day),
            TextSearch("lake", 2, None, T0 + 6 * day),
        ),
        "no_message_words": (TextSearch("the was", 5), TextSearch("lake", 12)),
        "no_topic_words": (TextSearch("lake", 5), TextSearch("!! ?", 12), *window),
    }
    out = {}
    for name, (said, named, *within) in cases.items():
        got = s.context.search_texts(ns, said, named, *within)
        alone = [
            s.messages.search_text(ns, said.text, said.k, said.since, said.until),
            s.topics.search_text(
                ns, named.text, named.k, named.since, named.until, fuzzy=False, light=True
            ),
            [],
            set(),
        ]
        for w in within:
            alone[2] = s.messages.search_text(ns, w.text, w.k, w.since, w.until)
            alone[3] = s.events.topic_ids_in_window(ns, named.since, named.until)
        # the topics ranked, not read: the ranking's topics read by id are the topics read
        unread = s.context.search_texts(ns, said, named, *within, read_topics=False)
        ranks = unread.topic_ranks or []
        out[name] = {
            "ranks": sorted(r.topic_id for r in ranks),  # the fake scores otherwise
            "unread": plain(unread.topics),
            "ranked_as_read": plain(s.topics.ranked_topics(ns, ranks, light=True))
            == plain(got.topics),
            "evidence_alike": plain(unread.evidence) == plain(got.evidence)
            and plain(unread.windowed) == plain(got.windowed),
            "messages": sorted(h.message.message_id for h in got.evidence),
            "topics": sorted(h.topic.topic_id for h in got.topics),
            "windowed": sorted(h.message.message_id for h in got.windowed),
            "event_topics": got.event_topic_ids,
            "as_alone": plain(got) == plain(dict(zip(
                ("evidence", "topics", "windowed", "event_topic_ids"), alone, strict=True
            ))),
        }  # fmt: skip
    return out


def the_writes_after_packing_come_in_one(s: Side, ns: str, other: str) -> Any:
    """``ContextStore.finish``: the topics used marked as ``mark_used`` marks them, the session's
    turn counted as ``SuppressionStore.record`` counts it (a session's second turn, a request
    without a session, nothing used)."""
    seed_topics(s, ns, [topic(ns, "a", "A"), topic(ns, "b", "B"), topic(ns, "c", "C")])
    keep = Retention(5, timedelta(minutes=15), timedelta(hours=24), 256)
    first, later = T0 + timedelta(days=1), T0 + timedelta(days=1, minutes=1)
    s.context.finish(ns, [f"{ns}-a", f"{ns}-b"], first, SessionTurn("s1", 0.6, "fp", keep))
    s.context.finish(ns, [f"{ns}-a"], later, SessionTurn("s1", 0.8, "fp2", keep))
    s.context.finish(ns, [f"{ns}-c"], later, None)
    s.context.finish(ns, [], later, SessionTurn("s2", 0.5, "fp", keep))
    stats = {t.topic_id: t.stats for t in s.topics.get(ns, [f"{ns}-{k}" for k in "abc"])}
    return {
        "usage": {tid: (st.usage_count, st.last_used_at) for tid, st in stats.items()},
        "s1": s.context.suppression.load(ns, "s1", later),
        "s2": s.context.suppression.load(ns, "s2", later),
        "elsewhere": s.context.suppression.load(other, "s1", later),
    }


PLANNING = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday with Anna."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. We still need to book the caterer."),
    ("user", "Never use plastic plates, we prefer real dishes."),
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "The billing migration depends on the schema review."),
    ("user", "We're halfway through migrating the billing tables; next step is the invoices."),
    ("assistant", "Understood."),
    ("user", "Let's pause here."),
    ("assistant", "Sure, talk later."),
]
LATER = [
    ("user", "Quick update on the billing migration: the invoices table is done."),
    ("user", "The caterer for the lake house party is Rosa's Kitchen."),
    ("assistant", "Great."),
    ("user", "ok"),
    ("assistant", "ok"),
]


def sleep_twice(s: Side, ns: str, other: str) -> Any:
    """The whole pipeline: two sessions, two sleeps (create, then merge, update and decay)."""
    policy = SleepPolicy(tail_turns=3)
    sleeper = Sleeper(s.messages, s.sleep, HashEmbedder(), policy)
    out = []
    for day, turns in ((0, PLANNING), (3, LATER)):
        at = T0 + timedelta(days=day)
        s.messages.append(
            ns,
            [
                message(ns, 100 * day + i, text, role, at=at + timedelta(minutes=i))
                for i, (role, text) in enumerate(turns)
            ],
        )
        summary = sleeper.sleep(ns, at + timedelta(hours=2))
        packet = s.sleep.wake_packets(ns, limit=1)[0]
        resume = resume_plan(packet, at + timedelta(hours=3), policy)
        out.append(plain([summary.model_dump(exclude={"duration_ms", "step_ms"}), resume]))
    live = s.topics.list_live(ns)
    return {
        "summaries": out,
        "topics": [
            (t.topic_id, t.name, t.version, t.facts, t.stats, t.aliases, t.time)
            for t in sorted(live, key=lambda t: t.topic_id)
        ],
        "edges": sorted(
            {
                (e.from_topic_id, e.to_topic_id, e.type.value, e.weight)
                for t in live
                for e in s.topics.edges(ns, t.topic_id)
            }
        ),
        "events": sorted(
            (e.at, e.event_id, e.topic_id, e.delta_summary, e.source_message_ids)
            for e in s.events.in_window(ns, None, None)
        ),
        "packets": plain(s.sleep.wake_packets(ns, limit=5)),
        "buffer": [m.content for m in s.messages.buffer(ns)],
    }


SCENARIOS: list[Scenario] = [
    append_numbers_each_namespace_from_zero,
    append_refuses_a_foreign_or_taken_id_and_writes_nothing,
    compaction_leaves_the_buffer_and_keeps_the_message,
    get_and_range_stay_in_the_namespace_in_seq_order,
    source_ids_cite_by_external_id_within_the_namespace,
    the_reads_before_an_append_come_in_one,
    message_search_stems_filters_and_ranks,
    topics_by_id_in_the_order_asked_with_related,
    summaries_carry_the_one_liner_sources_not_the_lists,
    summaries_cite_the_one_liners_and_the_whole_topics_messages,
    known_names_are_whole_names_and_aliases,
    names_aliases_archive_and_use,
    full_text_search_of_topics,
    vector_search_of_topics,
    neighbours_strongest_first_per_seed,
    neighbours_of_equal_weight_by_name,
    events_by_window_and_topic,
    the_lease_admits_one_holder_until_it_expires,
    a_wake_is_claimed_once_per_sleep_or_silence,
    the_sleep_queue_claims_retries_and_records_runs,
    match_pool_nearest_and_named,
    sleep_reads_are_the_pool_and_the_top_topics,
    theme_names_of_the_speakers_live_topics,
    stored_vectors_by_id_within_the_namespace,
    topics_holding_a_state_within_the_namespace,
    a_commit_writes_everything_or_nothing,
    a_commit_gives_its_lease_back_only_when_it_commits,
    participants_are_found_by_name,
    the_reads_before_a_search_come_in_one,
    the_text_searches_of_a_context_come_in_one,
    the_writes_after_packing_come_in_one,
    sleep_twice,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_the_fake_observes_what_neo4j_observes(
    scenario: Scenario, sides: tuple[Side, Side], namespace: str, other_namespace: str
) -> None:
    real, fake = sides
    expected = plain(scenario(real, namespace, other_namespace))
    assert expected  # the scenario observed something
    assert plain(scenario(fake, namespace, other_namespace)) == expected
