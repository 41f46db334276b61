"""The analytics of cypher/analytics on a real memory: three sleeps over ten days with a controlled
clock, the real MiniLM and the real Neo4j. Expected values come from the stores and plain counts
of the graph, never from the analytics themselves."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver
from typer.testing import CliRunner

from api.cli import app
from graph.analytics import AnalyticsStore
from graph.clock import FixedClock
from graph.errors import NotFound, SheriffError, ValidationFailed
from graph.events import EventStore
from graph.messages import MessageStore
from graph.models import EdgeType, Topic
from graph.sleep import SleepStore
from graph.topics import LinkRequest, TopicStore
from retrieval.embedding import MiniLMEmbedder
from sleepwake.conversation import Conversation, IncomingMessage
from sleepwake.policy import SleepPolicy
from sleepwake.sleep import Sleeper

D1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
D3 = D1 + timedelta(days=2)  # the same week
D10 = D1 + timedelta(days=9)  # the next week
POLICY = SleepPolicy(tail_turns=0)  # every sleep compacts its whole day
BILLING = "billing migration"
EDGE_TYPES = [t.value for t in EdgeType]

DAYS: dict[datetime, list[tuple[str, str]]] = {
    D1: [
        ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
        ("assistant", "Good choice for the billing migration."),
        ("user", "The billing migration depends on the schema review."),
        ("user", "We're planning Mel's surprise party at the lake house with Anna and Ben."),
        ("assistant", "Nice! How many guests?"),
        ("user", "About 30 guests. We still need to book the caterer."),
    ],
    D3: [
        ("user", "The billing migration moved the invoices table to Postgres today."),
        ("assistant", "Great progress on the billing migration."),
    ],
    D10: [
        ("user", "The billing migration is finished; the invoices table is live on Postgres."),
        ("user", "Next I want to plan the quarterly roadmap review with Priya."),
        ("assistant", "Noted: the quarterly roadmap review with Priya."),
    ],
}  # fmt: skip


@dataclass
class Sleep:
    at: datetime
    messages: int
    edges_by_type: Counter[str]  # edges in the graph right after this sleep


@dataclass
class World:
    namespace: str
    driver: Driver
    topics: TopicStore
    events: EventStore
    sleeper: Sleeper
    analytics: AnalyticsStore
    sleeps: list[Sleep] = field(default_factory=list)

    def say_and_sleep(self, day: datetime, turns: list[tuple[str, str]]) -> Sleep:
        conversation = Conversation(self.sleeper.messages, self.sleeper, FixedClock(day), POLICY)
        items = [
            IncomingMessage(role=role, content=text, at=day + timedelta(minutes=i))
            for i, (role, text) in enumerate(turns)
        ]
        conversation.append(self.namespace, items, auto_sleep=False)
        summary = self.sleeper.sleep(self.namespace, day + timedelta(hours=1))
        sleep = Sleep(summary.slept_at, summary.messages_compacted, self.edge_counts())
        self.sleeps.append(sleep)
        return sleep

    def edge_counts(self) -> Counter[str]:
        records, _, _ = self.driver.execute_query(
            "MATCH (:Topic {namespace: $ns})-[r]->(:Topic {namespace: $ns}) "
            "RETURN type(r) AS type, count(r) AS n",
            ns=self.namespace,
        )
        return Counter({r["type"]: r["n"] for r in records if r["type"] in EDGE_TYPES})

    def run(self, name: str, now: datetime | None = None, **params: Any) -> list[dict[str, Any]]:
        result = self.analytics.run(name, self.namespace, params, now=now or self.sleeps[-1].at)
        assert result.columns == list(self.analytics.get(name).columns)
        return result.rows

    def live(self) -> list[Topic]:
        return self.topics.list_live(self.namespace)

    def topic(self, name: str) -> Topic:
        return next(t for t in self.live() if t.name == name)


def build(driver: Driver, embedder: MiniLMEmbedder, namespace: str, days: list[datetime]) -> World:
    sleeper = Sleeper(MessageStore(driver), SleepStore(driver), embedder, POLICY)
    world = World(
        namespace, driver, TopicStore(driver), EventStore(driver), sleeper, AnalyticsStore(driver)
    )
    for day in days:
        world.say_and_sleep(day, DAYS[day])
    return world


def _drop(driver: Driver, namespace: str) -> None:
    driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace)


@pytest.fixture(scope="module")
def world(driver: Driver, embedder: MiniLMEmbedder) -> Iterator[World]:
    """Three sleeps: Monday, Wednesday, and Wednesday of the next week (read by every test)."""
    namespace = f"test-analytics-{uuid.uuid4().hex[:10]}"
    try:
        yield build(driver, embedder, namespace, [D1, D3, D10])
    finally:
        _drop(driver, namespace)


@pytest.fixture
def one_day(driver: Driver, embedder: MiniLMEmbedder, namespace: str) -> World:
    """One sleep, in a namespace of its own: for the tests that write."""
    return build(driver, embedder, namespace, [D1])


def monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


# -- topics by first / last seen ------------------------------------------------------------------


def test_first_and_last_seen_per_day_match_the_topics(world: World) -> None:
    topics = world.live()
    first = Counter(t.time.first_seen_at.date() for t in topics)
    last = Counter(t.time.last_seen_at.date() for t in topics)
    rows = world.run("topics_by_first_seen", bucket="day")
    assert {r["bucket"]: (r["first_seen"], r["last_seen"]) for r in rows} == {
        d: (first[d], last[d]) for d in first | last
    }
    assert {r["bucket"] for r in rows} <= {D1.date(), D3.date(), D10.date()}
    assert [r["bucket"] for r in rows] == sorted(r["bucket"] for r in rows)
    assert rows[0]["bucket"] == D1.date() and rows[-1]["bucket"] == D10.date()
    assert rows[-1]["topics_total"] == len(topics)
    new_on_d10 = {t.name for t in topics if t.time.first_seen_at.date() == D10.date()}
    assert "quarterly roadmap review" in new_on_d10
    assert set(rows[-1]["first_seen_names"]) == new_on_d10


def test_first_seen_per_week_and_month(world: World) -> None:
    topics = world.live()
    weeks = world.run("topics_by_first_seen")  # default bucket: week
    assert [r["bucket"] for r in weeks] == [date(2026, 3, 2), date(2026, 3, 9)]
    first_week = sum(1 for t in topics if t.time.first_seen_at < D1 + timedelta(days=7))
    assert weeks[0]["first_seen"] == first_week
    assert weeks[1]["first_seen"] == len(topics) - first_week
    assert [r["topics_total"] for r in weeks] == [first_week, len(topics)]
    months = world.run("topics_by_first_seen", bucket="month")
    assert [(r["bucket"], r["first_seen"], r["last_seen"]) for r in months] == [
        (date(2026, 3, 1), len(topics), len(topics))
    ]


# -- most touched per week ----------------------------------------------------------------------


def test_most_touched_topics_per_week(world: World) -> None:
    events = world.events.in_window(world.namespace, None, None, limit=10_000)
    per_topic = Counter((monday(e.at.date()), e.topic_id) for e in events)
    per_week = Counter(monday(e.at.date()) for e in events)
    billing = world.topic(BILLING)
    rows = world.run("most_touched_topics_per_week", top=3)
    by_week: dict[date, list[dict[str, Any]]] = {}
    for r in rows:
        by_week.setdefault(r["week"], []).append(r)
    assert list(by_week) == [date(2026, 3, 2), date(2026, 3, 9)]
    for week, ranked in by_week.items():
        touched = sum(1 for w, _ in per_topic if w == week)
        assert [r["rank"] for r in ranked] == list(range(1, min(3, touched) + 1))
        assert [r["events"] for r in ranked] == sorted((r["events"] for r in ranked), reverse=True)
        for r in ranked:
            assert r["events"] == per_topic[(week, r["topic_id"])]
            assert r["week_events"] == per_week[week]
            assert monday(r["first_at"].date()) == week == monday(r["last_at"].date())
    # touched on Monday and Wednesday, with the most messages of the twice-touched topics
    top = by_week[date(2026, 3, 2)][0]
    assert (top["topic_id"], top["events"], top["topic"]) == (billing.topic_id, 2, BILLING)
    assert top["first_at"].date() == D1.date() and top["last_at"].date() == D3.date()
    top_one = world.run("most_touched_topics_per_week", top=1)
    assert [r["week"] for r in top_one] == list(by_week) and {r["rank"] for r in top_one} == {1}


# -- one topic's timeline -----------------------------------------------------------------------


def test_topic_timeline_lists_each_sleeps_event_in_order(world: World) -> None:
    billing = world.topic(BILLING)
    stored = world.events.for_topics(world.namespace, [billing.topic_id])
    rows = world.run("topic_timeline", topic=BILLING)
    assert [r["n"] for r in rows] == [1, 2, 3]
    assert {r["topic_id"] for r in rows} == {billing.topic_id}
    assert [r["event_id"] for r in rows] == [e.event_id for e in stored]
    assert [r["day"] for r in rows] == [D1.date(), D3.date(), D10.date()]
    assert [r["recorded_at"] for r in rows] == [s.at for s in world.sleeps]
    for row, event in zip(rows, stored, strict=True):
        assert row["delta_summary"] == event.delta_summary and BILLING in row["delta_summary"]
        assert (row["seq_from"], row["seq_to"]) == (event.first_seq, event.last_seq)
        assert row["messages"] == len(event.source_message_ids)
        assert row["messages_from"] <= row["messages_to"] == row["at"]
        assert row["messages_from"].date() == row["day"]
    assert rows[0]["seq_to"] < rows[1]["seq_from"] <= rows[1]["seq_to"] < rows[2]["seq_from"]
    # by id, and by name in any case, give the same timeline; an unknown topic gives none
    assert world.run("topic_timeline", topic=billing.topic_id) == rows
    assert world.run("topic_timeline", topic="Billing Migration") == rows
    assert world.run("topic_timeline", topic="no such topic") == []


def test_topic_timeline_graph_returns_the_topic_and_its_events(world: World) -> None:
    billing = world.topic(BILLING)
    stored = world.events.for_topics(world.namespace, [billing.topic_id])
    paths = [r["path"] for r in world.run("topic_timeline_graph", topic=BILLING)]
    assert len(paths) == 3
    for path, event in zip(paths, stored, strict=True):
        topic, node = path["nodes"]
        (rel,) = path["relationships"]
        assert topic["labels"] == ["Topic"] and topic["name"] == BILLING
        assert node["labels"] == ["TopicEvent"] and node["event_id"] == event.event_id
        assert (rel["type"], rel["start"], rel["end"]) == (
            "HAS_EVENT",
            billing.topic_id,
            event.event_id,
        )
        assert "embedding" not in topic and "embedding" not in node


# -- utility decay ------------------------------------------------------------------------------


def test_utility_decay_at_the_last_sleep_is_what_the_sleep_stored(world: World) -> None:
    now = world.sleeps[-1].at
    topics = {t.topic_id: t for t in world.live()}
    rows = world.run("utility_decay", now=now)
    assert {r["topic_id"] for r in rows} == set(topics)
    for r in rows:
        t = topics[r["topic_id"]]
        assert r["utility_now"] == pytest.approx(t.stats.utility_score, abs=1e-3)
        assert r["bucket_now"] == r["decay_bucket"] == t.stats.decay_bucket
        age = (now - t.time.last_seen_at).total_seconds() / 86400
        assert r["days_since_last_seen"] == pytest.approx(age, abs=0.05)
        assert r["exempt"] == bool(t.open_loops or t.stats.constraint_count)
    utilities = [r["utility_now"] for r in rows]
    assert utilities == sorted(utilities, reverse=True)
    billing = next(r for r in rows if r["topic"] == BILLING)
    assert billing["touch_days"] == [D1.date(), D3.date(), D10.date()] and billing["events"] == 3
    quiet = [r for r in rows if r["last_seen_at"].date() == D1.date()]  # the party, say
    assert quiet and {r["bucket_now"] for r in quiet} == {"warm"}  # 9 days: past hot, not cold
    assert all(r["days_since_last_seen"] == pytest.approx(9.0, abs=0.05) for r in quiet)


def test_utility_now_is_what_the_next_sleep_stores(one_day: World) -> None:
    """Project 40 days ahead, then sleep then (nothing to compact: decay only): the stored
    utilities and tiers are exactly the projection."""
    later = one_day.sleeps[-1].at + timedelta(days=40)
    before = {t.topic_id: t for t in one_day.live()}
    projected = {r["topic_id"]: r for r in one_day.run("utility_decay", now=later)}
    decayed = [r for r in projected.values() if not r["exempt"]]
    assert decayed and all(r["utility_now"] < r["utility"] for r in decayed)
    for r in decayed:  # the sleep decayed every topic up to its own time: 40 days since
        expected = before[r["topic_id"]].stats.utility_score * 0.98**40
        assert r["utility_now"] == pytest.approx(expected, abs=1e-3)
    assert {r["bucket_now"] for r in projected.values()} == {"cold"}
    assert {r["decay_bucket"] for r in projected.values()} != {"cold"}
    one_day.sleeper.sleep(one_day.namespace, later)
    for t in one_day.live():
        assert t.stats.utility_score == pytest.approx(
            projected[t.topic_id]["utility_now"], abs=1e-3
        )
        assert t.stats.decay_bucket == projected[t.topic_id]["bucket_now"]


# -- edges per sleep ----------------------------------------------------------------------------


def test_edges_per_sleep_count_the_edges_each_sleep_created(world: World) -> None:
    rows = world.run("edges_per_sleep")
    assert [(r["formed_at"], r["formed_by"]) for r in rows] == [
        (s.at, "sleep") for s in world.sleeps
    ]
    previous: Counter[str] = Counter()
    for row, sleep in zip(rows, world.sleeps, strict=True):
        formed = sleep.edges_by_type - previous
        assert row["edges_formed"] == sum(formed.values())
        assert {t: row[t.lower()] for t in EDGE_TYPES} == {t: formed[t] for t in EDGE_TYPES}
        assert row["edges_total"] == sum(sleep.edges_by_type.values())
        assert row["messages"] == sleep.messages == len(DAYS[sleep.at - timedelta(hours=1)])
        assert row["day"] == sleep.at.date()
        previous = sleep.edges_by_type
    assert (
        rows[0]["edges_formed"] > 0 and rows[0]["depends_on"] == 1
    )  # "depends on the schema review"


def test_edges_per_sleep_graph_draws_one_sleeps_edges(world: World) -> None:
    first, *_, last = world.sleeps
    latest = [r["path"] for r in world.run("edges_per_sleep_graph")]
    assert len(latest) == sum((last.edges_by_type - world.sleeps[-2].edges_by_type).values())
    # the first sleep, named in another zone: the instant is what counts
    shifted = first.at.astimezone(timezone(timedelta(hours=1))).isoformat()
    assert shifted.endswith("+01:00")
    paths = [r["path"] for r in world.run("edges_per_sleep_graph", slept_at=shifted)]
    assert Counter(p["relationships"][0]["type"] for p in paths) == first.edges_by_type
    for path in paths:
        (rel,) = path["relationships"]
        assert rel["created_at"] == first.at
        assert [n["labels"] for n in path["nodes"]] == [["Topic"], ["Topic"]]


def test_edges_made_outside_a_sleep_are_rows_of_their_own(one_day: World) -> None:
    a, b = sorted(one_day.live(), key=lambda t: t.name)[:2]
    linked_at = D1 + timedelta(days=1)
    one_day.topics.link(
        one_day.namespace, [LinkRequest(a.topic_id, b.topic_id, EdgeType.PART_OF)], linked_at
    )
    sleep_row, link_row = one_day.run("edges_per_sleep", now=linked_at)
    assert (sleep_row["formed_by"], sleep_row["formed_at"]) == ("sleep", one_day.sleeps[0].at)
    assert sleep_row["part_of"] == 0
    assert (link_row["formed_by"], link_row["formed_at"]) == ("link", linked_at)
    assert (link_row["edges_formed"], link_row["part_of"], link_row["messages"]) == (1, 1, 0)
    assert link_row["edges_total"] == sleep_row["edges_total"] + 1


# -- every file; read-only; errors ---------------------------------------------------------------


def test_every_analytic_parses_and_plans_with_the_columns_its_header_lists(world: World) -> None:
    catalogue = world.analytics.catalogue()
    files = sorted(p.stem for p in (Path(__file__).parents[2] / "cypher" / "analytics").glob("*"))
    assert [a.name for a in catalogue] == files
    for analytic in catalogue:
        assert world.analytics.explain(analytic.name) == list(analytic.columns), analytic.name


def test_analytics_cannot_write(driver: Driver, namespace: str, tmp_path: Path) -> None:
    (tmp_path / "sneaky_write.cypher").write_text(
        "// sneaky_write: tries to write.\n"
        "//\n"
        "// params:\n"
        "//   $namespace  string  the memory namespace\n"
        "// returns: n\n"
        "//\n"
        "// Neo4j Browser:\n"
        "//   :param namespace => 'demo'\n"
        "CREATE (x:Topic {namespace: $namespace, topic_id: 'sneaky'}) RETURN 1 AS n\n",
        encoding="utf-8",
    )
    store = AnalyticsStore(driver, folder=tmp_path)
    with pytest.raises(SheriffError, match="read access"):
        store.run("sneaky_write", namespace, now=D1)
    records, _, _ = driver.execute_query(
        "MATCH (t:Topic {namespace: $ns}) RETURN count(t) AS n", ns=namespace
    )
    assert records[0]["n"] == 0


def test_unknown_names_and_bad_parameters_are_refused_clearly(world: World) -> None:
    with pytest.raises(NotFound) as unknown:
        world.run("topic_timelines")
    assert "topic_timeline," in str(unknown.value) and "utility_decay" in str(unknown.value)
    with pytest.raises(ValidationFailed, match="needs parameter topic"):
        world.run("topic_timeline")
    with pytest.raises(ValidationFailed, match="bucket: expected one of day, week, month"):
        world.run("topics_by_first_seen", bucket="hour")
    with pytest.raises(ValidationFailed, match="no parameter 'topn'; it takes top"):
        world.run("most_touched_topics_per_week", topn="3")


# -- the CLI ------------------------------------------------------------------------------------


def test_cli_lists_and_runs_analytics(world: World) -> None:
    runner = CliRunner()
    listing = runner.invoke(app, ["analytics", "list", "--json"])
    assert listing.exit_code == 0, listing.output
    assert [a["name"] for a in json.loads(listing.stdout)] == [
        a.name for a in world.analytics.catalogue()
    ]

    ns = world.namespace
    out = runner.invoke(app, ["analytics", "topic_timeline", "-n", ns, "-p", f"topic={BILLING}", "--json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["params"] == {"namespace": ns, "topic": BILLING}
    assert [r["day"] for r in data["rows"]] == ["2026-03-02", "2026-03-04", "2026-03-11"]

    same = runner.invoke(app, ["analytics", "run", "topic_timeline", "-n", ns, "-p", f"topic={BILLING}", "--json"])  # fmt: skip
    assert json.loads(same.stdout)["rows"] == data["rows"]

    table = runner.invoke(app, ["analytics", "topics_by_first_seen", "-n", ns, "-p", "bucket=week"])
    assert table.exit_code == 0, table.output
    assert "2026-03-02" in table.stdout and "2026-03-09" in table.stdout

    decay = runner.invoke(app, ["analytics", "utility_decay", "-n", ns, "--now", "2026-04-30T00:00:00Z", "--json"])  # fmt: skip
    assert json.loads(decay.stdout)["params"]["now"] == "2026-04-30T00:00:00Z"


def test_cli_errors_name_what_is_wrong(world: World) -> None:
    runner = CliRunner()
    ns = world.namespace
    unknown = runner.invoke(app, ["analytics", "nope", "-n", ns])
    assert unknown.exit_code == 1
    assert "no analytic named 'nope'" in unknown.stderr and "edges_per_sleep" in unknown.stderr
    missing = runner.invoke(app, ["analytics", "topic_timeline", "-n", ns])
    assert missing.exit_code == 2 and "needs parameter topic" in missing.stderr
    malformed = runner.invoke(app, ["analytics", "topic_timeline", "-n", ns, "-p", "topic"])
    assert malformed.exit_code == 2 and "key=value" in malformed.stderr
    bad_now = runner.invoke(app, ["analytics", "utility_decay", "-n", ns, "--now", "2026-04-30"])
    assert bad_now.exit_code == 2 and "--now" in bad_now.stderr
