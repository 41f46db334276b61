"""The composition root: builds the driver, stores, embedder, pipelines and application
services once from ``Settings``, and nothing else (no use case lives here: those are in
:mod:`service`).

Parts a caller already has (tests: the session's driver and loaded model; replays: a policy)
are passed to the constructor and used instead of building new ones; nothing is swapped after
construction.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from neo4j import Driver

from agent.loop import AgentLoop, AgentUnavailable
from agent.policy import ModelPolicy
from agent.registry import build_registry
from agent.tools import ToolRegistry
from api.settings import Settings
from graph.clock import Clock, SystemClock
from graph.context import ContextStore
from graph.db import Store, connect
from graph.events import EventStore
from graph.forget import ForgetStore
from graph.inspector import InspectorStore
from graph.messages import MessageStore
from graph.migrations import MigrationReport, apply_migrations
from graph.passages import PassageStore
from graph.redaction import Redactor, install_log_redaction
from graph.skill_vectors import SkillStamp
from graph.skills import SkillStore
from graph.sleep import SleepStore
from graph.sleep_queue import SleepQueueStore
from graph.suppression import SuppressionStore
from graph.topics import TopicStore
from graph.transfer import TransferStore
from graph.vector_loads import LoadQueue
from retrieval.context import ContextBuilder
from retrieval.embedding import Embedder, build_embedder
from retrieval.passage_index import Leads, PassageIndexer
from retrieval.search import TopicSearch
from service.chatgpt import ChatGPTImporter
from service.export import ExportService
from service.facts import FactService
from service.forget import ForgetReport, ForgetService
from service.import_ids import server_key
from service.import_pacing import Pacing
from service.importer import ImportService
from service.inspect import InspectService
from service.memory import ContextService, ConversationService, SleepWakeService
from service.services import Services
from service.skills import NamespaceSkills
from service.topics import TopicService
from service.windows import WindowResolver
from skills.config import SkillSettings
from skills.llm import build_llm
from skills.service import SkillService
from skills.testrun import RunMode
from skills.tools import RepoTools
from skills.workspace import TenantWorkspaces, protected_paths
from sleepwake.llm_extract import ResponsesExtractor
from sleepwake.policy import SleepPolicy
from sleepwake.segments import embedded_lead
from sleepwake.sleep import Sleeper
from sleepwake.wake import Waker
from sleepwake.worker import SleepScheduler, SleepWorker

if TYPE_CHECKING:
    from openai import OpenAI

S = TypeVar("S", bound=Store)

_TEST_MODES: dict[str, RunMode | None] = {
    "off": None,
    "sandboxed": "sandboxed",
    "unsandboxed": "unsandboxed",
}


class Container:
    def __init__(
        self,
        settings: Settings,
        clock: Clock | None = None,
        skill_settings: SkillSettings | None = None,
        *,
        driver: Driver | None = None,
        embedder: Embedder | None = None,
        policy: SleepPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.skill_settings = skill_settings or SkillSettings()
        given = {"driver": driver, "embedder": embedder, "policy": policy}
        for name, part in given.items():
            if part is not None:  # seeds the cached property: the given part is used, not built
                self.__dict__[name] = part
        install_log_redaction(self.redactor)  # logs are redacted from the first record on

    @cached_property
    def redactor(self) -> Redactor:
        """The built-in secret shapes plus the operator's patterns; every store writes with it."""
        return Redactor(self.settings.redaction_patterns())

    @cached_property
    def driver(self) -> Driver:
        uri, user, password = self.settings.connection()
        return connect(uri, user, password, self.settings.neo4j_timeouts())

    @cached_property
    def embedder(self) -> Embedder:
        client = None
        if self.settings.embedder == "openai" and self.settings.openai_api_key:
            from openai import OpenAI

            client = OpenAI(
                api_key=self.settings.openai_api_key, base_url=self.settings.openai_base_url
            )
        return build_embedder(
            self.settings.embedder,
            client,
            self.settings.openai_embedding_model,
            runtime=self.settings.embedding_runtime,
            home=self.settings.home,
            threads=self.settings.embedding_threads,
        )

    @cached_property
    def passage_embedder(self) -> Embedder:
        """What embeds message passages: the int8 graph of minilm by default
        (``passage_embedding_runtime``; docs/embedding.md, "Passages in int8"), else the
        embedder."""
        runtime = self.settings.passage_embedding_runtime
        if self.settings.embedder != "minilm" or runtime in (
            "same",
            self.settings.embedding_runtime,
        ):
            return self.embedder
        return build_embedder(
            "minilm",
            runtime=runtime,
            home=self.settings.home,
            threads=self.settings.embedding_threads,
        )

    def _store(self, kind: type[S]) -> S:
        """A store of ``kind`` on this container's driver and database, writing with its
        redactor."""
        return kind(self.driver, self.settings.neo4j_database, redactor=self.redactor)

    @cached_property
    def topics(self) -> TopicStore:
        """The topic store, holding up to ``topic_cache_mb`` of live topic vectors in this
        process (``graph.topic_vectors``), each namespace's copy read by the same background
        thread as the passages' (``vector_loads``) while its searches go to Neo4j."""
        return TopicStore(
            self.driver, self.settings.neo4j_database, redactor=self.redactor,
            cache_mb=self.settings.topic_cache_mb, loads=self.vector_loads,
        )  # fmt: skip

    @cached_property
    def vector_loads(self) -> LoadQueue:
        """This process's one thread reading namespaces' vector copies (passages and topics)
        off the request path."""
        return LoadQueue()

    @cached_property
    def events(self) -> EventStore:
        return self._store(EventStore)

    @cached_property
    def messages(self) -> MessageStore:
        return self._store(MessageStore)

    @cached_property
    def passages(self) -> PassageStore:
        """The passage store, holding up to ``passage_cache_mb`` of passage vectors in this
        process (``graph.passage_vectors``), each namespace's copy read by one background
        thread while its searches go to Neo4j (``graph.vector_loads``)."""
        return PassageStore(
            self.driver, self.settings.neo4j_database, redactor=self.redactor,
            cache_mb=self.settings.passage_cache_mb, loads=self.vector_loads,
        )  # fmt: skip

    @cached_property
    def passage_indexer(self) -> PassageIndexer:
        """Writes new messages' passages with their vectors (the sleep workers run it)."""
        formation = self.settings.sleep_config().formation
        leads = Leads(
            self.embedder,
            lambda m: embedded_lead(m.role, m.speaker, m.content, formation),
        )
        return PassageIndexer(self.passages, self.passage_embedder, leads=leads)

    @cached_property
    def sleep_store(self) -> SleepStore:
        return self._store(SleepStore)

    @cached_property
    def policy(self) -> SleepPolicy:
        return self.settings.sleep_policy()

    @cached_property
    def extractor(self) -> ResponsesExtractor | None:
        """The LLM extractor of sleep step 3, or None for the deterministic one."""
        mode = self.settings.extractor
        if mode == "deterministic" or (mode == "auto" and not self.settings.openai_api_key):
            return None
        return ResponsesExtractor(
            self.openai_client,
            self.settings.agent_model,
            concurrency=self.settings.sleep_llm_concurrency,
        )

    @cached_property
    def sleeper(self) -> Sleeper:
        return Sleeper(
            self.messages,
            self.sleep_store,
            self.embedder,
            tz=self.settings.timezone,
            config=self.settings.sleep_config().model_copy(update={"policy": self.policy}),
            extractor=self.extractor,
        )

    @cached_property
    def sleep_queue(self) -> SleepQueueStore:
        return SleepQueueStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def conversation(self) -> ConversationService:
        """The conversation; in background sleep mode its policy queues sleeps for the
        workers instead of sleeping inside the append."""
        background = self.settings.sleep_mode == "background"
        queue = SleepScheduler(self.sleep_queue, SystemClock()) if background else None
        return ConversationService(
            self.messages, self.sleeper, self.clock, self.policy, queue=queue,
        )  # fmt: skip

    def sleep_worker(
        self,
        worker_id: str | None = None,
        namespace: str | None = None,
        passage_thread: bool | None = None,
    ) -> SleepWorker:
        """A sleep worker over this container's stores (``run_forever`` in a thread or a
        process of its own; leases and retries on the wall clock); ``namespace``: only its;
        ``passage_thread``: passages on a thread of their own (default: the setting)."""
        if passage_thread is None:
            passage_thread = self.settings.sleep_worker_passage_thread
        return SleepWorker(
            self.sleep_queue, self.sleeper, SystemClock(), self.settings.retry_policy(),
            worker_id, namespace=namespace, passages=self.passage_indexer,
            passage_thread=passage_thread,
        )  # fmt: skip

    @cached_property
    def search(self) -> TopicSearch:
        return TopicSearch(
            self.topics, self.events, self.embedder, self.settings.retrieval.search,
            speakers=self.messages.speakers_named, passages=self.passages.scores_within,
        )  # fmt: skip

    @cached_property
    def waker(self) -> Waker:
        return Waker(
            self.sleep_store,
            self.messages,
            self.search,
            self.policy,
            self.settings.timezone,
            manifests=lambda ids: self.skills.manifests(ids),
        )

    @cached_property
    def skills(self) -> SkillService:
        """The skill registry and router (skills live in SHERIFF_SKILLS_NAMESPACE), synced into
        Neo4j once per process. It routes only: without repo tools, it has no workspace (runs
        for API callers go through ``namespace_skills``, in the caller's own workspace)."""
        service = SkillService(
            self.skill_settings,
            store=self._store(SkillStore),
            embedder=self.embedder,
            topics=self.topics,
            clock=self.clock,
            with_repo=False,
        )
        service.sync()
        return service

    @cached_property
    def workspaces(self) -> TenantWorkspaces | None:
        """The per-namespace workspaces of the repo tools (None when turned off for API
        callers). The root is checked when this is first built, at start-up: a root that holds
        the code, the skills or the state folder stops the server."""
        base = self.skill_settings
        if not base.tenant_repo_tools:
            return None
        home = self.settings.home
        return TenantWorkspaces(
            base.workspaces_dir or home / "workspaces", protected_paths(base), home
        )

    @cached_property
    def namespace_skills(self) -> NamespaceSkills:
        """One skill service per namespace: its skills, runs, topic tool and repo tools (in the
        namespace's own workspace) are all its own."""
        return NamespaceSkills(self.skill_settings, self._skills_in)

    def _skills_in(self, namespace: str) -> SkillService:
        settings = self.skill_settings.model_copy(update={"namespace": namespace})
        llm = build_llm(
            self.settings.openai_api_key, self.settings.openai_base_url, settings.llm_model
        )
        repo = self._repo_in(namespace, settings)
        return SkillService(
            settings,
            store=self._store(SkillStore),
            embedder=self.embedder,
            topics=self.topics,
            llm=llm,
            clock=self.clock,
            repo=repo,
            with_repo=repo is not None,
        )

    def _repo_in(self, namespace: str, settings: SkillSettings) -> RepoTools | None:
        """The repo tools of a namespace's own workspace; None when turned off."""
        if self.workspaces is None:
            return None
        return RepoTools(
            self.workspaces.for_namespace(namespace),
            settings,
            tests=_TEST_MODES[settings.tenant_run_tests],
            readonly=settings.skill_dirs(),
            keep_out=[self.settings.home, self.workspaces.root],
            quota=True,
        )

    def route_skills(
        self,
        text: str,
        last_tool_output: str | None,
        vector: list[float] | None = None,
        stamp: SkillStamp | None = None,
    ) -> dict[str, Any]:
        """Skill routing for the context builder (``vector``: the message's, already embedded;
        ``stamp``: the skills' stamp read by the context's first query)."""
        return self.skills.route(text, last_tool_output, vector=vector, stamp=stamp).to_dict()

    @cached_property
    def context(self) -> ContextBuilder:
        return ContextBuilder(
            self.topics,
            self.messages,
            self.search,
            ContextStore(
                self.driver,
                self.settings.neo4j_database,
                skills_namespace=self.skill_settings.namespace,
                messages=self.messages,
                topics=self.topics,
            ),
            self.settings.timezone,
            config=self.settings.retrieval,
            skill_router=self.route_skills,
            passages=self.passages,
        )

    @cached_property
    def suppression(self) -> SuppressionStore:
        """The session suppression state, in Neo4j: the same whichever worker asks."""
        return SuppressionStore(self.driver, self.settings.neo4j_database)

    @cached_property
    def windows(self) -> WindowResolver:
        return WindowResolver(self.sleep_store, self.settings.timezone)

    @cached_property
    def services(self) -> Services:
        """The application services every surface calls."""
        return Services(
            topics=TopicService(
                self.topics, self.events, self.search, self.embedder, self.windows, self.redactor
            ),
            conversation=self.conversation,
            context=ContextService(self.context, self.redactor),
            sleepwake=SleepWakeService(
                self.sleeper, self.waker, self.sleep_store, self.sleep_queue, SystemClock()
            ),
            skills=self.namespace_skills,
            windows=self.windows,
            forget=self.forget,
            facts=self.facts,
            exporter=self.exporter,
            importer=self.importer,
            chatgpt=self.chatgpt,
            clock=self.clock,
            inspect=InspectService(
                InspectorStore(self.driver, self.settings.neo4j_database), self.messages
            ),
        )

    @cached_property
    def tools(self) -> ToolRegistry:
        """The host tools, shared by the awake loop, the REST API and MCP."""
        return build_registry(self.services)

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
            self.services,
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
        s = self.settings
        pacing = Pacing(s.import_batch_records, s.import_pause_ratio, niceness=s.import_niceness)
        return ImportService(self.transfer_store, self.messages, self.topics, self.sleep_store,
                             self.embedder, self.clock, id_key=server_key(self.settings.home),
                             redactor=self.redactor, pacing=pacing)  # fmt: skip

    @cached_property
    def chatgpt(self) -> ChatGPTImporter:
        return ChatGPTImporter(self.conversation, self.messages, self.transfer_store, self.clock)

    def _forgotten(self, namespace: str, report: ForgetReport) -> None:
        """The session suppression state drops what was forgotten (by record id; a namespace
        forgotten whole loses its sessions), and so does this process's skill service cache
        (other workers re-sync theirs within ``NamespaceSkills.resync_s``)."""
        whole = report.whole_namespace
        self.suppression.forget(namespace, report.topics_deleted, whole=whole)
        if whole and "namespace_skills" in self.__dict__:
            self.namespace_skills.drop(namespace)

    def migrate(self) -> MigrationReport:
        return apply_migrations(self.driver, self.clock.now(), self.settings.neo4j_database)

    def warm_up(self) -> None:
        """Load the embedding model now (its first call loads it), not on the first request."""
        self.embedder.embed(["warm-up"])

    def prepare(self) -> None:
        """Ready to serve: the schema migrated and the embedding model loaded (the sleep
        worker, the demo and the stdio MCP server start so)."""
        self.migrate()
        self.warm_up()

    def close(self) -> None:
        if "driver" in self.__dict__:
            self.driver.close()
