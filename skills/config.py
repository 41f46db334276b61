"""``SkillSettings``: where skills and workspaces live, and the limits the tools enforce.

Environment variables use the prefix ``SHERIFF_SKILLS_``; lists and maps are JSON, e.g.
``SHERIFF_SKILLS_DIRS='["/opt/my-skills"]'`` or
``SHERIFF_SKILLS_TEST_COMMANDS='["pytest -q tests/unit"]'``.

Two kinds of callers use the repo tools. A local operator (``sheriff skills run --workspace``)
names one workspace (``workspace``). A tenant (an API key, over REST and later MCP) always works
in its namespace's own folder under ``workspaces_dir``; ``tenant_repo_tools`` turns the repo
tools off for tenants and ``tenant_run_tests`` says whether and how they may run tests (running
tests executes code the tenant wrote, so it is off unless the operator opts in).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

BUILTIN_DIR = Path(__file__).resolve().parent

# "{python}" is replaced by the interpreter running Sheriff Claw.
DEFAULT_PRESETS: dict[str, list[str]] = {
    "pytest": ["{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
    "compileall": ["{python}", "-m", "compileall", "-q", "."],
}


# off: refused; sandboxed: only inside a Landlock sandbox (refused where the kernel has none);
# unsandboxed: as the server's user, with a scrubbed environment (trusted tenants only).
TestRunMode = Literal["off", "sandboxed", "unsandboxed"]


class SkillSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SHERIFF_SKILLS_", extra="ignore")

    namespace: str = Field(default="default", description="namespace of :Skill and :SkillRun")
    workspace: Path = Field(
        default=Path("."), description="root the repo tools are confined to (local operator)"
    )
    workspaces_dir: Path | None = Field(
        default=None, description="folder of the tenants' workspaces; default <home>/workspaces"
    )
    tenant_repo_tools: bool = Field(
        default=True, description="repo tools for API-key callers, in their own workspace"
    )
    tenant_run_tests: TestRunMode = Field(
        default="off", description="repo.run_tests for API-key callers: off|sandboxed|unsandboxed"
    )
    dirs: list[Path] = Field(default_factory=list, description="extra folders holding skills")
    include_builtin: bool = Field(default=True, description="also load the built-in skills")
    timeout_s: float = Field(default=120.0, gt=0, description="default wall-clock limit per run")
    max_timeout_s: float = Field(default=900.0, gt=0, description="cap on any timeout")
    max_depth: int = Field(default=3, ge=1, description="how deep skills may run skills")
    max_read_bytes: int = Field(default=1_000_000, gt=0)
    max_write_bytes: int = Field(default=1_000_000, gt=0)
    max_list_files: int = Field(default=5_000, gt=0)
    max_list_entries: int = Field(
        default=20_000, gt=0, description="directory entries one repo.list_files may look at"
    )
    max_list_depth: int = Field(default=16, gt=0, description="folders repo.list_files enters")
    max_workspace_bytes: int = Field(
        default=200_000_000, gt=0, description="size of a tenant workspace (repo writes)"
    )
    max_workspace_files: int = Field(default=20_000, gt=0, description="files and folders")
    test_presets: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_PRESETS))
    test_commands: list[str] = Field(
        default_factory=lambda: ["pytest", "pytest -q", "python -m pytest", "python -m pytest -q"],
        description="exact commands repo.run_tests accepts besides the presets",
    )
    test_timeout_s: float = Field(default=300.0, gt=0)
    test_memory_bytes: int = Field(
        default=4_000_000_000, gt=0, description="address-space limit of a sandboxed test run"
    )
    test_file_bytes: int = Field(
        default=100_000_000, gt=0, description="largest file a sandboxed test run may write"
    )
    output_tail_chars: int = Field(default=4_000, gt=0)
    llm_model: str = Field(default="gpt-5.2-codex", description="Responses API model for skills")

    def skill_dirs(self) -> list[Path]:
        """Folders to scan, built-ins first."""
        return ([BUILTIN_DIR] if self.include_builtin else []) + list(self.dirs)
