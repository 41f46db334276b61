"""The conversation's full-text ranking counts the terms ``message_text_en`` indexes (issue 33,
part 2): for every query word, the messages Lucene finds in a namespace are exactly those the
namespace's own BM25 scores above 0 (tokenizer, possessives, stop words, Porter stems), and
the ranking is BM25 over the namespace's candidates: a neighbour's writes change no score."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from neo4j import Driver

from graph.fulltext import in_namespace, lucene_query
from graph.messages import MessageStore
from graph.models import Message

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SAID = [
    "Caroline's camping trip was great!",
    "I went running with the ponies.",
    "e.g. node.js and U.S.A. stuff",
    "We're adopting a puppy; adoption agencies are slow.",
    "3.5 million people, 1,000 dollars",
    "Melanie painted a sunset",
    "The generalizations hopefully hold",
    "It's O'Neil's dog",
    "running runs ran runner",
    "Don't stop believing",
    "She's been to Zürich and São Paulo",
    "foo_bar baz-qux",
    "paintings and painters painting",
]
WORDS = [
    "caroline", "camping", "run", "runner", "pony", "adopt", "agency", "node", "js", "node.js",
    "usa", "u.s.a", "3.5", "1,000", "million", "paint", "painter", "generalization", "hopeful",
    "neil", "o'neil", "dog", "don't", "stop", "believing", "zurich", "zürich", "são", "foo",
    "foo_bar", "baz", "sunset", "she's", "melanie", "the", "us",
]  # fmt: skip


def _conversation(namespace: str, texts: list[str], start: datetime) -> list[Message]:
    return [
        Message(namespace=namespace, role="user", content=text, at=start + timedelta(seconds=i),
                speaker="Caroline" if i % 2 else "Melanie")
        for i, text in enumerate(texts)
    ]  # fmt: skip


def _lucene(driver: Driver, namespace: str, word: str) -> list[str]:
    """The contents Lucene finds for ``word`` in ``namespace`` (scoring above 0)."""
    query = in_namespace(namespace, lucene_query(word, fuzzy=False, common=False) or "none")
    records, _, _ = driver.execute_query(
        "CALL db.index.fulltext.queryNodes('message_text_en', $q, {limit: 100}) "
        "YIELD node, score WHERE score > 0 RETURN node.content AS content",
        q=query,
    )
    return sorted(r["content"] for r in records)


def test_the_local_ranking_finds_what_lucene_finds_word_by_word(
    driver: Driver, namespace: str
) -> None:
    store = MessageStore(driver)
    store.append(namespace, _conversation(namespace, SAID, T0))
    found_any = 0
    for word in WORDS:
        local = sorted(h.message.content for h in store.search_text(namespace, word, k=100))
        assert local == _lucene(driver, namespace, word), word
        found_any += bool(local)
    assert found_any >= 20  # the words do match: the comparison is not of empty lists


def test_a_neighbour_s_words_change_no_score_and_no_order(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    store = MessageStore(driver)
    store.append(namespace, _conversation(namespace, SAID, T0))
    queries = ["running ponies", "painting a sunset", "adoption agency puppy", "Caroline camping"]

    def ranked() -> list[list[tuple[str, float]]]:
        return [
            [(h.message.message_id, h.score) for h in store.search_text(namespace, q, k=10)]
            for q in queries
        ]

    alone = ranked()
    assert all(alone)
    noise = ["ponies ponies ponies", "painting painting sunset", "caroline"] * 400
    store.append(other_namespace, _conversation(other_namespace, noise, T0))
    assert ranked() == alone
