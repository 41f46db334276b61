"""One frozen retrieval config and one merge config, built from Settings (issue: one house)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from api.settings import Settings
from retrieval.classify import ConsultSignals, consult
from retrieval.config import DEFAULT, SIGNALS, ConsultConfig, RetrievalConfig
from sleepwake.matching import MergeConfig


def test_defaults_are_the_documented_numbers() -> None:
    assert (
        DEFAULT.search.rrf_k == 10.0
        and DEFAULT.search.recency_floor == 1.0
        and DEFAULT.search.tau.days == 30
    )
    assert (DEFAULT.context.light_topics, DEFAULT.context.deep_topics) == (8, 20)
    assert (DEFAULT.consult.skip_below, DEFAULT.consult.normal_from) == (0.55, 0.72)
    assert sum(DEFAULT.consult.weights.values()) == pytest.approx(1.0)
    assert set(DEFAULT.consult.weights) == set(SIGNALS)
    assert MergeConfig().threshold == 4.0


def test_settings_build_both_configs_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHERIFF_RETRIEVAL__SEARCH__RRF_K", "30")
    monkeypatch.setenv("SHERIFF_RETRIEVAL__CONTEXT__CONSULT_BUDGET", "400")
    monkeypatch.setenv("SHERIFF_MERGE__THRESHOLD", "4.5")
    s = Settings()
    assert s.retrieval.search.rrf_k == 30.0
    assert s.retrieval.context.consult_budget == 400
    assert s.retrieval.context.light_topics == 8  # the rest keeps its default
    assert s.merge.threshold == 4.5


@pytest.mark.parametrize(
    ("env", "value", "says"),
    [
        ("SHERIFF_RETRIEVAL__CONSULT__SKIP_BELOW", "0.9", "skip_below <= normal_from"),
        ("SHERIFF_RETRIEVAL__CONSULT__WEIGHTS", '{"vibes": 1}', "unknown consult signal"),
        ("SHERIFF_RETRIEVAL__SEARCH__RRF_K", "0", "greater than 0"),
        ("SHERIFF_RETRIEVAL__SEARCH__TYPO", "1", "Extra inputs are not permitted"),
        ("SHERIFF_MERGE__THRESHOLD", "-1", "greater than 0"),
    ],
)
def test_a_bad_tuning_value_is_refused_at_start_up_with_its_name(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, says: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValidationError, match=says):
        Settings()


def test_configs_are_frozen() -> None:
    with pytest.raises(ValidationError):
        DEFAULT.search.rrf_k = 1.0  # type: ignore[misc]


def test_consult_follows_its_config() -> None:
    signals = ConsultSignals(lexical=1.0, semantic=1.0)  # 0.30 + 0.25 + scope 0.10 = 0.65
    assert consult(signals).band == "consult"
    lenient = ConsultConfig(skip_below=0.5, normal_from=0.6, related_from=0.9)
    assert consult(signals, lenient).band == "normal"
    assert RetrievalConfig(consult=lenient).consult.normal_from == 0.6
