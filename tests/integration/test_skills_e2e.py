"""Spec §10.5 end to end: a message is routed to the right built-in skill (real MiniLM, real
Neo4j), and the skill, run with the args the router read from the message, does its job on a
small sample workspace."""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest
from neo4j import Driver

from graph.models import Fact, Topic, parse
from graph.skills import SkillStore
from graph.topics import TopicStore
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from skills.router import RouteResult
from skills.service import SkillService
from tests.conftest import T0

SAMPLE = {
    "app/__init__.py": "",
    "app/parser.py": (
        '"""Parse key = value lines."""\n\n\nclass Token:\n    """One key/value pair."""\n\n'
        "    def __init__(self, key: str, value: str) -> None:\n        self.key, self.value = key, value\n\n\n"
        "def parse_line(line: str) -> Token:\n    '''Parse one line.'''\n"
        "    key, _, value = line.partition('=')\n    return Token(key.strip(), value.strip())\n\n\n"
        "def parse(text: str) -> list[Token]:\n    '''Parse every non-empty line.'''\n"
        "    return [parse_line(ln) for ln in text.splitlines() if ln.strip()]\n"
    ),
    "app/storage.py": (
        "class Loader:\n    '''Loads rows.'''\n\n    def load(self) -> list[int]:\n        return [1, 2, 3]\n\n\n"
        "def open_store() -> Loader:\n    return Loader()\n"
    ),
    "app/service.py": "from app import storage\nfrom app.storage import Loader\n\n\ndef total() -> int:\n    return sum(storage.open_store().load()) + len(Loader().load())\n",
    "app/config.py": "def load_config(cfg: dict[str, str]) -> str:\n    host = cfg.get('host', 'localhost')\n    return cfg['db_url']\n",
    "app/sync/__init__.py": '"""Device sync."""\n',
    "app/sync/queue.py": "from app.storage import Loader\n\n\ndef enqueue(change: dict) -> int:\n    return len(Loader().load())\n",
    "app/sync/merge.py": "def merge(a: dict, b: dict) -> dict:\n    return {**a, **b}\n",
    "tests/test_parser.py": "from app.parser import parse\n\n\ndef test_parse():\n    assert [t.key for t in parse('a = 1\\nb = 2')] == ['a', 'b']\n",
    "tests/test_storage.py": "from app.service import total\nfrom app.storage import Loader\n\n\ndef test_total():\n    assert total() == 9\n    assert Loader().load() == [1, 2, 3]\n",
}

TRACE = """Traceback (most recent call last):
  File "/home/dev/sample/app/main.py", line 3, in <module>
    url = load_config({})
  File "/home/dev/sample/app/config.py", line 3, in load_config
    return cfg['db_url']
KeyError: 'db_url'"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for rel, text in SAMPLE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.fixture
def service(driver: Driver, embedder: MiniLMEmbedder, namespace: str, ws: Path) -> SkillService:
    settings = SkillSettings(namespace=namespace, workspace=ws)
    svc = SkillService(
        settings, store=SkillStore(driver), embedder=embedder, topics=TopicStore(driver)
    )
    report = svc.sync()
    assert sorted(report.upserted) == ["debug", "plan_and_execute", "repo_refactor", "write_docs"]
    return svc


def routed(service: SkillService, text: str, expected: str) -> RouteResult:
    result = service.route(text)
    assert result.skills, result.trace
    top = result.skills[0]
    assert top.skill_id == expected, result.trace
    assert top.reasons and top.reasons[0].startswith("serves intent")
    assert any(line.startswith(f"kept {expected}") for line in result.trace)
    return result


def test_each_acceptance_message_routes_to_its_skill(service: SkillService) -> None:
    cases = {
        "write docs for the parser module": ("write_docs", "docs", "deep"),
        "refactor the storage module: rename Loader to Reader": ("repo_refactor", "coding", "deep"),
        TRACE: ("debug", "debug", "light"),
        "how should we architect the sync service?": ("plan_and_execute", "planning", "deep"),
    }
    for text, (skill_id, intent, mode) in cases.items():
        result = routed(service, text, skill_id)
        assert (result.intent, result.mode) == (intent, mode)
    assert service.route("thanks, that's all for today").skills == []


def test_write_docs_end_to_end(service: SkillService, ws: Path) -> None:
    route = routed(service, "write docs for the parser module", "write_docs")
    args = route.skills[0].args_hint
    assert args == {"target": "parser"}
    result = service.run("write_docs", args)
    assert result.ok, result.error
    docs = ws / "docs/app.parser.md"
    assert result.output is not None and result.output["docs_path"] == "docs/app.parser.md"
    text = docs.read_text()
    for name in (
        "parse_line(line: str) -> Token",
        "parse(text: str) -> list[Token]",
        "class Token",
    ):
        assert name in text


def test_repo_refactor_end_to_end(service: SkillService, ws: Path) -> None:
    route = routed(service, "refactor the storage module: rename Loader to Reader", "repo_refactor")
    args = route.skills[0].args_hint
    assert args == {"old_name": "Loader", "new_name": "Reader", "module": "storage"}
    result = service.run("repo_refactor", args)
    assert result.ok, (result.error, result.output)
    out = result.output or {}
    assert (
        out["compiled"] is True
        and out["tests"]["passed"] is True
        and "2 passed" in out["tests"]["output_tail"]
    )
    for path in ws.rglob("*.py"):
        py_compile.compile(str(path), doraise=True)
        assert "Loader" not in path.read_text(), path
    assert "class Reader:" in (ws / "app/storage.py").read_text()


def test_debug_end_to_end_links_the_same_failure_from_memory(
    service: SkillService, driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    topics = TopicStore(driver)
    prior = parse(Topic, {
        "namespace": namespace, "name": "Config KeyError",
        "one_liner": "load_config raised KeyError 'db_url' when the .env file was missing",
        "facts": [Fact(text="fixed by adding DB_URL to .env")],
        "time": {"first_seen_at": T0, "last_seen_at": T0},
    })  # fmt: skip
    other = parse(Topic, {"namespace": namespace, "name": "Party planning", "one_liner": "Cake for Friday",
                          "time": {"first_seen_at": T0, "last_seen_at": T0}})  # fmt: skip
    texts = [prior.semantic_text(), other.semantic_text()]
    topics.create([prior, other], embedder.embed(texts), T0)

    route = routed(service, TRACE, "debug")
    result = service.run("debug", route.skills[0].args_hint or {})
    assert result.ok, result.error
    out = result.output or {}
    assert out["failing_frame"]["workspace_path"] == "app/config.py"
    assert "return cfg['db_url']" in out["failing_frame"]["excerpt"]
    assert (
        out["same_failure_as_before"] is True
        and out["prior_topics"][0]["topic_id"] == prior.topic_id
    )
    assert "Same failure as before: topic 'Config KeyError'" in out["summary"]
    assert result.topics_used == [prior.topic_id] and result.utility == {prior.topic_id: 2.0}
    assert topics.get_one(namespace, prior.topic_id).stats.utility_score == 2.0
    assert topics.get_one(namespace, other.topic_id).stats.utility_score == 0.0


def test_plan_and_execute_end_to_end(service: SkillService) -> None:
    route = routed(service, "how should we architect the sync service?", "plan_and_execute")
    result = service.run("plan_and_execute", route.skills[0].args_hint or {})
    assert result.ok, result.error
    out = result.output or {}
    assert out["status"] == "completed" and out["plan"][0]["name"] == "survey"
    modules = [m["module"] for m in out["design"]["relevant_modules"]]
    assert modules == ["app.sync", "app.sync.merge", "app.sync.queue"]
    assert ["app.sync.queue", "app.storage"] in out["design"]["dependencies"]
