"""The web inspector (/ui) in a real headless Chromium against the real API (uvicorn on a local
port), the real Neo4j and the real embedding model: sign in with a key, find a topic of a
replayed two-day conversation, open it, follow a fact to its message, ask the memory and read
the trace, forget a topic (dry run, then confirm); another key's data never shows; stored
markup is shown as text. One browser and one server for the module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from neo4j import Driver
from playwright.sync_api import Browser, Page, expect

from api.settings import Settings
from graph.clock import FixedClock
from retrieval.embedding import MiniLMEmbedder
from tests.integration.browser import chromium, sign_in
from tests.integration.dialogues import PARTY_AND_BIKE
from tests.integration.live_server import LiveServer, live_server

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
DAY3 = DAY1 + timedelta(days=2)
NOW = DAY1 + timedelta(days=8)  # the clock of the server: "last week" is 2-8 March
SCRIPT = "<script>alert(1)</script>"
DAY1_TURNS = PARTY_AND_BIKE
DAY3_TURNS = [
    ("user", f"The security demo page printed {SCRIPT} on the screen."),
    ("assistant", "That is an XSS test string; make sure it is escaped."),
    ("user", "I paid the deposit to Rosa's Kitchen for the party today."),
    ("assistant", "Great, the caterer is booked."),
    ("user", "The bike shop replaced the brake pads."),
    ("assistant", "Good, the bike is ready for the ride."),
]
OTHER_TURNS = [
    ("user", "My secret Zanzibar expedition leaves from the harbour in June."),
    ("assistant", "Zanzibar in June sounds wonderful."),
    ("user", "The Zanzibar expedition guide is called Baraka."),
    ("assistant", "Noted: Baraka guides the Zanzibar expedition."),
]


@dataclass
class Tenant:
    namespace: str
    key: str

    def rest(self, server: LiveServer) -> httpx.Client:
        return server.rest(self.key)


@pytest.fixture(scope="module")
def server(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with live_server(
        settings, embedder, tmp_path_factory.mktemp("ws"), clock=FixedClock(NOW), tail_turns=2,
        extractor="deterministic",
    ) as live:  # fmt: skip
        yield live


def _replay(client: httpx.Client, days: list[tuple[datetime, list[tuple[str, str]]]]) -> None:
    """Each day's turns a minute apart, then an explicit sleep two hours later."""
    for start, turns in days:
        messages = [
            {"role": role, "content": text, "at": (start + timedelta(minutes=i)).isoformat()}
            for i, (role, text) in enumerate(turns)
        ]
        body: dict[str, Any] = {"messages": messages, "auto_sleep": False}
        client.post("/v1/messages", json=body).raise_for_status()
        slept = client.post("/v1/sleep", json={"now": (start + timedelta(hours=2)).isoformat()})
        assert slept.status_code == 200, slept.text


@pytest.fixture(scope="module")
def tenants(server: LiveServer, driver: Driver) -> Iterator[tuple[Tenant, Tenant]]:
    """Namespace A (the party, the bike, the script text) and B (the Zanzibar expedition)."""
    a = Tenant(f"test-ui-a-{uuid.uuid4().hex[:8]}", "")
    b = Tenant(f"test-ui-b-{uuid.uuid4().hex[:8]}", "")
    a.key, b.key = server.new_key(a.namespace), server.new_key(b.namespace)
    try:
        with a.rest(server) as client:
            _replay(client, [(DAY1, DAY1_TURNS), (DAY3, DAY3_TURNS)])
            notes = client.post("/v1/topics", json={"name": f"{SCRIPT} notes"}).json()
            party = client.get("/v1/topics/search", params={"query": "surprise party"}).json()
            link = {"to": notes["topic_id"], "type": "RELATES_TO", "weight": 1.0}
            added = client.post(f"/v1/topics/{party['hits'][0]['topic_id']}/links", json=link)
            added.raise_for_status()
        with b.rest(server) as client:
            _replay(client, [(DAY1, OTHER_TURNS)])
        yield a, b
    finally:
        for ns in (a.namespace, b.namespace):
            driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh context (no cookies) whose page records every JavaScript dialog it meets."""
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    yield page
    context.close()


def _topic_link(page: Page, name_part: str) -> Any:
    return page.get_by_test_id("topic-row").get_by_role("link", name=name_part).first


def test_a_wrong_key_is_refused_without_detail(page: Page, server: LiveServer) -> None:
    sign_in(page, server.base_url, "shc_" + "x" * 43)
    expect(page.get_by_role("alert")).to_have_text(
        "That key was not accepted. Check it and try again."
    )
    page.goto(f"{server.base_url}/ui/topics")
    expect(page).to_have_url(f"{server.base_url}/ui/login")


def test_find_a_topic_open_it_and_follow_a_fact_to_its_message(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    a, _ = tenants
    sign_in(page, server.base_url, a.key)
    expect(page.get_by_test_id("namespace")).to_have_text(a.namespace)
    page.get_by_label("search").fill("party")
    page.get_by_label("time window").fill("last week")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_text("Window “last week”")).to_be_visible()
    rows = page.get_by_test_id("topic-row")
    expect(rows.first).to_be_visible()
    assert all("party" in r.lower() for r in rows.all_inner_texts())
    rows.first.get_by_role("link").click()
    expect(page.get_by_test_id("topic-name")).to_contain_text("party")
    expect(page.get_by_test_id("graph")).to_contain_text("<script>alert(1)</scrip…")
    related = page.get_by_test_id("related").filter(has_text=f"{SCRIPT} notes")
    expect(related).to_contain_text("RELATES_TO →")
    fact = page.get_by_test_id("fact").filter(has_text="Rosa's Kitchen").first
    expect(fact).to_be_visible()
    fact.get_by_test_id("source").first.click()
    expect(page.get_by_test_id("focus")).to_contain_text("Rosa's Kitchen")
    assert page.locator(".msg").count() > 1  # shown among its neighbours in the conversation


def test_the_timeline_groups_events_by_sleep_and_takes_time_phrases(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    sign_in(page, server.base_url, tenants[0].key)
    page.goto(f"{server.base_url}/ui/timeline")
    second = page.locator(
        ".card", has=page.get_by_role("heading", name="Sleep of 2026-03-04 11:00")
    )
    expect(second).to_contain_text("I paid the deposit to Rosa's Kitchen")
    first = page.locator(".card", has=page.get_by_role("heading", name="Sleep of 2026-03-02 11:00"))
    expect(first).to_contain_text("surprise party")
    since = page.locator(".card", has=page.get_by_role("heading", name="Since the last sleep"))
    expect(since).to_contain_text(f"{SCRIPT} notes")  # the topic the API created
    page.get_by_label("time window").fill("yesterday")  # 9 March: no sleep then
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("No events in this window.")).to_be_visible()


def test_ask_the_memory_shows_the_context_and_its_trace(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    sign_in(page, server.base_url, tenants[0].key)
    page.get_by_role("link", name="Ask the memory").click()
    page.get_by_label("message").fill("What did we decide about the caterer for Mel's party?")
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_test_id("context-text")).to_contain_text("Rosa's Kitchen")
    trace = page.get_by_test_id("trace")
    included = trace.locator("tr", has=page.locator(".tag.included"))
    expect(included.first).to_contain_text("party")
    expect(trace).to_contain_text("cosine")  # a score part, by name
    expect(page.get_by_test_id("trigger").first).to_be_visible()


def test_sleep_runs_show_their_steps_and_the_wake_packet(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    sign_in(page, server.base_url, tenants[0].key)
    page.get_by_role("link", name="Sleep & wake").click()
    runs = page.get_by_test_id("sleep-run")
    expect(runs).to_have_count(2)
    expect(runs.first).to_contain_text("Sleep of 2026-03-04 11:00")
    expect(runs.first.locator(".tag")).to_have_text("done")
    expect(runs.first.locator("td", has_text="extract").first).to_be_visible()
    expect(page.get_by_text("Slept at 2026-03-04 11:00")).to_be_visible()


def test_another_keys_data_never_appears(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    a, b = tenants
    with b.rest(server) as client:
        found = client.get("/v1/topics/search", params={"query": "Zanzibar expedition"}).json()
        theirs = found["hits"][0]["topic_id"]
        message = client.get("/v1/messages").json()["messages"][0]["message_id"]
    sign_in(page, server.base_url, a.key)
    expect(page.get_by_test_id("topic-row").first).to_be_visible()
    expect(page.get_by_text("Zanzibar")).to_have_count(0)
    page.goto(f"{server.base_url}/ui/topics?q=zanzibar")
    expect(page.get_by_text("No topics match.")).to_be_visible()
    page.goto(f"{server.base_url}/ui/timeline")
    expect(page.get_by_text("Zanzibar")).to_have_count(0)
    for path in (f"/ui/topics/{theirs}", f"/ui/messages/{message}",
                 f"/ui/topics/{theirs}/forget", f"/ui/messages/{message}/forget"):  # fmt: skip
        response = page.goto(f"{server.base_url}{path}")
        assert response is not None and response.status == 404, path
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    with b.rest(server) as client:  # untouched
        assert client.get(f"/v1/topics/{theirs}").status_code == 200


def test_stored_markup_is_shown_as_text(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    a, _ = tenants
    with a.rest(server) as client:
        messages = client.get("/v1/messages").json()["messages"]
    scripted = next(m["message_id"] for m in messages if SCRIPT in m["content"])
    sign_in(page, server.base_url, a.key)
    page.goto(f"{server.base_url}/ui/topics?q=script")
    link = _topic_link(page, f"{SCRIPT} notes")
    expect(link).to_be_visible()
    link.click()
    expect(page.get_by_test_id("topic-name")).to_have_text(f"{SCRIPT} notes")
    page.goto(f"{server.base_url}/ui/messages/{scripted}")
    expect(page.get_by_test_id("focus")).to_contain_text(f"printed {SCRIPT} on the screen")
    assert page.locator("main script").count() == 0
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_a_form_without_the_session_token_is_refused(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    sign_in(page, server.base_url, tenants[0].key)
    response = page.request.post(f"{server.base_url}/ui/ask", form={"message": "hello"})
    assert response.status == 403
    response = page.request.post(
        f"{server.base_url}/ui/ask", form={"message": "hello", "csrf": "0" * 64}
    )
    assert response.status == 403


def test_forget_a_topic_dry_run_then_confirm_and_it_is_gone(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    sign_in(page, server.base_url, tenants[0].key)
    page.get_by_label("search").fill("bike")
    page.get_by_role("button", name="Search").click()
    link = page.get_by_test_id("topic-row").get_by_role("link").first
    name = link.inner_text()
    link.click()
    topic_url = page.url
    page.get_by_role("link", name="Forget this topic…").click()
    expect(page.get_by_role("heading", name="Forget this topic?")).to_be_visible()
    expect(page.get_by_test_id("forget-report")).to_contain_text("1 topics")
    page.goto(topic_url)  # the dry run deleted nothing
    expect(page.get_by_test_id("topic-name")).to_have_text(name)
    page.get_by_role("link", name="Forget this topic…").click()
    page.get_by_role("button", name="Forget for good").click()
    expect(page.get_by_test_id("forgotten")).to_be_visible()
    page.goto(f"{server.base_url}/ui/topics")
    expect(
        page.get_by_test_id("topic-row").get_by_role("link", name=name, exact=True)
    ).to_have_count(0)
    response = page.goto(topic_url)
    assert response is not None and response.status == 404


def test_sign_out_ends_the_session(
    page: Page, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    sign_in(page, server.base_url, tenants[0].key)
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{server.base_url}/ui/login")
    page.goto(f"{server.base_url}/ui/topics")
    expect(page).to_have_url(f"{server.base_url}/ui/login")
