"""Skill manifests: the §3.2 fields validated, every problem reported by name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skills.errors import ManifestInvalid
from skills.manifest import parse_manifest


def manifest(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "skill_id": "summarise",
        "name": "Summarise",
        "description": "Summarises a file.",
        "inputs_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        "outputs_schema": {"type": "object"},
        "requires_tools": ["repo.read_file", "repo.read_file"],
        "tags": ["Docs", " summary ", ""],
        "examples": ["summarise README.md", {"request": "sum up x.py", "args": {"path": "x.py"}}],
    }
    data.update(overrides)
    return data


def test_valid_manifest_is_normalised() -> None:
    m = parse_manifest(json.dumps(manifest()))
    assert m.requires_tools == ["repo.read_file"]
    assert m.tags == ["docs", "summary"]
    assert [e.request for e in m.examples] == ["summarise README.md", "sum up x.py"]
    assert m.default_reasoning_effort == "medium" and m.timeout_s is None
    assert m.embedding_text() == (
        "Summarise. Summarises a file. Tags: docs, summary. "
        "Examples: summarise README.md | sum up x.py"
    )
    skill = m.to_skill("ns1")
    assert skill.namespace == "ns1" and skill.manifest["skill_id"] == "summarise"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"skill_id": "Bad-Id"}, "skill_id: String should match pattern"),
        ({"requires_tools": ["shell.exec"]}, "unknown tools ['shell.exec']"),
        (
            {"inputs_schema": {"type": "object", "properties": {"x": {"type": "nope"}}}},
            "not a valid JSON Schema",
        ),
        ({"outputs_schema": {"type": "string"}}, 'must describe an object ("type": "object")'),
        ({"default_reasoning_effort": "extreme"}, "default_reasoning_effort: Input should be"),
        ({"surprise": 1}, "surprise: Extra inputs are not permitted"),
        ({"timeout_s": 0}, "timeout_s: Input should be greater than 0"),
    ],
)
def test_invalid_manifests_name_the_problem(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestInvalid) as caught:
        parse_manifest(json.dumps(manifest(**overrides)), "skills/x/manifest.json")
    assert str(caught.value).startswith("skills/x/manifest.json: invalid manifest: ")
    assert message in str(caught.value)


def test_every_problem_is_listed_at_once() -> None:
    data = manifest(skill_id="X", requires_tools=["nope"])
    del data["description"]
    with pytest.raises(ManifestInvalid) as caught:
        parse_manifest(json.dumps(data))
    text = str(caught.value)
    assert "skill_id" in text and "requires_tools" in text and "description: Field required" in text


def test_broken_json_reports_line_and_column() -> None:
    with pytest.raises(
        ManifestInvalid, match=r"m.json: not JSON \(Expecting .* at line 2 column 1\)"
    ):
        parse_manifest('{"skill_id": "x",\n}', "m.json")
    with pytest.raises(ManifestInvalid, match="must be a JSON object, got list"):
        parse_manifest("[]", "m.json")
