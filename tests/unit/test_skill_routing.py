"""Intent classes, the four deep-skill triggers (spec §5.3), and args read from requests."""

from __future__ import annotations

import pytest

from skills.requests import debug_args, docs_args, rename_args, suggest_args
from skills.routing import (
    Intent,
    classify_intent,
    deep_triggers,
    has_stack_trace,
    trigger_change_request,
    trigger_multi_step,
    trigger_planning,
    trigger_prior_failure,
)

TRACE = """Traceback (most recent call last):
  File "app/config.py", line 7, in load_config
    return cfg["db_url"]
KeyError: 'db_url'"""


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("write docs for the parser module", Intent.DOCS),
        ("refactor the storage module: rename Loader to Reader", Intent.CODING),
        ("how should we architect the sync service?", Intent.PLANNING),
        (TRACE, Intent.DEBUG),
        ("the tests crash with a KeyError, same failure as before", Intent.DEBUG),
        ("remember what we spoke about last time?", Intent.MEMORY),
        ("thanks, see you tomorrow", Intent.NONE),
    ],
)
def test_intent_classes(text: str, intent: Intent) -> None:
    result = classify_intent(text)
    assert result.intent == intent, result
    assert result.reason


def test_intent_reason_quotes_the_cues() -> None:
    assert classify_intent("please update the documentation").reason == "docs cues: 'documentation'"
    assert classify_intent(TRACE).reason == "contains a Python stack trace"


# trigger 1: change repo / code / docs / tests
def test_change_request_fires_on_a_change_verb_and_a_repo_object() -> None:
    assert trigger_change_request("write docs for the parser module") == (
        "asks to change the repo: 'write' ... 'docs'"
    )
    assert trigger_change_request("add tests for the merge function")


def test_change_request_near_misses() -> None:
    assert trigger_change_request("what does the module update?") is None  # a question about it
    assert trigger_change_request("I wrote tests yesterday") is None  # past, not a request
    assert trigger_change_request("update me on the party plans") is None  # no repo object


# trigger 2: multi-step
def test_multi_step_fires_on_refactor_migrate_across_lists_and_then() -> None:
    assert trigger_multi_step("refactor the storage layer") == "multi-step request: 'refactor'"
    assert trigger_multi_step("implement retries across modules")
    assert trigger_multi_step("migrate the settings to pydantic")
    assert (
        trigger_multi_step("1. rename it\n2. run the tests")
        == "multi-step request: a list of steps"
    )
    assert trigger_multi_step("rename Loader and then fix the tests")


def test_multi_step_near_misses() -> None:
    assert trigger_multi_step("the refactored module looks good") is None
    assert trigger_multi_step("migrant birds fly south") is None
    assert trigger_multi_step("and then what happened at the party?") is None  # no change verb


# trigger 3: the prior attempt failed
def test_prior_failure_fires_on_errors_in_the_last_tool_output() -> None:
    assert "a Python traceback" in (trigger_prior_failure(TRACE) or "")
    assert "failed tests" in (trigger_prior_failure("=== 2 failed, 10 passed in 1.2s ===") or "")
    assert "non-zero exit code" in (trigger_prior_failure("process finished, exit code 2") or "")
    assert "an error line" in (trigger_prior_failure("error: cannot open file") or "")


def test_prior_failure_near_misses() -> None:
    assert trigger_prior_failure("=== 0 failed, 12 passed in 1.0s ===") is None
    assert trigger_prior_failure("12 passed, exit code 0") is None
    assert trigger_prior_failure("no errors found") is None
    assert trigger_prior_failure(None) is None


# trigger 4: planning
def test_planning_fires_on_architecture_and_design_requests() -> None:
    assert trigger_planning("how should we architect the sync service?") == (
        "planning request: 'how should we architect'"
    )
    assert trigger_planning("can you write a design spec for exports")
    assert trigger_planning("draft a plan for the migration")


def test_planning_near_misses() -> None:
    assert trigger_planning("the architecture diagram is attached") is None
    assert trigger_planning("I plan to go home early") is None


def test_deep_triggers_in_spec_order_and_none_for_small_talk() -> None:
    names = [t.name for t in deep_triggers("refactor the storage module: rename Loader to Reader")]
    assert names == ["change_request", "multi_step"]
    assert [t.name for t in deep_triggers("ok", last_tool_output="1 failed")] == ["prior_failure"]
    assert deep_triggers("good morning!") == []


def test_stack_trace_detection() -> None:
    assert has_stack_trace(TRACE)
    assert has_stack_trace('  File "x.py", line 3, in f\nValueError: bad')
    assert not has_stack_trace("a ValueError is raised for bad input")


def test_args_read_from_requests() -> None:
    assert docs_args("write docs for the parser module") == {"target": "parser"}
    assert docs_args("document the `pkg.utils` package") == {"target": "pkg.utils"}
    assert docs_args("docs for it") is None
    assert rename_args("refactor the storage module: rename Loader to Reader") == {
        "old_name": "Loader", "new_name": "Reader", "module": "storage",
    }  # fmt: skip
    assert rename_args("rename the module storage to store") == {
        "old_name": "storage", "new_name": "store", "kind": "module",
    }  # fmt: skip
    assert rename_args("rename load_config to read_config in config.py") == {
        "old_name": "load_config", "new_name": "read_config", "module": "config",
    }  # fmt: skip
    assert debug_args(TRACE) == {"trace": TRACE} and debug_args("it broke") is None
    assert suggest_args("plan_and_execute", " design it ") == {"request": "design it"}
    assert suggest_args("unknown_skill", "anything") is None
