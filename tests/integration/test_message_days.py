"""A time window inside the message index (migration 016, graph/fulltext.py in_window): a
windowed message search ranks only the window's UTC days, keeps every message's score, still
cuts the window exactly, and finds messages stored before the migration once it back-filled
them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from neo4j import Driver

from graph.cypher import split_statements
from graph.messages import MessageStore
from graph.models import Message, parse
from tests.integration.test_fast_path import CountingDriver

MIGRATION = Path(__file__).resolve().parents[2] / "cypher/schema/016_message_days.cypher"
DAY = datetime(2026, 1, 10, tzinfo=UTC)


def _said(namespace: str, i: int, at: datetime, content: str) -> Message:
    data = {
        "message_id": f"{namespace}-m{i}", "namespace": namespace, "role": "user",
        "content": content, "at": at, "token_estimate": len(content) // 4,
    }  # fmt: skip
    return parse(Message, data)


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
    # the 600 louder messages on other days were never among Lucene's rows: one page did
    assert counting.calls == ["search_messages_fulltext"], counting.calls
    assert [h.message.message_id for h in hits] == [f"{namespace}-m601", f"{namespace}-m602"]
    # the day clause adds nothing to a score: the same as the whole conversation's search
    everything = {h.message.message_id: h.score for h in store.search_text(namespace, "lake", 700)}
    assert all(h.score == everything[h.message.message_id] for h in hits)
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
    backfill = [s for s in split_statements(MIGRATION.read_text(encoding="utf-8"))
                if s.lstrip().startswith("MATCH")]  # fmt: skip
    assert len(backfill) == 1  # the index statements are the schema's already
    driver.execute_query(backfill[0])
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
