"""What is true now (issue #32 point 4): a user's chat over five months says where they live and
what they do in January, moves and changes job in March (a podcast tip said around both), and
asks in June. Replayed through the real API with the production sleep at the end of each
month's session (real Neo4j, real MiniLM, every time given: the messages' ``at``, the sleeps'
and the contexts' ``now``). The move is filed under another topic than the January statement;
the January fact is closed across topics, kept, and shown as past."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key


def _at(month: int, day: int, minute: int) -> datetime:
    return datetime(2026, month, day, 19, 0, tzinfo=UTC) + timedelta(minutes=minute)


JANUARY = [
    ("user", "Hi! I'm trying to get back into a routine after the holidays."),
    ("assistant", "Welcome back! What kind of routine are you aiming for?"),
    ("user", "Mostly sleep and exercise. Night shifts make it hard."),
    ("assistant", "Night shifts are tough. A fixed wind-down ritual can help a lot."),
    ("user", "I live in Boston and I work as a nurse at Mass General."),
    ("assistant", "That sounds demanding. How long have you been at Mass General?"),
    ("user", "About six years now. I love my team, the hours are the hard part."),
    ("user", "Also, you should try the podcast 99% Invisible, it's my commute favourite."),
    ("assistant", "Thanks for the tip, I've heard great things about 99% Invisible."),
    ("user", "The episode about city flags is my favourite one."),
]
MARCH = [
    ("user", "Big news: I moved to Denver last week! The mountains are unreal."),
    ("assistant", "Congratulations! That's a huge change. How are you settling in?"),
    ("user", "Slowly. Boxes everywhere and the altitude makes me tired."),
    ("assistant", "Drink lots of water, the altitude takes a couple of weeks to get used to."),
    ("user", "And I changed careers too. I'm now a product manager at a health-tech startup."),
    ("assistant", "From nursing to product management, your clinical experience will help."),
    ("user", "I hope so. The first sprint planning was a bit overwhelming."),
    ("user", "I'm still listening to 99% Invisible on my new commute, by the way."),
    ("assistant", "Good to have something familiar in a new city."),
]
JUNE = [
    ("user", "The weather has been amazing this week, lots of sunshine."),
    ("assistant", "Perfect weather for a hike!"),
    ("user", "We did a short hike on Saturday, it was lovely."),
]
SESSIONS = [(1, 12, JANUARY), (3, 10, MARCH), (6, 15, JUNE)]
ASKED = "2026-06-15T21:00:00Z"


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=0) as c:
        yield c


@dataclass
class Chat:
    client: TestClient
    auth: dict[str, str]
    driver: Driver
    namespace: str

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        response = self.client.request(method, path, json=body, params=params, headers=self.auth)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def context(self, question: str, **extra: Any) -> str:
        body = {"message": question, "explicit": True, "budget": 1000, "now": ASKED, **extra}
        text: str = self.call("POST", "/v1/context", body)["context_text"]
        return text

    def facts(self, history: bool = True) -> list[dict[str, Any]]:
        """Every fact of every topic of the namespace (with its topic's id)."""
        records, _, _ = self.driver.execute_query(
            "MATCH (t:Topic {namespace: $ns}) RETURN t.topic_id AS id", ns=self.namespace
        )
        out = []
        for tid in sorted(r["id"] for r in records):
            got = self.call("GET", f"/v1/topics/{tid}", history=str(history).lower())
            out += [{**f, "topic_id": tid} for f in got["facts"]]
        return out


@pytest.fixture(scope="module")
def chat(client: TestClient, driver: Driver) -> Iterator[Chat]:
    """Three sessions (January, March, June), each slept on the evening it happened."""
    namespace = f"test-now-{uuid.uuid4().hex[:10]}"
    auth = bearer(new_key(client, namespace))
    for month, day, turns in SESSIONS:
        messages = [
            {"role": role, "content": text, "at": _at(month, day, i).isoformat()}
            for i, (role, text) in enumerate(turns)
        ]
        body = {"messages": messages, "auto_sleep": False}
        client.post("/v1/messages", json=body, headers=auth).raise_for_status()
        evening = _at(month, day, 120).isoformat()
        client.post("/v1/sleep", json={"now": evening}, headers=auth).raise_for_status()
    yield Chat(client, auth, driver, namespace)
    driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace)


def _line(text: str, words: str) -> int:
    """The index of the first line of ``text`` holding ``words`` (case-insensitive), or -1."""
    lines = text.lower().splitlines()
    return next((i for i, line in enumerate(lines) if words in line), -1)


def test_the_move_closes_the_january_fact_wherever_it_is_filed(chat: Chat) -> None:
    facts = chat.facts()
    boston = [f for f in facts if "i live in boston" in f["text"].lower()]
    denver = [f for f in facts if "moved to denver" in f["text"].lower()]
    assert boston and denver, [f["text"] for f in facts]
    assert {f["topic_id"] for f in boston}.isdisjoint({f["topic_id"] for f in denver})
    assert all(f["invalid_at"] is not None for f in boston)  # kept, closed
    assert {f["superseded_by"] for f in boston} <= {f["fact_id"] for f in facts}
    assert all(f["invalid_at"] is None for f in denver)
    now = chat.facts(history=False)
    assert not [f for f in now if "i live in boston" in f["text"].lower()]


def test_where_do_i_live_now_leads_with_denver_and_shows_boston_as_past(chat: Chat) -> None:
    text = chat.context("Where do I live now?")
    denver, boston = _line(text, "moved to denver"), _line(text, "i live in boston")
    assert denver >= 0, text
    assert boston > denver, text
    assert "(until " in text.lower().splitlines()[boston], text
    first_fact = next(line for line in text.splitlines() if line.startswith("- "))
    assert "denver" in first_fact.lower(), text


def test_what_is_my_job_leads_with_product_manager(chat: Chat) -> None:
    text = chat.context("What is my job?")
    first_fact = next(line for line in text.splitlines() if line.startswith("- "))
    assert "product manager" in first_fact.lower(), text
    nurse = _line(text, "nurse at mass general")
    assert nurse < 0 or "(until " in text.lower().splitlines()[nurse], text


def test_where_did_i_live_before_finds_boston(chat: Chat) -> None:
    for question in ("Where did I live before?", "Where did I live in January?"):
        text = chat.context(question)
        boston = _line(text, "i live in boston")
        assert boston >= 0, (question, text)
        assert "(until " in text.lower().splitlines()[boston], (question, text)


def test_moving_back_makes_boston_current_again(chat: Chat) -> None:
    october = [("user", "We moved back to Boston in the autumn, it feels like home again.")]
    messages = [
        {"role": r, "content": t, "at": _at(10, 20, i).isoformat()}
        for i, (r, t) in enumerate(october)
    ]
    chat.call("POST", "/v1/messages", {"messages": messages, "auto_sleep": False})
    chat.call("POST", "/v1/sleep", {"now": _at(10, 20, 120).isoformat()})
    facts = chat.facts()
    back = [f for f in facts if "moved back to boston" in f["text"].lower()]
    denver = [f for f in facts if "moved to denver" in f["text"].lower()]
    assert back and all(f["invalid_at"] is None for f in back)
    assert denver and all(f["superseded_by"] in {b["fact_id"] for b in back} for f in denver)
    text = chat.context("Where do I live now?", now="2026-10-21T09:00:00Z")
    first_fact = next(line for line in text.splitlines() if line.startswith("- "))
    assert "moved back to boston" in first_fact.lower(), text
