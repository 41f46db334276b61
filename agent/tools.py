"""The host tools (spec §7.3) as Responses API function tools: one registry for the awake loop
and the REST API.

Each tool has a name the API accepts (``topics_search``, not ``topics.search``), a pydantic
parameter model from which its JSON schema is generated (strict where possible, see
:mod:`graph.strict_schema`), and a handler ``(services, ctx, params) -> JSON-ready value`` that
calls the application services (:mod:`service`), the same ones the REST routes call. The
parameter models use the field types of the REST schemas (:mod:`graph.validation`), so a tool
refuses what REST refuses: the same lengths, control characters, JSON depth and link weights.

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
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from graph.errors import NotFound, SheriffError, ValidationFailed
from graph.models import describe_errors, edge_type
from graph.redaction import redact
from graph.strict_schema import tool_parameters
from graph.validation import (
    JsonObject,
    LinkWeight,
    Name,
    OneLiner,
    Phrase,
    QueryText,
    ShortText,
    TopicId,
    one_line,
    utf8,
)
from retrieval.search import TopicHit
from service.services import Services
from service.topics import TopicChange
from skills.errors import ToolRefused

if TYPE_CHECKING:
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
    cancelled: Callable[[], bool] | None = None  # True once the caller has gone (long tools stop)


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- parameter models -------------------------------------------------------------------------
class TopicsSearch(_Params):
    query: QueryText = Field(description="what to look for")
    time_window: Phrase | None = Field(
        default=None,
        description="a time phrase such as 'last week', 'yesterday', 'before you slept', "
        "'in March'; null = taken from the query, if it has one",
    )
    k: int | None = Field(default=None, ge=1, le=25, description="how many topics (default 8)")


class TopicsGet(_Params):
    topic_ids: list[TopicId] = Field(min_length=1, max_length=25, description="ids from search")


class TopicsUpsert(_Params):
    topic_id: TopicId | None = Field(default=None, description="null = create")
    name: Name | None = Field(default=None, description="required to create")
    one_liner: OneLiner | None = Field(default=None, description="the canonical gist")
    facts: list[ShortText] | None = Field(default=None, max_length=50, description="facts to add")
    aliases: list[Name] | None = Field(default=None, max_length=20, description="other names")
    open_loops: list[ShortText] | None = Field(default=None, max_length=20, description="to-dos")


class TopicsLink(_Params):
    from_topic_id: TopicId
    to_topic_id: TopicId
    type: Literal["RELATES_TO", "DEPENDS_ON", "PART_OF", "NEXT", "PREV"]
    weight_delta: LinkWeight | None = Field(
        default=None, description="added to the edge's weight, 0 < w <= 100 (default 1.0)"
    )


class MemorySleep(_Params):
    """Compact the conversation buffer of this namespace now."""


class MemoryWake(_Params):
    message: Annotated[str, Field(min_length=1, max_length=8000), AfterValidator(utf8)] = Field(
        description="the user's new message"
    )


class SkillsSearch(_Params):
    query: QueryText
    k: int | None = Field(default=None, ge=1, le=10, description="default 3")


class SkillsRun(_Params):
    skill_id: Annotated[str, Field(min_length=1, max_length=64), AfterValidator(one_line)]
    args: JsonObject = Field(default_factory=dict, description="per the skill's inputs_schema")
    ctx_refs: list[TopicId] | None = Field(default=None, max_length=20, description="topic ids")


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
Handler = Callable[[Services, ToolContext, Any], Any]


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
    services: Services
    tools: dict[str, Tool] = field(default_factory=dict)

    def names(self) -> list[str]:
        return list(self.tools)

    def specs(self, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Responses API tool entries, without the repo tools the operator turned off (calling
        one anyway answers 403)."""
        chosen = names if names is not None else list(self.tools)
        return [self.get(n).spec() for n in chosen if self.offered(n)]

    def offered(self, name: str) -> bool:
        """False for repo tools the operator turned off for API callers (and the loop)."""
        if not name.startswith("repo_") or self.services is None:  # schemas only (unit tests)
            return True
        base = self.services.skills.settings
        if name == "repo_run_tests" and base.tenant_run_tests == "off":
            return False
        return base.tenant_repo_tools

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
        return self.get(name).handler(self.services, ctx, params)

    def call_for_model(
        self, name: str, arguments: str | dict[str, Any] | None, ctx: ToolContext
    ) -> ToolCall:
        """Run a tool for the model: never raises; failures become ``{"error": ...}``."""
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
        # hashed after redaction: the stored hash of {"password": "hunter2"} must not let anyone
        # test guesses of the password against it
        digest = hashlib.sha256(redact(raw or "").encode()).hexdigest()[:12]
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
SNIPPET_FACTS = 3  # facts and open loops shown per topic in a search snippet


def _search(s: Services, ctx: ToolContext, p: TopicsSearch) -> dict[str, Any]:
    found = s.topics.search_full(ctx.namespace, p.query, ctx.now, p.time_window, p.k or 8)
    window = found.window
    return {
        "time_window": window.as_dict() if window else None,
        "degraded": found.result.degraded,
        "topics": [_snippet(h) for h in found.result.hits],
    }


def _snippet(h: TopicHit) -> dict[str, Any]:
    t = h.topic
    return {
        "topic_id": t.topic_id,
        "name": t.name,
        "one_liner": t.one_liner,
        "first_seen_at": t.time.first_seen_at.isoformat(),
        "last_seen_at": t.time.last_seen_at.isoformat(),
        "facts": [f.text for f in t.current().facts[-SNIPPET_FACTS:]],
        "open_loops": [o.text for o in t.open_loops[:SNIPPET_FACTS]],
        "score": round(h.score, 4),
        "why": h.reason,
    }


def _get(s: Services, ctx: ToolContext, p: TopicsGet) -> list[dict[str, Any]]:
    topics = s.topics.get_many(ctx.namespace, p.topic_ids)
    events: dict[str, list[dict[str, Any]]] = {}
    for e in s.topics.events_of(ctx.namespace, p.topic_ids):
        events.setdefault(e.topic_id, []).append(e.model_dump(mode="json"))
    return [  # the facts valid now (topics_history has the superseded ones)
        {
            **t.current().model_dump(mode="json", exclude={"namespace"}),
            "events": events.get(t.topic_id, []),
        }
        for t in topics
    ]


def _upsert(s: Services, ctx: ToolContext, p: TopicsUpsert) -> dict[str, Any]:
    change = TopicChange(
        name=p.name,
        one_liner=p.one_liner,
        facts=p.facts or [],
        aliases=p.aliases or [],
        open_loops=p.open_loops or [],
    )
    done = s.topics.upsert(ctx.namespace, p.topic_id, change, ctx.now, ctx.message_ids)
    return {"topic_id": done.topic.topic_id, "created": done.created, "version": done.topic.version}


def _link(s: Services, ctx: ToolContext, p: TopicsLink) -> dict[str, Any]:
    delta = 1.0 if p.weight_delta is None else p.weight_delta
    edge = s.topics.link(
        ctx.namespace, p.from_topic_id, p.to_topic_id, edge_type(p.type), delta, ctx.now
    )
    return edge.model_dump(mode="json")


def _sleep(s: Services, ctx: ToolContext, _: MemorySleep) -> dict[str, Any]:
    return s.sleepwake.sleep(ctx.namespace, ctx.now, "explicit").model_dump(mode="json")


def _wake(s: Services, ctx: ToolContext, p: MemoryWake) -> dict[str, Any]:
    result = s.sleepwake.wake(ctx.namespace, p.message, ctx.now)
    return {
        "resume": result.resume.model_dump(mode="json"),
        "topics": [t.model_dump(mode="json") for t in result.topics],
        "top_topics": [t.model_dump(mode="json") for t in result.top_topics],
        "open_loops": [o.model_dump(mode="json") for o in result.open_loops],
        "skills": result.skills,
        "time_window": result.time_window,
        "woke_at": result.woke_at.isoformat() if result.woke_at else None,
    }


def _skills_search(s: Services, ctx: ToolContext, p: SkillsSearch) -> list[dict[str, Any]]:
    return s.skills.get(ctx.namespace).search(p.query, p.k or 3)


def _skills_run(s: Services, ctx: ToolContext, p: SkillsRun) -> dict[str, Any]:
    run = s.skills.get(ctx.namespace).run(p.skill_id, p.args, p.ctx_refs)
    return run.model_dump(mode="json")


def _list_files(s: Services, ctx: ToolContext, p: RepoListFiles) -> dict[str, Any]:
    listing = _repo(s, ctx).listing(p.pattern)
    return {"files": listing.files, "truncated": listing.truncated}


def _read_file(s: Services, ctx: ToolContext, p: RepoReadFile) -> dict[str, Any]:
    return {"path": p.path, "content": _repo(s, ctx).read_file(p.path)}


def _write_file(s: Services, ctx: ToolContext, p: RepoWriteFile) -> dict[str, Any]:
    return _repo(s, ctx).write_file(p.path, p.content)


def _run_tests(s: Services, ctx: ToolContext, p: RepoRunTests) -> dict[str, Any]:
    return _repo(s, ctx).run_tests(p.command, p.preset, cancelled=ctx.cancelled)


def _repo(s: Services, ctx: ToolContext) -> RepoTools:
    """The repo tools of the caller's own workspace (never the server's folder)."""
    repo = s.skills.get(ctx.namespace).host.repo
    if repo is None:
        raise ToolRefused(
            "the repo tools are turned off for API callers on this server "
            "(SHERIFF_SKILLS_TENANT_REPO_TOOLS=false)"
        )
    return repo


def host_tools() -> list[Tool]:
    """The host tools of spec §7.3 (memory control: ``agent.tools_memory``)."""
    return [
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
        Tool("repo_list_files", "Files of your workspace matching a glob (at most one '**'); "
             "{files, truncated}.", RepoListFiles, _list_files),
        Tool("repo_read_file", "The text of one file of your workspace.", RepoReadFile,
             _read_file),
        Tool("repo_write_file", "Create or replace one workspace file.", RepoWriteFile,
             _write_file, writes=True),
        Tool("repo_run_tests", "Run an allow-listed test preset or command in the workspace.",
             RepoRunTests, _run_tests, writes=True),
    ]  # fmt: skip
