"""A time window inside the full-text indexes (migrations 016 and 017, graph/fulltext.py
in_window and in_span): a windowed message or topic search ranks only what shares a UTC day
with the window, keeps every score, still cuts the window exactly, follows a topic's span when
an update moves it, and finds what was stored before the migration once it back-filled it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from neo4j import Driver

from graph.cypher import split_statements
from graph.fulltext import span_tokens
from graph.messages import MessageStore
from graph.models import Message, Topic, parse
from graph.topics import TopicStore
from tests.integration.test_fast_path import CountingDriver, _said

SCHEMA = Path(__file__).resolve().parents[2] / "cypher/schema"
DAY = datetime(2026, 1, 10, tzinfo=UTC)


def _backfill(driver: Driver, migration: str) -> None:
    """Run ``migration``'s back-fill (its one ``MATCH`` statement): the index statements are
    the schema's already."""
    text = (SCHEMA / migration).read_text(encoding="utf-8")
    backfill = [s for s in split_statements(text) if s.lstrip().startswith("MATCH")]
    assert len(backfill) == 1
    driver.execute_query(backfill[0])


def _conversation(namespace: str) -> list[Message]:
    """600 louder matches on the fortnight before DAY, then four quieter ones around a window
    that crosses UTC midnight (20:00 to 04:00 UTC: an evening in UTC-5), two of them inside."""
    loud = "lake lake lake cold"
    said = [_said(namespace, i, DAY - timedelta(days=14) + timedelta(minutes=30 * i), loud)
            for i in range(600)]  # fmt: skip
    quiet = "the lake was cold and grey all week"
    for i, hour in enumerate((10, 21, 27, 29)):  # 10:00 and 05:00 next day are outside
        said.append(_said(namespace, 600 + i, DAY + timedelta(hours=hour), quiet))
    return said


def test_a_narrow_window_is_ranked_among_its_own_days_in_one_read(
    driver: Driver, namespace: str
) -> None:
    store = MessageStore(driver)
    store.append(namespace, _conversation(namespace))
    evening = timezone(timedelta(hours=-5))
    since, until = (
        datetime(2026, 1, 10, 15, tzinfo=evening),
        datetime(2026, 1, 10, 23, tzinfo=evening),
    )
    search = store.text_query(namespace, "lake", 5, since, until)
    assert search is not None
    assert search.params["query"].startswith("at_days:(d20260110 d20260111)^0 AND ns_token:")
    counting = CountingDriver(driver)
    hits = MessageStore(counting).search_text(namespace, "lake", 5, since, until)  # type: ignore[arg-type]
    # the 600 louder messages on other days were never among the window's rows: one page did;
    # the second read is the whole conversation's candidates, whose statistics rank the window
    # as a context ranks it (a message scores the same inside a window as without one); then
    # the best read whole
    assert counting.calls == ["search_messages_fulltext"] * 2 + ["get_message_hits"], counting.calls
    assert [h.message.message_id for h in hits] == [f"{namespace}-m601", f"{namespace}-m602"]
    # scored by the namespace's own BM25 over the window's candidates: the same words, the
    # same score, whatever the louder days hold
    assert hits[0].score == hits[1].score > 0
    everything = {h.message.message_id: h.score for h in store.search_text(namespace, "lake", 700)}
    assert len(everything) == 604


def test_messages_stored_before_the_migration_are_found_by_a_window_after_it(
    driver: Driver, namespace: str
) -> None:
    store = MessageStore(driver)
    store.append(namespace, _conversation(namespace)[600:])
    since, until = DAY + timedelta(hours=20), DAY + timedelta(hours=28)
    # as a store before migration 016 wrote them: no at_days
    driver.execute_query("MATCH (m:Message) WHERE m.namespace = $ns REMOVE m.at_days", ns=namespace)
    assert store.search_text(namespace, "lake", 5, since, until) == []
    _backfill(driver, "016_message_days.cypher")
    records, _, _ = driver.execute_query(
        "MATCH (m:Message) WHERE m.namespace = $ns RETURN m.message_id AS id, m.at_days AS days "
        "ORDER BY id",
        ns=namespace,
    )
    assert [r["days"] for r in records] == [
        "y2026 m202601 d20260110", "y2026 m202601 d20260110",
        "y2026 m202601 d20260111", "y2026 m202601 d20260111",
    ]  # fmt: skip
    found = store.search_text(namespace, "lake", 5, since, until)
    assert [h.message.message_id for h in found] == [f"{namespace}-m601", f"{namespace}-m602"]


# -- topics --------------------------------------------------------------------------------------
def _topic(namespace: str, key: str, name: str, first: datetime, last: datetime) -> Topic:
    data = {
        "topic_id": f"{namespace}-{key}", "namespace": namespace, "name": name,
        "one_liner": f"{name} notes", "time": {"first_seen_at": first, "last_seen_at": last},
    }  # fmt: skip
    return parse(Topic, data)


def _topics(namespace: str) -> list[Topic]:
    """450 louder topics seen in December, then five quieter ones around the week of DAY."""
    old = datetime(2025, 12, 1, tzinfo=UTC)
    topics = [_topic(namespace, f"old{i}", f"Lake Lake {i}", old, old + timedelta(days=i % 20))
              for i in range(450)]  # fmt: skip
    week = [
        ("before", DAY - timedelta(days=30), DAY - timedelta(days=1, hours=1)),  # ends before
        ("ends_in", DAY - timedelta(days=60), DAY + timedelta(hours=3)),  # spans into it
        ("around", DAY - timedelta(days=40), DAY + timedelta(days=40)),  # spans the whole week
        ("starts_in", DAY + timedelta(days=6, hours=23), DAY + timedelta(days=90)),
        ("after", DAY + timedelta(days=7, hours=1), DAY + timedelta(days=9)),  # starts after
    ]
    topics += [_topic(namespace, key, f"Lake trip {key}", a, b) for key, a, b in week]
    return topics


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(h.topic.topic_id.rsplit("-", 1)[1] for h in hits)


def test_a_windowed_topic_search_ranks_only_the_topics_whose_span_meets_the_window(
    driver: Driver, namespace: str
) -> None:
    store = TopicStore(driver)
    store.create(_topics(namespace), [None] * 455, DAY)
    since, until = DAY, DAY + timedelta(days=7)  # a week: 10 Jan to 16 Jan 2026
    search = store.text_query(namespace, "lake", 5, since, until)
    assert search is not None
    assert search.params["query"].startswith("span_days:(f202601 d20260110 ")
    counting = CountingDriver(driver)
    hits = TopicStore(counting).search_text(namespace, "lake", 5, since, until)  # type: ignore[arg-type]
    # the 450 louder December topics were never Lucene's rows: one page, no growth
    assert counting.calls[0] == "search_topics_fulltext" and len(counting.calls) <= 2
    assert counting.calls.count("search_topics_fulltext") == 1, counting.calls
    assert _ids(hits) == ["around", "ends_in", "starts_in"]


def test_an_update_that_moves_a_topics_last_mention_moves_it_into_a_later_window(
    driver: Driver, namespace: str
) -> None:
    store = TopicStore(driver)
    store.create(_topics(namespace), [None] * 455, DAY)
    later = (DAY + timedelta(days=20), DAY + timedelta(days=21))
    assert _ids(store.search_text(namespace, "lake", 5, *later)) == ["around", "starts_in"]
    before = store.get(namespace, [f"{namespace}-before"])[0]
    moved = before.model_copy(
        update={"time": before.time.model_copy(update={"last_seen_at": later[0]})}
    )
    store.update(moved, None, later[0], before.version)
    assert _ids(store.search_text(namespace, "lake", 5, *later)) == [
        "around", "before", "starts_in",
    ]  # fmt: skip


def test_topics_stored_before_the_migration_are_found_by_a_window_after_it(
    driver: Driver, namespace: str
) -> None:
    store = TopicStore(driver)
    store.create(_topics(namespace)[450:], [None] * 5, DAY)
    since, until = DAY, DAY + timedelta(days=7)
    driver.execute_query("MATCH (t:Topic) WHERE t.namespace = $ns REMOVE t.span_days", ns=namespace)
    assert store.search_text(namespace, "lake", 5, since, until) == []
    _backfill(driver, "017_topic_days.cypher")
    records, _, _ = driver.execute_query(
        "MATCH (t:Topic) WHERE t.namespace = $ns "
        "RETURN t.first_seen_at AS a, t.last_seen_at AS b, t.span_days AS days",
        ns=namespace,
    )
    assert len(records) == 5
    for r in records:  # what every topic write stores (graph/mapping.py topic_props)
        assert r["days"] == span_tokens(r["a"].to_native(), r["b"].to_native())
    found = store.search_text(namespace, "lake", 5, since, until)
    assert _ids(found) == ["around", "ends_in", "starts_in"]
