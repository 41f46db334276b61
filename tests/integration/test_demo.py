"""``sheriff demo`` end to end: recall of an earlier topic, "last week" resolved, a resumed task."""

from __future__ import annotations

import io

from neo4j import Driver
from rich.console import Console

from api.container import Container
from api.demo import ASKED_AT, run_demo
from api.settings import Settings
from graph.clock import FixedClock
from retrieval.embedding import MiniLMEmbedder


def test_the_demo_recalls_resolves_and_resumes(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    c = Container(settings, clock=FixedClock(ASKED_AT), driver=driver, embedder=embedder)
    buf = io.StringIO()
    report = run_demo(c, namespace, Console(file=buf, width=160))
    printed = buf.getvalue()
    print(printed)

    assert report.messages == 28 and report.sleeps
    # a resumed task: fresh wake resumes with the goal and the next step, a stale one asks
    assert report.fresh is not None and report.fresh.resume.action == "resume"
    assert "invoices table" in report.fresh.resume.next_step
    assert report.stale is not None and report.stale.action == "confirm"
    # recall of an earlier topic (4 March) on 13 March
    database, last_week, party = report.answers
    assert any("Postgres over MongoDB" in str(i["durable_summary"]) for i in database.context.items)
    # "last week" = the rolling 7 days before 13 March 10:00, and the migration is recalled
    assert last_week.context.time_window is not None
    assert last_week.context.time_window["start"] == "2026-03-06T10:00:00+00:00"
    assert any("billing" in str(i["durable_summary"]).lower() for i in last_week.context.items)
    seen = [str(i["freshness"]["last_seen_at"]) for i in last_week.context.items]
    assert seen[0] >= "2026-03-06"  # the best item is from inside the window
    assert any("lake house" in str(i["durable_summary"]) for i in party.context.items)
    # the Responses loop with the offline stand-in: a topics_search call, then an answer
    assert report.chat is not None and [t.name for t in report.chat.tool_calls] == ["topics_search"]
    assert "Postgres" in report.chat.reply
    assert "MATCH (t:Topic {namespace: $namespace})" in printed
