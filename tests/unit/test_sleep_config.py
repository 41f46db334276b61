"""The sleep's one config (sleepwake/config.py): built from ``SHERIFF_SLEEP__...``, refused at
start-up naming the bad setting, the deprecated flat names still read (with a warning), and
its numbers reaching the sleep."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from pydantic import ValidationError

from api.settings import Settings
from graph.models import Message
from sleepwake.candidates import build_candidates
from sleepwake.config import (
    DEFAULT,
    ExtractionConfig,
    SleepConfig,
    SleepPolicy,
    UtilityConfig,
)
from tests.fakes.pipelines import T0, wire

SLEPT = T0 + timedelta(hours=1)
TURNS = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday with Anna."),
    ("user", "About 30 guests. We still need to book the caterer."),
    ("user", "We chose Postgres over MySQL for the billing migration because of JSONB support."),
    ("user", "The billing migration depends on the schema review."),
    ("user", "My sister Anna is learning the violin and plays in a quartet now."),
    ("user", "Let's pause here for today."),
]


def test_nested_sleep_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHERIFF_SLEEP__POLICY__TAIL_TURNS", "8")
    monkeypatch.setenv("SHERIFF_SLEEP__POLICY__IDLE_GAP", "PT2H")
    monkeypatch.setenv("SHERIFF_SLEEP__FORMATION__MAX_TURNS", "20")
    monkeypatch.setenv("SHERIFF_SLEEP__MERGE__THRESHOLD", "4.5")
    monkeypatch.setenv("SHERIFF_SLEEP__EXTRACTION__CONTINUATION_GAP", "00:10:00")
    config = Settings().sleep_config()
    assert config.extraction.continuation_gap == timedelta(minutes=10)
    assert config.policy.tail_turns == 8
    assert config.policy.idle_gap == timedelta(hours=2)
    assert config.formation.max_turns == 20
    assert config.merge.threshold == 4.5
    assert config.formation.min_turns == DEFAULT.formation.min_turns  # the rest: defaults


@pytest.mark.parametrize(
    ("env", "value", "says"),
    [
        ("SHERIFF_SLEEP__FORMATION__MAX_TURNS", "0", "sleep.formation.max_turns"),
        ("SHERIFF_SLEEP__POLICY__TAIL_SHARE", "2", "sleep.policy.tail_share"),
        ("SHERIFF_SLEEP__TIERS__DECAY_PER_DAY", "1.5", "sleep.tiers.decay_per_day"),
        ("SHERIFF_SLEEP__SUBJECTS__TYPO", "1", "Extra inputs are not permitted"),
        ("SHERIFF_TAIL_TURNS", "-1", "tail_turns"),
        ("SHERIFF_SLEEP__POLICY__LEASE_TTL", "PT0S", "sleep.policy.lease_ttl"),
        ("SHERIFF_SLEEP__POLICY__WAKE_SILENCE", "PT0S", "sleep.policy.wake_silence"),
        ("SHERIFF_SLEEP_LEASE_SECONDS", "0.5", "sleep_lease_seconds"),
        ("SHERIFF_WAKE_SILENCE_HOURS", "0", "wake_silence"),
    ],
)
def test_a_bad_sleep_setting_stops_start_up_naming_it(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, says: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValidationError, match=says):
        Settings()


def test_the_old_names_still_work_for_a_release_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SHERIFF_TAIL_TURNS", "5")
    monkeypatch.setenv("SHERIFF_IDLE_GAP_HOURS", "2")
    monkeypatch.setenv("SHERIFF_SLEEP_LEASE_SECONDS", "30")
    monkeypatch.setenv("SHERIFF_MERGE__MIN_COSINE", "0.5")
    with caplog.at_level(logging.WARNING, logger="api.settings"):
        config = Settings().sleep_config()
    assert config.policy.tail_turns == 5
    assert config.policy.idle_gap == timedelta(hours=2)
    assert config.policy.lease_ttl == timedelta(seconds=30)
    assert config.merge.min_cosine == 0.5
    said = caplog.text
    assert "SHERIFF_TAIL_TURNS is deprecated" in said
    assert "SHERIFF_SLEEP__POLICY__TAIL_TURNS" in said
    assert "SHERIFF_SLEEP__POLICY__IDLE_GAP" in said
    assert "SHERIFF_SLEEP__MERGE__" in said


def test_without_old_names_nothing_is_warned(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SHERIFF_SLEEP__POLICY__TAIL_TURNS", "5")
    with caplog.at_level(logging.WARNING, logger="api.settings"):
        assert Settings().sleep_policy().tail_turns == 5
    assert "deprecated" not in caplog.text


def test_a_new_name_wins_over_its_old_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHERIFF_TAIL_TURNS", "5")
    monkeypatch.setenv("SHERIFF_SLEEP__POLICY__TAIL_TURNS", "7")
    monkeypatch.setenv("SHERIFF_CONTEXT_BUDGET_TOKENS", "4000")  # no new name: the old counts
    policy = Settings().sleep_policy()
    assert (policy.tail_turns, policy.context_budget_tokens) == (7, 4000)


def test_the_config_is_frozen() -> None:
    with pytest.raises(ValidationError):
        DEFAULT.formation.max_turns = 3  # type: ignore[misc]


def test_the_sleeper_reads_its_numbers_from_its_config() -> None:
    policy = SleepPolicy(tail_turns=1)
    shown = []
    for top in (DEFAULT.utility.top_topics, 1):
        m = wire(config=SleepConfig(policy=policy, utility=UtilityConfig(top_topics=top)))
        m.say(T0, *TURNS)
        m.sleeper.sleep(m.namespace, SLEPT)
        (packet,) = m.stores.sleep.wake_packets(m.namespace, limit=5)
        shown.append(len(packet.top_topic_ids))
    assert shown[0] > 1 and shown[1] == 1


def test_a_policy_and_a_config_together_are_refused() -> None:
    m = wire()
    with pytest.raises(ValueError, match="policy inside the config"):
        type(m.sleeper)(
            m.stores.messages, m.stores.sleep, m.embedder, SleepPolicy(), config=SleepConfig()
        )


def test_the_extraction_section_bounds_the_candidates_of_a_message() -> None:
    said = Message(
        namespace="ns", role="user", at=T0,
        content="Anna, Mel and Rosa booked the lake house, the caterer and the violin quartet.",
    )  # fmt: skip
    found = build_candidates([said]).candidates
    one = build_candidates([said], cfg=ExtractionConfig(max_entities_per_message=1)).candidates
    assert len(found) > 1 and len(one) == 1
