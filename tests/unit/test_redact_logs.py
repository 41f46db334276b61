"""Log redaction: every record of the process is redacted when it is created."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from graph.redaction import (
    DEFAULT,
    RedactingFilter,
    Redactor,
    compile_pattern,
    install_log_redaction,
    uninstall_log_redaction,
)

KEY = "sk-" + "proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
log = logging.getLogger("tests.redaction")


@pytest.fixture
def redacted_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    before = logging.getLogRecordFactory()
    install_log_redaction(DEFAULT)
    caplog.set_level(logging.INFO, logger="tests.redaction")
    yield caplog
    uninstall_log_redaction()
    logging.setLogRecordFactory(before)


def test_message_and_arguments_are_redacted(redacted_logs: pytest.LogCaptureFixture) -> None:
    log.info("user said %s (%d chars)", f"my key is {KEY}", 42)
    log.info(f"inline {TOKEN}")
    assert [r.getMessage() for r in redacted_logs.records] == [
        "user said my key is [REDACTED:openai_key] (42 chars)",
        "inline [REDACTED:github_token]",
    ]
    assert KEY not in redacted_logs.text and TOKEN not in redacted_logs.text


def test_mapping_arguments_and_objects_are_redacted(
    redacted_logs: pytest.LogCaptureFixture,
) -> None:
    log.info("%(who)s sent %(what)s", {"who": "bob", "what": f"password={KEY}"})
    log.info("failed: %s", ValueError(f"bad token {TOKEN}"))
    assert KEY not in redacted_logs.text and TOKEN not in redacted_logs.text
    assert redacted_logs.records[0].getMessage() == "bob sent password=[REDACTED:openai_key]"


def test_a_secret_split_over_template_and_argument_is_redacted(
    redacted_logs: pytest.LogCaptureFixture,
) -> None:
    log.info("password=%s", "hunter2")
    log.info("password=%s and %s", "hunter2")  # a malformed call shows no argument
    messages = [r.getMessage() for r in redacted_logs.records]
    assert messages[0] == "password=[REDACTED:password]"
    assert "hunter2" not in messages[1] and "withheld" in messages[1]


def test_exceptions_are_redacted_and_not_rendered_raw(
    redacted_logs: pytest.LogCaptureFixture,
) -> None:
    try:
        raise RuntimeError(f"connect failed with {KEY}")
    except RuntimeError:
        log.exception("the call failed")
    record = redacted_logs.records[0]
    assert record.exc_info is None and record.exc_text is not None
    assert "RuntimeError: connect failed with [REDACTED:openai_key]" in record.exc_text
    assert KEY not in redacted_logs.text


def test_installing_again_switches_the_redactor(
    redacted_logs: pytest.LogCaptureFixture,
) -> None:
    install_log_redaction(Redactor([compile_pattern("employee_id", r"EMP-\d{6}")]))
    log.info("EMP-123456 logged in with %s", TOKEN)
    assert redacted_logs.records[0].getMessage() == (
        "[REDACTED:employee_id] logged in with [REDACTED:github_token]"
    )


def test_a_handler_filter_also_redacts_extra_fields() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "tool %s", ("t",), None)
    record.query = f"find {KEY}"
    RedactingFilter(DEFAULT).filter(record)
    assert record.query == "find [REDACTED:openai_key]"
