"""``sheriff skills ...``: list, route and run the packaged skills.

``list`` reads the skill folders only (no Neo4j). ``route`` and ``run`` connect to Neo4j, apply
the schema, and sync the skills first (only changed manifests are re-embedded), so a skill folder
added since the last command is found without any code change. JSON goes to stdout; logs and
errors go to stderr.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from api import terminal
from api.settings import Settings
from api.terminal import markup
from graph.errors import SheriffError
from skills.config import SkillSettings
from skills.errors import SkillArgsInvalid
from skills.service import SkillService

skills_app = typer.Typer(
    no_args_is_help=True, help="Skills: packaged Python skills, routed and run as tools."
)
err = Console(stderr=True)

NamespaceOpt = Annotated[
    str | None,
    typer.Option("--namespace", "-n", help="namespace (default SHERIFF_SKILLS_NAMESPACE)"),
]
WorkspaceOpt = Annotated[
    Path | None, typer.Option("--workspace", "-w", help="root the repo tools are confined to")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]
DirsOpt = Annotated[
    list[Path] | None, typer.Option("--skills-dir", help="extra folder of skills (repeatable)")
]


def _skill_settings(
    namespace: str | None, workspace: Path | None, dirs: list[Path] | None
) -> SkillSettings:
    settings = SkillSettings()
    update: dict[str, Any] = {}
    if namespace:
        update["namespace"] = namespace
    if workspace:
        update["workspace"] = workspace
    if dirs:
        update["dirs"] = [*settings.dirs, *dirs]
    return settings.model_copy(update=update)


@contextmanager
def _connected(skill_settings: SkillSettings, sync: bool = True) -> Iterator[SkillService]:
    """A SkillService on Neo4j (schema applied, skills synced); the driver closes afterwards."""
    from api.container import Container
    from graph.skills import SkillStore
    from skills.llm import build_llm
    from skills.tools import RepoTools

    settings = Settings()
    container = Container(settings)
    try:
        container.migrate()
        llm = build_llm(settings.openai_api_key, settings.openai_base_url, skill_settings.llm_model)
        # the operator's workspace; the state folder (Neo4j password, data) stays out of reach
        repo = RepoTools(skill_settings.workspace, skill_settings, hidden=[settings.home])
        service = SkillService(
            skill_settings,
            store=SkillStore(
                container.driver, settings.neo4j_database, redactor=container.redactor
            ),
            embedder=container.embedder,
            topics=container.topics,
            llm=llm,
            clock=container.clock,
            repo=repo,
        )
        if sync:
            service.sync()
        yield service
    finally:
        container.close()


def _fail(message: str, code: int = 1) -> None:
    terminal.error(err, message)
    raise typer.Exit(code)


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@skills_app.command("list")
def list_skills(
    json_out: JsonOpt = False, skills_dir: DirsOpt = None, namespace: NamespaceOpt = None
) -> None:
    """The skills found in the skill folders, and any folder that could not be loaded."""
    service = SkillService(_skill_settings(namespace, None, skills_dir))
    skills: list[dict[str, Any]] = [
        {
            "skill_id": p.skill_id,
            "name": p.manifest.name,
            "description": p.manifest.description,
            "tags": p.manifest.tags,
            "requires_tools": p.manifest.requires_tools,
            "default_reasoning_effort": p.manifest.default_reasoning_effort,
            "path": str(p.path),
            "has_tests": p.has_tests,
        }
        for p in service.registry.packages
    ]
    problems = [{"path": p.path, "message": p.message} for p in service.registry.problems]
    if json_out:
        _echo_json({"skills": skills, "problems": problems})
        return
    for s in skills:
        terminal.echo(f"{s['skill_id']:<20} {s['name']}  [{', '.join(s['tags'])}]")
    for p in problems:
        err.print(
            f"[yellow]skipped[/] {markup(p['path'])}: {markup(p['message'])}", highlight=False
        )


@skills_app.command("route")
def route_text(
    text: Annotated[str, typer.Argument(help="the user message")],
    last_tool_output: Annotated[
        str | None, typer.Option(help="output of the previous tool call")
    ] = None,
    k: Annotated[
        int | None, typer.Option(help="how many skills (default: 2 light, 4 deep)")
    ] = None,
    json_out: JsonOpt = False,
    namespace: NamespaceOpt = None,
    skills_dir: DirsOpt = None,
) -> None:
    """Rank the skills for a message, with the reason each was chosen."""
    try:
        with _connected(_skill_settings(namespace, None, skills_dir)) as service:
            result = service.route(text, last_tool_output, k)
    except SheriffError as exc:
        _fail(str(exc))
    if json_out:
        _echo_json(result.to_dict())
        return
    terminal.echo(f"intent {result.intent} ({result.intent_reason}); mode {result.mode}")
    for skill in result.skills:
        terminal.echo(f"{skill.score:6.3f}  {skill.skill_id}: {'; '.join(skill.reasons)}")


@skills_app.command("run")
def run_skill(
    skill_id: Annotated[str, typer.Argument(help="the skill to run")],
    args: Annotated[str, typer.Option("--args", help="the skill's args as a JSON object")] = "{}",
    refs: Annotated[
        str | None, typer.Option("--refs", help='ctx_refs as JSON, e.g. {"topic_ids": [...]}')
    ] = None,
    timeout: Annotated[float | None, typer.Option(help="seconds (default: the manifest's)")] = None,
    workspace: WorkspaceOpt = None,
    namespace: NamespaceOpt = None,
    skills_dir: DirsOpt = None,
) -> None:
    """Run a skill; prints its SkillResult as JSON. Exit 0 on success, 1 on failure, 2 on bad args."""
    try:
        parsed_args = json.loads(args)
        parsed_refs = json.loads(refs) if refs else None
    except json.JSONDecodeError as exc:
        _fail(f"--args/--refs must be JSON: {exc}", 2)
    try:
        with _connected(_skill_settings(namespace, workspace, skills_dir)) as service:
            result = service.run(skill_id, parsed_args, parsed_refs, timeout_s=timeout)
    except SkillArgsInvalid as exc:
        _echo_json(
            {"skill_id": skill_id, "ok": False, "error": str(exc), "violations": exc.violations}
        )
        raise typer.Exit(2) from exc
    except SheriffError as exc:
        _fail(str(exc), 2)
    _echo_json(result.model_dump(mode="json"))
    raise typer.Exit(0 if result.ok else 1)


@skills_app.command("sync")
def sync_skills(namespace: NamespaceOpt = None, skills_dir: DirsOpt = None) -> None:
    """Discover the skills and sync them into Neo4j (:Skill nodes with embeddings)."""
    try:
        with _connected(_skill_settings(namespace, None, skills_dir), sync=False) as service:
            report = service.sync()
    except SheriffError as exc:
        _fail(str(exc))
    _echo_json({**report.__dict__, "problems": [p.__dict__ for p in report.problems]})
