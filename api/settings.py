"""One ``Settings`` object, read from the environment, built in the composition root and passed down.

``NEO4J_URI`` / ``NEO4J_USER`` / ``NEO4J_PASSWORD`` are read without prefix so that the output of
``sheriff neo4j env`` (and a Neo4j started by ``docker compose up``) is honoured by every command;
everything else uses the ``SHERIFF_`` prefix.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graph.db import Timeouts
from graph.redaction import CustomPattern, load_patterns
from graph.server import NEO4J_VERSION, LocalNeo4j, ServerConfig
from retrieval.config import RetrievalConfig
from sleepwake.config import MergeConfig, SleepConfig, SleepPolicy
from sleepwake.worker import RetryPolicy

log = logging.getLogger(__name__)


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
    embedding_runtime: Literal["onnx", "onnx-int8", "torch"] = Field(
        default="onnx",
        description="how minilm runs: onnx (graph exported at set-up, no torch), onnx-int8 "
        "(that graph quantised: ~2x faster, vectors within cosine ~0.98, a model name of its "
        "own; docs/embedding.md) or torch",
    )
    passage_embedding_runtime: Literal["onnx-int8", "same"] = Field(
        default="onnx-int8",
        description="how minilm embeds message passages: onnx-int8 (the int8 graph: half the "
        "model's CPU of an ingest, search recall unchanged, docs/embedding.md) or same (the "
        "embedding_runtime); an openai embedder embeds them itself",
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
    import_batch_records: int = Field(
        default=500, ge=1, description="records an import writes in one transaction"
    )
    import_pause_ratio: float = Field(
        default=0.5, ge=0, description="an import's pause after a batch, times that batch's time"
    )
    import_niceness: int = Field(
        default=10, ge=0, le=19, description="how much lower an import thread's CPU priority is"
    )
    import_concurrency: int = Field(
        default=2, ge=1, description="imports one API process runs at once, all namespaces"
    )
    passage_cache_mb: int = Field(
        default=256,
        ge=0,
        description="MB of passage vectors one API worker holds in memory and scores there "
        "(~130,000 passages; a namespace larger than this takes the filtered vector index; 0: "
        "every passage search in Neo4j; graph/passage_vectors.py)",
    )
    topic_cache_mb: int = Field(
        default=64,
        ge=0,
        description="MB of live topic vectors one API worker holds in memory and scores there "
        "(~37,000 topics; a namespace larger than this takes the filtered vector index; 0: "
        "every topic vector search in Neo4j; graph/topic_vectors.py)",
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

    log_format: Literal["text", "json"] = Field(
        default="text",
        description="log lines: text, or one JSON object a line with the trace and span ids",
    )
    otel_namespace: Literal["hashed", "omitted"] = Field(
        default="hashed",
        description="the namespace on trace spans: an HMAC with the install's salt, or left out",
    )
    otel_namespace_salt: SecretStr | None = Field(
        default=None,
        description="the HMAC key of hashed namespaces (default: one made once in SHERIFF_HOME)",
    )

    retrieval: RetrievalConfig = Field(
        default_factory=RetrievalConfig,
        description="retrieval tuning (docs/retrieval.md), e.g. SHERIFF_RETRIEVAL__SEARCH__RRF_K",
    )
    sleep: SleepConfig = Field(
        default_factory=SleepConfig,
        description="sleep tuning (docs/sleep-and-wake.md), e.g. SHERIFF_SLEEP__MERGE__THRESHOLD",
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
    sleep_poll_seconds: float = Field(
        default=1.0, gt=0, description="how often an idle sleep worker looks for due sleeps"
    )
    sleep_worker_niceness: int = Field(
        default=10,
        ge=0,
        le=19,
        description="how much lower the CPU priority of sheriff up's sleep worker thread is "
        "(its sleeps, passages and backfill yield to the API workers' requests)",
    )
    sleep_worker_passage_thread: bool = Field(
        default=True,
        description="a sleep worker writes new messages' passages on a second thread beside "
        "its sleeps (the model runs outside the GIL: one worker uses two cores); false: "
        "between sleeps, on the one thread",
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

    # Deprecated flat names of sleep settings, read for one more release (a warning says the
    # new name): SHERIFF_CONTEXT_BUDGET_TOKENS is SHERIFF_SLEEP__POLICY__CONTEXT_BUDGET_TOKENS...
    # (``_LEGACY_POLICY``), SHERIFF_MERGE__X is SHERIFF_SLEEP__MERGE__X.
    context_budget_tokens: int | None = Field(default=None, ge=500, description="deprecated")
    sleep_buffer_share: float | None = Field(default=None, gt=0, le=1, description="deprecated")
    tail_turns: int | None = Field(default=None, ge=0, le=200, description="deprecated")
    tail_share: float | None = Field(default=None, gt=0.0, le=1.0, description="deprecated")
    idle_gap_hours: float | None = Field(default=None, description="deprecated")
    fresh_window_hours: float | None = Field(default=None, description="deprecated")
    wake_silence_hours: float | None = Field(default=None, gt=0, description="deprecated")
    sleep_lease_seconds: float | None = Field(default=None, ge=1.0, description="deprecated")
    merge: MergeConfig | None = Field(default=None, description="deprecated")

    @model_validator(mode="after")
    def _check_redact_patterns(self) -> Settings:
        """A bad redaction pattern stops start-up with its name and the reason."""
        self.redaction_patterns()
        return self

    @model_validator(mode="after")
    def _check_sleep(self) -> Settings:
        """Deprecated sleep names still set are warned about, and their values checked with
        the rest of the sleep's config at start-up."""
        for old, new in _deprecated_sleep_names(self):
            log.warning("%s is deprecated and read for one more release; use %s", old, new)
        self.sleep_config()
        return self

    def sleep_config(self) -> SleepConfig:
        """The sleep's config: ``SHERIFF_SLEEP__...``, under any deprecated flat name still
        set (``SHERIFF_TAIL_TURNS``, ``SHERIFF_MERGE__...``) where the new one is not."""
        return legacy_sleep_config(self)

    def redaction_patterns(self) -> list[CustomPattern]:
        """The operator's redaction patterns, compiled and checked (``ValueError`` if not)."""
        return load_patterns(self.redact_patterns, self.redact_patterns_file)

    def sleep_policy(self) -> SleepPolicy:
        return self.sleep_config().policy

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


def _hours(value: float) -> timedelta:
    return timedelta(hours=value)


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


# deprecated flat Settings field -> (its SleepPolicy field, how the old unit converts)
_LEGACY_POLICY: dict[str, tuple[str, Callable[[float], object]]] = {
    "context_budget_tokens": ("context_budget_tokens", int),
    "sleep_buffer_share": ("buffer_share", float),
    "tail_turns": ("tail_turns", int),
    "tail_share": ("tail_share", float),
    "idle_gap_hours": ("idle_gap", _hours),
    "fresh_window_hours": ("fresh_window", _hours),
    "wake_silence_hours": ("wake_silence", _hours),
    "sleep_lease_seconds": ("lease_ttl", _seconds),
}


def _deprecated_sleep_names(settings: Settings) -> list[tuple[str, str]]:
    """(old variable, new variable) for each deprecated sleep setting that is set."""
    names = [
        (f"SHERIFF_{old.upper()}", f"SHERIFF_SLEEP__POLICY__{new.upper()}")
        for old, (new, _convert) in _LEGACY_POLICY.items()
        if getattr(settings, old) is not None
    ]
    if settings.merge is not None:
        names.append(("SHERIFF_MERGE__...", "SHERIFF_SLEEP__MERGE__..."))
    return names


def legacy_sleep_config(settings: Settings) -> SleepConfig:
    """``settings.sleep`` with the deprecated flat values applied where the new nested
    setting was not given (validated: a bad value raises ``ValidationError``)."""
    sleep = settings.sleep
    given = sleep.policy.model_fields_set
    policy = {
        new: convert(value)
        for old, (new, convert) in _LEGACY_POLICY.items()
        if (value := getattr(settings, old)) is not None and new not in given
    }
    merge: dict[str, object] = {}
    if settings.merge is not None:
        old_merge, new_given = settings.merge, sleep.merge.model_fields_set
        merge = {k: getattr(old_merge, k) for k in old_merge.model_fields_set if k not in new_given}
    if not policy and not merge:
        return sleep
    return SleepConfig.model_validate(
        {
            **sleep.model_dump(),
            "policy": {**sleep.policy.model_dump(), **policy},
            "merge": {**sleep.merge.model_dump(), **merge},
        }
    )
