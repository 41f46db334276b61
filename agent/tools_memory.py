"""Memory-control tools for the Responses loop and ``/v1/tools``: forget, correct or retract a
fact, and a topic's history. They call the same services as the REST routes and the CLI.

``memory_forget`` defaults to a dry run: a model asked to forget something first sees what
would go, and deletes only with ``dry_run: false`` (a user's explicit confirmation). The
namespace is the caller's (``ToolContext``), never an argument.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from agent.tools import Tool, ToolContext, _Params
from graph.validation import Ident, Reason, ShortText, TopicId
from service.services import Services


class MemoryForget(_Params):
    topic_id: TopicId | None = Field(default=None, description="forget this topic")
    message_id: Ident | None = Field(default=None, description="this message")
    query: str | None = Field(default=None, min_length=2, max_length=200,
                              description="everything this phrase matches")  # fmt: skip
    with_messages: bool | None = Field(default=None, description="topic_id: also delete the "
                                       "messages it came from (default false)")  # fmt: skip
    dry_run: bool | None = Field(default=None, description="default true: list what would "
                                 "be deleted; false deletes (only on the user's word)")  # fmt: skip

    @model_validator(mode="after")
    def _one_target(self) -> MemoryForget:
        given = [n for n in ("topic_id", "message_id", "query") if getattr(self, n)]
        if len(given) != 1:
            raise ValueError("give exactly one of topic_id, message_id, query")
        return self


class FactsCorrect(_Params):
    topic_id: TopicId
    fact_id: TopicId = Field(description="a fact_id from topics_get")
    text: ShortText = Field(description="what is true instead")


class FactsRetract(_Params):
    topic_id: TopicId
    fact_id: TopicId = Field(description="a fact_id from topics_get")
    reason: Reason | None = Field(default=None, description="why (kept with the fact)")


class TopicsHistory(_Params):
    topic_id: TopicId


def _forget(s: Services, ctx: ToolContext, p: MemoryForget) -> dict[str, Any]:
    dry = True if p.dry_run is None else p.dry_run
    if p.topic_id:
        report = s.forget.topic(ctx.namespace, p.topic_id, with_messages=bool(p.with_messages),
                                dry_run=dry)  # fmt: skip
    elif p.message_id:
        report = s.forget.messages_by_id(ctx.namespace, [p.message_id], dry_run=dry)
    else:
        assert p.query is not None
        return s.forget.query(ctx.namespace, p.query, dry_run=dry).model_dump(mode="json")
    return report.model_dump(mode="json")


def _correct(s: Services, ctx: ToolContext, p: FactsCorrect) -> dict[str, Any]:
    change = s.facts.correct(ctx.namespace, p.topic_id, p.fact_id, p.text, at=ctx.now,
                             source_message_ids=list(ctx.message_ids))  # fmt: skip
    return change.model_dump(mode="json")


def _retract(s: Services, ctx: ToolContext, p: FactsRetract) -> dict[str, Any]:
    change = s.facts.retract(ctx.namespace, p.topic_id, p.fact_id, at=ctx.now, reason=p.reason,
                             source_message_ids=list(ctx.message_ids))  # fmt: skip
    return change.model_dump(mode="json")


def _history(s: Services, ctx: ToolContext, p: TopicsHistory) -> dict[str, Any]:
    return s.facts.history(ctx.namespace, p.topic_id).model_dump(mode="json")


def memory_tools() -> list[Tool]:
    """The memory-control tools, for ``agent.registry.build_registry``."""
    return [
        Tool("memory_forget", "Forget for real (not archive): one topic, one message, or "
             "everything a phrase matches. Dry run by default: shows what would be deleted; "
             "call again with dry_run false only when the user confirms.",
             MemoryForget, _forget, writes=True),
        Tool("facts_correct", "Correct one fact of a topic: the new text becomes current, the "
             "old fact is kept as history (superseded).", FactsCorrect, _correct, writes=True),
        Tool("facts_retract", "Retract one fact of a topic (no longer true; kept as history).",
             FactsRetract, _retract, writes=True),
        Tool("topics_history", "Every version of a topic's facts (current, superseded, "
             "retracted) and its events, oldest first.", TopicsHistory, _history),
    ]  # fmt: skip
