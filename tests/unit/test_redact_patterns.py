"""Operator redaction patterns: added from settings, checked at start-up, bounded at run time."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
from pydantic import ValidationError

from api.settings import Settings
from graph.redaction import CustomPattern, Redactor, compile_pattern, load_patterns
from graph.redaction.custom import parse_patterns_file


def test_an_operator_pattern_is_redacted_with_its_kind() -> None:
    r = Redactor([compile_pattern("employee_id", r"EMP-[0-9]{6}")])
    assert r.text("ask EMP-123456 about it") == "ask [REDACTED:employee_id] about it"
    assert r.text("EMP-12 is too short") == "EMP-12 is too short"


def test_built_in_shapes_still_apply_beside_operator_patterns() -> None:
    r = Redactor([compile_pattern("employee_id", r"EMP-[0-9]{6}")])
    out = r.text("EMP-123456 used password=hunter2")
    assert out == "[REDACTED:employee_id] used password=[REDACTED:password]"


def test_a_value_group_keeps_the_label() -> None:
    r = Redactor([compile_pattern("badge", r"(?i)badge(?: number)?:? (?P<value>\d{6})\b")])
    assert r.text("Badge number 481516 at the door") == "Badge number [REDACTED:badge] at the door"
    assert r.text(r.text("badge: 481516")) == "badge: [REDACTED:badge]"


def test_operator_patterns_apply_inside_json_values() -> None:
    r = Redactor([compile_pattern("employee_id", r"EMP-[0-9]{6}")])
    assert r.value({"who": ["EMP-123456"]}) == {"who": ["[REDACTED:employee_id]"]}


@pytest.mark.parametrize(
    ("kind", "pattern", "reason"),
    [
        ("nested", r"(a+)+b", "nested quantifiers"),
        ("nested_words", r"(?:\w+\s?)*x", "nested quantifiers"),
        ("big_product", r"(?:\d{1,100}-){1,100}", "repeat too often"),
        ("backref", r"(\w{3})-\1", "backreferences"),
        ("empty", r"x*", "empty string"),
        ("marker", r"[A-Z]{8}", "redaction marker"),
        ("broken", r"(abc", "not a valid regular expression"),
        ("Bad-Kind", r"EMP-\d{6}", "kind must be"),
        ("slow", r"(?:a|aa)+b", "too slow"),
    ],
)
def test_dangerous_or_broken_patterns_are_refused(kind: str, pattern: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        compile_pattern(kind, pattern)


def test_small_bounded_nesting_is_allowed() -> None:
    r = Redactor([compile_pattern("internal_ip", r"\b10(?:\.\d{1,3}){3}\b")])
    assert r.text("host 10.1.2.3 is down") == "host [REDACTED:internal_ip] is down"


def test_a_pattern_that_times_out_withholds_the_text() -> None:
    """Fail closed: what cannot be checked in time is not stored as it is."""
    slow = CustomPattern("slow", r"(?:a|aa)+b", regex.compile(r"(?:a|aa)+b"), timeout_s=0.01)
    assert Redactor([slow]).text("a" * 30_000) == "[REDACTED:slow]"


def test_patterns_file_has_one_kind_and_pattern_per_line(tmp_path: Path) -> None:
    path = tmp_path / "patterns.txt"
    path.write_text(
        "# our shapes\n\nemployee_id   EMP-[0-9]{6}\nticket (?i)ticket #(?P<value>\\d+)\n",
        encoding="utf-8",
    )
    assert parse_patterns_file(path) == {
        "employee_id": "EMP-[0-9]{6}",
        "ticket": r"(?i)ticket #(?P<value>\d+)",
    }
    kinds = [p.kind for p in load_patterns({"badge": r"BADGE-\d{4}"}, path)]
    assert kinds == ["badge", "employee_id", "ticket"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("employee_id\n", r"patterns.txt:1: expected 'kind pattern'"),
        ("a EMP-\\d{6}\na X-\\d{6}\n", r"patterns.txt:2: kind 'a' is given twice"),
    ],
)
def test_a_malformed_patterns_file_names_the_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "patterns.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        parse_patterns_file(path)


def test_a_missing_patterns_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read it"):
        load_patterns(None, tmp_path / "nope.txt")


def test_the_same_kind_in_settings_and_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "patterns.txt"
    path.write_text("badge BADGE-\\d{4}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'badge' is given twice"):
        load_patterns({"badge": r"B-\d{4}"}, path)


def test_settings_read_patterns_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHERIFF_REDACT_PATTERNS", '{"employee_id": "EMP-[0-9]{6}"}')
    settings = Settings()
    assert [p.kind for p in settings.redaction_patterns()] == ["employee_id"]


def test_settings_refuse_a_bad_pattern_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHERIFF_REDACT_PATTERNS", '{"nested": "(a+)+b"}')
    with pytest.raises(ValidationError, match="redaction pattern 'nested' refused"):
        Settings()


def test_settings_refuse_a_missing_patterns_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHERIFF_REDACT_PATTERNS_FILE", str(tmp_path / "missing.txt"))
    with pytest.raises(ValidationError, match="cannot read it"):
        Settings()
