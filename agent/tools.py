"""The host tools (spec §7.3) as Responses API function tools: one registry for the awake loop
and the REST API.

Each tool has a name the API accepts (``topics_search``, not ``topics.search``), a pydantic
parameter model from which its JSON schema is generated (strict where possible, see
:mod:`agent.schema`), and a handler ``(deps, ctx, params) -> JSON-ready value``.

``ToolRegistry.invoke`` raises (unknown tool -> :class:`ToolNotFound`, bad arguments ->
``ValidationFailed``, anything the stores refuse -> their ``SheriffError``); the REST API maps
those to HTTP statuses. ``ToolRegistry.call_for_model`` never raises: it turns every failure into
an ``{"error": ...}`` output the model can read and recover from, and logs each call with its
name, arguments hash, duration and outcome (§9).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent import topic_ops
from graph.errors import NotFound, SheriffError, ValidationFailed
from graph.models import describe_errors
from graph.strict_schema import tool_parameters

if TYPE_CHECKING:
    from api.container import Container
    from skills.tools import RepoTools

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 20_000


class ToolNotFound(NotFound):
    """No tool of that name."""


@dataclass(frozen=True)
class ToolContext:
    """Who is calling and when: the namespace comes from the API key or the loop, never from
    the model's arguments."""

    namespace: str
    now: datetime
    message_ids: Sequence[str] = ()  # the user turn(s) this call serves: provenance of writes


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- parameter models -------------------------------------------------------------------------
class TopicsSearch(_Params):
    query: str = Field(min_length=1, max_length=2000, description="what to look for")
    time_window: str | None = Field(
        default=None,
        max_length=200,
        description="a time phrase such as 'last week', 'yesterday', 'before you slept', "
        "'in March'; null = taken from the query, if it has one",
    )
    k: int | None = Field(default=None, ge=1, le=25, description="how many topics (default 8)")


class TopicsGet(_Params):
    topic_ids: list[str] = Field(min_length=1, max_length=25, description="ids from search")


class TopicsUpsert(_Params):
    topic_id: str | None = Field(default=None, max_length=64, description="null = create")
    name: str | None = Field(default=None, max_length=200, description="required to create")
    one_liner: str | None = Field(default=None, max_length=500, description="the canonical gist")
    facts: list[str] | None = Field(default=None, max_length=50, description="facts to add")
    aliases: list[str] | None = Field(default=None, max_length=20, description="other names")
    open_loops: list[str] | None = Field(default=None, max_length=20, description="to-dos")


class TopicsLink(_Params):
    from_topic_id: str = Field(min_length=1, max_length=64)
    to_topic_id: str = Field(min_length=1, max_length=64)
    type: Literal["RELATES_TO", "DEPENDS_ON", "PART_OF", "NEXT", "PREV"]
    weight_delta: float | None = Field(default=None, ge=-10, le=10, description="default 1.0")


class MemorySleep(_Params):
    """Compact the conversation buffer of this namespace now."""


class MemoryWake(_Params):
    message: str = Field(min_length=1, max_length=8000, description="the user's new message")


class SkillsSearch(_Params):
    query: str = Field(min_length=1, max_length=2000)
    k: int | None = Field(default=None, ge=1, le=10, description="default 3")


class SkillsRun(_Params):
    skill_id: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] = Field(default_factory=dict, description="per the skill's inputs_schema")
    ctx_refs: list[str] | None = Field(default=None, max_length=20, description="topic ids")


class RepoListFiles(_Params):
    pattern: str | None = Field(default=None, max_length=200, description="glob, default **/*")


class RepoReadFile(_Params):
    path: str = Field(min_length=1, max_length=500)


class RepoWriteFile(_Params):
    path: str = Field(min_length=1, max_length=500)
    content: str = Field(max_length=1_000_000)


class RepoRunTests(_Params):
    preset: str | None = Field(default=None, max_length=100, description="e.g. 'pytest'")
    command: str | None = Field(default=None, max_length=500, description="an allowed command")


# -- the registry -----------------------------------------------------------------------------
Handler = Callable[["Container", ToolContext, Any], Any]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: type[BaseModel]
    handler: Handler
    writes: bool = False

    def spec(self) -> dict[str, Any]:
        """The Responses API ``tools[]`` entry."""
        parameters, strict = tool_parameters(self.params)
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": parameters,
            "strict": strict,
        }


@dataclass
class ToolCall:
    """The record of one call (what §9 asks to log)."""

    name: str
    args_hash: str
    ok: bool
    duration_ms: float
    output: Any = None
    error: str | None = None

    def output_text(self) -> str:
        """The ``function_call_output`` string handed back to the model (bounded)."""
        payload = self.output if self.ok else {"error": self.error}
        text = json.dumps(payload, default=str, ensure_ascii=False)
        if len(text) > MAX_OUTPUT_CHARS:
            text = text[:MAX_OUTPUT_CHARS] + '..." [truncated]'
        return text


@dataclass
class ToolRegistry:
    deps: Container
    tools: dict[str, Tool] = field(default_factory=dict)

    def names(self) -> list[str]:
        return list(self.tools)

    def specs(self, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
        chosen = names if names is not None else list(self.tools)
        return [self.get(n).spec() for n in chosen]

    def get(self, name: str) -> Tool:
        tool = self.tools.get(name)
        if tool is None:
            raise ToolNotFound(f"unknown tool {name!r}; known: {', '.join(self.tools)}")
        return tool

    def parse_args(self, name: str, arguments: str | dict[str, Any] | None) -> BaseModel:
        tool = self.get(name)
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                raise ValidationFailed(f"arguments of {name} are not JSON: {exc}") from exc
        if not isinstance(arguments, dict):
            raise ValidationFailed(f"arguments of {name} must be a JSON object")
        try:
            return tool.params.model_validate(arguments)
        except ValidationError as exc:
            raise ValidationFailed(describe_errors(f"arguments of {name}", exc)) from exc

    def invoke(self, name: str, arguments: str | dict[str, Any] | None, ctx: ToolContext) -> Any:
        """Run a tool; raises on an unknown tool, bad arguments or a refused operation."""
        params = self.parse_args(name, arguments)
        return self.get(name).handler(self.deps, ctx, params)

    def call_for_model(
        self, name: str, arguments: str | dict[str, Any] | None, ctx: ToolContext
    ) -> ToolCall:
        """Run a tool for the model: never raises; failures become ``{"error": ...}``."""
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
        digest = hashlib.sha256((raw or "").encode()).hexdigest()[:12]
        started = time.perf_counter()
        try:
            output, error = self.invoke(name, arguments, ctx), None
        except SheriffError as exc:
            output, error = None, f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a tool bug must not kill the conversation; it is logged
            log.exception("tool %s failed", name)
            output, error = None, f"internal error in {name}: {type(exc).__name__}"
        call = ToolCall(name, digest, error is None, (time.perf_counter() - started) * 1000)
        call.output, call.error = output, error
        log.info(
            "tool call name=%s args_hash=%s ok=%s duration_ms=%.1f namespace=%s",
            name,
            digest,
            call.ok,
            call.duration_ms,
            ctx.namespace,
            extra={"tool": name, "args_hash": digest, "ok": call.ok},
        )
        return call


# -- handlers ---------------------------------------------------------------------------------
def _search(c: Container, ctx: ToolContext, p: TopicsSearch) -> dict[str, Any]:
    return topic_ops.search(c, ctx.namespace, p.query, ctx.now, p.time_window, p.k or 8)


def _get(c: Container, ctx: ToolContext, p: TopicsGet) -> list[dict[str, Any]]:
    return topic_ops.get_full(c, ctx.namespace, p.topic_ids)


def _upsert(c: Container, ctx: ToolContext, p: TopicsUpsert) -> dict[str, Any]:
    change = topic_ops.TopicChange(
        name=p.name,
        one_liner=p.one_liner,
        facts=p.facts or [],
        aliases=p.aliases or [],
        open_loops=p.open_loops or [],
    )
    return topic_ops.upsert(c, ctx.namespace, p.topic_id, change, ctx.now, ctx.message_ids)


def _link(c: Container, ctx: ToolContext, p: TopicsLink) -> dict[str, Any]:
    delta = 1.0 if p.weight_delta is None else p.weight_delta
    return topic_ops.link(c, ctx.namespace, p.from_topic_id, p.to_topic_id, p.type, delta, ctx.now)


def _sleep(c: Container, ctx: ToolContext, _: MemorySleep) -> dict[str, Any]:
    return c.sleeper.sleep(ctx.namespace, ctx.now, "explicit").model_dump(mode="json")


def _wake(c: Container, ctx: ToolContext, p: MemoryWake) -> dict[str, Any]:
    result = c.waker.wake(ctx.namespace, p.message, ctx.now)
    return {
        "resume": result.resume.model_dump(mode="json"),
        "topics": [t.model_dump(mode="json") for t in result.topics],
        "skills": result.skills,
        "time_window": result.time_window,
    }


def _skills_search(c: Container, ctx: ToolContext, p: SkillsSearch) -> list[dict[str, Any]]:
    return c.skills_for(ctx.namespace).search(p.query, p.k or 3)


def _skills_run(c: Container, ctx: ToolContext, p: SkillsRun) -> dict[str, Any]:
    return c.skills_for(ctx.namespace).run(p.skill_id, p.args, p.ctx_refs).model_dump(mode="json")


def _list_files(c: Container, ctx: ToolContext, p: RepoListFiles) -> list[str]:
    return _repo(c, ctx).list_files(p.pattern or "**/*")


def _read_file(c: Container, ctx: ToolContext, p: RepoReadFile) -> dict[str, Any]:
    return {"path": p.path, "content": _repo(c, ctx).read_file(p.path)}


def _write_file(c: Container, ctx: ToolContext, p: RepoWriteFile) -> dict[str, Any]:
    return _repo(c, ctx).write_file(p.path, p.content)


def _run_tests(c: Container, ctx: ToolContext, p: RepoRunTests) -> dict[str, Any]:
    return _repo(c, ctx).run_tests(p.command, p.preset)


def _repo(c: Container, ctx: ToolContext) -> RepoTools:
    return c.skills_for(ctx.namespace).host.repo


def build_registry(deps: Container) -> ToolRegistry:
    """Every host tool of spec §7.3, bound to the composition root ``deps``."""
    tools = [
        Tool("topics_search", "Search memory topics by meaning, name or alias; a time phrase "
             "filters and boosts by when topics were seen. Returns compact topic snippets.",
             TopicsSearch, _search),
        Tool("topics_get", "Full topics (facts, numbers, open loops, time, events) by id.",
             TopicsGet, _get),
        Tool("topics_upsert", "Create a topic (topic_id null, name required) or add to one: "
             "replace its one_liner, add facts, aliases and open loops.",
             TopicsUpsert, _upsert, writes=True),
        Tool("topics_link", "Create or strengthen a typed edge between two topics.",
             TopicsLink, _link, writes=True),
        Tool("memory_sleep", "Sleep now: compact the conversation buffer into topics and "
             "write a wake packet. Returns the sleep summary.", MemorySleep, _sleep, writes=True),
        Tool("memory_wake", "Wake: the resume plan, the topics relevant to the message and "
             "recent skills.", MemoryWake, _wake),
        Tool("skills_search", "Skills whose manifest matches a query.", SkillsSearch,
             _skills_search),
        Tool("skills_run", "Run a skill with args (validated against its inputs_schema); "
             "returns its SkillResult.", SkillsRun, _skills_run, writes=True),
        Tool("repo_list_files", "Workspace files matching a glob.", RepoListFiles, _list_files),
        Tool("repo_read_file", "The text of one workspace file.", RepoReadFile, _read_file),
        Tool("repo_write_file", "Create or replace one workspace file.", RepoWriteFile,
             _write_file, writes=True),
        Tool("repo_run_tests", "Run an allow-listed test preset or command in the workspace.",
             RepoRunTests, _run_tests, writes=True),
    ]  # fmt: skip
    from agent.tools_memory import memory_tools  # imports this module: bind at call time

    tools += memory_tools()
    return ToolRegistry(deps, {t.name: t for t in tools})
