"""The LongMemEval replay plan and the flat BM25 baseline of `sheriff eval longmemeval` (no I/O)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from api.eval_longmemeval import (
    Baselines,
    Scores,
    _progress_line,
    bm25_sources,
    describe_context,
    fused_order,
    load_reuse,
    packed_sources,
    unit_vectors,
)
from api.eval_vectors import SentenceVectors
from api.longmemeval_data import load_questions, parse_date, to_question
from graph.errors import ValidationFailed
from tests.fakes.embedder import HashEmbedder


def _raw(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "Which breed is my dog?",
        "question_date": "2023/05/30 (Tue) 21:54",
        "haystack_dates": ["2023/05/21 (Sun) 10:00", "2023/05/20 (Sat) 09:00",
                           "2023/05/20 (Sat) 09:01"],
        "haystack_session_ids": ["s_b", "s_a", "s_a"],
        "haystack_sessions": [
            [{"role": "user", "content": "My dog is a beagle.", "has_answer": True},
             {"role": "assistant", "content": "Beagles are lovely."}],
            [{"role": "user", "content": "Plan a trip to Rome."},
             {"role": "assistant", "content": "  "},
             {"role": "assistant", "content": "Here is a plan for Rome."}],
            [{"role": "user", "content": "Also book a hotel."}],
        ],
    }  # fmt: skip
    return base | over


def test_sessions_replay_in_date_order_thirty_seconds_apart() -> None:
    q = to_question(_raw())
    ids = [[t.external_id for t in s] for s in q.sessions]
    # date order; the blank turn is skipped but keeps its index; a repeated id gets "#2"
    assert ids == [["s_a:0", "s_a:2"], ["s_a#2:0"], ["s_b:0", "s_b:1"]]
    first, second, _ = q.sessions
    assert first[0].at == datetime(2023, 5, 20, 9, 0, tzinfo=UTC)
    assert first[1].at == datetime(2023, 5, 20, 9, 1, tzinfo=UTC)  # turn 2: 60 s
    # dated 09:01 but the first session ends then: it starts 30 s later, never earlier
    assert second[0].at == datetime(2023, 5, 20, 9, 1, 30, tzinfo=UTC)
    assert q.evidence == {"s_b:0"}
    assert q.asked_at == datetime(2023, 5, 30, 21, 54, tzinfo=UTC)


def test_bad_dates_and_unknown_ids_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValidationFailed, match="unrecognised LongMemEval date"):
        parse_date("30 May 2023")
    with pytest.raises(ValidationFailed, match="differ in length"):
        to_question(_raw(haystack_session_ids=["s_b"]))
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([_raw()]), encoding="utf-8")
    assert [q.question_id for q in load_questions(path, only=["q1"])] == ["q1"]
    with pytest.raises(ValidationFailed, match="no question with id nope"):
        load_questions(path, only=["nope"])


def test_bm25_packs_the_best_sentences_into_the_budget() -> None:
    q = to_question(_raw())
    # every sentence sharing a word with the question fits ("is" in the Rome plan too);
    # "Beagles are lovely." shares none
    assert bm25_sources(q, 1000) == {"s_b:0", "s_a:2"}
    tight = math.ceil(len("My dog is a beagle.") / 4)
    assert bm25_sources(q, tight) == {"s_b:0"}  # the best one first
    assert bm25_sources(q, 1) == set()


def test_recall_and_r_all_per_type() -> None:
    scores = Scores()
    assert scores.add("multi-session", {"a", "b"}, {"a", "x"}) == 0.5
    scores.add("multi-session", {"c"}, {"c"})
    scores.add("temporal-reasoning", {"d"}, set())
    summary = scores.summary()
    assert summary["recall"] == 0.5  # (0.5 + 1 + 0) / 3
    assert summary["r_all"] == pytest.approx(0.3333, abs=1e-4)
    assert summary["per_type"]["multi-session"] == {"recall": 0.75, "r_all": 0.5, "questions": 2}


def test_a_context_is_described_by_what_it_held_and_missed() -> None:
    ctx = {
        "items": [{"provenance": {"source_ids": ["s1:0", "s9:2"]}}],
        "request_class": "B",
        "deep": True,
        "triggers": ["personal_request: advice 'any tips'"],
        "consult": {"band": "normal", "confidence": 0.41},
        "used_tokens": 120,
    }
    row = describe_context(ctx, {"s1:0", "s2:4"})
    assert row["cited_evidence"] == ["s1:0"] and row["missing_evidence"] == ["s2:4"]
    assert (row["request_class"], row["band"], row["items"]) == ("B", "normal", 1)
    assert row["triggers"] == ["personal_request: advice 'any tips'"]


def test_reuse_reads_the_kept_namespaces_of_an_earlier_run(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    rows = [{"question_id": "q1", "namespace": "lme-q1-abc"}, {"question_id": "q2"}]
    path.write_text(json.dumps({"per_question": rows}), encoding="utf-8")
    assert list(load_reuse(path)) == ["q1"]  # q2 kept no namespace: it is ingested again
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="not the --json output"):
        load_reuse(path)


def test_the_progress_line_shows_recalls_not_the_context_descriptions() -> None:
    row = {"question_id": "q1", "question_type": "multi-session", "messages": 10, "sleeps": 2,
           "messages_per_s": 5.0, "topics": 3, "recall@1000": 0.5, "bm25@1000": 1.0,
           "context@1000": {"items": 2}}  # fmt: skip
    line = _progress_line(row)
    assert line.endswith("recall@1000 0.50  bm25@1000 1.00") and "items" not in line


def test_fused_order_is_reciprocal_rank_fusion_of_the_rankings() -> None:
    # 2 is second in both lists: it beats 0 and 3, each first in one list and absent in the other
    assert fused_order([0, 2], [3, 2]) == [2, 0, 3]
    assert fused_order([1, 0], [1, 0]) == [1, 0]
    assert fused_order([], [4]) == [4]


def test_packed_sources_skip_what_does_not_fit_and_keep_going() -> None:
    sentences = [("t1", "x" * 40), ("t2", "y" * 400), ("t3", "z" * 8)]
    assert packed_sources([0, 1, 2], sentences, 15) == {"t1", "t3"}  # 10 + 100 + 2 tokens
    assert packed_sources([1], sentences, 100) == {"t2"}


class _Meaning:
    """Two-word embedder: the question and the beagle sentence point the same way."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if ("beagle" in t or "breed" in t) else [0.0, 1.0] for t in texts]


def test_baselines_rank_by_words_by_meaning_and_by_both() -> None:
    q = to_question(_raw(question="What breed did I adopt?"))
    flat = Baselines.of(q, unit_vectors(_Meaning()))  # type: ignore[arg-type]
    assert set(flat.orders) == {"bm25", "minilm", "fusion"}
    sentence = {i: s for i, (_, s) in enumerate(flat.sentences)}
    assert "beagle" in sentence[flat.orders["minilm"][0]]
    assert flat.sources("fusion", 6) == {"s_b:0"}
    assert set(Baselines.of(q, None).orders) == {"bm25"}  # without a model: BM25 alone


def test_sentence_vectors_are_embedded_once_and_kept_on_disk(tmp_path: Path) -> None:
    model = HashEmbedder()
    cache = SentenceVectors(tmp_path, model)
    first = cache.vectors(["My dog is a beagle.", "Plan a trip.", "My dog is a beagle."])
    assert model.calls == [["Plan a trip.", "My dog is a beagle."]]  # once each, shortest first
    assert np.allclose(first[0], first[2]) and np.isclose(np.linalg.norm(first[1]), 1.0)
    cache.close()
    again = SentenceVectors(tmp_path, model)  # another run: read from disk, nothing embedded
    second = again.vectors(["Plan a trip.", "A new one."])
    assert model.calls[1:] == [["A new one."]] and (again.hits, again.embedded) == (1, 1)
    assert np.allclose(second[0], first[1])
    # another model's identity never reads these vectors
    other = SentenceVectors(tmp_path, model, identity="test/other-model:384")
    other.vectors(["Plan a trip."])
    assert model.calls[-1] == ["Plan a trip."] and other.hits == 0
