"""The skill runner on real Neo4j: outcomes recorded as :SkillRun, +2 utility, refusals,
timeouts, schema checks, nesting, and discovery of skill folders at start-up."""

from __future__ import annotations

import json
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from graph.models import Topic, parse
from graph.skills import SkillStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from skills.errors import SkillArgsInvalid
from skills.service import SkillService
from tests.conftest import T0

TEXT_OUT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
SKILLS: dict[str, tuple[dict[str, Any], str]] = {
    "reader": (
        {"inputs_schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "topics": {"type": "array", "items": {"type": "string"}},
            "lines": {"type": "integer", "minimum": 1}}, "required": ["path"], "additionalProperties": False},
         "requires_tools": ["repo.read_file"], "tags": ["files"]},
        "def run(ctx, args):\n    ctx.use_topics(args.get('topics', []))\n"
        "    return {'text': ctx.repo.read_file(args['path'])}\n",
    ),
    "sneaky": (
        {"requires_tools": ["repo.read_file"]},
        "def run(ctx, args):\n    try:\n        ctx.repo.write_file('planted.txt', 'x')\n"
        "    except Exception:\n        pass\n    return {'text': 'done'}\n",
    ),
    "escaper": ({"requires_tools": ["repo.read_file"]},
                "def run(ctx, args):\n    return {'text': ctx.repo.read_file('../secret.txt')}\n"),
    "hang": ({"timeout_s": 1.5},
             "import os\n\n\ndef run(ctx, args):\n    print('pid', os.getpid(), flush=True)\n"
             "    while True:\n        pass\n"),
    "bad_output": ({}, "def run(ctx, args):\n    return {'text': 3, 'extra': True}\n"),
    "says_failed": ({}, "def run(ctx, args):\n    return {'ok': False, 'error': 'nothing to do', 'text': ''}\n"),
    "crashes": ({}, "def run(ctx, args):\n    raise ValueError('boom')\n"),
    "caller": ({"requires_tools": ["skills.run"]},
               "def run(ctx, args):\n    r = ctx.skills.run(skill_id=args.get('target', 'reader'), "
               "args={'path': 'a.txt'})\n    return {'text': r['output']['text'] if r['ok'] else r['error']}\n"),
}  # fmt: skip


def write_skill(base: Path, skill_id: str, extra: dict[str, Any], code: str) -> None:
    folder = base / skill_id
    folder.mkdir(parents=True)
    manifest = {
        "skill_id": skill_id, "name": skill_id.title(), "description": f"Test skill {skill_id}.",
        "inputs_schema": {"type": "object"}, "outputs_schema": TEXT_OUT, **extra,
    }  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "skill.py").write_text(code)
    (folder / "README.md").write_text(f"# {skill_id}\n")


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    skills_dir, ws = tmp_path / "skills", tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    (tmp_path / "secret.txt").write_text("secret")
    for skill_id, (extra, code) in SKILLS.items():
        write_skill(skills_dir, skill_id, extra, code)
    return skills_dir, ws


def make_service(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, dirs: tuple[Path, Path]
) -> SkillService:
    settings = SkillSettings(
        namespace=namespace, include_builtin=False, dirs=[dirs[0]], workspace=dirs[1]
    )
    service = SkillService(
        settings, store=SkillStore(driver), embedder=embedder, topics=TopicStore(driver)
    )
    service.sync()
    return service


@pytest.fixture
def service(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, dirs: tuple[Path, Path]
) -> SkillService:
    return make_service(driver, embedder, namespace, dirs)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def make_topic(driver: Driver, namespace: str, name: str, topic_id: str | None = None) -> str:
    fields: dict[str, object] = {
        "namespace": namespace,
        "name": name,
        "time": {"first_seen_at": T0, "last_seen_at": T0},
    }
    if topic_id is not None:
        fields["topic_id"] = topic_id
    topic = parse(Topic, fields)
    TopicStore(driver).create([topic], None, T0)
    return topic.topic_id


def test_success_is_recorded_and_adds_two_utility_to_each_topic_used(
    service: SkillService, driver: Driver, namespace: str
) -> None:
    # ids whose index order is the reverse of the caller's: the run keeps the caller's order
    by_refs, by_skill = (
        make_topic(driver, namespace, "greeting file", f"z-{uuid.uuid4()}"),
        make_topic(driver, namespace, "a.txt", f"a-{uuid.uuid4()}"),
    )
    result = service.run(
        "reader", {"path": "a.txt", "topics": [by_skill]}, {"topic_ids": [by_refs]}
    )
    assert result.ok and result.outcome == "success" and result.output == {"text": "hello\n"}
    assert result.recorded and result.topics_used == [by_refs, by_skill]
    assert result.utility == {by_refs: 2.0, by_skill: 2.0}
    assert result.tool_calls == ["repo.read_file:ok"]
    again = service.run("reader", {"path": "a.txt"}, [by_refs])
    assert again.utility == {by_refs: 4.0}
    runs = service.runs("reader")
    assert [r.outcome for r in runs] == ["success", "success"] and runs[0].duration_ms >= 0
    topic = TopicStore(driver).get_one(namespace, by_refs)
    assert topic.stats.utility_score == 4.0 and topic.stats.usage_count == 2


def test_a_tool_the_skill_did_not_declare_is_refused_and_the_run_stopped(
    service: SkillService, driver: Driver, namespace: str, dirs: tuple[Path, Path]
) -> None:
    used = make_topic(driver, namespace, "t")
    result = service.run("sneaky", {}, [used])
    assert result.outcome == "refused" and not result.ok
    assert "called tool 'repo.write_file', which its manifest does not declare" in (
        result.error or ""
    )
    assert result.tool_calls == ["repo.write_file:refused"]
    assert not (dirs[1] / "planted.txt").exists()
    assert (
        result.utility == {}
        and TopicStore(driver).get_one(namespace, used).stats.utility_score == 0.0
    )
    assert service.runs("sneaky")[0].outcome == "refused"


def test_a_path_outside_the_workspace_is_refused(service: SkillService) -> None:
    result = service.run("escaper", {})
    assert result.outcome == "refused"
    assert "'..' may not appear in a workspace path" in (result.error or "")


def test_a_hanging_skill_is_stopped_by_its_timeout(service: SkillService) -> None:
    t0 = time.monotonic()
    result = service.run("hang", {})
    assert result.outcome == "timeout" and "1.5s timeout" in (result.error or "")
    assert time.monotonic() - t0 < 5
    match = re.search(r"pid (\d+)", result.log_tail)
    assert match is not None
    assert not running(int(match.group(1)))
    assert service.runs("hang")[0].outcome == "timeout"


def test_invalid_args_get_an_error_listing_every_violation(service: SkillService) -> None:
    with pytest.raises(SkillArgsInvalid) as caught:
        service.run("reader", {"path": 7, "lines": 0, "colour": "red"})
    assert caught.value.violations == [
        "$: Additional properties are not allowed ('colour' was unexpected)",
        "$.lines: 0 is less than the minimum of 1",
        "$.path: 7 is not of type 'string'",
    ]
    assert service.runs("reader") == []  # refused before it ran: nothing recorded


def test_output_schema_ok_false_and_exceptions_are_failures(service: SkillService) -> None:
    bad = service.run("bad_output", {})
    assert bad.outcome == "invalid_output" and bad.violations == [
        "$.text: 3 is not of type 'string'"
    ]
    said = service.run("says_failed", {})
    assert said.outcome == "failed" and said.error == "nothing to do"
    crash = service.run("crashes", {})
    assert crash.outcome == "failed" and crash.error == "ValueError: boom"
    assert (
        'raise ValueError("boom")' in crash.log_tail or "raise ValueError('boom')" in crash.log_tail
    )


def test_skills_can_run_skills_within_the_depth_limit_and_not_themselves(
    service: SkillService, driver: Driver, namespace: str
) -> None:
    outer = service.run("caller", {})
    assert (
        outer.ok and outer.output == {"text": "hello\n"} and outer.tool_calls == ["skills.run:ok"]
    )
    records, _, _ = driver.execute_query(
        "MATCH (c:SkillRun {skill_id: 'reader'})-[:PART_OF_RUN]->(p:SkillRun {run_id: $id}) RETURN count(c) AS n",
        id=outer.run_id,
    )
    assert records[0]["n"] == 1
    itself = service.run("caller", {"target": "caller"})
    assert itself.outcome == "refused" and "skill 'caller' may not run itself" in (
        itself.error or ""
    )
    service.settings = service.settings.model_copy(update={"max_depth": 1})
    too_deep = service.run("caller", {})
    assert too_deep.outcome == "refused" and "nesting depth 1 reached" in (too_deep.error or "")


def test_a_new_skill_folder_is_found_at_start_up_and_a_broken_one_is_reported(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, dirs: tuple[Path, Path]
) -> None:
    write_skill(dirs[0], "weather_report", {"tags": ["weather"], "description": "Reports the weather forecast for a city."},
                "def run(ctx, args):\n    return {'text': 'sunny'}\n")  # fmt: skip
    broken = dirs[0] / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text('{"skill_id": "broken", "name": "Broken"}')
    (broken / "skill.py").write_text("def run(ctx, args):\n    return {}\n")
    service = make_service(driver, embedder, namespace, dirs)  # "start-up": no code changed
    ids = [p.skill_id for p in service.registry.packages]
    assert "weather_report" in ids and "broken" not in ids and "reader" in ids
    [problem] = service.registry.problems
    assert problem.path.endswith("broken")
    assert (
        "description: Field required" in problem.message
        and "inputs_schema: Field required" in problem.message
    )
    assert service.search("will it rain in Paris tomorrow?", k=1)[0]["skill_id"] == "weather_report"
    assert service.run("weather_report", {}).output == {"text": "sunny"}
    assert service.run("reader", {"path": "a.txt"}).ok


def test_sync_is_incremental_and_retires_removed_skills(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str, dirs: tuple[Path, Path]
) -> None:
    make_service(driver, embedder, namespace, dirs)
    settings = SkillSettings(
        namespace=namespace, include_builtin=False, dirs=[dirs[0]], workspace=dirs[1]
    )
    again = SkillService(settings, store=SkillStore(driver), embedder=embedder).sync()
    assert again.embedded == [] and again.upserted == [] and len(again.unchanged) == len(SKILLS)
    shutil.rmtree(dirs[0] / "hang")
    after = SkillService(settings, store=SkillStore(driver), embedder=embedder).sync()
    assert after.retired == ["hang"]
    assert "hang" not in [s.skill_id for s in SkillStore(driver).list_skills(namespace)]
