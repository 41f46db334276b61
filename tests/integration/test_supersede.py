"""Facts in time: a preference that changes twice is replayed with its real dates through the
production sleep; now and ``as_of`` each date, the topic, its history, the context and search
show what was true then. A user corrects and retracts a fact over REST, the tools and the CLI.
Real Neo4j, real MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from tests.integration.api_support import api_client, bearer, new_key

JAN, FEB, MAR = (datetime(2026, m, 10, 9, 0, tzinfo=UTC) for m in (1, 2, 3))
SAID = [
    (JAN, "My favourite colour is blue. My budget is 500 dollars."),
    (FEB, "Actually, my favourite colour is green now."),
    (MAR, "My favourite colour is red these days. My budget is 650 dollars."),
]
COLOURS = ("blue", "green", "red")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    with api_client(settings, embedder, tmp_path_factory.mktemp("ws"), tail_turns=0) as c:
        yield c


@dataclass
class Replay:
    client: TestClient
    auth: dict[str, str]
    topic_id: str

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        response = self.client.request(method, path, json=body, params=params, headers=self.auth)
        assert response.status_code == 200, response.text
        return response.json()

    def topic(self, **params: Any) -> dict[str, Any]:
        data: dict[str, Any] = self.call("GET", f"/v1/topics/{self.topic_id}", **params)
        return data

    def colours(self, **params: Any) -> list[str]:
        """The colours the topic's shown facts state, in order."""
        texts = [f["text"].lower() for f in self.topic(**params)["facts"]]
        return [c for t in texts for c in COLOURS if f"is {c}" in t]

    def context(self, **extra: Any) -> str:
        body = {"message": "What is my favourite colour?", "explicit": True, "budget": 400,
                "now": "2026-04-01T09:00:00Z", **extra}  # fmt: skip
        text: str = self.call("POST", "/v1/context", body)["context_text"].lower()
        return text


@pytest.fixture
def replay(client: TestClient, namespace: str) -> Replay:
    """Three months, one statement each, each slept on the evening it was made."""
    auth = bearer(new_key(client, namespace))
    for at, text in SAID:
        body = {"messages": [{"role": "user", "content": text, "at": at.isoformat()}],
                "auto_sleep": False}  # fmt: skip
        client.post("/v1/messages", json=body, headers=auth).raise_for_status()
        evening = (at + timedelta(hours=10)).isoformat()
        client.post("/v1/sleep", json={"now": evening}, headers=auth).raise_for_status()
    hits = client.get("/v1/topics/search", params={"query": "favourite colour"}, headers=auth)
    topic = next(h for h in hits.json()["hits"] if "colour" in h["name"].lower())
    return Replay(client, auth, topic["topic_id"])


def test_now_and_as_of_each_date_show_what_was_true_then(replay: Replay) -> None:
    assert replay.colours() == ["red"]  # currently valid facts by default
    assert replay.colours(as_of="2026-01-20T00:00:00Z") == ["blue"]
    assert replay.colours(as_of="2026-02-20T00:00:00Z") == ["green"]
    assert replay.colours(as_of="2026-03-20T00:00:00Z") == ["red"]
    assert replay.colours(as_of="2026-01-01T00:00:00Z") == []  # before anything was said
    assert replay.colours(history="true") == ["blue", "green", "red"]
    assert "red" in replay.topic()["one_liner"].lower()  # the gist follows the change


def test_each_superseded_fact_points_at_its_successor(replay: Replay) -> None:
    facts = {c: f for f in replay.topic(history="true")["facts"] for c in COLOURS
             if f"is {c}" in f["text"].lower()}  # fmt: skip
    blue, green, red = facts["blue"], facts["green"], facts["red"]
    assert blue["superseded_by"] == green["fact_id"] and blue["invalid_at"] == green["at"]
    assert green["superseded_by"] == red["fact_id"] and green["invalid_at"] == red["at"]
    assert red["invalid_at"] is None and red["superseded_by"] is None
    assert blue["invalid_reason"] == "superseded by a later statement"
    history = replay.call("GET", f"/v1/topics/{replay.topic_id}/history")
    assert [blue["fact_id"], green["fact_id"], red["fact_id"]] in history["chains"]
    closed = [e for e in history["timeline"] if e["kind"] == "fact_closed"]
    assert [e["fact_id"] for e in closed] == [blue["fact_id"], green["fact_id"]]
    assert [e["at"] for e in history["timeline"]] == sorted(e["at"] for e in history["timeline"])
    assert len(history["events"]) == 3  # one per sleep


def test_a_typed_number_changing_supersedes_the_old_value(replay: Replay) -> None:
    hits = replay.call("GET", "/v1/topics/search", query="my budget")["hits"]
    # the budget is a typed number of whichever topic its turn was filed under (one topic per
    # subject of the turn, issue #12, not one per noun phrase): exactly one topic holds it
    holders = [h["topic_id"] for h in hits
               if any(n["key"] == "budget" for n in replay.call("GET", f"/v1/topics/{h['topic_id']}")["numbers"])]  # fmt: skip
    assert len(holders) == 1, hits
    topic_id = holders[0]
    path = f"/v1/topics/{topic_id}"
    assert [n["value"] for n in replay.call("GET", path)["numbers"]] == [650]
    assert [n["value"] for n in replay.call("GET", path, as_of="2026-02-01T00:00:00Z")["numbers"]] == [500]  # fmt: skip
    facts = replay.call("GET", path)["facts"]
    budget = [f["text"] for f in facts if "budget is" in f["text"]]
    assert len(budget) == 1 and "650 dollars" in budget[0] and "500" not in budget[0]


def test_the_context_shows_the_current_value_and_the_past_as_of_each_date(
    replay: Replay,
) -> None:
    now = replay.context()
    assert "red" in now and "blue" not in now and "green" not in now
    for as_of, shown in (("2026-01-20T00:00:00Z", "blue"), ("2026-02-20T00:00:00Z", "green"),
                         ("2026-03-20T00:00:00Z", "red")):  # fmt: skip
        text = replay.context(as_of=as_of)
        assert shown in text, (as_of, text)
        assert not [c for c in COLOURS if c != shown and f"is {c}" in text], (as_of, text)


def test_search_as_of_knows_only_what_was_known_then(replay: Replay) -> None:
    query = {"query": "favourite colour", "k": 10}
    assert replay.call("POST", "/v1/topics/search", {**query, "as_of": "2026-01-01T00:00:00Z"})[
        "hits"] == []  # fmt: skip
    later = replay.call("POST", "/v1/topics/search", {**query, "as_of": "2026-01-20T00:00:00Z"})
    assert replay.topic_id in [h["topic_id"] for h in later["hits"]]


def test_a_user_corrects_then_retracts_a_fact(replay: Replay) -> None:
    red = next(f for f in replay.topic()["facts"] if "is red" in f["text"])
    path = f"/v1/topics/{replay.topic_id}/facts/{red['fact_id']}"
    fixed = replay.call("POST", f"{path}/correct", {"text": "My favourite colour is teal.",
                                                     "at": "2026-03-20T09:00:00Z"})  # fmt: skip
    assert fixed["closed"]["superseded_by"] == fixed["replacement"]["fact_id"]
    assert fixed["closed"]["invalid_reason"] == "corrected by the user"
    assert replay.colours() == [] and "teal" in json.dumps(replay.topic()["facts"])
    assert replay.colours(as_of="2026-03-15T00:00:00Z") == ["red"]  # the past stays
    again = replay.client.post(f"{path}/correct", json={"text": "purple"}, headers=replay.auth)
    assert again.status_code == 409 and fixed["replacement"]["fact_id"] in again.json()["detail"]
    teal = fixed["replacement"]["fact_id"]
    gone = replay.call("POST", f"/v1/topics/{replay.topic_id}/facts/{teal}/retract",
                       {"at": "2026-03-25T09:00:00Z", "reason": "I have no favourite"})  # fmt: skip
    assert gone["replacement"] is None and gone["closed"]["invalid_reason"] == "I have no favourite"
    assert "teal" not in json.dumps(replay.topic()["facts"])
    assert "teal" in json.dumps(replay.topic(as_of="2026-03-22T00:00:00Z")["facts"])
    events = [e["delta_summary"] for e in replay.topic()["events"]]
    assert any(e.startswith("fact corrected by the user") for e in events)
    assert any(e.startswith("fact retracted by the user") for e in events)


def test_a_statement_made_again_after_it_was_superseded_is_current_again(
    replay: Replay,
) -> None:
    apr = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
    body = {"messages": [{"role": "user", "content": "My favourite colour is blue.",
                          "at": apr.isoformat()}], "auto_sleep": False}  # fmt: skip
    replay.client.post("/v1/messages", json=body, headers=replay.auth).raise_for_status()
    replay.call("POST", "/v1/sleep", {"now": (apr + timedelta(hours=1)).isoformat()})
    assert replay.colours() == ["blue"]
    assert replay.colours(history="true") == ["blue", "green", "red", "blue"]


def test_the_tools_correct_and_show_the_history(replay: Replay) -> None:
    red = next(f for f in replay.topic()["facts"] if "is red" in f["text"])
    args = {"topic_id": replay.topic_id, "fact_id": red["fact_id"],
            "text": "My favourite colour is orange."}  # fmt: skip
    out = replay.call("POST", "/v1/tools/facts_correct", {"arguments": args,
                                                         "now": "2026-03-21T09:00:00Z"})  # fmt: skip
    assert out["output"]["replacement"]["text"] == "My favourite colour is orange."
    history = replay.call("POST", "/v1/tools/topics_history",
                          {"arguments": {"topic_id": replay.topic_id}})["output"]  # fmt: skip
    assert any("orange" in f["text"] for f in history["facts"])
    got = replay.call(
        "POST", "/v1/tools/topics_get", {"arguments": {"topic_ids": [replay.topic_id]}}
    )
    facts = json.dumps(got["output"][0]["facts"])  # current facts; events keep the history
    assert "is red" not in facts and "orange" in facts


def test_the_cli_corrects_a_fact_and_prints_the_history(
    replay: Replay, namespace: str, settings: Settings
) -> None:
    uri, user, password = settings.connection()
    env = {**os.environ, "NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password}
    red = next(f for f in replay.topic()["facts"] if "is red" in f["text"])

    def sheriff(*args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-c", "from api.cli import main; main()", *args],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    fixed = sheriff("facts", "correct", replay.topic_id, red["fact_id"], "-n", namespace,
                    "--text", "My favourite colour is indigo.")  # fmt: skip
    assert fixed["closed"]["fact_id"] == red["fact_id"]
    history = sheriff("facts", "history", replay.topic_id, "-n", namespace)
    assert any("indigo" in f["text"] for f in history["facts"])
    assert replay.colours() == [] and "indigo" in json.dumps(replay.topic()["facts"])


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("facts/FACT/correct", {"text": ""}, 422, "body.text"),
        ("facts/FACT/correct", {"text": "x", "at": "yesterday"}, 422, "body.at"),
        ("facts/FACT/correct", {"text": "x", "valid_from": "2020-01-01T00:00:00Z"}, 422,
         "valid_from"),
        ("facts/FACT/correct", {"text": "x", "fact_id": "y"}, 422, "body.fact_id"),
        ("facts/no-such-fact/correct", {"text": "x"}, 404, "no-such-fact"),
        ("facts/FACT/retract", {"at": 5}, 422, "body.at"),
        ("facts/FACT/correct", {"text": "SAME"}, 422, "text"),  # the fact's own text: no change
    ],
)  # fmt: skip
def test_bad_corrections_are_clear_4xx_and_change_nothing(
    replay: Replay, path: str, body: dict[str, Any], status: int, field: str
) -> None:
    before = replay.topic(history="true")
    red = next(f for f in before["facts"] if "is red" in f["text"])
    url = f"/v1/topics/{replay.topic_id}/{path.replace('FACT', red['fact_id'])}"
    if body.get("text") == "SAME":
        body = {**body, "text": red["text"]}
    response = replay.client.post(url, json=body, headers=replay.auth)
    assert response.status_code == status, response.text
    assert field in response.json()["detail"]
    assert replay.topic(history="true") == before


@pytest.mark.parametrize(
    ("params", "field"),
    [({"as_of": "soon"}, "query.as_of"), ({"history": "both"}, "query.history")],
)
def test_bad_reads_are_422_naming_the_field(
    replay: Replay, params: dict[str, str], field: str
) -> None:
    response = replay.client.get(f"/v1/topics/{replay.topic_id}", params=params,
                                 headers=replay.auth)  # fmt: skip
    assert response.status_code == 422 and field in response.json()["detail"]
    bad = replay.client.post("/v1/context", json={"message": "x", "as_of": "later"},
                             headers=replay.auth)  # fmt: skip
    assert bad.status_code == 422 and "body.as_of" in bad.json()["detail"]
