"""Analytics headers (graph/analytics.py) and the CLI's pure helpers: no Neo4j."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from neo4j.time import Date, DateTime

from api.cli_analytics import cell, parse_params
from graph.analytics import Analytic, bind, load_analytics, parse_analytic, plain
from graph.errors import ValidationFailed

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

GOOD = """\
// weekly_things: what happened, week by week.
//
// Some prose about the query,
// over two lines.
//
// params:
//   $namespace  string                        the memory namespace
//   $bucket     'day'|'week'|'month' = 'week'  size of a bucket
//   $top        int = 5                       how many per bucket
//   $ratio      float = 1                     a ratio
//   $now        datetime = now                the clock
//   $since      datetime = null               from when (null: always)
//   $topic      string                        topic id or name
// returns: bucket, rank,
//          topic
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param bucket => 'week'
//   :param top => 5
//   :param ratio => 1.0
//   :param now => datetime()
//   :param since => null
//   :param topic => 'billing'
MATCH (t:Topic {namespace: $namespace}) WHERE $since IS NULL OR t.first_seen_at >= $since
RETURN date.truncate($bucket, $now) AS bucket, $top * $ratio AS rank, $topic AS topic
"""


def good() -> Analytic:
    return parse_analytic("weekly_things", GOOD)


def test_header_gives_description_params_defaults_and_columns() -> None:
    a = good()
    assert a.description == "what happened, week by week."
    assert a.notes == "Some prose about the query, over two lines."
    assert a.columns == ("bucket", "rank", "topic")
    params = {p.name: p for p in a.params}
    assert list(params) == ["namespace", "bucket", "top", "ratio", "now", "since", "topic"]
    assert params["namespace"].required and params["topic"].required
    assert params["bucket"].choices == ("day", "week", "month")
    assert params["bucket"].default == "week"
    assert params["top"].default == 5
    assert params["ratio"].default == 1.0 and isinstance(params["ratio"].default, float)
    assert params["now"].default == "now" and params["since"].default is None
    assert params["bucket"].describe() == "bucket ('day'|'week'|'month', default 'week')"
    assert params["now"].describe() == "now (datetime, default now)"
    assert params["topic"].describe() == "topic (string)"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("// weekly_things:", "// weekly_thing:"), "first line must be '// weekly_things:"),
        (
            ("//   $namespace  string ", "//   $namespace  int    "),
            "every analytic takes $namespace",
        ),
        (("$top * $ratio", "$top * $ratio * $limit"), "undeclared parameters: ['limit']"),
        (("$top * $ratio AS rank", "$top AS rank"), "never uses: ['ratio']"),
        (("//   :param top => 5\n", ""), "one ':param' line per parameter"),
        (("//   :param top => 5\n", "//   top is 5\n"), "not a ':param name => value' line"),
        (("int = 5 ", "int = 'x'"), "default of $top: top: expected an integer"),
        (("'week'  size", "'year'  size"), "default of $bucket: bucket: expected one of"),
        (("$ratio      float = 1", "$ratio      float = now"), "only a datetime parameter"),
        (("//   $top        int = 5", "//   top        int = 5"), "cannot read the parameter line"),
        (("// returns: bucket, rank,\n//          topic\n", ""), "lists no returned columns"),
        (
            ("//   $topic      string", "//   $topic      string\n//   $topic      string"),
            "declared twice",
        ),
    ],
)
def test_a_header_that_disagrees_with_its_query_is_refused(
    change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(ValidationFailed, match=message.replace("$", r"\$").replace("[", r"\[")):
        parse_analytic("weekly_things", GOOD.replace(old, new, 1))


def test_a_file_without_a_header_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="no header comment"):
        parse_analytic("bare", "MATCH (n {namespace: $namespace}) RETURN n")
    with pytest.raises(ValidationFailed, match="lower_snake_case"):
        parse_analytic("Bad-Name", GOOD)


def test_every_packaged_analytic_parses_and_is_documented_for_browser() -> None:
    analytics = load_analytics()
    assert {
        "topics_by_first_seen",
        "most_touched_topics_per_week",
        "topic_timeline",
        "topic_timeline_graph",
        "utility_decay",
        "edges_per_sleep",
        "edges_per_sleep_graph",
    } <= set(analytics)
    for a in analytics.values():
        assert a.param("namespace") is not None and "$namespace" in a.text
        assert ":param namespace => " in a.text
        assert a.description.endswith(".") and a.columns
        assert a.name not in {"list", "run"}  # the CLI's own commands


def test_bind_types_values_fills_defaults_and_uses_the_clock() -> None:
    bound = bind(good(), "demo", {"top": "3", "ratio": "0.5", "topic": "billing"}, NOW)
    assert bound == {
        "namespace": "demo",
        "bucket": "week",
        "top": 3,
        "ratio": 0.5,
        "now": NOW,
        "since": None,
        "topic": "billing",
    }
    paris = datetime(2026, 3, 2, 10, 0, tzinfo=timezone(timedelta(hours=1)))
    typed = bind(good(), "demo", {"topic": "x", "since": paris, "now": "2026-03-02T09:00:00Z"}, NOW)
    assert typed["since"] == NOW and typed["since"].tzinfo is UTC  # one zone: Cypher's = needs it
    assert typed["now"] == NOW


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, r"weekly_things needs parameter topic \(string\): topic id or name"),
        ({"topic": "x", "limit": "1"}, "has no parameter 'limit'; it takes bucket, top"),
        ({"topic": "x", "namespace": "other"}, "namespace is given on its own"),
        ({"topic": "x", "top": "three"}, "top: expected an integer, got 'three'"),
        ({"topic": "x", "top": True}, "top: expected an integer"),
        ({"topic": "x", "ratio": "high"}, "ratio: expected a number"),
        ({"topic": "x", "bucket": "hour"}, "bucket: expected one of day, week, month; got 'hour'"),
        ({"topic": "x", "now": "2026-03-02T09:00:00"}, "now: expected a timestamp with a zone"),
        ({"topic": "x", "now": "last week"}, "now: expected an ISO-8601 timestamp"),
        ({"topic": 3}, "topic: expected a string"),
    ],
)
def test_bind_refuses_bad_values_by_name(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationFailed, match=message):
        bind(good(), "demo", values, NOW)


def test_bind_refuses_a_bad_namespace() -> None:
    with pytest.raises(ValidationFailed, match="invalid namespace 'no spaces please'"):
        bind(good(), "no spaces please", {"topic": "x"}, NOW)


def test_plain_turns_neo4j_values_into_python() -> None:
    when = DateTime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
    assert plain(when) == NOW
    assert plain(Date(2026, 3, 2)) == date(2026, 3, 2)
    assert plain({"days": [Date(2026, 3, 2)], "n": 1}) == {"days": [date(2026, 3, 2)], "n": 1}


def test_cli_params_and_cells() -> None:
    assert parse_params(["top=3", "topic=a=b", "bucket="]) == {
        "top": "3",
        "topic": "a=b",
        "bucket": "",
    }
    with pytest.raises(ValidationFailed, match="key=value"):
        parse_params(["top"])
    with pytest.raises(ValidationFailed, match="given twice"):
        parse_params(["top=1", "top=2"])
    assert cell(NOW) == "2026-03-02T09:00:00Z"
    assert cell(date(2026, 3, 2)) == "2026-03-02"
    assert cell([date(2026, 3, 2), date(2026, 3, 4)]) == "2026-03-02, 2026-03-04"
    assert cell(None) == "" and cell(True) == "yes" and cell(0.1234567) == "0.123457"
    path = {
        "nodes": [
            {"labels": ["Topic"], "topic_id": "t1", "name": "billing"},
            {"labels": ["TopicEvent"], "event_id": "e1", "topic_id": "t1", "at": NOW},
        ],
        "relationships": [{"type": "HAS_EVENT", "start": "t1", "end": "e1"}],
    }
    assert cell(path) == "(Topic billing)-[:HAS_EVENT]->(TopicEvent 2026-03-02T09:00:00Z)"
    backwards = {**path, "relationships": [{"type": "HAS_EVENT", "start": "e1", "end": "t1"}]}
    assert "<-[:HAS_EVENT]-" in cell(backwards)
