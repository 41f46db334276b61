"""`eval locomo --reuse` / `eval topics --reuse`: which namespaces an earlier `--keep` run left,
and when the questions of a kept conversation are asked (without replaying it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from api.eval_locomo import load_kept, replay_end
from graph.errors import ValidationFailed

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_2_date_time": "9:00 am on 10 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Done with the kiln."},
                      {"speaker": "Ann", "dia_id": "D2:2", "text": "Great!"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I signed up for pottery."}],
    },
}  # fmt: skip


def test_the_kept_namespaces_of_eval_locomo_are_read_per_conversation(tmp_path: Path) -> None:
    summary = [{"budget": 1000, "conversations": [
        {"sample_id": "conv-26", "namespace": "eval-conv-26-abc123", "turns": 419},
        {"sample_id": "conv-30", "namespace": "eval-conv-30-def456", "turns": 369},
    ]}, {"budget": 2000, "conversations": [
        {"sample_id": "conv-26", "namespace": "eval-conv-26-abc123", "turns": 419},
    ]}]  # fmt: skip
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(summary))
    assert load_kept(path) == {"conv-26": "eval-conv-26-abc123", "conv-30": "eval-conv-30-def456"}


def test_the_kept_namespaces_of_eval_topics_are_read_per_report(tmp_path: Path) -> None:
    reports = [
        {"sample_id": "conv-26", "namespace": "evaltopics-conv-26-aaa", "topics": 41},
        {"sample_id": "conv-30", "messages": 369},
    ]  # an older report: no namespace
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(reports))
    assert load_kept(path) == {"conv-26": "evaltopics-conv-26-aaa"}


@pytest.mark.parametrize("text", ["not json", '{"budget": 1000}', "[]", '[{"sample_id": "c"}]'])
def test_an_output_without_kept_namespaces_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "earlier.json"
    path.write_text(text)
    with pytest.raises(ValidationFailed, match=r"earlier\.json"):
        load_kept(path)


def test_a_kept_conversation_is_asked_a_day_after_its_last_session() -> None:
    # sessions are replayed by number, not by their order in the file
    assert replay_end(SAMPLE) == datetime(2023, 5, 11, 9, 0, 30, tzinfo=UTC)
