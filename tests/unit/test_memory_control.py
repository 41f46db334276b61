"""The pure parts of memory control: what forgetting leaves of a topic, an event and a wake
packet; closing a fact; a topic's history; merging an imported topic; the export format and its
published schema; reading a ChatGPT export. No I/O."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graph.errors import NotFound, ValidationFailed, VersionConflict
from graph.models import (
    Fact,
    InProgress,
    NotableEvent,
    OpenLoop,
    TailTurn,
    Topic,
    TopicEvent,
    TopicTime,
    WakePacket,
)
from service.chatgpt import ChatConversation, branch, content_text, read_history
from service.export_format import json_schema
from service.facts import chains, close_fact, timeline
from service.forget import phrase_pattern
from service.importer import parse_document
from service.merge import merge_topic
from service.scrub import WITHHELD, Removal, scrub_event, scrub_packet, scrub_topic

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def topic(*facts: Fact, **extra: Any) -> Topic:
    data: dict[str, Any] = {"namespace": "ns", "name": "Colour",
                            "time": TopicTime(first_seen_at=T0, last_seen_at=at(60))}  # fmt: skip
    data.update(extra)
    return Topic(facts=list(facts), **data)


def fact(text: str, days: float, *sources: str, **extra: Any) -> Fact:
    return Fact(text=text, at=at(days), source_message_ids=list(sources), **extra)


# -- scrub ----------------------------------------------------------------------------------------
def test_a_fact_from_a_forgotten_message_goes_one_with_other_sources_stays() -> None:
    t = topic(fact("alone", 0, "m1"), fact("shared", 1, "m1", "m2"), fact("other", 2, "m3"),
              open_loops=[OpenLoop(text="todo", source_message_ids=["m1"])],
              one_liner="alone")  # fmt: skip
    out = scrub_topic(t, Removal(message_ids={"m1"}))
    assert out.changed and out.topic is not None
    assert [(f.text, f.source_message_ids) for f in out.topic.facts] == [
        ("shared", ["m2"]), ("other", ["m3"])]  # fmt: skip
    assert out.topic.open_loops == [] and sorted(out.removed_texts) == ["alone", "todo"]
    assert out.topic.one_liner == "shared"  # the one-liner quoted a removed fact


def test_a_topic_left_with_nothing_is_deleted_and_an_untouched_one_is_unchanged() -> None:
    t = topic(fact("alone", 0, "m1"))
    assert scrub_topic(t, Removal(message_ids={"m1"})).topic is None
    untouched = scrub_topic(t, Removal(message_ids={"m9"}))
    assert not untouched.changed and untouched.topic is t


def test_forgetting_the_superseding_fact_reopens_the_one_it_closed() -> None:
    blue = fact("My favourite colour is blue.", 0, "m1")
    green = fact("My favourite colour is green.", 30, "m2")
    red = fact("My favourite colour is red.", 60, "m3")
    closed = [blue.model_copy(update={"invalid_at": green.at, "superseded_by": green.fact_id}),
              green.model_copy(update={"invalid_at": red.at, "superseded_by": red.fact_id}), red]  # fmt: skip
    out = scrub_topic(topic(*closed), Removal(message_ids={"m2"})).topic
    assert out is not None
    assert [(f.text[23:], f.superseded_by) for f in out.facts] == [
        ("blue.", red.fact_id), ("red.", None)]  # as if green had never been said  # fmt: skip
    assert out.facts[0].invalid_at == red.at


def test_removals_by_id_text_and_alias() -> None:
    t = topic(fact("keep", 0, "m1"), fact("drop", 1, "m2"), aliases=["Zanzibar", "other"],
              open_loops=[OpenLoop(text="loop")], one_liner="about Zanzibar")  # fmt: skip
    drop = t.facts[1].fact_id
    out = scrub_topic(t, Removal(fact_ids={drop}, loop_texts={"loop"}, aliases={"zanzibar"},
                                 clear_one_liner=True)).topic  # fmt: skip
    assert out is not None and [f.text for f in out.facts] == ["keep"]
    assert out.aliases == ["other"] and out.open_loops == [] and out.one_liner == "keep"


def test_events_lose_forgotten_sources_and_withhold_quotes() -> None:
    event = TopicEvent(namespace="ns", topic_id="t", at=T0, source_message_ids=["m1", "m2"],
                       delta_summary="'Colour' mentioned in 2 message(s); added 1 facts: secret plan")  # fmt: skip
    kept = scrub_event(event, {"m1"}, ["Secret plan"])
    assert kept is not None and kept.source_message_ids == ["m2"]
    assert kept.delta_summary == f"'Colour' mentioned in 2 message(s); {WITHHELD}"
    assert scrub_event(event, {"m1", "m2"}, []) is None
    api = event.model_copy(update={"source_message_ids": [], "delta_summary": "created via API"})
    assert scrub_event(api, {"m1"}, ["secret"]) is api


def test_wake_packets_lose_forgotten_turns_topics_hints_and_hints_of_progress() -> None:
    packet = WakePacket(
        namespace="ns", slept_at=T0, top_topic_ids=["t1", "t2"],
        active_subject_hints=["zanzibar merger plan, understood", "lake house"],
        conversation_tail=[TailTurn(role="user", content="secret", message_id="m1"),
                           TailTurn(role="user", content="fine", message_id="m2")],
        in_progress=InProgress(status="running", resume_hint="merge the zanzibar files",
                               topic_id="t3"),
    )  # fmt: skip
    out = scrub_packet(packet, {"t1"}, {"m1": "Please merge the Zanzibar files."},
                       {"zanzibar merger plan"})  # fmt: skip
    assert out is not None and out.top_topic_ids == ["t2"]
    assert [t.message_id for t in out.conversation_tail] == ["m2"]
    assert out.active_subject_hints == ["understood", "lake house"]
    assert out.in_progress == InProgress()  # its goal came from a forgotten message
    assert scrub_packet(packet, {"t9"}, {}, set()) is None


# -- facts ----------------------------------------------------------------------------------------
def test_closing_a_fact_appends_its_successor_and_counts_a_correction() -> None:
    red = fact("My favourite colour is red.", 0, "m1")
    t = topic(red, one_liner=red.text)
    teal = Fact(text="My favourite colour is teal.", at=at(5))
    updated, closed = close_fact(t, red.fact_id, at(5), teal, "corrected by the user")
    assert closed.superseded_by == teal.fact_id and closed.invalid_at == at(5)
    assert [f.fact_id for f in updated.facts] == [red.fact_id, teal.fact_id]
    assert updated.one_liner == teal.text and updated.stats.correction_count == 1
    with pytest.raises(VersionConflict, match=f"correct {teal.fact_id} instead"):
        close_fact(updated, red.fact_id, at(6), None, "x")
    with pytest.raises(NotFound):
        close_fact(t, "f-nope", at(5), None, "x")
    with pytest.raises(ValidationFailed, match="valid_from"):
        close_fact(t, red.fact_id, at(-1), None, "x")
    with pytest.raises(ValidationFailed, match="text"):
        close_fact(t, red.fact_id, at(5), Fact(text=red.text, at=at(5)), "x")


def test_history_chains_and_timeline() -> None:
    a, b, c = fact("A is 1", 0), fact("A is 2", 1), fact("unrelated", 2)
    a = a.model_copy(update={"invalid_at": b.at, "superseded_by": b.fact_id,
                             "invalid_reason": "corrected by the user"})  # fmt: skip
    assert chains([a, b, c]) == [[a.fact_id, b.fact_id], [c.fact_id]]
    event = TopicEvent(namespace="ns", topic_id="t", at=at(1.5), delta_summary="slept")
    kinds = [(e.kind, e.at) for e in timeline([a, b, c], [event])]
    assert kinds == [("fact_added", at(0)), ("fact_closed", at(1)), ("fact_added", at(1)),
                     ("event", at(1.5)), ("fact_added", at(2))]  # fmt: skip


# -- import merge ---------------------------------------------------------------------------------
def test_merging_an_imported_topic_adds_only_what_is_new() -> None:
    stored = topic(fact("A", 0), aliases=["x"])
    assert merge_topic(stored, stored) is None
    closed = stored.facts[0].model_copy(update={"invalid_at": at(3), "superseded_by": "f-b"})
    incoming = topic(closed, fact("B", 3), aliases=["X", "y"],
                     time=TopicTime(first_seen_at=at(-5), last_seen_at=at(1)),
                     numbers=[], open_loops=[OpenLoop(text="todo")])  # fmt: skip
    incoming.time.notable_events.append(NotableEvent(at=T0, event="decided"))
    merged = merge_topic(stored, incoming)
    assert merged is not None
    assert [(f.text, f.invalid_at) for f in merged.facts] == [("A", at(3)), ("B", None)]
    assert merged.aliases == ["x", "y"] and [o.text for o in merged.open_loops] == ["todo"]
    assert merged.time.first_seen_at == at(-5) and merged.time.last_seen_at == at(60)


# -- export format --------------------------------------------------------------------------------
def test_the_published_schema_is_the_one_the_code_writes() -> None:
    published = json.loads((ROOT / "docs" / "export-schema.json").read_text(encoding="utf-8"))
    assert published == json_schema(), "regenerate: python -m service.export_format > docs/..."


def _doc(*records: dict[str, Any]) -> list[str]:
    header = {"kind": "header", "format": "sheriff-claw-export", "version": 1, "namespace": "a",
              "exported_at": "2026-01-01T00:00:00Z", "embedding": {"model": "m", "dimensions": 3},
              "vectors": False}  # fmt: skip
    counts = Counter(r["kind"] for r in records)
    return [json.dumps(x) for x in (header, *records, {"kind": "end", "counts": counts})]


MESSAGE = {"kind": "message", "message_id": "m1", "role": "user", "content": "hi",
           "at": "2026-01-01T00:00:00Z", "seq": 0}  # fmt: skip


def test_a_valid_document_parses() -> None:
    doc = parse_document(_doc(MESSAGE))
    assert doc.header.namespace == "a" and doc.count() == 1


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        ([], "line 1: the document is empty"),
        (_doc(MESSAGE)[:-1], "line 3: the end line is missing"),
        ([*_doc(MESSAGE), json.dumps(MESSAGE)], "line 4: nothing may follow the end line"),
        (_doc({**MESSAGE, "at": "2026-01-01T00:00:00"}), "line 2: invalid record: message.at"),
        (_doc({**MESSAGE, "secret": 1}), "message.secret"),
        (_doc({**MESSAGE, "kind": "poem"}), "line 2: invalid record"),
        ([_doc()[0], "[]", _doc()[1]], "line 2: must be a JSON object"),
        ([_doc()[0], _doc()[0], _doc()[1]], "line 2: kind: a second header line"),
    ],
)
def test_a_bad_document_names_the_line_and_field(lines: list[str], field: str) -> None:
    with pytest.raises(ValidationFailed, match=field):
        parse_document(lines)


def test_phrases_match_whole_words_and_need_a_word() -> None:
    pattern, needle = phrase_pattern("  Rosa's   Kitchen ")
    assert needle == "kitchen"
    assert pattern.search("the caterer is rosa's kitchen.")
    assert not pattern.search("rosa's kitchens")
    for bad in ("", "x", "!!"):
        with pytest.raises(ValidationFailed, match="query"):
            phrase_pattern(bad)


# -- ChatGPT --------------------------------------------------------------------------------------
def _conversation(mapping: dict[str, Any], current: str | None) -> ChatConversation:
    return ChatConversation.model_validate({"mapping": mapping, "current_node": current})


def _node(parent: str | None, children: list[str], role: str = "user", t: float = 1.0,
          parts: list[Any] | None = None) -> dict[str, Any]:  # fmt: skip
    message = {"author": {"role": role}, "create_time": t,
               "content": {"content_type": "text", "parts": parts or ["x"]}}  # fmt: skip
    return {"message": message, "parent": parent, "children": children}


def test_the_branch_is_read_from_the_current_node_back_to_the_root() -> None:
    mapping = {"r": {"message": None, "parent": None, "children": ["a"]},
               "a": _node("r", ["b1", "b2"]), "b1": _node("a", [], t=9.0),
               "b2": _node("a", [], t=5.0)}  # fmt: skip
    assert branch(_conversation(mapping, "b2"), 0) == ["r", "a", "b2"]
    assert branch(_conversation(mapping, None), 0) == ["r", "a", "b1"]  # latest leaf
    mapping["r"]["parent"] = "b1"
    with pytest.raises(ValidationFailed, match="loop"):
        branch(_conversation(mapping, "b2"), 0)


def test_parts_become_text_with_markers_for_media() -> None:
    def text(parts: list[Any]) -> str:
        return content_text(ChatConversation.model_validate(
            {"mapping": {"n": _node(None, [], parts=parts)}}).mapping["n"].message.content)  # type: ignore[union-attr]  # fmt: skip

    image = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"}
    assert text(["", image, "Look."]) == "[image]\n\nLook."
    assert text([image]) == "" and text(["", "  "]) == ""
    assert text([{"content_type": "audio_transcription", "text": "said aloud"}]) == "said aloud"


def test_a_history_is_ordered_by_time_across_conversations() -> None:
    one = {"mapping": {"a": _node(None, ["b"], t=10.0, parts=["first"]),
                       "b": _node("a", [], role="assistant", t=30.0, parts=["third"])},
           "current_node": "b"}  # fmt: skip
    two = {"mapping": {"c": _node(None, [], t=20.0, parts=["second"])}, "current_node": "c"}
    empty = {"mapping": {}, "current_node": None}
    history = read_history(json.dumps([one, two, empty]))
    assert [m.content for m in history.messages] == ["first", "second", "third"]
    assert history.conversations == 3 and not history.skipped
    twice = read_history(json.dumps([one, one]))  # the same conversation exported twice
    assert [m.content for m in twice.messages] == ["first", "third"]
    assert twice.skipped == {"duplicate": 2}
