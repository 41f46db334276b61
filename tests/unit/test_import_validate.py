"""The pure steps of an import: reading a line under REST's rules, the vector check, the ids."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from graph.errors import ValidationFailed
from service.import_ids import KEY_FILE, derived_id, server_key
from service.import_validate import parse_document, unit_length

AT = "2026-03-05T09:00:00Z"
HEADER = {"kind": "header", "format": "sheriff-claw-export", "version": 1, "namespace": "x",
          "exported_at": AT, "embedding": {"model": "m", "dimensions": 3}, "vectors": True}  # fmt: skip


def lines(*records: dict[str, Any]) -> list[str]:
    counts: dict[str, int] = {}
    for r in records:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    end = {"kind": "end", "counts": counts}
    return [json.dumps(r) for r in (HEADER, *records, end)]


def topic(**over: Any) -> dict[str, Any]:
    return {"kind": "topic", "topic_id": "t", "name": "Roses",
            "time": {"first_seen_at": AT, "last_seen_at": AT}, **over}  # fmt: skip


def test_a_good_document_reads_with_its_lines() -> None:
    doc = parse_document(lines(topic(vector=[1.0, 0.0, 0.0], facts=[{"text": "red"}])))
    [(number, record)] = doc.records["topic"]
    assert number == 2 and record.facts[0].text == "red" and doc.count() == 1


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"name": "a\x1b[31m"}, "topic.name"),
        ({"time": {"first_seen_at": "1899-12-31T23:00:00Z", "last_seen_at": AT}},
         "topic.time.first_seen_at"),
        ({"version": 2**64}, "topic.version"),
        ({"skill_refs": ["r"] * 51}, "topic.skill_refs"),
        ({"numbers": [{"key": "k", "value": 1e400, "at": AT}]}, "topic.numbers.0.value"),
        ({"topic_id": "sk-" + "proj-" + "Qw3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC"}, "topic.topic_id"),
    ],
)  # fmt: skip
def test_a_line_breaking_a_rest_rule_is_refused_naming_it(over: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_document(lines(topic(**over)))
    assert str(caught.value).startswith("line 2: ") and field in str(caught.value)


def test_a_vector_must_have_the_headers_dimension() -> None:
    with pytest.raises(ValidationFailed, match="line 2: vector: 2 dimensions"):
        parse_document(lines(topic(vector=[1.0, 0.0])))


def test_unit_length() -> None:
    assert unit_length([0.6, 0.8, 0.0])
    assert not unit_length([0.6, 0.9, 0.0])
    assert not unit_length([1e308, 1e308, 1e308])  # the length overflows: not an embedding
    assert not unit_length([1e154, 1e154, 0.0])


def test_derived_ids_need_the_key_and_differ_per_namespace() -> None:
    a, b = b"k" * 32, b"j" * 32
    assert derived_id(a, "ns1", "topic", "t1") == derived_id(a, "ns1", "topic", "t1")
    assert derived_id(a, "ns1", "topic", "t1") != derived_id(b, "ns1", "topic", "t1")
    assert derived_id(a, "ns1", "topic", "t1") != derived_id(a, "ns2", "topic", "t1")
    assert derived_id(a, "ns1", "topic", "t1") != derived_id(a, "ns1", "message", "t1")


def test_the_server_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = server_key(home)
    assert len(key) == 32 and server_key(home) == key
    assert stat.S_IMODE((home / KEY_FILE).stat().st_mode) == 0o600
    assert [p.name for p in home.iterdir()] == [KEY_FILE]  # no temporary file left behind
