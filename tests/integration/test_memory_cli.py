"""``sheriff ingest / sleep / wake / memory export`` as a user runs them: a real subprocess, the
real Neo4j and the real MiniLM, with the tail shortened to 4 turns through SHERIFF_TAIL_TURNS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from neo4j import Driver

from api.settings import Settings
from graph.messages import MessageStore
from graph.models import Message
from sleepwake.policy import estimate_tokens

ROOT = Path(__file__).resolve().parents[2]
DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SLEPT_AT = DAY1 + timedelta(hours=1)
TAIL = 4

SCRIPT = [
    ("user", "We're planning Mel's surprise party at the Lake House for Saturday with Anna and Ben."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. We still need to book the caterer."),
    ("user", "Never use plastic plates, we prefer real dishes."),
    ("assistant", "Noted: no plastic plates."),
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("assistant", "Good choice for the billing migration."),
    ("user", "The billing migration depends on the schema review."),
    ("user", "We're halfway through migrating the billing tables; next step is the invoices table."),
    ("assistant", "Understood, the invoices table is next."),
    ("user", "Let's pause here for today."),
    ("assistant", "Sure, talk later."),
]  # fmt: skip


@pytest.fixture
def env(settings: Settings) -> dict[str, str]:
    uri, user, password = settings.connection()
    return {
        **os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password,
        "SHERIFF_TAIL_TURNS": str(TAIL),
    }  # fmt: skip


def sheriff(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from api.cli import main; main()", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def script_lines(start: datetime = DAY1) -> list[str]:
    return [
        json.dumps(
            {"role": role, "content": text, "at": (start + timedelta(minutes=i)).isoformat()}
        )
        for i, (role, text) in enumerate(SCRIPT)
    ]


def stored(driver: Driver, namespace: str) -> list[Message]:
    return MessageStore(driver).tail(namespace, 1000)


def ingest_script(env: dict[str, str], namespace: str, tmp_path: Path) -> None:
    done = sheriff(
        env, "ingest", str(jsonl(tmp_path / "chat.jsonl", script_lines())),
        "--namespace", namespace, "--no-sleep",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"appended": len(SCRIPT), "sleeps": []}


@pytest.fixture
def slept(env: dict[str, str], namespace: str, tmp_path: Path) -> dict[str, Any]:
    """The script ingested and slept on at SLEPT_AT; the printed summary."""
    ingest_script(env, namespace, tmp_path)
    done = sheriff(env, "sleep", "--namespace", namespace, "--now", SLEPT_AT.isoformat())
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def test_ingest_appends_the_file_in_order(
    env: dict[str, str], namespace: str, driver: Driver, tmp_path: Path
) -> None:
    lines = script_lines()
    lines.insert(3, "")  # blank lines are skipped
    lines[0] = lines[0].replace("+00:00", "Z")
    lines[1] = json.dumps(
        {"role": "assistant", "content": SCRIPT[1][1], "at": "2026-03-02T11:01:00+02:00"}
    )  # another zone, stored as UTC
    done = sheriff(
        env, "ingest", str(jsonl(tmp_path / "chat.jsonl", lines)), "--namespace", namespace,
        "--no-sleep",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["appended"] == len(SCRIPT)
    messages = stored(driver, namespace)
    assert [(m.role, m.content) for m in messages] == SCRIPT
    assert [m.at for m in messages] == [DAY1 + timedelta(minutes=i) for i in range(len(SCRIPT))]
    seqs = [m.seq for m in messages if m.seq is not None]
    assert len(seqs) == len(messages) and seqs == sorted(set(seqs))
    assert all(m.compacted_at is None for m in messages)  # --no-sleep: nothing compacted


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ('{"role": "user", "content": "oops"', "not valid JSON"),
        ('{"role": "user", "content": "no time"}', "'at' is required"),
        ('{"role": "user", "content": "naive", "at": "2026-03-02T09:30:00"}', "timezone"),
        ('{"role": "robot", "content": "who", "at": "2026-03-02T09:30:00Z"}', "role"),
    ],
)
def test_a_malformed_line_is_reported_by_number_and_nothing_is_written(
    bad: str, why: str, env: dict[str, str], namespace: str, driver: Driver, tmp_path: Path
) -> None:
    lines = script_lines()
    lines[2] = bad
    done = sheriff(
        env, "ingest", str(jsonl(tmp_path / "bad.jsonl", lines)), "--namespace", namespace,
        "--no-sleep",
    )  # fmt: skip
    assert done.returncode != 0
    said = " ".join(done.stderr.split())  # rich may wrap long lines
    assert "line 3" in said and why in said, said
    assert done.stdout == ""
    assert stored(driver, namespace) == []


def test_out_of_order_times_are_refused_and_nothing_is_written(
    env: dict[str, str], namespace: str, driver: Driver, tmp_path: Path
) -> None:
    lines = script_lines()
    lines[5], lines[6] = lines[6], lines[5]
    done = sheriff(
        env, "ingest", str(jsonl(tmp_path / "swap.jsonl", lines)), "--namespace", namespace,
        "--no-sleep",
    )  # fmt: skip
    assert done.returncode != 0
    assert "time order" in " ".join(done.stderr.split())
    assert stored(driver, namespace) == []


def test_sleep_prints_a_summary_and_keeps_the_tail(
    slept: dict[str, Any], namespace: str, driver: Driver
) -> None:
    assert slept["namespace"] == namespace
    assert slept["reason"] == "explicit"
    assert datetime.fromisoformat(slept["slept_at"]) == SLEPT_AT
    assert slept["messages_compacted"] == len(SCRIPT) - TAIL  # SHERIFF_TAIL_TURNS, not 12
    assert slept["topics_created"] > 0 and slept["topics_updated"] == 0
    assert slept["wake_packet_id"]
    assert slept["in_progress"]["status"] == "running"
    messages = stored(driver, namespace)
    compacted = [m.content for m in messages if m.compacted_at is not None]
    assert compacted == [text for _, text in SCRIPT[:-TAIL]]
    buffer = MessageStore(driver).buffer(namespace)
    assert [m.content for m in buffer] == [text for _, text in SCRIPT[-TAIL:]]


def wake(env: dict[str, str], namespace: str, at: datetime) -> dict[str, Any]:
    done = sheriff(
        env, "wake", "--namespace", namespace, "--message",
        "ok, where were we with the billing migration?", "--now", at.isoformat(), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_wake_json_gives_the_packet_the_resume_decision_and_dated_topics(
    slept: dict[str, Any], env: dict[str, str], namespace: str, driver: Driver
) -> None:
    result = wake(env, namespace, SLEPT_AT + timedelta(minutes=30))
    packet = result["packet"]
    assert packet["packet_id"] == slept["wake_packet_id"]
    assert datetime.fromisoformat(packet["slept_at"]) == SLEPT_AT
    assert [t["content"] for t in packet["conversation_tail"]] == [t for _, t in SCRIPT[-TAIL:]]
    assert packet["in_progress"]["status"] == "running"
    assert packet["top_topic_ids"]

    resume = result["resume"]
    assert resume["action"] == "resume"
    assert resume["goal"] == "migrating the billing tables"
    assert resume["next_step"] == "the invoices table"
    assert resume["slept_for_seconds"] == 1800
    assert resume["topic_id"] == packet["in_progress"]["topic_id"]
    assert resume["topic_id"] in packet["top_topic_ids"]

    topics = result["topics"]
    assert topics
    by_name = {t["name"].lower(): t for t in topics}
    billing = by_name["billing migration"]
    assert billing["topic_id"] == resume["topic_id"]
    assert "Postgres" in billing["one_liner"]
    assert datetime.fromisoformat(billing["first_seen_at"]) == DAY1 + timedelta(minutes=5)
    assert datetime.fromisoformat(billing["last_seen_at"]) == DAY1 + timedelta(minutes=7)
    messages = {m.message_id: m for m in stored(driver, namespace)}
    compacted = {mid for mid, m in messages.items() if m.compacted_at is not None}
    for topic in topics:
        assert topic["one_liner"] and topic["reason"]
        first = datetime.fromisoformat(topic["first_seen_at"])
        assert first <= datetime.fromisoformat(topic["last_seen_at"]) <= SLEPT_AT
        assert topic["source_message_ids"] and set(topic["source_message_ids"]) <= compacted
    assert any("billing migration" in messages[m].content for m in billing["source_message_ids"])


def test_wake_after_the_fresh_window_asks_to_confirm(
    slept: dict[str, Any], env: dict[str, str], namespace: str
) -> None:
    result = wake(env, namespace, SLEPT_AT + timedelta(days=2))
    assert result["resume"]["action"] == "confirm"
    assert "stale" in result["resume"]["reason"]
    assert result["resume"]["next_step"] == "the invoices table"


def test_memory_export_writes_tiered_yaml_within_the_budget(
    slept: dict[str, Any], env: dict[str, str], namespace: str, driver: Driver, tmp_path: Path
) -> None:
    out = tmp_path / "memory.yaml"
    done = sheriff(
        env, "memory", "export", "--namespace", namespace, "--out", str(out), "--budget", "500",
        "--now", (SLEPT_AT + timedelta(hours=1)).isoformat(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert estimate_tokens(text) <= 500
    doc = yaml.safe_load(text)
    assert list(doc) == ["exported_at", "budget_tokens", "hot", "warm", "cold"]
    assert doc["budget_tokens"] == 500
    assert doc["hot"], "a topic seen an hour ago is hot"
    assert doc["warm"] == [] and doc["cold"] == []
    utilities = [t["utility_score"] for t in doc["hot"]]
    ids = {m.message_id for m in stored(driver, namespace)}
    for entry in doc["hot"]:
        assert entry["name"] and entry["one_liner"] and entry["first_seen_at"]
        assert entry["facts"]
        assert all(set(f["sources"]) <= ids for f in entry["facts"])
    assert utilities == sorted(utilities, reverse=True)  # the most useful topics go first


@pytest.mark.parametrize(
    "command",
    [
        ("sleep",),
        ("wake", "--message", "hello", "--json"),
        ("memory", "export", "--out", "never.yaml"),
    ],
)
def test_a_now_without_a_zone_is_refused(
    command: tuple[str, ...], env: dict[str, str], namespace: str, driver: Driver, tmp_path: Path
) -> None:
    ingest_script(env, namespace, tmp_path)
    args = [a if a != "never.yaml" else str(tmp_path / a) for a in command]
    done = sheriff(env, *args, "--namespace", namespace, "--now", "2026-03-02T10:00:00")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "--now must be timezone-aware" in said, said
    assert not (tmp_path / "never.yaml").exists()
    assert all(m.compacted_at is None for m in stored(driver, namespace))


def test_a_now_that_is_not_a_timestamp_is_refused(env: dict[str, str], namespace: str) -> None:
    done = sheriff(env, "sleep", "--namespace", namespace, "--now", "tomorrow morning")
    assert done.returncode != 0
    assert "not an ISO-8601 timestamp" in " ".join(done.stderr.split())


def test_a_bad_message_late_in_a_long_file_leaves_nothing_written(
    env: dict[str, str], namespace: str, driver: Driver, tmp_path: Path
) -> None:
    """The file is appended in parts (for the progress bar); all of it is checked first."""
    lines = [
        json.dumps({"role": "user", "content": f"note {i}",
                    "at": (DAY1 + timedelta(minutes=i)).isoformat()})
        for i in range(250)
    ]  # fmt: skip
    lines[230] = json.dumps(
        {"role": "user", "content": "x" * 100_001, "at": (DAY1 + timedelta(hours=9)).isoformat()}
    )
    done = sheriff(
        env, "ingest", str(jsonl(tmp_path / "long.jsonl", lines)), "--namespace", namespace,
    )  # fmt: skip
    assert done.returncode != 0
    assert "content" in " ".join(done.stderr.split())
    assert stored(driver, namespace) == []
