"""Issue 33: which of a tenant's records a search ranks, and how it breaks ties, never follows
what another tenant stores (LoCoMo replayed beside the 10k tenant, docs/security.md).

Two things another tenant moved before, each shown here with a control that proves the setup
bites:

- **Lucene's order picking the candidates.** A conversation search ranks its candidates with
  the namespace's own BM25, but while the namespace had more matches than the pool (400) the
  candidates were the first 100 in Lucene's order, and Lucene scores with statistics over every
  tenant's messages. Alice's 450 messages all match "zapplex qbananor"; bob floods the index
  with "zapplex", which makes it common, and Lucene then puts her "qbananor" messages first
  (the control). With the namespace read whole (``MESSAGE_EXACT_MAX``) her answer stays the
  same, and so it does on a large namespace's path (``MESSAGE_EXACT_MAX = 0``), whose
  candidates are whole groups of Lucene's constant scores (``graph.fulltext.message_query``).
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
from graph.fulltext import in_namespace, lucene_query
from graph.messages import MESSAGE_POOL, MessageStore
from graph.models import Message, Topic, parse
from graph.topics import TopicStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE_MESSAGES = 450  # more than the pool: every one matches the question
BOB_FLOOD = 3000


def _words(ns: str) -> tuple[str, str]:
    """Two words no other run wrote (a deleted message still counts in Lucene's statistics
    until its segment is merged: an earlier run's flood would already have made them common)."""
    tag = ns.rsplit("-", 1)[-1]
    return f"zapplex{tag}", f"qbananor{tag}"


def _alice_said(ns: str) -> list[Message]:
    """Short "zapplex" messages, longer "qbananor" ones (alone, Lucene puts the short first),
    every tenth with both."""
    a, b = _words(ns)
    out = []
    for i in range(ALICE_MESSAGES):
        text = f"{a} {i}" if i % 2 == 0 else f"{b} came up again in the chat {i}"
        text = f"{a} {b} {i}" if i % 10 == 0 else text
        out.append(Message(namespace=ns, role="user", content=text, at=T0 + timedelta(minutes=i)))
    return out


def _answer(store: MessageStore, ns: str) -> list[tuple[str, float]]:
    asked = " ".join(_words(ns))
    return [(h.message.content, round(h.score, 6)) for h in store.search_text(ns, asked, k=10)]


def _both_ways(store: MessageStore, ns: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    whole = _answer(store, ns)
    with monkeypatch.context() as m:
        m.setattr(messages_module, "MESSAGE_EXACT_MAX", 0)  # a large namespace's path
        large = _answer(store, ns)
    return whole, large


def _lucene_first(driver: Driver, ns: str) -> list[str]:
    """The control: the candidates as Lucene's BM25 picked them before, its first 100."""
    asked = " ".join(_words(ns))
    records, _, _ = driver.execute_query(
        "CALL db.index.fulltext.queryNodes('message_text_en', $q, {limit: 100}) YIELD node "
        "RETURN node.message_id AS id",
        q=in_namespace(ns, lucene_query(asked, fuzzy=False, common=False)),
    )  # fmt: skip
    return [r["id"] for r in records]


def test_a_flood_of_another_tenants_words_leaves_the_ranked_matches_alone(
    driver: Driver, namespace: str, other_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MessageStore(driver)
    store.append(namespace, _alice_said(namespace))
    assert ALICE_MESSAGES > MESSAGE_POOL
    whole_before, large_before = _both_ways(store, namespace, monkeypatch)
    control_before = _lucene_first(driver, namespace)
    assert len(whole_before) == 10

    a, _ = _words(namespace)
    flood = [
        Message(namespace=other_namespace, role="user", content=f"{a} {a} note {i}",
                at=T0 + timedelta(minutes=i))
        for i in range(BOB_FLOOD)
    ]  # fmt: skip
    for start in range(0, BOB_FLOOD, 1000):
        store.append(other_namespace, flood[start : start + 1000])

    whole_after, large_after = _both_ways(store, namespace, monkeypatch)
    # the flood moves Lucene's first 100 of hers
    assert len(set(_lucene_first(driver, namespace)) - set(control_before)) >= 10
    assert whole_after == whole_before  # read whole, her answer stays hers
    assert large_after == large_before  # and on a large namespace's path too


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
