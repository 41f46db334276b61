"""The application services of one deployment, as one value the surfaces receive."""

from __future__ import annotations

from dataclasses import dataclass

from graph.clock import Clock
from service.chatgpt import ChatGPTImporter
from service.export import ExportService
from service.facts import FactService
from service.forget import ForgetService
from service.importer import ImportService
from service.inspect import InspectService
from service.memory import ContextService, ConversationService, SleepWakeService
from service.skills import NamespaceSkills
from service.topics import TopicService
from service.windows import WindowResolver


@dataclass(frozen=True)
class Services:
    """What the REST routes, the tools, the awake loop, the CLI and MCP may call: services
    only, no stores, drivers or models."""

    topics: TopicService
    conversation: ConversationService
    context: ContextService
    sleepwake: SleepWakeService
    skills: NamespaceSkills
    windows: WindowResolver
    forget: ForgetService
    facts: FactService
    exporter: ExportService
    importer: ImportService
    chatgpt: ChatGPTImporter
    clock: Clock
    inspect: InspectService  # the web inspector's paged reads (api/inspector/)
