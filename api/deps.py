"""FastAPI dependencies: one per application service, the authenticated namespace, the clock.

Routes ask for the service they use (``TopicsDep``, ``ContextDep`` ...), never for the container;
tests replace one with ``app.dependency_overrides[get_topics] = ...``.

The namespace of every ``/v1`` request comes from its API key and from nothing else: no route
takes a namespace parameter, so a key can never reach another namespace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from agent.loop import AgentLoop
from agent.tools import ToolRegistry
from api.auth import ApiKeys, AuthFailed
from api.container import Container
from api.metrics import Metrics
from api.uploads import ImportSlots
from graph.keys import ApiKey
from service.chatgpt import ChatGPTImporter
from service.export import ExportService
from service.facts import FactService
from service.forget import ForgetService
from service.importer import ImportService
from service.memory import ContextService, ConversationService, SleepWakeService
from service.services import Services
from service.skills import NamespaceSkills
from service.topics import TopicService
from service.windows import WindowResolver

bearer = HTTPBearer(
    auto_error=False, description="`Authorization: Bearer <key>` (create one: sheriff keys create)"
)
api_key_header = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="the same key in an `X-API-Key` header"
)


PRINCIPAL_STATE = "principal"  # the request state's key of the caller checked by the key gate


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's id and the one namespace it may touch."""

    key_id: str
    namespace: str


def _container(request: Request) -> Container:
    container: Container = request.app.state.container
    return container


def _services(request: Request) -> Services:
    return _container(request).services


async def get_topics(request: Request) -> TopicService:
    return _services(request).topics


async def get_conversation(request: Request) -> ConversationService:
    return _services(request).conversation


async def get_context(request: Request) -> ContextService:
    return _services(request).context


async def get_sleepwake(request: Request) -> SleepWakeService:
    return _services(request).sleepwake


async def get_skills(request: Request) -> NamespaceSkills:
    return _services(request).skills


async def get_windows(request: Request) -> WindowResolver:
    return _services(request).windows


async def get_forget(request: Request) -> ForgetService:
    return _services(request).forget


async def get_facts(request: Request) -> FactService:
    return _services(request).facts


async def get_exporter(request: Request) -> ExportService:
    return _services(request).exporter


async def get_importer(request: Request) -> ImportService:
    return _services(request).importer


async def get_chatgpt(request: Request) -> ChatGPTImporter:
    return _services(request).chatgpt


async def get_import_slots(request: Request) -> ImportSlots:
    slots: ImportSlots = request.app.state.import_slots
    return slots


async def get_api_keys(request: Request) -> ApiKeys:
    keys: ApiKeys = request.app.state.api_keys
    return keys


async def get_tools(request: Request) -> ToolRegistry:
    return _container(request).tools


async def get_agent(request: Request) -> Callable[[], AgentLoop]:
    """The awake loop, fetched by the route after its body is validated (bad input is a 422
    even on a server without a model); ``AgentUnavailable`` (503) when no Responses endpoint
    is configured."""
    container = _container(request)
    return lambda: container.agent


async def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    header_key: Annotated[str | None, Depends(api_key_header)],
) -> Principal:
    """The caller's key, checked; ``AuthFailed`` (401) when missing, unknown or revoked. The
    app's key gate (api/keygate.py) checked it before the body was read and left the principal
    in the request state; without the gate (a router mounted alone) it is checked here: a key
    in this process's cache on the event loop, one that is not (its first request, or its entry
    expired) read from Neo4j in a worker thread."""
    checked = getattr(request.state, PRINCIPAL_STATE, None)
    if isinstance(checked, Principal):
        return checked
    key = credentials.credentials if credentials is not None else header_key
    if key is None and request.headers.get("authorization"):
        key = "-"  # an Authorization header with another scheme: malformed, not missing
    principal = cached_principal(request, key)
    if principal is None:
        assert key is not None  # the cache refused a missing key
        principal = await run_in_threadpool(stored_principal, request, key)
    return principal


def key_from_headers(request: Request) -> str | None:
    """The API key of a request read outside FastAPI's dependencies (the ``/mcp`` endpoint):
    ``Authorization: Bearer <key>``, else ``X-API-Key``; another scheme reads as malformed."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    header_key = request.headers.get("x-api-key")
    if header_key:
        return header_key
    return "-" if request.headers.get("authorization") else None


def check_key(request: Request, key: str | None) -> Principal:
    """Authenticate ``key`` for ``request`` (counted in the metrics); ``AuthFailed`` says why."""
    keys: ApiKeys = request.app.state.api_keys
    return _principal(request, _counted(request, keys.authenticate, key))


def cached_principal(request: Request, key: str | None) -> Principal | None:
    """``check_key`` from this process's key cache only (no I/O, so on the event loop); None
    when the cache does not hold the key: then :func:`stored_principal` answers."""
    keys: ApiKeys = request.app.state.api_keys
    record = _counted(request, keys.from_cache, key)
    return None if record is None else _principal(request, record)


def stored_principal(request: Request, key: str) -> Principal:
    """``check_key`` from the key store (one Neo4j read: call it in a worker thread)."""
    keys: ApiKeys = request.app.state.api_keys
    return _principal(request, _counted(request, keys.from_store, key))


_T = TypeVar("_T")
_K = TypeVar("_K")


def _counted(request: Request, check: Callable[[_K], _T], key: _K) -> _T:
    """``check(key)``, a refusal counted in the metrics by its reason."""
    try:
        return check(key)
    except AuthFailed as exc:
        metrics: Metrics = request.app.state.metrics
        metrics.auth.labels(exc.reason).inc()
        raise


def _principal(request: Request, record: ApiKey) -> Principal:
    metrics: Metrics = request.app.state.metrics
    metrics.auth.labels("ok").inc()
    request.state.namespace = record.namespace  # for the access log
    return Principal(key_id=record.key_id, namespace=record.namespace)


async def namespace_of(principal: Annotated[Principal, Depends(authenticate)]) -> str:
    return principal.namespace


async def clock_now(request: Request) -> datetime:
    return _services(request).clock.now()


TopicsDep = Annotated[TopicService, Depends(get_topics)]
ConversationDep = Annotated[ConversationService, Depends(get_conversation)]
ContextDep = Annotated[ContextService, Depends(get_context)]
SleepWakeDep = Annotated[SleepWakeService, Depends(get_sleepwake)]
SkillsDep = Annotated[NamespaceSkills, Depends(get_skills)]
WindowsDep = Annotated[WindowResolver, Depends(get_windows)]
ForgetDep = Annotated[ForgetService, Depends(get_forget)]
FactsDep = Annotated[FactService, Depends(get_facts)]
ExportDep = Annotated[ExportService, Depends(get_exporter)]
ImportDep = Annotated[ImportService, Depends(get_importer)]
ChatGPTDep = Annotated[ChatGPTImporter, Depends(get_chatgpt)]
ImportSlotsDep = Annotated[ImportSlots, Depends(get_import_slots)]
ApiKeysDep = Annotated[ApiKeys, Depends(get_api_keys)]
ToolsDep = Annotated[ToolRegistry, Depends(get_tools)]
AgentDep = Annotated[Callable[[], AgentLoop], Depends(get_agent)]
PrincipalDep = Annotated[Principal, Depends(authenticate)]
NamespaceDep = Annotated[str, Depends(namespace_of)]
NowDep = Annotated[datetime, Depends(clock_now)]
