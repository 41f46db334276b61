"""`eval locomo --keep` then `--reuse` (and `eval topics --reuse`): a kept conversation is
scored again on the same memory without replaying it, and is dropped unless kept again."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from neo4j import Driver

from api.container import Container
from api.eval_locomo import evaluate
from api.eval_topics import evaluate_topics
from api.settings import Settings
from graph.errors import ValidationFailed
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings

SAMPLE = {
    "sample_id": "conv-tiny",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I signed up for a pottery class."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice, which studio?"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "The Clay Barn, on Tuesdays."}],
        "session_2_date_time": "9:00 am on 20 May, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "My marathon training starts in June."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Good luck with the marathon!"}],
    },
    "qa": [{"question": "Where does Ann take her pottery class?", "evidence": ["D1:3"],
            "category": 4}],
}  # fmt: skip
COUNT = "MATCH (m:Message) WHERE m.namespace = $ns RETURN count(m) AS n"


def test_a_kept_conversation_is_scored_again_without_replaying(
    settings: Settings, driver: Driver, embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    container = Container(
        settings,
        skill_settings=SkillSettings(workspaces_dir=tmp_path),
        driver=driver,
        embedder=embedder,
    )
    (first,) = evaluate(container, [SAMPLE], {1000: io.StringIO()}, keep=True)
    ns = first.conversations[0]["namespace"]
    try:
        stored = driver.execute_query(COUNT, ns=ns)[0][0]["n"]
        assert stored == 5
        out = io.StringIO()
        (again,) = evaluate(container, [SAMPLE], {1000: out}, keep=True, reuse={"conv-tiny": ns})
        assert again.conversations == [{"sample_id": "conv-tiny", "namespace": ns, "reused": True}]
        assert again.recall == first.recall and out.getvalue()  # the same memory, same context
        assert driver.execute_query(COUNT, ns=ns)[0][0]["n"] == stored  # nothing appended
        report = evaluate_topics(container, SAMPLE, reuse=ns)  # not kept: dropped after
        assert report["namespace"] == ns and report["messages"] == stored
        assert "ingest_and_sleep_s" not in report  # no replay was timed
        assert driver.execute_query(COUNT, ns=ns)[0][0]["n"] == 0
        with pytest.raises(ValidationFailed, match="holds no messages"):
            evaluate(container, [SAMPLE], {1000: io.StringIO()}, reuse={"conv-tiny": ns})
    finally:
        driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)
