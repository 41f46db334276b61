"""Issue 33: which of a tenant's records a search ranks, and how it breaks ties, never follows
what another tenant stores (LoCoMo replayed beside the 10k tenant, docs/security.md).

Two things another tenant moved before, each shown here with a control that proves the setup
bites:

- **Lucene's order picking the candidates.** A conversation search ranks its candidates with
  the namespace's own BM25, but while the namespace had more matches than the pool (400) the
  candidates were the first 100 in Lucene's order, and Lucene scores with statistics over every
  tenant's messages. Alice's 450 messages all match "zapplex qbananor"; bob floods the index
  with "zapplex", which makes it common, and Lucene then puts her "qbananor" messages first.
  With the namespace read whole (``MESSAGE_EXACT_MAX``) her answer stays the same; with the old
  truncated pool (``MESSAGE_EXACT_MAX = 0``) it changes.
- **The store's order breaking ties.** The topics of a message hit (a context's tie-break
  among equally scored evidence topics) came in the order the store keeps a node's
  relationships, which follows where its records were allocated: other tenants' writes and
  deletes move it. Two namespaces with the same two topics linked in opposite orders now see
  them in the same order, by name.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

import graph.messages as messages_module
from graph.cypher import query as cypher
from graph.messages import MESSAGE_POOL, MessageStore
from graph.models import Message, Topic, parse
from graph.topics import TopicStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE_MESSAGES = 450  # more than the pool: every one matches the question
BOB_FLOOD = 3000
ASKED = "zapplex qbananor"


def _alice_said(ns: str) -> list[Message]:
    """Short "zapplex" messages, longer "qbananor" ones: alone, Lucene puts the short first."""
    out = []
    for i in range(ALICE_MESSAGES):
        text = f"zapplex {i}" if i % 2 == 0 else f"qbananor came up again in the chat {i}"
        out.append(Message(namespace=ns, role="user", content=text, at=T0 + timedelta(minutes=i)))
    return out


def _answer(store: MessageStore, ns: str) -> list[tuple[str, float]]:
    return [(h.message.content, round(h.score, 6)) for h in store.search_text(ns, ASKED, k=10)]


def _both_ways(store: MessageStore, ns: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    whole = _answer(store, ns)
    with monkeypatch.context() as m:
        m.setattr(messages_module, "MESSAGE_EXACT_MAX", 0)  # the pool as it was: truncated
        truncated = _answer(store, ns)
    return whole, truncated


def test_a_flood_of_another_tenants_words_leaves_the_ranked_matches_alone(
    driver: Driver, namespace: str, other_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MessageStore(driver)
    store.append(namespace, _alice_said(namespace))
    assert ALICE_MESSAGES > MESSAGE_POOL
    whole_before, truncated_before = _both_ways(store, namespace, monkeypatch)
    assert len(whole_before) == 10

    flood = [
        Message(namespace=other_namespace, role="user", content=f"zapplex zapplex note {i}",
                at=T0 + timedelta(minutes=i))
        for i in range(BOB_FLOOD)
    ]  # fmt: skip
    for start in range(0, BOB_FLOOD, 1000):
        store.append(other_namespace, flood[start : start + 1000])

    whole_after, truncated_after = _both_ways(store, namespace, monkeypatch)
    assert truncated_after != truncated_before  # the flood moves Lucene's first 100 of hers
    assert whole_after == whole_before  # read whole, her answer stays hers


def _link(driver: Driver, ns: str, topic_ids: list[str], message_id: str) -> None:
    """MENTIONED_IN edges from each topic to the message, written in the order given."""
    for tid in topic_ids:
        driver.execute_query(
            cypher("link_topic_messages"),
            {"namespace": ns, "rows": [{"topic_id": tid, "message_ids": [message_id]}]},
        )


def test_a_message_hits_topics_come_by_name_not_by_the_stores_order(
    driver: Driver, namespace: str, other_namespace: str
) -> None:
    topics, store = TopicStore(driver), MessageStore(driver)
    seen = []
    for ns, order in ((namespace, ["zed", "amy"]), (other_namespace, ["amy", "zed"])):
        made = [
            parse(Topic, {"topic_id": f"{ns}-{key}", "namespace": ns, "name": key.title(),
                          "time": {"first_seen_at": T0, "last_seen_at": T0}})
            for key in order
        ]  # fmt: skip
        topics.create(made, [None] * len(made), T0)
        said = store.append(ns, [Message(namespace=ns, role="user", content="the quokka", at=T0)])
        _link(driver, ns, [t.topic_id for t in made], said[0].message_id)
        hits = store.search_text(ns, "quokka")
        seen.append([name for _, name in hits[0].topics])
    assert seen == [["Amy", "Zed"], ["Amy", "Zed"]]
