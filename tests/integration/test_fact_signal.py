"""A topic's facts as a signal of topic search (``retrieval/fact_rank.py``): real Neo4j, the real
MiniLM model. "What did Caroline research?" is answered by one fact of a large topic about her
(a topic's name and one-liner say what it is about as a whole, not each of its 31 facts), while
a small topic's name shares the question's word: by name, vector and full text the small topic
comes first; with its best fact's signal the topic holding the answer does."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

from api.container import Container
from api.settings import Settings
from graph.cypher import query as cypher
from graph.db import drop_namespace
from graph.models import Message, Topic, parse
from retrieval.config import SearchConfig
from retrieval.embedding import MiniLMEmbedder

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=40)
QUESTION = "What did Caroline research?"
ANSWER = "I researched adoption agencies for weeks, reading about every one of them."
CHAT = [
    "The weather was lovely at the beach this weekend.",
    "I painted the fence in the garden yesterday.",
    "My friends came over for a barbecue on Saturday.",
    "The bus was late again this morning.",
    "I bought new running shoes at the mall.",
    "We watched a movie about space travel.",
    "The coffee shop downtown has a new menu.",
    "My cousin visited from Ohio last month.",
    "I finished a puzzle with a thousand pieces.",
    "The neighbours adopted a small grey kitten.",
    "I cleaned out the garage over the holiday.",
    "We went hiking near the lake on Sunday.",
    "My phone screen cracked when I dropped it.",
    "I tried a new recipe for lemon cake.",
    "The library had a sale on old books.",
    "I went to a concert with my sister.",
    "We planted tomatoes in the backyard.",
    "I started learning to play the guitar.",
    "The train to the city was very crowded.",
    "I made pancakes for breakfast this morning.",
    "My grandmother told stories about her childhood.",
    "I signed up for a yoga class on Tuesdays.",
    "The park was full of families flying kites.",
    "I watched the sunset from the rooftop.",
    "We ordered pizza and played board games.",
    "I got a haircut at the new salon.",
    "My car needed an oil change this week.",
    "I read a mystery novel on the plane.",
    "The farmers market had fresh strawberries.",
    "I organised my closet by colour.",
]
OTHERS = [  # a conversation is about more than two things
    ("lemon cake recipe", "Melanie bakes", ["I baked a lemon cake.", "The oven runs hot."]),
    ("car repairs", "the old car", ["The brakes squeak again.", "The mechanic was busy."]),
    ("guitar lessons", "Melanie plays", ["My teacher likes blues.", "I practise chords daily."]),
]
LAB = [
    "They served free cookies at the entrance.",
    "The parking lot was full, so we walked from the station.",
]


@pytest.fixture(scope="module")
def container(settings: Settings, driver: Driver, embedder: MiniLMEmbedder) -> Container:
    return Container(
        settings.model_copy(update={"extractor": "deterministic"}), driver=driver, embedder=embedder
    )


@pytest.fixture
def ns(driver: Driver, namespace: str) -> Iterator[str]:
    yield namespace
    drop_namespace(driver, namespace)


def _said(c: Container, ns: str, speaker: str, texts: list[str], start: int) -> list[Message]:
    msgs = [
        Message(namespace=ns, role="user", speaker=speaker, content=t,
                at=T0 + timedelta(days=start + i))
        for i, t in enumerate(texts)
    ]  # fmt: skip
    stored = c.messages.append(ns, msgs)
    c.passage_indexer.run(ns)
    return stored


def _topic(
    c: Container, driver: Driver, ns: str, name: str, line: str, cited: list[Message]
) -> str:
    topic = parse(Topic, {
        "topic_id": f"{ns}-{cited[0].message_id}", "namespace": ns, "name": name, "one_liner": line,
        "facts": [{"text": f"{m.speaker}: {m.content}", "source_message_ids": [m.message_id],
                   "at": m.at} for m in cited],
        "time": {"first_seen_at": cited[0].at, "last_seen_at": cited[-1].at},
    })  # fmt: skip
    c.topics.create([topic], c.embedder.embed([topic.semantic_text()]), T0)
    driver.execute_query(
        cypher("link_topic_messages"),
        {"namespace": ns, "rows": [{"topic_id": topic.topic_id,
                                    "message_ids": [m.message_id for m in cited]}]},
    )  # fmt: skip
    return topic.topic_id


def test_the_topic_holding_the_answering_fact_comes_first(
    container: Container, driver: Driver, ns: str
) -> None:
    chat = _said(container, ns, "Caroline", CHAT[:15], 0)
    answer = _said(container, ns, "Caroline", [ANSWER], 15)
    chat += _said(container, ns, "Caroline", CHAT[15:], 16)
    lab = _said(container, ns, "Melanie", LAB, 40)
    big = _topic(container, driver, ns, "Caroline's week", "what Caroline did",
                 chat[:15] + answer + chat[15:])  # fmt: skip
    small = _topic(container, driver, ns, "research lab tour", "Melanie toured a research lab", lab)
    for i, (name, line, texts) in enumerate(OTHERS):
        _topic(
            container, driver, ns, name, line, _said(container, ns, "Melanie", texts, 50 + 5 * i)
        )

    search = container.search
    off = type(search)(
        search.topics, search.events, search.embedder, SearchConfig(fact_weight=0),
        speakers=search.speakers, passages=search.passages,
    )  # fmt: skip
    before = off.run(ns, QUESTION, NOW, k=5).hits
    assert before[0].topic.topic_id == small  # by name and one-liner
    assert "fact_signal" not in before[0].components

    after = search.run(ns, QUESTION, NOW, k=5).hits
    assert [h.topic.topic_id for h in after][:2] == [big, small]
    assert after[0].components["fact_signal"] > after[1].components["fact_signal"]
    # the product's topic search (REST, the agent, eval topics) ranks it so too
    found = container.services.topics.search(ns, QUESTION, NOW, 2, None).result.hits
    assert found[0].topic.topic_id == big


def test_passage_scores_are_search_withins_ids_and_scores(
    container: Container, driver: Driver, ns: str
) -> None:
    """``scores_within`` reads what ``search_within`` reads, ids and best scores only; another
    namespace's topic id reads nothing."""
    said = _said(container, ns, "Caroline", [*CHAT[:6], ANSWER], 0)
    tid = _topic(container, driver, ns, "Caroline's week", "what Caroline did", said)
    vector = container.embedder.embed([QUESTION])[0]
    for k in (3, 50):
        hits = container.passages.search_within(ns, [tid], vector, k)
        scores = container.passages.scores_within(ns, [tid], vector, k)
        assert scores == pytest.approx({h.message.message_id: h.score for h in hits})
    assert container.passages.scores_within(ns, ["elsewhere-topic"], vector, 50) == {}
    assert container.passages.scores_within(ns, [], vector, 50) == {}
