"""Issue 33, part 2: no count, score or order a tenant sees depends on another tenant's data.

Alice (``namespace``) keeps a small memory: a conversation and a few topics. Her contexts (light
and deep, with a time window, the trace on), her topic search and her skill search are read
through the real API, then bob (``other_namespace``) writes through the same API: messages with
alice's own words, with made-up words, and a flood of 2,000 long messages (two full batches, the
API's limit per request) of her words; topics named with her words and with made-up ones. Every
answer of alice's is then the same JSON, byte for byte, apart from timings: her items, their
order, their scores and the whole trace.

Before the change, message scores came from Lucene's statistics over every tenant's messages:
three of another tenant's messages with a made-up word moved a score ratio from 0.2506 to
0.2818, and 400 messages of one word changed which of a tenant's messages a 70-token context
held. Skills are installed by the operator (docs/skills.md), not written by a tenant: alice's
skill search is read before and after all the same.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from tests.integration.api_support import bearer, new_key

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = (T0 + timedelta(days=3)).isoformat()

ALICE_SAID = [
    ("user", "We signed the Zanzibar merger plan with the spice trader on Monday."),
    ("assistant", "Noted: the Zanzibar merger closes in Q3, pending the board."),
    ("user", "The lake house caterer wants a deposit by Thursday."),
    ("user", "Rosa's Kitchen is catering; the deposit is 400 dollars."),
    ("assistant", "I will remind you about the caterer deposit on Wednesday."),
    ("user", "My bike needs new brake pads before the spring ride."),
    ("user", "The board asked for the merger numbers again, the spice volumes mostly."),
    ("user", "Quibbleton reviewed the zanzibar contract; he flagged the spice clause."),
    ("user", "Quibbleton called."),
    ("user", "We should sign the contract soon."),
]
ALICE_TOPICS = [
    ("Zanzibar merger plan", "Acquire the Zanzibar spice trader by Q3"),
    ("Lake house party", "Rosa's Kitchen caters; deposit due Thursday"),
    ("Spring ride", "new brake pads for the bike before the ride"),
]
ASKED = [
    {"message": "What did we agree about the Zanzibar merger and the spice trader?"},
    {"message": "How much is the caterer deposit for the lake house?", "budget": 70},
    {"message": "What did Quibbleton say about the contract yesterday?"},
    {"message": "What happened with the merger numbers last week?", "explicit": True},
    # a word nobody else has used, beside a common one: with index-wide statistics bob's
    # flood of "quibbleton" made it common and put "We should sign the contract soon." first
    {"message": "What about Quibbleton and the contract?", "budget": 50, "explicit": True},
]
MADE_UP = "zorblaxian quibbleton frindlewort"


def _messages(texts: list[tuple[str, str]], start: datetime) -> list[dict[str, Any]]:
    return [
        {"role": role, "content": text, "at": (start + timedelta(minutes=i)).isoformat()}
        for i, (role, text) in enumerate(texts)
    ]


def _post(client: TestClient, path: str, body: dict[str, Any], key: dict[str, str]) -> Any:
    answer = client.post(path, json=body, headers=key)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def _observe(client: TestClient, alice: dict[str, str]) -> str:
    """Everything alice's reads answer (timings left out), as one JSON text."""
    seen: list[Any] = []
    for asked in ASKED:
        body = {"now": NOW, "trace": True, **asked}
        context = _post(client, "/v1/context", body, alice)
        context.pop("timings_ms")
        seen.append(context)
    for query in ("Zanzibar merger plan", "caterer deposit", "quibbleton"):
        seen.append(_post(client, "/v1/topics/search", {"query": query, "now": NOW}, alice))
    seen.append(_post(client, "/v1/skills/search", {"query": "debug the failing merger"}, alice))
    return json.dumps(seen, sort_keys=True)


def _bob_writes(client: TestClient, bob: dict[str, str]) -> None:
    """Bob's messages and topics: alice's words, made-up words, and a flood of her words."""
    same = [(role, text) for role, text in ALICE_SAID]
    made_up = [("user", f"{MADE_UP} {MADE_UP}"), ("user", "zorblaxian zorblaxian merger")] * 2
    at = T0 - timedelta(days=1)
    body = {"messages": _messages(same + made_up, at), "auto_sleep": False}
    _post(client, "/v1/messages", body, bob)
    words = " ".join(text for _, text in ALICE_SAID).split()
    floods = [
        [" ".join(words[(i + j) % len(words)] for j in range(20)) for i in range(1000)],
        [f"quibbleton {words[i % len(words)]} quibbleton" for i in range(1000)],
    ]
    for batch, texts in enumerate(floods):  # the API's largest batch, twice
        flood = [("user", text) for text in texts]
        start = at + timedelta(hours=1 + batch * 20)
        _post(
            client, "/v1/messages", {"messages": _messages(flood, start), "auto_sleep": False}, bob
        )
    topics = [*ALICE_TOPICS, ("Zorblaxian merger", MADE_UP), ("caterer deposit", "deposit")]
    for name, one_liner in topics * 3:
        body = {"name": name, "one_liner": one_liner, "first_seen_at": T0.isoformat()}
        _post(client, "/v1/topics", body, bob)


def test_what_bob_writes_changes_nothing_alice_reads(
    client: TestClient, namespace: str, other_namespace: str
) -> None:
    alice = bearer(new_key(client, namespace))
    bob = bearer(new_key(client, other_namespace))
    body = {"messages": _messages(ALICE_SAID, T0), "auto_sleep": False}
    _post(client, "/v1/messages", body, alice)
    for name, one_liner in ALICE_TOPICS:
        topic = {"name": name, "one_liner": one_liner, "first_seen_at": T0.isoformat()}
        _post(client, "/v1/topics", topic, alice)
    _observe(client, alice)  # her own first reads mark her topics used: read once before
    before = _observe(client, alice)
    assert before == _observe(client, alice)  # nothing of hers moves between two reads
    evidence = [item for c in json.loads(before)[: len(ASKED)] for item in c["items"]]
    assert any(i["kind"] == "conversation" for i in evidence)  # her messages are in play
    assert "Quibbleton" in before and "Rosa" in before

    _bob_writes(client, bob)

    after = _observe(client, alice)
    assert after == before
