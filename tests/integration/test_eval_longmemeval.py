"""`sheriff eval longmemeval` end to end: a tiny haystack through the real HTTP server."""

from __future__ import annotations

from pathlib import Path

from neo4j import Driver

from api.container import Container
from api.eval_longmemeval import evaluate
from api.longmemeval_data import to_question
from api.settings import Settings
from graph.db import drop_namespace
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from sleepwake.policy import SleepPolicy

HAYSTACK = {
    "question_id": "tiny-1",
    "question_type": "single-session-user",
    "question": "What breed is my dog Biscuit?",
    "question_date": "2023/06/02 (Fri) 18:00",
    "haystack_dates": ["2023/05/20 (Sat) 09:00", "2023/05/25 (Thu) 20:15", "2023/05/28 (Sun) 11:30"],
    "haystack_session_ids": ["rome", "dog", "taxes"],
    "haystack_sessions": [
        [{"role": "user", "content": "Help me plan three days in Rome in October."},
         {"role": "assistant", "content": "Day one: the Colosseum and the Forum."}],
        [{"role": "user", "content": "I adopted Biscuit last week, he is a beagle.",
          "has_answer": True},
         {"role": "assistant", "content": "Congratulations on adopting Biscuit!"}],
        [{"role": "user", "content": "Which receipts do I keep for my tax return?"},
         {"role": "assistant", "content": "Keep receipts for deductible expenses."}],
    ],
}  # fmt: skip


def test_a_question_is_ingested_over_http_scored_and_cleaned_up(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    container = Container(
        settings,
        skill_settings=SkillSettings(workspaces_dir=tmp_path),
        driver=driver,
        embedder=embedder,
        policy=SleepPolicy(tail_turns=1),  # sessions days apart: the idle gap sleeps twice
    )
    report = evaluate(container, [to_question(HAYSTACK)], [1000, 200])
    summary = report.summary()

    (row,) = summary["per_question"]
    assert row["messages"] == 6 and row["evidence"] == 1
    assert row["sleeps"] == 2 and row["topics"] > 0
    assert row["recall@200"] == row["recall@1000"] == 1.0  # the evidence turn is cited
    assert row["bm25@1000"] == 1.0
    # the flat MiniLM baseline and its fusion with BM25 in the same run
    assert row["minilm@1000"] == row["fusion@1000"] == 1.0
    assert set(summary["budgets"]["1000"]) == {"memory", "bm25", "minilm", "fusion"}
    assert list(summary["budgets"]) == ["200", "1000"]
    assert summary["budgets"]["1000"]["memory"]["r_all"] == 1.0
    assert summary["ingest_messages_per_s"] > 0
    assert summary["context_latency_ms"]["p50"] is not None
    left, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS n", ns=row["namespace"]
    )
    assert left[0]["n"] == 0  # messages, topics and the question's API key are gone


def test_a_kept_namespace_is_scored_again_without_ingesting(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    container = Container(
        settings,
        skill_settings=SkillSettings(workspaces_dir=tmp_path),
        driver=driver,
        embedder=embedder,
        policy=SleepPolicy(tail_turns=1),
    )
    question = to_question(HAYSTACK)
    first = evaluate(container, [question], [1000], keep=True).summary()["per_question"][0]
    ns = first["namespace"]
    try:
        assert first["context@1000"]["cited_evidence"] == ["dog:0"]
        count = "MATCH (m:Message) WHERE m.namespace = $ns RETURN count(m) AS n"
        stored = driver.execute_query(count, ns=ns)[0][0]["n"]
        again = evaluate(
            container, [question], [1000], keep=True, reuse={question.question_id: first}
        )
        (row,) = again.summary()["per_question"]
        assert row["namespace"] == ns and row["ingest_s"] == first["ingest_s"]
        assert row["recall@1000"] == 1.0 and row["context@1000"]["missing_evidence"] == []
        assert driver.execute_query(count, ns=ns)[0][0]["n"] == stored  # nothing appended
    finally:
        drop_namespace(driver, ns, settings.neo4j_database)
