"""The always-on path (issue #13 items 1-2) on real retrieval results: real Neo4j, real MiniLM,
the three slept days of ``test_context``.

The low-confidence trigger fires on a message that names nothing the memory holds and stays
quiet on one that is clearly about a remembered topic, and the trace carries the signal values;
a bare past-tense question goes deep only when the light search found no clear topic;
a light context is a fixed set of Neo4j round trips (counted with a driver wrapper) and embeds
the message once for topics and skills.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from graph.context import ContextStore, ContextTopics, TextSearch
from graph.messages import MessageStore
from graph.models import Message, parse
from retrieval.context import ContextBuilder, ContextRequest
from retrieval.embedding import MiniLMEmbedder
from tests.fakes.context import read_apart
from tests.integration.test_context import (
    DAY1,
    DAY1_TURNS,
    DAY2_TURNS,
    DAY3_TURNS,
    IMPLICIT,
    NOW,
    POLICY,
    Stack,
)

# a background load's guard against a hang (never a timing bound: a load here takes ms)
HANG_S = 600.0

VAGUE = "hmm, what do you think I should do?"
CLEAR = "the caterer for Mel's surprise party at the lake house wants a deposit"
LIGHT = "I'm reading more about how the Romans built their aqueducts"
_QUERIES = {
    p.read_text(encoding="utf-8"): p.name.removesuffix(".cypher")
    for p in (resources.files("cypher") / "queries").iterdir()
}


class CountingDriver:
    """The session's driver, recording which query file every round trip ran: a query of its
    own (``execute_query``, a write; a read runs in a session of its own, graph.db.read_query)
    or a transaction's queries (``session().execute_read`` / ``execute_write``, each query)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self.calls: list[str] = []

    def record(self, text: str) -> None:
        self.calls.append(_QUERIES.get(text, text[:40]))

    def execute_query(self, text: str, *args: Any, **kwargs: Any) -> Any:
        self.record(text)
        return self._driver.execute_query(text, *args, **kwargs)

    def session(self, **kwargs: Any) -> CountingSession:
        return CountingSession(self._driver.session(**kwargs), self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


class CountingSession:
    """A session whose queries ``CountingDriver`` records (auto-commit or in a transaction)."""

    def __init__(self, session: Any, counter: CountingDriver) -> None:
        self._session, self._counter = session, counter

    def __enter__(self) -> CountingSession:
        self._session.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._session.__exit__(*exc)

    def run(self, text: str, *args: Any, **kwargs: Any) -> Any:
        self._counter.record(text)
        return self._session.run(text, *args, **kwargs)

    def _counted(self, work: Any) -> Any:
        counter = self._counter

        class Tx:
            def __init__(self, tx: Any) -> None:
                self._tx = tx

            def run(self, text: str, *args: Any, **kwargs: Any) -> Any:
                counter.record(text)
                return self._tx.run(text, *args, **kwargs)

        return lambda tx, *a, **kw: work(Tx(tx), *a, **kw)

    def execute_read(self, work: Any, *args: Any, **kwargs: Any) -> Any:
        return self._session.execute_read(self._counted(work), *args, **kwargs)

    def execute_write(self, work: Any, *args: Any, **kwargs: Any) -> Any:
        return self._session.execute_write(self._counted(work), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class CountingEmbedder:
    """The session's model, counting the texts it is asked to embed."""

    def __init__(self, model: MiniLMEmbedder) -> None:
        self._model = model
        self.texts: list[str] = []
        self.model_name, self.dimensions = model.model_name, model.dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += list(texts)
        return self._model.embed(texts)


@pytest.fixture
def counted(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> Iterator[tuple[Stack, CountingDriver, CountingEmbedder]]:
    counting, model = CountingDriver(driver), CountingEmbedder(embedder)
    container = Container(
        settings, clock=FixedClock(DAY1), driver=counting, embedder=model, policy=POLICY
    )  # type: ignore[arg-type]
    stack = Stack(namespace, container)
    for day, turns in enumerate([DAY1_TURNS, DAY2_TURNS, DAY3_TURNS]):
        at = DAY1 + timedelta(days=day)
        stack.say(at, turns)
        stack.sleep(at + timedelta(hours=10))
    yield stack, counting, model


def _low(result: Any) -> list[str]:
    return [t for t in result.triggers if t.startswith("low_confidence")]


def test_low_confidence_fires_on_a_vague_message_and_not_on_a_clear_one(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    stack, _, _ = counted
    vague = stack.context(VAGUE)
    assert vague.deep and len(_low(vague)) == 1, vague.triggers
    signals = vague.retrieval_signals
    assert signals["best_cosine"] < 0.45 and signals["best_text"] < 4.0, signals
    assert f"best_cosine {signals['best_cosine']:.3f}" in _low(vague)[0]  # the values, in the trace

    clear = stack.context(CLEAR)
    assert _low(clear) == [], clear.triggers
    signals = clear.retrieval_signals  # clear of both low-confidence rules, by its values
    assert signals["best_cosine"] >= 0.45, signals
    assert signals["best_cosine"] >= 0.55 or signals["cosine_margin"] >= 0.02, signals


def test_a_past_tense_question_goes_deep_only_when_the_light_search_is_unclear(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    """The weak memory cue on real results: a past-tense question about a remembered topic
    stays light (still class A), a vague one fires and names the signals it judged."""
    stack, _, _ = counted
    clear = stack.context("Why did we choose Postgres for the billing database?")
    assert not [t for t in clear.triggers if t.startswith("memory_reference")], clear.triggers
    assert clear.request_class == "A"
    assert clear.retrieval_signals["best_cosine"] >= 0.55 or (
        clear.retrieval_signals["best_text"] >= 4.0
    ), clear.retrieval_signals
    vague = stack.context("What did he end up saying about it?")
    reason = [t for t in vague.triggers if t.startswith("memory_reference")]
    assert vague.deep and len(reason) == 1, vague.triggers
    assert "past-tense question" in reason[0] and "no clear topic" in reason[0]
    signals = vague.retrieval_signals
    assert signals["best_cosine"] < 0.55 and signals["best_text"] < 4.0, signals


def test_a_light_context_is_a_fixed_set_of_round_trips_and_one_embedding(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    stack, driver, model = counted
    stack.context(LIGHT, now=NOW)  # warm: the same message twice reads the same
    loads = stack.container.passages.loads
    assert loads is not None and loads.wait_idle(HANG_S)  # the copies read in the background
    driver.calls.clear()
    model.texts.clear()
    result = stack.context(LIGHT, now=NOW)
    assert not result.deep and result.triggers == [], result.triggers
    assert result.items  # the aqueducts came back
    assert model.texts == [LIGHT]  # one embedding serves topics, skills and evidence
    assert Counter(driver.calls) == Counter(
        {
            # triggers and short follow-ups (the tail), "before you slept" and "since you woke"
            # (the last sleep and wake), a re-introduced entity (known names): one read
            "read_context_start": 1,
            # the evidence and the topics' full-text candidates: one read (both first pages),
            # the candidates ranked there and not read
            "search_context_texts": 1,
            # the evidence's best, read whole once the namespace's own BM25 ranked its 400
            # candidates (graph/messages.py hits_of)
            "get_message_hits": 1,
            # the vector candidates and the full-text ranking's topics: one read (no
            # get_topics_by_id of its own); a vector query that did not wait for the ranking
            # reads by id only the ranked topics it did not return, and this namespace's five
            # topics are all among its candidates (tests/unit/test_topic_search_unit.py covers
            # the read by id); scored in the worker's copy of the namespace's live topic
            # vectors (graph/topic_vectors.py, read after the warm-up's context by the same
            # load thread): the candidates read by id with the namespace's topic stamp
            "read_topics_by_vector": 1,
            # the messages' passages by meaning, with the same query vector (evidence by
            # meaning, retrieval/gather.py), scored in the worker's copy of the namespace's
            # passage vectors (graph/passage_vectors.py, read after the warm-up's context by
            # the worker's load thread, graph/vector_loads.py): one
            # read of the best rows by key, with the namespace's passage stamp
            "read_passages_by_key": 1,
            # every candidate, the best ones whole, and in the same read the passages of the
            # messages the best topics cite, by the same vector, once the topics are ranked
            # (docs/retrieval.md, "The best topics' own passages"): one read where the
            # passages (search_topic_passages) and then the topics (get_topic_summaries) were
            # two in a row; the topics those passages reach come with it as briefs
            # (retrieval/topic_reads.py); the same answers, test_the_topics_and_their_passages_
            # read_together_answer_as_read_apart
            "read_context_topics": 1,
            # citations by external id: read with the summaries (no get_message_source_ids)
            "mark_topics_used": 1,
            # skill routing: no query of its own (the skills' stamp came with the first read
            # and the skill store's cached vectors, read when warming, are current)
        }
    ), driver.calls


def test_a_sessions_suppression_state_comes_with_the_first_read(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    """The session's state is read by ``read_context_start``, not a round trip of its own, and
    still suppresses what the session was shown a minute before."""
    stack, driver, _ = counted
    first = stack.context(IMPLICIT, now=NOW, session_id="s1")
    shown = {i["record_id"] for i in first.items if i["kind"] == "topic"}
    assert shown, first.items
    driver.calls.clear()
    second = stack.context(IMPLICIT, now=NOW + timedelta(minutes=1), session_id="s1")
    assert "get_suppression_session" not in driver.calls, driver.calls
    assert driver.calls.count("read_context_start") == 1, driver.calls
    assert not shown & {i["record_id"] for i in second.items if i["kind"] == "topic"}
    why = {t["record_id"]: str(t.get("why", "")) for t in second.trace if "record_id" in t}
    assert all(why.get(rid, "").startswith("suppressed") for rid in shown), second.trace


def test_small_talk_searches_nothing(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    """Class C injects nothing whatever a search would find, so no index is searched; the
    skills are still routed."""
    stack, driver, _ = counted
    driver.calls.clear()
    result = stack.context("thanks!", now=NOW)
    assert result.request_class == "C" and not result.deep and result.items == []
    searched = [c for c in driver.calls if c.startswith(("search_topics", "search_messages"))]
    assert searched == [], driver.calls
    assert "read_context_start" in driver.calls and "search_skills_vector" not in driver.calls
    assert result.skill_routing.get("mode") in ("light", "deep"), result.skill_routing


def test_a_light_search_fetches_for_its_own_k_and_a_late_trigger_searches_again(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    """A light request's candidates are fetched for the light k; when its own signals fire the
    low-confidence trigger, the deep ranking gets a deep-sized pool (a second search); a request
    deep from the start searches once."""
    stack, _, _ = counted
    builder = stack.container.context
    asked: list[int] = []
    pool = builder.search.pool

    def spy(namespace: str, text: str, now: Any, k: int, *rest: Any, **kw: Any) -> Any:
        asked.append(k)
        return pool(namespace, text, now, k, *rest, **kw)

    builder.search.pool = spy  # type: ignore[method-assign]
    light, deep = builder.cfg.light_topics, builder.cfg.deep_topics
    clear = stack.context(LIGHT, now=NOW)
    assert not clear.deep and asked == [light], (asked, clear.triggers)
    asked.clear()
    vague = stack.context(VAGUE)
    assert vague.deep and len(_low(vague)) == 1, vague.triggers
    assert asked == [light, deep], asked
    explicit = stack.context(LIGHT, now=NOW, explicit=True)
    assert explicit.deep and asked[2:] == [deep]  # deep from the start: one search


def test_a_deep_window_reads_its_texts_and_event_topics_in_one_round_trip(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    """A relative time makes the request deep with a window: the conversation's all-time
    evidence, the window's own evidence, the topics' windowed full-text candidates and the
    window's event topics come in one read (none of them needs the vector)."""
    stack, driver, _ = counted
    driver.calls.clear()
    result = stack.context("What did we say about the tax return last week?")
    assert result.deep and result.time_window is not None, result.triggers
    assert result.items  # the tax return came back
    calls = Counter(driver.calls)
    assert calls["search_context_texts_windowed"] == 1, driver.calls
    for alone in (
        "search_messages_fulltext",  # neither page grew past the first here
        "search_topics_fulltext",
        "event_topic_ids_in_window",
        "search_context_texts",
    ):
        assert calls[alone] == 0, driver.calls


def test_a_narrow_windows_next_page_comes_in_the_same_round_trip(
    driver: Driver, namespace: str
) -> None:
    """A window that keeps too few of Lucene's first rows: the next page (as the store's
    over-fetch asks for it) is read in the same query, and the hits are those of the
    store's own search, which takes two round trips for them."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    day = start + timedelta(days=9)
    # Lucene ranks only the window's UTC day (graph/fulltext.py in_window): every message of it
    # holds "lake" once in its content, one score (graph/fulltext.py message_query), so the
    # first 800 rows of the day's 842 (twice the candidate pool, graph.messages.MESSAGE_POOL)
    # are one group cut off whole (which of them Lucene returns first follows its document
    # order) and the page keeps none: the next page, 3,200 rows, holds the day whole; the 200
    # on the days before are never read by the window's search
    loud = "lake lake lake cold"
    early = 840
    said = [_said(namespace, i, start + timedelta(hours=i), loud) for i in range(200)]
    said += [_said(namespace, 200 + i, day + timedelta(seconds=30 * i), loud) for i in range(early)]
    said += [
        _said(namespace, 200 + early + i, day + timedelta(hours=12 + i), "the lake was cold")
        for i in range(2)
    ]
    MessageStore(driver).append(namespace, said)
    window = TextSearch("lake", 2, day + timedelta(hours=12), day + timedelta(hours=24))
    counting = CountingDriver(driver)
    store = ContextStore(counting)  # type: ignore[arg-type]
    got = store.search_texts(namespace, TextSearch("lake", 5), TextSearch("lake", 12), window)
    # the conversation's own search grows once: its 1,042 matches are one group of one score,
    # more than its first 400 rows; then each list's best read whole after the ranking (the
    # evidence's and the window's)
    assert counting.calls == [
        "search_context_texts_windowed",
        "search_messages_fulltext",
        "get_message_hits",
        "get_message_hits",
    ], counting.calls
    alone = CountingDriver(driver)
    hits = MessageStore(alone).search_text(  # type: ignore[arg-type]
        namespace, window.text, window.k, window.since, window.until
    )
    # it did grow (two pages), then read the whole conversation's candidates (its statistics:
    # two pages too, as above), then its best whole
    assert alone.calls == ["search_messages_fulltext"] * 4 + ["get_message_hits"], alone.calls
    assert sorted(h.message.message_id for h in got.windowed) == [
        f"{namespace}-m1040",
        f"{namespace}-m1041",
    ]
    assert [(h.message.message_id, h.score) for h in got.windowed] == [
        (h.message.message_id, h.score) for h in hits
    ]


def _said(namespace: str, i: int, at: datetime, content: str) -> Message:
    """The ``i``-th user message of ``namespace``, at ``at``."""
    data = {
        "message_id": f"{namespace}-m{i}", "namespace": namespace, "role": "user",
        "content": content, "at": at, "token_estimate": len(content) // 4,
    }  # fmt: skip
    return parse(Message, data)


class Reads:
    """The context's own store (``graph.context.ContextStore``) with its writes left out, so
    that two builders over one memory see the same stored state; ``apart``: the topics and
    the best topics' passages read as before they were one query, the passages and then the
    topics (``tests.fakes.context.read_apart``), the hits it found kept in ``hits``."""

    def __init__(self, container: Container, apart: bool) -> None:
        self._store, self._container, self._apart = container.context.reads, container, apart
        self.hits: list[Any] = []

    def read_topics(self, namespace: str, *args: Any) -> ContextTopics:
        if not self._apart:
            return self._store.read_topics(namespace, *args)
        c = self._container
        read = read_apart(c.topics, c.passages, namespace, *args)
        self.hits += read.hits
        return read

    def finish(self, *args: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_the_topics_and_their_passages_read_together_answer_as_read_apart(
    counted: tuple[Stack, CountingDriver, CountingEmbedder],
) -> None:
    """``read_context_topics`` (the best topics' passages and every topic a context shows, one
    query) gives the contexts the two reads in a row gave: the same items, order, scores,
    text and trace, light and deep, on the three slept days with their passages written."""
    stack, driver, _ = counted
    c = stack.container
    c.passage_indexer.run(stack.namespace)
    together, apart = Reads(c, apart=False), Reads(c, apart=True)

    def builder(reads: Reads) -> ContextBuilder:
        return ContextBuilder(
            c.topics, c.messages, c.search, reads, c.settings.timezone,  # type: ignore[arg-type]
            config=c.settings.retrieval, skill_router=c.route_skills, passages=c.passages,
        )  # fmt: skip

    one, two = builder(together), builder(apart)
    asked = [LIGHT, CLEAR, VAGUE, IMPLICIT, "Why did we choose Postgres for the billing database?",
             "What did we say about the tax return last week?", "What did he end up saying about it?"]  # fmt: skip
    for text in asked:
        for explicit in (False, True):
            req = ContextRequest(
                namespace=stack.namespace, message=text, now=NOW, explicit=explicit
            )
            driver.calls.clear()
            got = one.build(req).model_dump(exclude={"timings_ms"})
            assert "read_context_topics" in driver.calls, (text, driver.calls)
            assert "search_topic_passages" not in driver.calls, (text, driver.calls)
            assert got == two.build(req).model_dump(exclude={"timings_ms"}), (text, explicit)
            assert got["items"], text
    assert apart.hits  # the passages took part: the topics' own passages were found
