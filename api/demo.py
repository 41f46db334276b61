"""``sheriff demo``: a bundled multi-day conversation replayed through the real pipeline.

Three sessions (a party on 2 March, a database decision on 4 March, a billing migration cut off
half-way on 9 March) are ingested with their own dates under the production sleep policy; the
agent sleeps, wakes fresh (and resumes the migration) and wakes again days later (stale: it asks
to confirm). Then, on 13 March, it answers questions through the awake-loop context (one of them
"last week") and once through the full Responses loop with the offline stand-in model, printing
what was recalled, why, and a Neo4j Browser query to look at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from agent.fake_responses import FakeResponses
from agent.loop import AgentLoop, ChatResult
from agent.offline_model import offline_model
from agent.policy import ModelPolicy
from graph.db import drop_namespace
from retrieval.context import ContextRequest, ContextResult
from sleepwake.conversation import parse_jsonl
from sleepwake.sleep import SleepSummary
from sleepwake.wake import ResumePlan, WakeResult

if TYPE_CHECKING:
    from api.container import Container

ASKED_AT = datetime(2026, 3, 13, 10, 0, tzinfo=UTC)
QUESTIONS = [
    "What did we decide about the database for billing?",
    "What did we work on last week?",
    "How's the party planning going?",
]
CHAT_QUESTION = "Which database did we pick, and why?"
BROWSER_QUERY = """:param namespace => '{ns}'
MATCH (t:Topic {{namespace: $namespace}})
OPTIONAL MATCH (t)-[r:RELATES_TO|DEPENDS_ON|PART_OF|NEXT|PREV]-(o:Topic)
RETURN t, r, o LIMIT 200"""


@dataclass
class Answer:
    question: str
    context: ContextResult


@dataclass
class DemoReport:
    namespace: str
    messages: int = 0
    sleeps: list[SleepSummary] = field(default_factory=list)
    fresh: WakeResult | None = None
    stale: ResumePlan | None = None
    answers: list[Answer] = field(default_factory=list)
    chat: ChatResult | None = None


def sample_conversation() -> list[Any]:
    text = (resources.files("agent") / "data" / "demo_conversation.jsonl").read_text("utf-8")
    return parse_jsonl(text.splitlines())


def run_demo(c: Container, namespace: str, out: Console) -> DemoReport:
    """Replay, sleep, wake, ask; print each stage to ``out`` and return what happened."""
    report = DemoReport(namespace)
    drop_namespace(c.driver, namespace, c.settings.neo4j_database)
    _replay(c, namespace, out, report)
    last = report_last_at(c, namespace)
    report.fresh = c.waker.wake(namespace, "ok, where were we?", last + timedelta(hours=2))
    _print_wake(out, "Wake 2 hours later: 'ok, where were we?'", report.fresh.resume)
    report.stale = c.waker.wake(namespace, "hi again", ASKED_AT).resume
    _print_wake(out, f"Wake on {ASKED_AT:%d %B}: 'hi again'", report.stale)
    for q in QUESTIONS:
        ctx = c.context.build(ContextRequest(namespace=namespace, message=q, now=ASKED_AT))
        report.answers.append(Answer(q, ctx))
        _print_answer(out, q, ctx)
    report.chat = _chat(c, namespace, out)
    out.rule("Look at it in Neo4j Browser")
    out.print(
        f"Open http://127.0.0.1:{c.settings.neo4j_http_port}/browser/ "
        "(user neo4j, password from `sheriff neo4j env`) and run:"
    )
    out.print(BROWSER_QUERY.format(ns=namespace), markup=False, highlight=False)
    return report


def report_last_at(c: Container, namespace: str) -> datetime:
    tail = c.messages.tail(namespace, 1)
    return tail[-1].at if tail else ASKED_AT


def _replay(c: Container, namespace: str, out: Console, report: DemoReport) -> None:
    items = sample_conversation()
    out.rule("Replaying the sample conversation")
    out.print(f"{len(items)} messages, {items[0].at:%d %b} to {items[-1].at:%d %b %Y}, "
              "appended with their own dates under the production sleep policy")  # fmt: skip
    result = c.conversation.append(namespace, items)
    report.messages = len(result.messages)
    report.sleeps = list(result.sleeps)
    at = items[-1].at + timedelta(minutes=30)
    report.sleeps.append(c.sleeper.sleep(namespace, at, "explicit"))
    table = Table("slept at", "why", "compacted", "topics new/updated", "events")
    for s in report.sleeps:
        table.add_row(f"{s.slept_at:%d %b %H:%M}", s.reason, str(s.messages_compacted),
                      f"{s.topics_created}/{s.topics_updated}", str(s.events))  # fmt: skip
    out.print(table)


def _print_wake(out: Console, title: str, plan: ResumePlan) -> None:
    out.rule(title)
    out.print(f"[bold]{plan.action}[/]: {plan.reason}")
    if plan.goal:
        out.print(f"  goal: {plan.goal}")
    if plan.next_step:
        out.print(f"  next step: {plan.next_step}")


def _print_answer(out: Console, question: str, ctx: ContextResult) -> None:
    out.rule(f"{ASKED_AT:%d %B}: {question!r}")
    window = ctx.time_window
    if window:
        out.print(f"time window: {window['phrase']!r} = {window['start']} to {window['end']}")
    out.print(f"request class {ctx.request_class}, triggers {ctx.triggers or 'none'}, "
              f"{'deep' if ctx.deep else 'light'} retrieval")  # fmt: skip
    table = Table("recalled", "seen", "why", "text")
    for item in ctx.items[:5]:
        seen = str(item["freshness"]["last_seen_at"] or "")[:10]
        table.add_row(str(item["title"]), seen, str(item["reason_label"]),
                      str(item["durable_summary"])[:160])  # fmt: skip
    out.print(table if ctx.items else "(nothing injected)")


def _chat(c: Container, namespace: str, out: Console) -> ChatResult:
    from openai import OpenAI

    out.rule(f"The Responses loop, offline stand-in model: {CHAT_QUESTION!r}")
    with FakeResponses(script=offline_model) as fake:
        client = OpenAI(api_key="offline-demo", base_url=fake.base_url, max_retries=0)
        loop = AgentLoop(c.services, client, c.tools, ModelPolicy(fallback_model=None))
        result = loop.chat(namespace, CHAT_QUESTION, ASKED_AT)
    for call in result.tool_calls:
        out.print(f"tool call: {call.name} ({'ok' if call.ok else call.error}, "
                  f"{call.duration_ms:.0f} ms)")  # fmt: skip
    out.print(result.reply, markup=False, highlight=False)
    return result
