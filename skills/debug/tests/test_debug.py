"""debug on a sample workspace: failing frames read, memory linked ("same failure as before")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skills.debug.skill import run
from skills.testing import local_context

SKILL_DIR = Path(__file__).resolve().parents[1]

CONFIG = '''import json


def load_config(cfg: dict[str, str]) -> str:
    """Return the database URL."""
    host = cfg.get("host", "localhost")
    return cfg["db_url"]
'''

TRACE = """Traceback (most recent call last):
  File "/srv/app/main.py", line 4, in <module>
    print(load_config({}))
  File "/srv/app/app/config.py", line 7, in load_config
    return cfg["db_url"]
KeyError: 'db_url'
"""


class FakeMemory:
    """Stands in for topics.search (the real one is tested against Neo4j in tests/integration)."""

    def __init__(self, topics: list[dict[str, Any]]) -> None:
        self.topics = topics
        self.queries: list[str] = []

    def __call__(self, query: str, k: int) -> list[dict[str, Any]]:
        self.queries.append(query)
        return self.topics[:k]


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app/config.py").write_text(CONFIG)
    (tmp_path / "main.py").write_text(
        "from app.config import load_config\n\n\nprint(load_config({}))\n"
    )
    return tmp_path


def topic(topic_id: str, name: str, one_liner: str) -> dict[str, Any]:
    return {"topic_id": topic_id, "name": name, "one_liner": one_liner, "facts": [], "aliases": [],
            "last_seen_at": "2026-02-20T10:00:00+00:00", "score": 0.8}  # fmt: skip


def test_reads_the_failing_frames_and_the_enclosing_function(tmp_path: Path) -> None:
    ctx = local_context(SKILL_DIR, workspace(tmp_path), topics=FakeMemory([]))
    out = run(ctx, {"trace": TRACE})
    assert out["ok"] and out["exception"] == {"type": "KeyError", "message": "'db_url'"}
    assert [f["workspace_path"] for f in out["frames"]] == ["main.py", "app/config.py"]
    failing = out["failing_frame"]
    assert failing["function"] == "load_config" and failing["line"] == 7
    assert '>    7 |     return cfg["db_url"]' in failing["excerpt"]
    assert failing["definition"] == {"name": "load_config", "start": 4, "end": 7}
    assert failing["source"].startswith("def load_config(cfg: dict[str, str]) -> str:")
    assert "key 'db_url' is missing" in out["hypotheses"][0]
    assert out["summary"].startswith("KeyError: 'db_url' raised in load_config (app/config.py:7)")
    assert out["same_failure_as_before"] is False


def test_links_a_prior_topic_about_the_same_failure_and_marks_it_used(tmp_path: Path) -> None:
    memory = FakeMemory([
        topic("t-other", "Deploy checklist", "Steps to deploy the API"),
        topic("t-same", "Config crash", "KeyError 'db_url' in load_config when the env file is missing"),
        topic("t-near", "KeyError in parser", "KeyError in the lexer table"),
    ])  # fmt: skip
    ctx = local_context(SKILL_DIR, workspace(tmp_path), topics=memory)
    out = run(ctx, {"trace": TRACE})
    assert out["same_failure_as_before"] is True
    assert out["prior_topics"][0]["topic_id"] == "t-same"
    assert out["prior_topics"][0]["why"] == "mentions KeyError and 'load_config'"
    assert {t["topic_id"]: t["same_failure"] for t in out["prior_topics"]} == {
        "t-same": True, "t-other": False, "t-near": False,
    }  # fmt: skip
    assert ctx.topics_used == ["t-same"]
    assert "Same failure as before: topic 'Config crash'" in out["summary"]
    assert memory.queries == ["KeyError: 'db_url' in load_config (app/config.py)"]


def test_without_memory_the_trace_is_still_debugged(tmp_path: Path) -> None:
    out = run(local_context(SKILL_DIR, workspace(tmp_path)), {"trace": TRACE})
    assert out["ok"] and out["prior_topics"] == []
    assert out["memory"].startswith("memory not searched: tool topics.search is not available")


def test_no_trace_is_an_error(tmp_path: Path) -> None:
    out = run(local_context(SKILL_DIR, workspace(tmp_path)), {"trace": "it broke, help"})
    assert out["ok"] is False and "no Python stack trace" in out["error"]
