"""`sheriff eval topics` prints its figures with or without `--topics` (the count of topics and
the list of topics are separate keys; the list is printed one topic a line)."""

from __future__ import annotations

import json

import pytest

from api.cli_eval import _print_topic_report

ROW = {"name": "pottery class", "first_seen": "2023-05-08", "last_seen": "2023-07-15",
       "messages": 5, "facts": 5, "sleeps": 3, "sessions": 2, "aliases": ["Melanie"]}  # fmt: skip


def test_the_figures_print_without_the_topic_list(capsys: pytest.CaptureFixture[str]) -> None:
    _print_topic_report({"conversation": "conv-26", "topics": 41, "topics_per_100": 9.8})
    assert json.loads(capsys.readouterr().out) == {
        "conversation": "conv-26", "topics": 41, "topics_per_100": 9.8,
    }  # fmt: skip


def test_the_topic_list_prints_a_line_per_topic(capsys: pytest.CaptureFixture[str]) -> None:
    _print_topic_report({"topics": 1, "topic_list": [ROW]})
    lines = capsys.readouterr().out.splitlines()
    assert "pottery class" in lines[0] and "msgs=  5" in lines[0] and "Melanie" in lines[0]
    assert "sleeps= 3" in lines[0] and "sessions= 2" in lines[0]
    assert json.loads(lines[1]) == {"topics": 1}
