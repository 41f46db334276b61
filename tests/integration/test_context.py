"""The always-on context end to end (spec §10.1, §10.2, seed 003): real Neo4j, real MiniLM, a
controlled clock, the stack wired by ``api.container.Container``.

A scripted conversation over three days is slept day by day; a week later plain messages (no
"search" instruction) must bring the right topics back, time phrases must pick the window,
suppression must keep implicit repeats out without blocking explicit search, a model outage must
fall back to lexical search, and everything packed must be marked used and cite its messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.clock import FixedClock
from graph.errors import EmbeddingUnavailable
from graph.models import Message, Topic, TopicTime
from retrieval.context import ContextBuilder, ContextRequest, ContextResult
from retrieval.embedding import MiniLMEmbedder
from retrieval.search import TopicSearch
from retrieval.snippets import sentences
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from tests.fakes.context import SeparateReads

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
NOW = DAY1 + timedelta(days=9)  # the Wednesday of the following week
POLICY = SleepPolicy(tail_turns=2, fresh_window=timedelta(hours=2))
PARTY_QUESTION = "how's the party planning going?"

DAY1_TURNS = [
    (
        "user",
        "We're planning Mel's surprise party at the lake house for Saturday with Anna and Ben.",
    ),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. We still need to book the caterer for the Party Planning."),
    ("user", "The caterer is Rosa's Kitchen; they want a deposit by Thursday."),
    ("assistant", "Noted: Rosa's Kitchen, deposit by Thursday."),
    ("user", "Separately, my bike needs new brake pads before the spring ride."),
    ("assistant", "Good idea to do that early."),
    ("user", "ok, that's all for today"),
    ("assistant", "Talk tomorrow."),
]
DAY2_TURNS = [
    ("user", "We chose Postgres for the billing migration because of JSONB support."),
    ("assistant", "Makes sense for the billing migration."),
    ("user", "I'm also reading a book about Roman aqueducts."),
    ("assistant", "Sounds fascinating."),
    ("user", "enough for today"),
    ("assistant", "Bye."),
]
DAY3_TURNS = [
    ("user", "The quarterly tax return is due on the 15th; the accountant needs the receipts."),
    ("assistant", "I'll remind you about the receipts."),
    ("user", "thanks"),
    ("assistant", "Anytime."),
]
_DATED_LINE = re.compile(r"^- (?:\d{1,2} [A-Z][a-z]{2} \d{4}|undated) ")


class UnavailableEmbedder:
    """Implements the Embedder protocol and always fails, as a model outage would."""

    model_name = "unavailable"
    dimensions = 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingUnavailable("the embedding model is down")


@dataclass
class Stack:
    namespace: str
    container: Container

    def say(self, at: datetime, turns: Sequence[tuple[str, str]]) -> None:
        items = [
            IncomingMessage(
                role=role,  # type: ignore[arg-type]
                content=text,
                at=at + timedelta(minutes=i),
                external_id=f"{at:%m%d}-{i}",
            )
            for i, (role, text) in enumerate(turns)
        ]
        self.container.conversation.append(self.namespace, items, auto_sleep=False)

    def sleep(self, at: datetime) -> datetime:
        summary = self.container.sleeper.sleep(self.namespace, at)
        assert summary.topics_created + summary.topics_updated > 0
        return summary.slept_at

    def context(self, message: str, now: datetime = NOW, **kw: Any) -> ContextResult:
        req = ContextRequest(namespace=self.namespace, message=message, now=now, **kw)
        return self.container.context.build(req)

    def messages(self) -> dict[str, Message]:
        """Every stored message by message id and by external id."""
        stored = self.container.messages.tail(self.namespace, 10_000)
        return {m.message_id: m for m in stored} | {
            m.external_id: m for m in stored if m.external_id
        }


def build(settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str) -> Stack:
    # the session's driver and loaded model instead of a second connection and model load
    container = Container(
        settings, clock=FixedClock(DAY1), driver=driver, embedder=embedder, policy=POLICY
    )
    return Stack(namespace, container)


@pytest.fixture
def stack(settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str) -> Stack:
    return build(settings, driver, embedder, namespace)


@pytest.fixture
def slept_at(stack: Stack) -> list[datetime]:
    """Three days of conversation, each slept in the evening; returns the sleep times."""
    times = []
    for day, turns in enumerate([DAY1_TURNS, DAY2_TURNS, DAY3_TURNS]):
        at = DAY1 + timedelta(days=day)
        stack.say(at, turns)
        times.append(stack.sleep(at + timedelta(hours=10)))
    return times


def _topic_ids(result: ContextResult) -> list[str]:
    return [i["record_id"] for i in result.items if i["kind"] == "topic"]


def _trace(result: ContextResult, record_id: str) -> dict[str, Any]:
    return next(e for e in result.trace if e["record_id"] == record_id)


def _first(ids: Sequence[str], wanted: set[str]) -> int:
    return min(i for i, rid in enumerate(ids) if rid in wanted)


# -- §10.1 always-on recall ------------------------------------------------------------------------
def test_a_week_later_a_plain_question_recalls_the_party(
    stack: Stack, slept_at: list[datetime]
) -> None:
    result = stack.context(PARTY_QUESTION)
    assert result.request_class != "C"
    titles = [i["title"].lower() for i in result.items]
    assert any("party" in t for t in titles), titles
    assert "party" in result.context_text.lower()
    assert "caterer" in result.context_text or "lake house" in result.context_text
    # the party comes first; the bike, billing and taxes come after it
    party = {"party", "surprise party", "party planning", "caterer", "lake house", "mel"}
    assert result.items[0]["title"].lower() in party, titles
    unrelated = {"bike", "spring ride", "billing migration", "postgres", "receipts", "accountant"}
    ranked = [e["title"].lower() for e in result.trace]
    assert unrelated & set(ranked)  # they were candidates ...
    assert _first(ranked, party) < _first(ranked, unrelated)  # ... ranked below the party


def test_small_talk_injects_nothing(stack: Stack, slept_at: list[datetime]) -> None:
    result = stack.context("thanks!")
    assert result.request_class == "C"
    assert result.items == [] and result.context_text == "" and result.used_tokens == 0


# -- §10.2 time resolution -------------------------------------------------------------------------
def test_last_week_ranks_a_topic_seen_in_the_window_above_a_more_similar_older_one(
    stack: Stack,
) -> None:
    now = datetime(2026, 3, 25, 12, tzinfo=UTC)
    three_weeks_ago, four_days_ago = now - timedelta(weeks=3), now - timedelta(days=4)
    stack.say(
        three_weeks_ago,
        [
            ("user", "We decided the decision log records every decision we made."),
            ("assistant", "Decided: the decision log records what we decided and why."),
            ("user", "We decided the decision log also covers the billing database schema."),
            ("assistant", "Noted, the decision log covers what we decided on the schema."),
            ("user", "ok"),
            ("assistant", "ok"),
        ],
    )
    stack.sleep(three_weeks_ago + timedelta(hours=1))
    stack.say(
        four_days_ago,
        [
            ("user", "We decided to move the team offsite to Lisbon in May."),
            ("assistant", "Lisbon it is."),
            ("user", "ok"),
            ("assistant", "ok"),
        ],
    )
    stack.sleep(four_days_ago + timedelta(hours=1))
    live = stack.container.topics.list_live(stack.namespace)
    recent = {t.topic_id for t in live if t.time.last_seen_at >= now - timedelta(days=7)}
    older = {t.topic_id for t in live} - recent
    assert recent and older

    plain = stack.context("what did we decide?", now)
    # without a time phrase the older topic is the more similar one and opens the context
    cosine = {e["record_id"]: e["components"].get("vector_cosine", 0.0) for e in plain.trace}
    assert max(cosine[t] for t in older) > max(cosine[t] for t in recent)
    assert plain.items[0]["record_id"] in older

    result = stack.context("what did we decide last week?", now)
    assert result.time_window is not None
    assert result.time_window["phrase"] == "last week"
    assert result.time_window["start"] == (now - timedelta(days=7)).isoformat()
    assert result.time_window["end"] == now.isoformat()
    assert "relative_time: 'last week'" in result.triggers
    items = [i["record_id"] for i in result.items]
    assert _first(items, recent) < _first(items, older)
    traced = [e["record_id"] for e in result.trace]
    assert _first(traced, recent) < _first(traced, older)
    assert "Lisbon" in result.context_text.split("\n## ")[0]


def test_before_you_slept_ends_at_the_last_sleep(stack: Stack, slept_at: list[datetime]) -> None:
    result = stack.context("what were we doing before you slept?")
    assert result.time_window == {
        "phrase": "before you slept",
        "kind": "before_sleep",
        "start": None,
        "end": slept_at[-1].isoformat(),
    }
    assert "relative_time: 'before you slept'" in result.triggers
    assert result.items


# -- seed 003: suppression, explicit search, consult skip ------------------------------------------
IMPLICIT = "I should book the caterer for the lake house party soon"


def test_an_implicit_repeat_in_a_session_is_suppressed(
    stack: Stack, slept_at: list[datetime]
) -> None:
    first = stack.context(IMPLICIT, session_id="s1")
    injected = set(_topic_ids(first))
    second = stack.context(IMPLICIT, NOW + timedelta(minutes=1), session_id="s1")
    assert not injected & set(_topic_ids(second))
    for rid in injected:
        assert str(_trace(second, rid).get("why", "")).startswith("suppressed"), rid


def test_suppression_is_the_same_whichever_worker_serves_the_next_request(
    stack: Stack, slept_at: list[datetime], settings: Settings, driver: Driver
) -> None:
    """Two app instances (two containers, as two API worker processes have) against one Neo4j:
    what one showed the session, the other suppresses; a builder keeping the state in its own
    memory (as every worker did before) would inject it again."""
    other = Container(settings, clock=FixedClock(DAY1), driver=driver,
                      embedder=stack.container.embedder, policy=POLICY)  # fmt: skip
    first = stack.context(IMPLICIT, session_id="s-shared")
    injected = set(_topic_ids(first))
    assert injected
    req = ContextRequest(namespace=stack.namespace, message=IMPLICIT,
                         now=NOW + timedelta(minutes=1), session_id="s-shared")  # fmt: skip
    second = other.context.build(req)
    assert not injected & set(_topic_ids(second))
    for rid in injected:
        assert str(_trace(second, rid).get("why", "")).startswith("suppressed"), rid
    reads = SeparateReads(other.topics, other.messages, other.search.events)
    local = ContextBuilder(other.topics, other.messages, other.search, reads, tz="UTC",
                           config=settings.retrieval)  # fmt: skip
    assert injected <= set(_topic_ids(local.build(req)))  # in-process state: shown again


def test_explicit_search_reinjects_what_a_session_just_saw(
    stack: Stack, slept_at: list[datetime]
) -> None:
    first = stack.context(IMPLICIT, session_id="s1")
    assert first.request_class == "B" and first.consult["band"] != "skip"
    injected = set(_topic_ids(first))
    assert injected
    again = stack.context(IMPLICIT, NOW + timedelta(minutes=1), session_id="s1", explicit=True)
    assert again.request_class == "A"
    assert injected <= set(_topic_ids(again))
    assert not any(str(e.get("why", "")).startswith("suppressed") for e in again.trace)


def test_an_implicit_request_below_the_consult_threshold_injects_nothing(
    stack: Stack, slept_at: list[datetime]
) -> None:
    result = stack.context(
        "I painted the fence green and watered the tomatoes, then cleaned my bike"
    )
    assert result.request_class == "B" and result.consult["band"] == "skip"
    assert all(e["decision"] == "excluded" for e in result.trace)
    assert result.items == [] and result.context_text == ""


# -- degraded mode ---------------------------------------------------------------------------------
def _degraded_builder(stack: Stack) -> ContextBuilder:
    c = stack.container
    search = TopicSearch(c.topics, c.events, UnavailableEmbedder())
    reads = SeparateReads(c.topics, c.messages, search.events, c.windows.history)
    return ContextBuilder(c.topics, c.messages, search, reads)


def test_without_the_embedding_model_lexical_results_still_come_back(
    stack: Stack, slept_at: list[datetime]
) -> None:
    req = ContextRequest(namespace=stack.namespace, message=PARTY_QUESTION, now=NOW)
    result = _degraded_builder(stack).build(req)
    assert result.items and "party" in result.context_text.lower()
    assert all("vector" not in e["reason"].replace("vector-unavailable", "") for e in result.trace)
    assert all(e["components"].get("vector_cosine", 0.0) == 0.0 for e in result.trace)


def test_without_the_embedding_model_the_result_says_degraded(
    stack: Stack, slept_at: list[datetime]
) -> None:
    req = ContextRequest(namespace=stack.namespace, message=PARTY_QUESTION, now=NOW)
    assert _degraded_builder(stack).build(req).degraded is True


# -- use-based lifecycle and provenance ------------------------------------------------------------
def test_packed_topics_are_marked_used_and_mere_candidates_are_not(
    stack: Stack, slept_at: list[datetime]
) -> None:
    topics = stack.container.topics
    assert all(t.stats.usage_count == 0 for t in topics.list_live(stack.namespace))
    result = stack.context(PARTY_QUESTION, budget=60)
    packed = set(_topic_ids(result))
    cut = {
        e["record_id"]
        for e in result.trace
        if e["decision"] == "excluded" and e["why"].startswith("budget")
    }
    assert packed and cut and result.used_tokens <= 60
    after = {t.topic_id: t for t in topics.get(stack.namespace, [*packed, *cut])}
    for tid in packed:
        assert after[tid].stats.usage_count == 1 and after[tid].stats.last_used_at == NOW
    for tid in cut:
        assert after[tid].stats.usage_count == 0 and after[tid].stats.last_used_at is None

    later = NOW + timedelta(hours=2)
    again = set(_topic_ids(stack.context(PARTY_QUESTION, later, budget=60)))
    for t in topics.get(stack.namespace, sorted(packed & again)):
        assert t.stats.usage_count == 2 and t.stats.last_used_at == later


def _carried_lines(item: dict[str, Any]) -> list[str]:
    """The message text an item carries, without its headers, dates and speakers' names."""
    text = item["durable_summary"]
    if item["layer"] == "L0":
        return [text.removeprefix(f"## {item['title']}: ")]
    return [_DATED_LINE.sub("", line) for line in text.splitlines()[1:]]


def _cited(line: str, contents: list[str]) -> bool:
    """Every sentence of the line is in one of the cited messages (with or without the
    'speaker: ' prefix the packer adds)."""
    variants = [line, line.partition(": ")[2]]
    return any(
        v and all(s in content for s in sentences(v)) for v in variants for content in contents
    )


@pytest.mark.parametrize("message", [PARTY_QUESTION, "what did we choose for billing?"])
def test_every_packed_item_cites_messages_that_contain_its_lines(
    stack: Stack, slept_at: list[datetime], message: str
) -> None:
    result = stack.context(message)
    assert result.items
    stored = stack.messages()
    for item in result.items:
        sources = item["provenance"]["source_ids"]
        assert sources, item["record_id"]
        assert all(sid in stored for sid in sources), (item["title"], sources)
        contents = [stored[sid].content for sid in sources]
        for line in _carried_lines(item):
            assert _cited(line, contents), (item["title"], line, contents)


def test_items_cite_messages_by_their_external_ids(stack: Stack, slept_at: list[datetime]) -> None:
    result = stack.context(PARTY_QUESTION)
    assert any(i["layer"] == "L0" for i in result.items)
    stored = stack.messages()
    for item in result.items:
        for sid in item["provenance"]["source_ids"]:
            assert sid == stored[sid].external_id, (item["layer"], item["title"], sid)


def test_skill_routing_rides_along_with_the_memory_context(stack: Stack) -> None:
    docs = stack.context("write docs for the parser module")
    assert docs.skills and docs.skills[0]["skill_id"] == "write_docs"
    assert docs.skill_routing["mode"] == "deep"  # a change to docs is a §5.3 deep trigger
    assert 1 <= len(docs.skills) <= 6
    chat = stack.context("thanks, that was lovely")
    assert chat.skill_routing["mode"] == "light" and len(chat.skills) <= 2
    trace = stack.context(
        "python traceback please",
        last_tool_output='Traceback (most recent call last):\n  File "a.py", line 1\nValueError: boom',
    )
    assert any("fail" in str(t).lower() for t in trace.skill_routing["triggers"])


def test_a_broken_skill_router_leaves_the_memory_context_intact(
    stack: Stack, slept_at: list[datetime]
) -> None:
    def broken(text: str, last: str | None, vector: list[float] | None = None) -> dict[str, Any]:
        raise RuntimeError("skills store down")

    c = stack.container
    reads = SeparateReads(c.topics, c.messages, c.search.events, c.windows.history)
    builder = ContextBuilder(c.topics, c.messages, c.search, reads, skill_router=broken)
    req = ContextRequest(
        namespace=stack.namespace, message="how's the party planning going?", now=NOW
    )
    result = builder.build(req)
    assert result.items and result.skills == []
    assert result.skill_routing["mode"] == "error"


def test_a_topic_aliased_with_a_time_phrase_is_a_name_not_a_window(
    stack: Stack, slept_at: list[datetime], embedder: MiniLMEmbedder
) -> None:
    # "this month's novel" is the book club's alias (the real full-text name lookup, apostrophe
    # and all): the message names the club, last seen weeks ago; a window of this month would
    # filter its topic out
    seen = DAY1 - timedelta(days=40)
    club = Topic(
        namespace=stack.namespace, name="Book club", one_liner="The book club reads a novel a month.",
        aliases=["this month's novel"], time=TopicTime(first_seen_at=seen, last_seen_at=seen),
    )  # fmt: skip
    stack.container.topics.create([club], embedder.embed([club.one_liner]), seen)
    result = stack.context("Any news on this month's novel?")
    assert result.time_window is None
    assert result.triggers == ["reintroduced_entity: 'this month's novel'"] and result.deep
    assert club.topic_id in {e["record_id"] for e in result.trace}
    # a window beside the name is still a window
    both = stack.context("What did we say about this month's novel last week?")
    assert both.time_window is not None and both.time_window["phrase"] == "last week"


def test_a_name_the_session_was_just_given_is_not_reintroduced(
    stack: Stack, slept_at: list[datetime]
) -> None:
    # the session's state holds the topic the first mention injected (read with the context's
    # start: the real read_context_start), so the second mention re-introduces nothing; the
    # same words in a session that was never given it still do
    first = stack.context("What about the lake house?", session_id="s")
    assert first.triggers == ["reintroduced_entity: 'lake house'"] and first.deep
    named = {
        t.topic_id
        for t in stack.container.topics.list_live(stack.namespace)
        if "lake house" in {t.name.lower(), *(a.lower() for a in t.aliases)}
    }
    assert named & set(_topic_ids(first))
    again = stack.context("Is the lake house booked?", NOW + timedelta(minutes=1), session_id="s")
    assert again.triggers == [] and not again.deep
    other = stack.context("Is the lake house booked?", NOW + timedelta(minutes=1), session_id="t")
    assert other.triggers == ["reintroduced_entity: 'lake house'"]
