"""The awake loop (spec §4.1) on the OpenAI Responses API with function calling.

Per user message: wake first when a sleep (or a long silence) came since the last wake (§4.3:
the resume decision, open loops, top topics and recent skills go into the input; claimed in
Neo4j, so it happens once per sleep whichever API worker serves the turn), build the memory
context (light retrieval always, deep on a trigger, skill
routing), compose the input (system prompt, a short tail, the packed topic snippets, the skill
manifests, the user message), call the model with the host tools, execute every
``function_call`` and hand back ``function_call_output`` items until the model answers with a
message or the step limit is reached. The user message and the reply are appended to the
continuous conversation, whose sleep policy compacts it when the context budget is tight.

Every model call is logged with its input size and the retrieved topic and skill ids; every
tool call with its name, arguments hash, duration and outcome (§9). When the primary model is
unknown to the API the configured fallback model is used for the rest of the turn.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import openai
from pydantic import BaseModel, Field

from agent.policy import ModelPolicy
from agent.tools import ToolCall, ToolContext, ToolRegistry
from agent.wake_prompt import manifest_lines, wake_block
from graph.clock import ensure_utc
from graph.errors import SheriffError
from retrieval.context import ContextRequest, ContextResult
from retrieval.context_result import RoutedSkill
from service.services import Services
from skills.routing import trigger_prior_failure
from sleepwake.conversation import IncomingMessage
from sleepwake.wake import WakeResult

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

MAX_STORED_ARG = 200
OUTPUT_TAIL_CHARS = 1000  # of a failing tool output, kept for the next turn's skill routing

SYSTEM_PROMPT = """\
You are Sheriff Claw, a long-running assistant with a durable, time-aware memory.
- One continuous conversation: what matters is kept as topics in memory; older turns are \
compacted while you sleep. The "Memory" block below holds what was retrieved for this message, \
each line with its dates; trust it over guesses and say when something is not in memory.
- Use topics_search (with time_window for phrases like "last week") when the block is not \
enough, topics_get for a whole record, topics_upsert to record decisions, constraints and \
facts the user wants kept, skills_search / skills_run for skills, repo_* for the workspace.
- Sleep/wake: memory_sleep compacts the conversation (done automatically when the context \
budget is tight); after a wake, resume an interrupted task from its next step if it is fresh, \
otherwise confirm before continuing.
- Be brief; cite dates when the question is about time."""


class LoopError(SheriffError):
    """The model could not be reached or answered with an error."""


class AgentUnavailable(SheriffError):
    """No Responses API endpoint is configured."""


class ToolCallRecord(BaseModel):
    call_id: str
    name: str
    args_hash: str
    ok: bool
    duration_ms: float
    error: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict, exclude=True)
    # the end of the output when the call failed or its output shows a failure (a test run, a
    # traceback): the next turn routes skills on it (§5.3 trigger 3)
    failure: str | None = None

    def stored(self) -> dict[str, Any]:
        """What the assistant message keeps: the call without long argument values (a later
        sleep reads ``arguments.skill_id`` of ``skills_run`` for the wake packet's skills)."""
        brief = {
            k: v for k, v in self.arguments.items()
            if isinstance(v, str | int | float | bool) and len(str(v)) <= MAX_STORED_ARG
        }  # fmt: skip
        return {**self.model_dump(), "arguments": brief}


class ChatResult(BaseModel):
    reply: str
    stopped: str  # "final" | "step_limit"
    steps: int
    model: str
    effort: str
    tool_calls: list[ToolCallRecord]
    context: dict[str, Any]  # request class, triggers, deep, retrieved ids, skills
    message_ids: list[str]  # the stored user and assistant messages
    sleeps: list[dict[str, Any]]  # sleeps the append triggered (budget / idle gap)
    wake: dict[str, Any] | None = None  # this turn woke: why, woke_at, the resume decision


@dataclass(eq=False)
class AgentLoop:
    services: Services
    client: OpenAI
    registry: ToolRegistry
    policy: ModelPolicy = field(default_factory=ModelPolicy)
    max_steps: int = 8
    tail_turns: int = 6
    budget: int = 1500

    def chat(
        self, namespace: str, text: str, now: datetime, session_id: str | None = None
    ) -> ChatResult:
        """One user turn: wake if due, context, model calls and tool calls, the stored reply.
        ``session_id`` is the caller's name for the session (kept apart per namespace)."""
        now = ensure_utc(now)
        woke = self.services.sleepwake.wake_if_due(namespace, text, now)
        try:
            return self._turn(namespace, text, now, session_id, woke)
        except Exception:
            if woke is not None:  # the model never saw the wake: the next turn wakes instead
                self.services.sleepwake.release_wake(namespace, woke)
            raise

    def _turn(
        self,
        namespace: str,
        text: str,
        now: datetime,
        session_id: str | None,
        woke: WakeResult | None,
    ) -> ChatResult:
        conversation = self.services.conversation
        tail = conversation.tail(namespace, self.tail_turns)
        ctx = self.services.context.build(
            ContextRequest(
                namespace=namespace,
                message=text,
                now=now,
                budget=self.budget,
                session_id=session_id,
                last_tool_output=last_failure(tail),
            )
        )
        stored = conversation.append(  # movable: a turn is stamped by the server
            namespace, [IncomingMessage(role="user", content=text, at=now)], movable=True
        )
        user_ids = [m.message_id for m in stored.messages]
        effort = self.policy.effort_for(text)
        items: list[Any] = [*_tail_items(tail), *_memory_items(ctx, woke, now), _user(text)]
        tool_ctx = ToolContext(namespace=namespace, now=now, message_ids=user_ids)
        reply, stopped, steps, model, calls = self._run(items, effort, tool_ctx, ctx, text)
        answer = conversation.append(
            namespace,
            [IncomingMessage(role="assistant", content=reply or "(no answer)", at=now,
                             tool_calls=[c.stored() for c in calls])],
            movable=True,
        )  # fmt: skip
        return ChatResult(
            reply=reply,
            stopped=stopped,
            steps=steps,
            model=model,
            effort=effort,
            tool_calls=calls,
            context=_context_summary(ctx),
            message_ids=user_ids + [m.message_id for m in answer.messages],
            sleeps=[s.model_dump(mode="json") for s in [*stored.sleeps, *answer.sleeps]],
            wake=_wake_summary(woke),
        )

    def _run(
        self, items: list[Any], effort: str, tool_ctx: ToolContext, ctx: ContextResult, text: str
    ) -> tuple[str, str, int, str, list[ToolCallRecord]]:
        model = self.policy.model
        calls: list[ToolCallRecord] = []
        tools = self.registry.specs()
        shown = {str(s.get("skill_id")) for s in ctx.skills}
        for step in range(1, self.max_steps + 1):
            response, model = self._create(model, items, tools, effort, ctx)
            function_calls = [o for o in response.output if o.type == "function_call"]
            if not function_calls:
                return response.output_text, "final", step, model, calls
            items += [o.model_dump(exclude_none=True) for o in response.output]
            for fc in function_calls:
                call = self.registry.call_for_model(fc.name, fc.arguments, tool_ctx)
                items.append(
                    {"type": "function_call_output", "call_id": fc.call_id,
                     "output": call.output_text()}
                )  # fmt: skip
                calls.append(_record(fc, call))
            items += self._skills_after_failure(text, calls[-1].failure, shown)
        log.warning("chat stopped at the step limit (%d)", self.max_steps)
        return "", "step_limit", self.max_steps, model, calls

    def _skills_after_failure(
        self, text: str, failure: str | None, shown: set[str]
    ) -> list[dict[str, Any]]:
        """A failed tool run routes skills again on its output (§5.3 trigger 3): the ones not
        yet shown this turn (e.g. ``debug``) go to the model before its next step."""
        if not failure:
            return []
        found = self.services.context.route_skills(text, failure)
        new = [s for s in found if str(s.get("skill_id")) not in shown]
        if not new:
            return []
        shown.update(str(s.get("skill_id")) for s in new)
        lines = manifest_lines([_manifest(s) for s in new])
        note = "The last tool call failed. Skills that may help (run with skills_run):\n"
        return [{"role": "developer", "content": note + "\n".join(lines)}]

    def _create(
        self,
        model: str,
        items: list[Any],
        tools: list[dict[str, Any]],
        effort: str,
        ctx: ContextResult,
    ) -> tuple[Any, str]:
        started = time.perf_counter()
        request: dict[str, Any] = {
            "model": model, "instructions": SYSTEM_PROMPT, "input": items, "tools": tools,
            "reasoning": {"effort": effort},
        }  # fmt: skip
        try:
            response = self.client.responses.create(**request)
        except openai.NotFoundError as exc:
            fallback = self.policy.fallback_model
            if not fallback or fallback == model:
                raise LoopError(f"model {model!r} is not available: {exc}") from exc
            log.warning("model %s not available; falling back to %s", model, fallback)
            return self._create(fallback, items, tools, effort, ctx)
        except openai.OpenAIError as exc:
            raise LoopError(f"Responses API call failed: {exc}") from exc
        log.info(
            "responses call model=%s effort=%s input_chars=%d input_items=%d topics=%s skills=%s "
            "duration_ms=%.1f",
            model,
            effort,
            len(json.dumps(items, default=str)),
            len(items),
            _retrieved_ids(ctx),
            [s.get("skill_id") for s in ctx.skills],
            (time.perf_counter() - started) * 1000,
        )
        return response, model


def _record(fc: Any, call: ToolCall) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=fc.call_id,
        name=fc.name,
        args_hash=call.args_hash,
        ok=call.ok,
        duration_ms=call.duration_ms,
        error=call.error,
        arguments=_arguments(fc.arguments),
        failure=failure_of(call),
    )


def failure_of(call: ToolCall) -> str | None:
    """The end of a call's output when it failed: a refused call, an output saying
    ``"ok": false``, or (no ``ok`` given) text showing a traceback, failed tests or an error
    line (``skills.routing.trigger_prior_failure``); None for a success."""
    if not call.ok:
        return f"error: {call.name} failed: {call.error}"[-OUTPUT_TAIL_CHARS:]
    said = call.output.get("ok") if isinstance(call.output, dict) else None
    text = "\n".join(_strings(call.output))
    if said is True or (said is None and trigger_prior_failure(text) is None):
        return None
    return (text or f"error: {call.name} reported ok=false")[-OUTPUT_TAIL_CHARS:]


def _strings(value: Any, limit: int = 200) -> list[str]:
    """The string leaves of a tool output (tracebacks keep their line breaks), at most
    ``limit`` of them."""
    out: list[str] = []
    stack = [value]
    while stack and len(out) < limit:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return out


def last_failure(tail: list[Any]) -> str | None:
    """The failure of the last tool call of the previous reply, if it failed (stored on the
    assistant message, so any API worker sees it)."""
    for m in reversed(tail):
        if m.role == "assistant":
            calls = m.tool_calls or []
            return (calls[-1].get("failure") or None) if calls else None
    return None


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _tail_items(tail: list[Any]) -> list[dict[str, Any]]:
    """The short tail as input messages (tool turns are folded into assistant text)."""
    out = []
    for m in tail:
        role = m.role if m.role in ("user", "assistant") else "assistant"
        out.append({"role": role, "content": m.content})
    return out


def _memory_items(
    ctx: ContextResult, woke: WakeResult | None, now: datetime
) -> list[dict[str, Any]]:
    parts = []
    if woke is not None:
        parts.append(wake_block(woke, now))
    if ctx.context_text.strip():
        parts.append("Memory (retrieved for this message):\n" + ctx.context_text)
    if ctx.skills:
        lines = manifest_lines([_manifest(s) for s in ctx.skills])
        parts.append("Skills that may help (run with skills_run):\n" + "\n".join(lines))
    if not parts:
        return []
    return [{"role": "developer", "content": "\n\n".join(parts)}]


def _manifest(skill: RoutedSkill) -> dict[str, Any]:
    """A routed skill's manifest (``skills.router.model_manifest``); id and name otherwise."""
    return dict(skill.get("manifest") or {"skill_id": skill.get("skill_id"),
                                          "name": skill.get("name")})  # fmt: skip


def _wake_summary(woke: WakeResult | None) -> dict[str, Any] | None:
    if woke is None:
        return None
    return {
        "reason": woke.reason,
        "woke_at": woke.woke_at.isoformat() if woke.woke_at else None,
        "packet_id": woke.packet.packet_id if woke.packet else None,
        "resume": woke.resume.model_dump(mode="json"),
        "top_topic_ids": [t.topic_id for t in woke.top_topics],
        "open_loops": [o.text for o in woke.open_loops],
        "skills": [str(s.get("skill_id")) for s in woke.skills],
    }


def _retrieved_ids(ctx: ContextResult) -> list[str]:
    return [str(i.get("record_id")) for i in ctx.items]


def _context_summary(ctx: ContextResult) -> dict[str, Any]:
    return {
        "request_class": ctx.request_class,
        "triggers": ctx.triggers,
        "deep": ctx.deep,
        "time_window": ctx.time_window,
        "retrieved": _retrieved_ids(ctx),
        "skills": [s.get("skill_id") for s in ctx.skills],
        "used_tokens": ctx.used_tokens,
    }
