"""The heuristic planner and the plan shape checks (pure)."""

from __future__ import annotations

from skills.plan_and_execute.planner import clauses, heuristic_plan, shape_problems, subject_of

DECLARED = frozenset({"repo.list_files", "repo.read_file", "repo.run_tests", "skills.run"})


def test_sequenced_request_becomes_skill_and_tool_steps_in_order() -> None:
    steps, unresolved = heuristic_plan(
        "rename Loader to Reader in the storage module, then write docs for the storage module "
        "and run the tests"
    )
    assert unresolved == []
    assert [(s["id"], s["kind"], s["name"], s["args"]) for s in steps] == [
        (
            "s1",
            "skill",
            "repo_refactor",
            {"old_name": "Loader", "new_name": "Reader", "module": "storage"},
        ),
        ("s2", "skill", "write_docs", {"target": "storage"}),
        ("s3", "tool", "repo.run_tests", {"preset": "pytest"}),
    ]


def test_numbered_lists_are_steps() -> None:
    assert clauses("Please:\n1. document the config module\n2. run the tests\n") == [
        "document the config module",
        "run the tests",
    ]


def test_design_question_becomes_a_survey_of_its_subject() -> None:
    steps, _ = heuristic_plan("how should we architect the sync service?")
    assert [(s["kind"], s["name"], s["args"]) for s in steps] == [
        ("analyze", "survey", {"subject": "sync service"})
    ]
    assert subject_of("write a design spec for the export pipeline") == "export pipeline"


def test_clauses_that_name_nothing_are_reported() -> None:
    steps, unresolved = heuristic_plan("make it faster, then deploy")
    assert steps == [] and unresolved == ["make it faster", "deploy"]


def test_shape_checks_refuse_writes_self_runs_and_bad_tool_args() -> None:
    write = {"kind": "tool", "name": "repo.write_file", "args": {"path": "x", "content": ""}}
    assert "changes to files go through skills" in shape_problems(0, write, DECLARED)[0]
    me = {"kind": "skill", "name": "plan_and_execute", "args": {}}
    assert shape_problems(1, me, DECLARED) == [
        "step 2 ('plan_and_execute'): plan_and_execute cannot run itself"
    ]
    bad = {"kind": "tool", "name": "repo.read_file", "args": {"file": "x"}}
    assert shape_problems(0, bad, DECLARED) == [
        "step 1 ('repo.read_file'): unknown argument 'file'",
        "step 1 ('repo.read_file'): missing argument 'path'",
    ]
    assert (
        "unknown analysis"
        in shape_problems(0, {"kind": "analyze", "name": "x", "args": {}}, DECLARED)[0]
    )
    assert (
        shape_problems(
            0, {"kind": "tool", "name": "repo.run_tests", "args": {"preset": "pytest"}}, DECLARED
        )
        == []
    )
