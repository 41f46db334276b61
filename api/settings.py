"""One ``Settings`` object, read from the environment, built in the composition root and passed down.

``NEO4J_URI`` / ``NEO4J_USER`` / ``NEO4J_PASSWORD`` are read without prefix so that the output of
``sheriff neo4j env`` (and a Neo4j started by ``docker compose up``) is honoured by every command;
everything else uses the ``SHERIFF_`` prefix.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graph.db import Timeouts
from graph.redaction import CustomPattern, load_patterns
from graph.server import NEO4J_VERSION, LocalNeo4j, ServerConfig
from retrieval.config import RetrievalConfig
from sleepwake.matching import MergeConfig
from sleepwake.policy import SleepPolicy
from sleepwake.worker import RetryPolicy


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SHERIFF_", extra="ignore", env_nested_delimiter="__"
    )

    home: Path = Field(default=Path(".sheriff"), description="state folder (managed Neo4j, keys)")
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI"))
    neo4j_user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER"))
    neo4j_password: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD")
    )
    neo4j_database: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE"))
    neo4j_version: str = Field(
        default=NEO4J_VERSION,
        pattern=r"^\d+\.\d+(\.\d+)?$",
        description="the managed server's version (docs/neo4j.md: 2025.01+ needs Java 21+)",
    )
    neo4j_bolt_port: int = 7687
    neo4j_http_port: int = 7474
    neo4j_heap: str = "1g"
    neo4j_start_timeout: float = 180.0
    neo4j_connect_timeout: float = Field(
        default=2.0, gt=0, description="seconds to open one connection to Neo4j"
    )
    neo4j_acquire_timeout: float = Field(
        default=3.0, gt=0, description="seconds to get a pooled connection (opening one included)"
    )
    neo4j_retry_time: float = Field(
        default=1.0, ge=0, description="seconds a failed transaction is retried before a 503"
    )

    embedder: Literal["minilm", "openai"] = "minilm"
    embedding_runtime: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="how minilm runs: onnx (graph exported at set-up, no torch) or torch",
    )
    embedding_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="intra-op threads per embedding call in each process (1 suits one worker per core)",
    )
    openai_embedding_model: str = "text-embedding-3-small"
    openai_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL")
    )

    agent_model: str = Field(default="gpt-5.2-codex", description="Responses API model")
    agent_fallback_model: str | None = Field(
        default="gpt-5.1-codex", description="used when the primary model is not available"
    )
    agent_max_steps: int = Field(default=8, ge=1, le=50, description="model calls per turn")
    extractor: Literal["auto", "deterministic", "llm"] = Field(
        default="auto",
        description="sleep extraction: auto = the LLM when OPENAI_API_KEY is set, else rules",
    )
    agent_context_budget: int = Field(default=1500, ge=100, description="memory tokens per turn")

    api_host: str = "127.0.0.1"
    api_port: int = 8000
    api_max_body_bytes: int = Field(
        default=1_048_576, gt=0, description="largest request body the API accepts (413 above)"
    )
    api_max_import_bytes: int = Field(
        default=64 * 1_048_576, gt=0, description="largest upload to /v1/import (413 above)"
    )
    api_key_cache_seconds: float = Field(
        default=30.0, ge=0, description="how long a checked API key is trusted in-process"
    )
    api_deadline_seconds: float = Field(
        default=3.0,
        ge=0,
        description="a /v1 request unanswered this long is answered 503 if Neo4j refuses a "
        "probe or came back from an outage under two minutes ago (0: never; api/deadline.py)",
    )
    api_context_concurrency: int = Field(
        default=4,
        ge=1,
        le=256,
        description="context builds one API worker runs at once; later requests wait without "
        "a thread, namespaces taking turns (api/admission.py)",
    )
    api_workers: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="API worker processes of `sheriff up` (default: the CPUs this process may use)",
    )
    mcp_stateless: bool | None = Field(
        default=None,
        description="/mcp without sessions; default: stateless exactly when api_workers > 1",
    )
    timezone: str = "UTC"

    retrieval: RetrievalConfig = Field(
        default_factory=RetrievalConfig,
        description="retrieval tuning (docs/retrieval.md), e.g. SHERIFF_RETRIEVAL__SEARCH__RRF_K",
    )
    merge: MergeConfig = Field(
        default_factory=MergeConfig,
        description="sleep's merge score (docs/sleep-and-wake.md), e.g. SHERIFF_MERGE__THRESHOLD",
    )
    redact_patterns: dict[str, str] = Field(
        default_factory=dict,
        description="extra secret shapes to redact, kind -> regular expression (JSON object)",
    )
    redact_patterns_file: Path | None = Field(
        default=None, description="a file of extra secret shapes, one 'kind pattern' per line"
    )

    sleep_mode: Literal["background", "inline"] = Field(
        default="background",
        description="background: appends queue sleeps for the sleep workers (sheriff up runs "
        "one, sheriff worker more); inline: the append that fills the buffer sleeps itself",
    )
    sleep_lease_seconds: float = Field(
        default=60.0, ge=1.0, description="a sleep's lease; a heartbeat renews it every third"
    )
    sleep_poll_seconds: float = Field(
        default=1.0, gt=0, description="how often an idle sleep worker looks for due sleeps"
    )
    sleep_max_attempts: int = Field(
        default=5, ge=1, description="tries of a failing sleep before it is recorded as failed"
    )
    sleep_llm_concurrency: int = Field(
        default=4, ge=1, le=32, description="LLM extraction calls one sleep makes at once"
    )
    sleep_retry_base_seconds: float = Field(default=2.0, ge=0, description="first retry wait")
    sleep_failure_cooldown_seconds: float = Field(
        default=600.0, ge=0, description="wait after a failed series before trying again"
    )

    context_budget_tokens: int = 8000
    sleep_buffer_share: float = 0.6
    tail_turns: int = 12
    tail_share: float = Field(
        default=0.25,
        gt=0.0,
        le=1.0,
        description="the tail holds at most this share of the buffer threshold in tokens "
        "(never fewer than the last two turns): long turns leave a short tail",
    )
    idle_gap_hours: float = 6.0
    fresh_window_hours: float = 12.0
    wake_silence_hours: float = Field(default=6.0, gt=0)

    @model_validator(mode="after")
    def _check_redact_patterns(self) -> Settings:
        """A bad redaction pattern stops start-up with its name and the reason."""
        self.redaction_patterns()
        return self

    def redaction_patterns(self) -> list[CustomPattern]:
        """The operator's redaction patterns, compiled and checked (``ValueError`` if not)."""
        return load_patterns(self.redact_patterns, self.redact_patterns_file)

    def sleep_policy(self) -> SleepPolicy:
        return SleepPolicy(
            context_budget_tokens=self.context_budget_tokens,
            buffer_share=self.sleep_buffer_share,
            tail_turns=self.tail_turns,
            tail_share=self.tail_share,
            idle_gap=timedelta(hours=self.idle_gap_hours),
            fresh_window=timedelta(hours=self.fresh_window_hours),
            wake_silence=timedelta(hours=self.wake_silence_hours),
            lease_ttl=timedelta(seconds=self.sleep_lease_seconds),
        )

    def retry_policy(self) -> RetryPolicy:
        """How the sleep workers retry a failing sleep."""
        return RetryPolicy(
            max_attempts=self.sleep_max_attempts,
            base=timedelta(seconds=self.sleep_retry_base_seconds),
            failure_cooldown=timedelta(seconds=self.sleep_failure_cooldown_seconds),
        )

    def neo4j_timeouts(self) -> Timeouts:
        """The driver's bounds: with Neo4j down a request fails in seconds (docs/neo4j.md)."""
        return Timeouts(
            connect=self.neo4j_connect_timeout,
            acquire=self.neo4j_acquire_timeout,
            retry=self.neo4j_retry_time,
        )

    def server_config(self) -> ServerConfig:
        return ServerConfig(
            home=self.home / "neo4j",
            version=self.neo4j_version,
            bolt_port=self.neo4j_bolt_port,
            http_port=self.neo4j_http_port,
            heap=self.neo4j_heap,
            start_timeout_s=self.neo4j_start_timeout,
        )

    @property
    def mcp_stateless_effective(self) -> bool:
        """Whether /mcp runs stateless: as set, else when more than one worker serves the port
        (an MCP session lives in one process's memory; the others would not know it)."""
        if self.mcp_stateless is not None:
            return self.mcp_stateless
        return (self.api_workers or 1) > 1

    @property
    def uses_managed_server(self) -> bool:
        """True when no external Neo4j is configured, so the CLI manages a local one."""
        return self.neo4j_uri is None

    def connection(self) -> tuple[str, str, str]:
        """(uri, user, password) of the external server if configured, else the managed one."""
        if self.neo4j_uri is not None:
            return self.neo4j_uri, self.neo4j_user, self.neo4j_password or ""
        server = LocalNeo4j(self.server_config())
        return server.config.uri, "neo4j", server.password()
