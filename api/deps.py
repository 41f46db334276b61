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
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from agent.loop import AgentLoop
from agent.tools import ToolRegistry
from api.auth import ApiKeys, AuthFailed
from api.container import Container
from api.metrics import Metrics
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


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's id and the one namespace it may touch."""

    key_id: str
    namespace: str


def _container(request: Request) -> Container:
    container: Container = request.app.state.container
    return container


def get_services(request: Request) -> Services:
    return _container(request).services


def get_topics(request: Request) -> TopicService:
    return get_services(request).topics


def get_conversation(request: Request) -> ConversationService:
    return get_services(request).conversation


def get_context(request: Request) -> ContextService:
    return get_services(request).context


def get_sleepwake(request: Request) -> SleepWakeService:
    return get_services(request).sleepwake


def get_skills(request: Request) -> NamespaceSkills:
    return get_services(request).skills


def get_windows(request: Request) -> WindowResolver:
    return get_services(request).windows


def get_forget(request: Request) -> ForgetService:
    return get_services(request).forget


def get_facts(request: Request) -> FactService:
    return get_services(request).facts


def get_exporter(request: Request) -> ExportService:
    return get_services(request).exporter


def get_importer(request: Request) -> ImportService:
    return get_services(request).importer


def get_chatgpt(request: Request) -> ChatGPTImporter:
    return get_services(request).chatgpt


def get_api_keys(request: Request) -> ApiKeys:
    keys: ApiKeys = request.app.state.api_keys
    return keys


def get_tools(request: Request) -> ToolRegistry:
    return _container(request).tools


def get_agent(request: Request) -> Callable[[], AgentLoop]:
    """The awake loop, fetched by the route after its body is validated (bad input is a 422
    even on a server without a model); ``AgentUnavailable`` (503) when no Responses endpoint
    is configured."""
    container = _container(request)
    return lambda: container.agent


def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    header_key: Annotated[str | None, Depends(api_key_header)],
) -> Principal:
    """The caller's key, checked; ``AuthFailed`` (401) when missing, unknown or revoked."""
    key = credentials.credentials if credentials is not None else header_key
    if key is None and request.headers.get("authorization"):
        key = "-"  # an Authorization header with another scheme: malformed, not missing
    return check_key(request, key)


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
    metrics: Metrics = request.app.state.metrics
    try:
        record = keys.authenticate(key)
    except AuthFailed as exc:
        metrics.auth.labels(exc.reason).inc()
        raise
    metrics.auth.labels("ok").inc()
    request.state.namespace = record.namespace  # for the access log
    return Principal(key_id=record.key_id, namespace=record.namespace)


def namespace_of(principal: Annotated[Principal, Depends(authenticate)]) -> str:
    return principal.namespace


def clock_now(request: Request) -> datetime:
    return get_services(request).clock.now()


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
ApiKeysDep = Annotated[ApiKeys, Depends(get_api_keys)]
ToolsDep = Annotated[ToolRegistry, Depends(get_tools)]
AgentDep = Annotated[Callable[[], AgentLoop], Depends(get_agent)]
PrincipalDep = Annotated[Principal, Depends(authenticate)]
NamespaceDep = Annotated[str, Depends(namespace_of)]
NowDep = Annotated[datetime, Depends(clock_now)]
