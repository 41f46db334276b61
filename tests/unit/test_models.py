"""Bad input is refused with a clear error before anything reaches Neo4j."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graph.cypher import query, query_for_edge, schema_files, split_statements
from graph.errors import ValidationFailed
from graph.fulltext import lucene_query
from graph.mapping import topic_from_props, topic_props
from graph.models import EdgeType, Topic, TopicStats, TypedNumber, edge_type, parse
from graph.topics import check_vector

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def topic_data(**over: object) -> dict[str, object]:
    data: dict[str, object] = {
        "namespace": "ns1",
        "name": "Party planning",
        "one_liner": "Planning Mel's birthday party at the lake house.",
        "time": {"first_seen_at": NOW, "last_seen_at": NOW},
    }
    data.update(over)
    return data


def test_number_without_key_is_refused() -> None:
    with pytest.raises(ValidationFailed, match=r"numbers\.0\.key"):
        parse(Topic, topic_data(numbers=[{"value": 30, "unit": "guests", "at": NOW}]))


def test_number_with_empty_key_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="key"):
        parse(TypedNumber, {"key": "  ", "value": 1, "at": NOW})


def test_naive_timestamp_is_refused() -> None:
    naive = datetime(2026, 3, 2, 9, 0)
    with pytest.raises(ValidationFailed, match=r"time\.first_seen_at.*timezone"):
        parse(Topic, topic_data(time={"first_seen_at": naive, "last_seen_at": NOW}))


def test_timestamps_are_normalised_to_utc() -> None:
    topic = parse(
        Topic, topic_data(time={"first_seen_at": "2026-03-02T10:00:00+01:00", "last_seen_at": NOW})
    )
    assert topic.time.first_seen_at == NOW
    assert topic.time.first_seen_at.tzinfo == UTC


def test_over_long_name_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="name: String should have at most 200"):
        parse(Topic, topic_data(name="x" * 201))


def test_bad_namespace_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="namespace"):
        parse(Topic, topic_data(namespace="a b"))


def test_unknown_edge_type_is_refused_and_lists_allowed() -> None:
    with pytest.raises(ValidationFailed, match="RELATES_TO, DEPENDS_ON, PART_OF, NEXT, PREV"):
        edge_type("LIKES")
    assert edge_type("depends_on") is EdgeType.DEPENDS_ON


def test_vectors_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(ValidationFailed, match="384"):
        check_vector([0.1] * 10)
    with pytest.raises(ValidationFailed, match="zeros"):
        check_vector([0.0] * 384)
    with pytest.raises(ValidationFailed, match="finite"):
        check_vector([float("nan")] + [0.1] * 383)


def test_topic_round_trips_through_node_properties() -> None:
    topic = parse(
        Topic,
        topic_data(
            facts=[{"text": "30 guests invited", "at": NOW, "source_message_ids": ["m1"]}],
            numbers=[
                {
                    "key": "guests",
                    "value": 30,
                    "unit": "people",
                    "at": NOW,
                    "source_message_ids": ["m1"],
                }
            ],
            open_loops=[{"text": "book the caterer", "source_message_ids": ["m2"]}],
            aliases=["the party", "Mel's birthday", "THE PARTY"],
        ),
    )
    props = topic_props(topic)
    assert props["facts"] == ["30 guests invited"]
    assert props["number_keys"] == ["guests"]
    assert props["aliases"] == ["the party", "Mel's birthday"]  # case-insensitive de-duplication
    assert props["first_seen_at"] == NOW and props["last_seen_at"] == NOW
    back = topic_from_props({**props, "version": 3}, related=["t9"])
    assert back.facts == topic.facts and back.numbers == topic.numbers
    assert back.open_loops == topic.open_loops
    assert back.links.related_topic_ids == ["t9"] and back.version == 3


def test_topic_times_read_as_iso_text_equal_the_datetimes() -> None:
    """Light reads return topic times as Cypher ``toString`` text; they map to the same topic."""
    topic = parse(Topic, {"topic_id": "t1", "namespace": "ns", "name": "party"} | {
        "time": {"first_seen_at": NOW, "last_seen_at": NOW.replace(microsecond=631302)},
    })  # fmt: skip
    props = topic_props(topic)
    as_text = {
        **props,
        "first_seen_at": "2026-03-02T09:00:00Z",
        "last_seen_at": "2026-03-02T09:00:00.631302000Z",  # nanoseconds, as Neo4j prints them
        "last_used_at": None,
        "archived_at": "2026-03-02T10:00:00+01:00[Europe/Paris]",
    }
    back = topic_from_props(as_text)
    assert back.time.first_seen_at == topic.time.first_seen_at
    assert back.time.last_seen_at == topic.time.last_seen_at
    assert back.stats.last_used_at is None
    assert back.archived_at == datetime(2026, 3, 2, 9, tzinfo=UTC)
    assert back.name == "party"  # other text is left alone


def test_topic_read_back_is_the_topic_stored_and_valid() -> None:
    """``topic_from_props`` builds topics without validation (cheaply, ~180 per context): what
    it builds equals the stored topic field by field, with every field set, and validates."""
    topic = parse(
        Topic,
        topic_data(
            facts=[{"text": "30 guests invited", "at": NOW, "source_message_ids": ["m1"]}],
            aliases=["the party"],
            embedding={"model": "all-MiniLM-L6-v2", "hash": "abc"},
            stats={"utility_score": 2.5, "usage_count": 3, "last_used_at": NOW},
        ),
    )
    back = topic_from_props({**topic_props(topic), "version": 2}, related=["t2", "t1"])
    assert back.model_dump() == {
        **topic.model_dump(),
        "version": 2,
        "links": {**topic.links.model_dump(), "related_topic_ids": ["t1", "t2"]},
    }
    assert back.model_fields_set == set(Topic.model_fields)
    assert back.stats.model_fields_set == set(TopicStats.model_fields)
    assert Topic.model_validate(back.model_dump()) == back
    bare = topic_from_props(topic_props(topic.model_copy(update={"embedding": None})))
    assert bare.embedding is None and bare == Topic.model_validate(bare.model_dump())


def test_lucene_query_escapes_operators_and_adds_fuzziness() -> None:
    q = lucene_query('party") OR 1=1 // MATCH (n) DETACH DELETE n')
    assert '"' not in q and ")" not in q and "(" not in q
    assert "party~" in q
    assert lucene_query("???") == ""


def test_edge_queries_only_take_enum_members() -> None:
    assert ":DEPENDS_ON]" in query_for_edge("link_topics", EdgeType.DEPENDS_ON)
    with pytest.raises(TypeError):
        query_for_edge("link_topics", "LIKES]->() DETACH DELETE a //")  # type: ignore[arg-type]


def test_every_query_file_documents_its_params() -> None:
    for name in ("create_topics", "update_topic", "search_topics_vector", "append_messages"):
        assert query(name).lstrip().startswith("//")


def test_schema_files_are_ordered_and_split() -> None:
    ids = [m for m, _ in schema_files()]
    assert ids == sorted(ids) and ids[0].startswith("001_")
    stmts = split_statements("// c\nCREATE INDEX a IF NOT EXISTS FOR (n:X) ON (n.y);\n\n")
    assert stmts == ["CREATE INDEX a IF NOT EXISTS FOR (n:X) ON (n.y)"]
