"""A question about a person reaches what they said across sessions (issue #32 item 6;
docs/retrieval.md, "A question about a person"): real Neo4j, the real MiniLM model, the
conversation replayed and slept as ``eval locomo`` does.

Ann says what she plays twice, five weeks apart and in other words ("I play the violin", "I
practise the cello"); her friend Bo, a musician, asks about instruments and talks of his own
in every session, in the question's very words. Asked "What instruments does Ann play?" with
room for a dozen lines, the context holds both of Ann's sentences: before the search of what
Ann said (``PassageStore.search_spoken``) and its weight (``speaker_gain``), the cello came
after six of Bo's lines and did not fit."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

import graph.passages as passages_module
from api.container import Container
from api.eval_locomo import evaluate
from api.settings import Settings
from graph.db import drop_namespace
from graph.models import Message
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings

VIOLIN = "I play the violin in a community orchestra these days."
CELLO = "Lately I practise the cello every evening after work."
QUESTION = "What instruments does Ann play?"
BUDGET = 200  # tokens: a dozen lines; the budget LoCoMo is measured at holds ~30


def _turns(session: int, lines: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [
        {"speaker": who, "dia_id": f"D{session}:{i}", "text": text}
        for i, (who, text) in enumerate(lines, start=1)
    ]


SAMPLE = {
    "sample_id": "conv-music",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "6:10 pm on 3 March, 2023",
        "session_1": _turns(1, [
            ("Bo", "Hey Ann! My band finally booked a gig at the Blue Room."),
            ("Ann", "That's great news, Bo! When is it?"),
            ("Bo", "Next Friday. Which instruments did you play as a kid?"),
            ("Ann", VIOLIN),  # D1:4
            ("Bo", "I play guitar in the band, and sometimes the bass."),
            ("Ann", "I started a new job at the library last month."),
            ("Bo", "Do you play any other instruments?"),
            ("Ann", "My sister visits next week, we will cook together."),
        ]),
        "session_2_date_time": "9:00 am on 20 March, 2023",
        "session_2": _turns(2, [
            ("Bo", "The gig went well; we played new instruments on two songs."),
            ("Ann", "I'm so glad! My garden finally has tomatoes."),
            ("Bo", "Instruments are expensive, so I play a borrowed keyboard."),
            ("Ann", "We adopted a grey cat called Pebble."),
            ("Bo", "Which instruments would you like me to play at your party?"),
        ]),
        "session_3_date_time": "7:30 pm on 12 April, 2023",
        "session_3": _turns(3, [
            ("Bo", "We are recording an album with a drummer who plays three instruments."),
            ("Ann", CELLO),  # D3:2
            ("Bo", "Music keeps me sane. Do you play anything with friends?"),
            ("Ann", "Pebble knocked a vase off the shelf yesterday."),
            ("Bo", "Ha! My band wants to play instruments from the seventies."),
        ]),
    },
    "qa": [{"question": QUESTION, "evidence": ["D1:4", "D3:2"], "category": 1}],
}  # fmt: skip


@pytest.fixture(scope="module")
def container(
    settings: Settings,
    driver: Driver,
    embedder: MiniLMEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Container:
    skills = SkillSettings(workspaces_dir=tmp_path_factory.mktemp("skills"))
    return Container(settings, skill_settings=skills, driver=driver, embedder=embedder)


def test_a_question_about_a_person_gets_what_they_said_in_both_sessions(
    container: Container,
) -> None:
    out = io.StringIO()
    (report,) = evaluate(container, [SAMPLE], {BUDGET: out})  # replayed, slept, then dropped
    row = json.loads(out.getvalue().splitlines()[0])
    assert report.recall[1] == [1.0], row["context_text"]
    cited = {s for item in row["items"] for s in item["source_ids"]}
    assert {"D1:4", "D3:2"} <= cited
    assert f"Ann: {VIOLIN}" in row["context_text"] and f"Ann: {CELLO}" in row["context_text"]


@pytest.fixture
def spaces(driver: Driver, namespace: str, other_namespace: str) -> Iterator[tuple[str, str]]:
    yield namespace, other_namespace
    for ns in (namespace, other_namespace):
        drop_namespace(driver, ns)


T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _said(c: Container, ns: str, lines: list[tuple[str, str]]) -> list[Message]:
    msgs = [
        Message(namespace=ns, role="user", speaker=who, content=text, at=T0 + timedelta(days=i))
        for i, (who, text) in enumerate(lines)
    ]
    stored = c.messages.append(ns, msgs)
    c.passage_indexer.run(ns)
    return stored


def test_only_what_the_named_speakers_said_in_the_namespace_is_searched(
    container: Container, spaces: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ns, other = spaces
    said = _said(container, ns, [
        ("Ann", VIOLIN), ("Bo", "Which instruments do you play?"), ("Ann", CELLO),
        ("Bo", "I play guitar in a band."),
    ])  # fmt: skip
    _said(container, other, [("Ann", "I play the drums in a garage band.")])  # another tenant
    vector = container.embedder.embed(["What instruments does play?"])[0]
    search = container.passages.search_spoken

    found = search(ns, ["ANN"], vector, 10)  # any case
    assert {h.message.message_id for h in found} == {said[0].message_id, said[2].message_id}
    assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)
    assert {h.message.message_id for h in search(ns, ["ann", "bo"], vector, 10)} == {
        m.message_id for m in said
    }
    # said before the bound only; nobody named, nobody searched; a name nobody goes by
    assert [h.message.message_id for h in search(ns, ["ann"], vector, 10, until=said[1].at)] == [
        said[0].message_id
    ]
    assert search(ns, [], vector, 10) == [] and search(ns, ["carol"], vector, 10) == []
    # a message naming many: the first few names are searched
    monkeypatch.setattr(passages_module, "SPOKEN_SPEAKERS", 1)
    assert {h.message.message_id for h in search(ns, ["bo", "ann"], vector, 10)} == {
        said[0].message_id,
        said[2].message_id,
    }
    # a speaker of many turns: their newest are searched
    monkeypatch.setattr(passages_module, "SPOKEN_PER_SPEAKER", 1)
    assert [h.message.message_id for h in search(ns, ["ann"], vector, 10)] == [said[2].message_id]
