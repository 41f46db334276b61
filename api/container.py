"""The composition root: builds the driver, stores and embedder once from ``Settings``."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from neo4j import Driver

from agent.loop import AgentLoop, AgentUnavailable
from agent.policy import ModelPolicy
from agent.tools import ToolRegistry, build_registry
from api.settings import Settings
from api.skill_runs import NamespaceSkills
from graph.clock import Clock, SystemClock
from graph.db import connect
from graph.events import EventStore
from graph.forget import ForgetStore
from graph.messages import MessageStore
from graph.migrations import MigrationReport, apply_migrations
from graph.skills import SkillStore
from graph.sleep import SleepStore
from graph.topics import TopicStore
from graph.transfer import TransferStore
from retrieval.context import ContextBuilder
from retrieval.embedding import Embedder, build_embedder
from retrieval.search import TopicSearch
from retrieval.timephrases import SleepHistory
from service.chatgpt import ChatGPTImporter
from service.export import ExportService
from service.facts import FactService
from service.forget import ForgetReport, ForgetService
from service.importer import ImportService
from skills.config import SkillSettings
from skills.service import SkillService
from sleepwake.conversation import Conversation
from sleepwake.llm_extract import ResponsesExtractor
from sleepwake.policy import SleepPolicy
from sleepwake.sleep import Sleeper
from sleepwake.wake import Waker

if TYPE_CHECKING:
    from openai import OpenAI


@dataclass
class Container:
    settings: Settings
    clock: Clock = field(default_factory=SystemClock)
    skill_settings: SkillSettings = field(default_factory=SkillSettings)

    @cached_property
    def driver(self) -> Driver:
        uri, user, password = self.settings.connection()
        return connect(uri, user, password)

    @cached_property
    def embedder(self) -> Embedder:
        client = None
        if self.settings.embedder == "openai" and self.settings.openai_api_key:
            from openai import OpenAI

            client = OpenAI(
                api_key=self.settings.openai_api_key, base_url=self.settings.openai_base_url
            )
        return build_embedder(self.settings.embedder, client, self.settings.openai_embedding_model)

    @cached_property
    def topics(self) -> TopicStore:
        return TopicStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def events(self) -> EventStore:
        return EventStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def messages(self) -> MessageStore:
        return MessageStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def sleep_store(self) -> SleepStore:
        return SleepStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def policy(self) -> SleepPolicy:
        return self.settings.sleep_policy()

    @cached_property
    def extractor(self) -> ResponsesExtractor | None:
        """The LLM extractor of sleep step 3, or None for the deterministic one."""
        mode = self.settings.extractor
        if mode == "deterministic" or (mode == "auto" and not self.settings.openai_api_key):
            return None
        return ResponsesExtractor(self.openai_client, self.settings.agent_model)

    @cached_property
    def sleeper(self) -> Sleeper:
        return Sleeper(
            self.messages,
            self.sleep_store,
            self.embedder,
            self.policy,
            self.settings.timezone,
            extractor=self.extractor,
        )

    @cached_property
    def conversation(self) -> Conversation:
        return Conversation(self.messages, self.sleeper, self.clock, self.policy)

    @cached_property
    def search(self) -> TopicSearch:
        return TopicSearch(self.topics, self.events, self.embedder)

    @cached_property
    def waker(self) -> Waker:
        return Waker(
            self.sleep_store, self.messages, self.search, self.policy, self.settings.timezone
        )

    @cached_property
    def skills(self) -> SkillService:
        """The skill registry, router and runner (skills live in SHERIFF_SKILLS_NAMESPACE),
        synced into Neo4j once per process."""
        service = SkillService(
            self.skill_settings,
            store=SkillStore(self.driver, self.settings.neo4j_database),
            embedder=self.embedder,
            topics=self.topics,
            clock=self.clock,
        )
        service.sync()
        return service

    @cached_property
    def namespace_skills(self) -> NamespaceSkills:
        """One skill service per namespace (its runs and topic searches stay in it)."""
        return NamespaceSkills(self, self.skill_settings)

    def skills_for(self, namespace: str) -> SkillService:
        """The skill service whose skills, runs and topic tool are in ``namespace``."""
        return self.namespace_skills.get(namespace)

    def route_skills(self, text: str, last_tool_output: str | None) -> dict[str, Any]:
        return self.skills.route(text, last_tool_output).to_dict()

    @cached_property
    def context(self) -> ContextBuilder:
        return ContextBuilder(
            self.topics,
            self.messages,
            self.search,
            self.sleep_history,
            self.settings.timezone,
            skill_router=self.route_skills,
        )

    @cached_property
    def tools(self) -> ToolRegistry:
        """The host tools, shared by the awake loop and the REST API."""
        return build_registry(self)

    @cached_property
    def openai_client(self) -> OpenAI:
        """The Responses API client; refused (``AgentUnavailable``) without a key."""
        from openai import OpenAI

        if not self.settings.openai_api_key:
            raise AgentUnavailable(
                "no OPENAI_API_KEY configured: the chat loop needs a Responses API endpoint "
                "(OPENAI_BASE_URL may point at any compatible server); `sheriff chat --offline` "
                "runs the offline stand-in model"
            )
        return OpenAI(api_key=self.settings.openai_api_key, base_url=self.settings.openai_base_url)

    @cached_property
    def agent(self) -> AgentLoop:
        s = self.settings
        return AgentLoop(
            self,
            self.openai_client,
            self.tools,
            ModelPolicy(model=s.agent_model, fallback_model=s.agent_fallback_model),
            max_steps=s.agent_max_steps,
            budget=s.agent_context_budget,
        )

    # -- memory control (service/) ----------------------------------------------------------------
    @cached_property
    def transfer_store(self) -> TransferStore:
        return TransferStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def forget(self) -> ForgetService:
        store = ForgetStore(self.driver, self.settings.neo4j_database)
        return ForgetService(store, self.topics, self.messages, self.events, self.sleep_store,
                             self.embedder, self.clock, listeners=[self._forgotten])  # fmt: skip

    @cached_property
    def facts(self) -> FactService:
        return FactService(self.topics, self.events, self.embedder, self.clock)

    @cached_property
    def exporter(self) -> ExportService:
        return ExportService(self.transfer_store, self.embedder, self.clock)

    @cached_property
    def importer(self) -> ImportService:
        return ImportService(self.transfer_store, self.messages, self.topics, self.sleep_store,
                             self.embedder, self.clock)  # fmt: skip

    @cached_property
    def chatgpt(self) -> ChatGPTImporter:
        return ChatGPTImporter(self.conversation, self.messages, self.transfer_store, self.clock)

    def _forgotten(self, namespace: str, report: ForgetReport) -> None:
        """In-process caches drop what was forgotten (the suppression cache by record id; a
        namespace forgotten whole also loses its sessions and its skill service)."""
        whole = report.whole_namespace
        if "context" in self.__dict__:
            self.context.forget(report.topics_deleted, f"{namespace}/" if whole else None)
        if whole and "namespace_skills" in self.__dict__:
            self.namespace_skills.drop(namespace)

    def sleep_history(self, namespace: str) -> SleepHistory:
        """Sleep times for time phrases ("before you slept", "since we last talked")."""
        packets = self.sleep_store.wake_packets(namespace, limit=1)
        if not packets:
            return SleepHistory()
        packet = packets[0]
        last_turn = packet.conversation_tail[-1].at if packet.conversation_tail else None
        return SleepHistory(slept_at=packet.slept_at, previous_session_end=last_turn)

    def migrate(self) -> MigrationReport:
        return apply_migrations(self.driver, self.clock.now(), self.settings.neo4j_database)

    def close(self) -> None:
        if "driver" in self.__dict__:
            self.driver.close()
