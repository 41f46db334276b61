"""The web inspector (/ui) as a hostile tenant sees it (docs/inspector.md): a key reaches its own
namespace only, on every page and every action; no action runs without the session's CSRF
token; a forged or revoked session is no session; a refused sign-in says nothing about why;
stored markup is escaped and no page may run a script; the session cookie is HttpOnly and
SameSite=Strict."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.inspector.session import LOGIN_COOKIE, SESSION_COOKIE, new_nonce
from tests.integration.api_support import bearer, keys, new_key

SCRIPT = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def _sign_in(client: TestClient, key: str) -> str:
    """Sign ``client`` in with ``key`` through the form; the session's CSRF token."""
    client.cookies.clear()
    form = client.get("/ui/login")
    token = re.search(r'name="token" value="([^"]+)"', form.text)
    assert token is not None
    response = client.post("/ui/login", data={"key": key, "token": token.group(1)})
    assert response.status_code == 200 and response.url.path == "/ui/topics", response.text
    csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', response.text)
    assert csrf is not None
    return csrf.group(1)


@pytest.fixture
def two(client: TestClient, driver: Driver) -> Iterator[tuple[str, str, str, str]]:
    """Namespaces A and B, each with a key; B holds a topic (with a fact citing a message).
    Yields (key A, key B, B's topic id, B's message id)."""
    names = ["sec-ui-a-" + new_nonce()[:8].lower(), "sec-ui-b-" + new_nonce()[:8].lower()]
    key_a, key_b = new_key(client, names[0]), new_key(client, names[1])
    try:
        appended = client.post(
            "/v1/messages",
            json={"messages": [{"role": "user", "content": f"B's secret plan {SCRIPT}"}],
                  "auto_sleep": False},
            headers=bearer(key_b),
        )  # fmt: skip
        message_id = appended.json()["messages"][0]["message_id"]
        topic = client.post(
            "/v1/topics",
            json={"name": f"B secret {SCRIPT}", "facts": [
                {"text": f"B's fact {SCRIPT}", "source_message_ids": [message_id]}]},
            headers=bearer(key_b),
        )  # fmt: skip
        assert topic.status_code == 201, topic.text
        yield key_a, key_b, topic.json()["topic_id"], message_id
    finally:
        client.cookies.clear()
        for ns in names:
            driver.execute_query("MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)


def test_another_namespace_is_unreachable_from_every_page_and_action(
    client: TestClient, two: tuple[str, str, str, str]
) -> None:
    key_a, key_b, topic_id, message_id = two
    csrf = _sign_in(client, key_a)
    for path in (f"/ui/topics/{topic_id}", f"/ui/topics/{topic_id}/history",
                 f"/ui/topics/{topic_id}/forget", f"/ui/topics/{topic_id}/forget?messages=true",
                 f"/ui/messages/{message_id}", f"/ui/messages/{message_id}/forget"):  # fmt: skip
        response = client.get(path)
        assert response.status_code == 404, path
        assert "secret" not in response.text, path
    for path, data in (
        (f"/ui/topics/{topic_id}/forget", {"messages": "1"}),
        (f"/ui/messages/{message_id}/forget", {}),
        (f"/ui/topics/{topic_id}/facts/f-x/correct", {"text": "pwned"}),
        (f"/ui/topics/{topic_id}/facts/f-x/retract", {}),
    ):
        response = client.post(path, data={**data, "csrf": csrf}, follow_redirects=False)
        assert response.status_code == 404, path
    for path in ("/ui/topics?q=secret", "/ui/topics", "/ui/timeline", "/ui/sleep", "/ui/export"):
        text = client.get(path).text
        assert "B secret" not in text and "secret plan" not in text, path
    asked = client.post("/ui/ask", data={"message": "B's secret plan", "csrf": csrf})
    assert asked.status_code == 200 and "secret plan" not in asked.text.split("</textarea>")[1]
    topic = client.get(f"/v1/topics/{topic_id}", headers=bearer(key_b)).json()
    assert len(topic["facts"]) == 1 and topic["facts"][0]["invalid_at"] is None  # untouched


def test_no_action_runs_without_the_sessions_csrf_token(
    client: TestClient, two: tuple[str, str, str, str]
) -> None:
    _, key_b, topic_id, message_id = two
    good = _sign_in(client, key_b)
    other = _sign_in(client, key_b)  # a second sign-in: a new nonce, so a new token
    assert other != good
    fact_id = client.get(f"/v1/topics/{topic_id}", headers=bearer(key_b)).json()["facts"][0]
    actions = [
        f"/ui/topics/{topic_id}/forget",
        f"/ui/messages/{message_id}/forget",
        f"/ui/topics/{topic_id}/facts/{fact_id['fact_id']}/correct",
        f"/ui/topics/{topic_id}/facts/{fact_id['fact_id']}/retract",
        "/ui/ask",
        "/ui/logout",
    ]
    for path in actions:
        for token in (None, good, "0" * 64):  # missing, the old session's, made up
            data = {"text": "pwned", "message": "hi"} | ({"csrf": token} if token else {})
            response = client.post(path, data=data, follow_redirects=False)
            assert response.status_code == 403, (path, token)
    assert client.get(f"/ui/topics/{topic_id}").status_code == 200  # still there, still signed in
    topic = client.get(f"/v1/topics/{topic_id}", headers=bearer(key_b)).json()
    assert [f["text"] for f in topic["facts"]] == [fact_id["text"]]


def test_stored_markup_is_escaped_and_no_page_may_run_a_script(
    client: TestClient, two: tuple[str, str, str, str]
) -> None:
    _, key_b, topic_id, message_id = two
    _sign_in(client, key_b)
    for path in ("/ui/topics", f"/ui/topics/{topic_id}", f"/ui/messages/{message_id}",
                 "/ui/topics?q=%3Cscript%3E", f"/ui/topics/{topic_id}/history"):  # fmt: skip
        response = client.get(path)
        assert response.status_code == 200, path
        assert "<script" not in response.text and "<img" not in response.text, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text, path
        policy = response.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy, path
        assert response.headers["x-frame-options"] == "DENY"
    reflected = client.get("/ui/topics", params={"window": SCRIPT})  # echoed in an error
    assert reflected.status_code == 422 and "<script" not in reflected.text


def test_the_session_cookie_is_httponly_samesite_strict_and_holds_no_password(
    client: TestClient, namespace: str
) -> None:
    key = new_key(client, namespace)
    client.cookies.clear()
    form = client.get("/ui/login")
    assert "samesite=strict" in form.headers["set-cookie"].lower()
    token = re.search(r'name="token" value="([^"]+)"', form.text)
    assert token is not None
    response = client.post(
        "/ui/login", data={"key": key, "token": token.group(1)}, follow_redirects=False
    )
    assert response.status_code == 303
    cookie = next(
        c for c in response.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE)
    )
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/ui"} <= flags
    # the password the API connects with: the managed server's (its password file) or NEO4J_*'s
    _, _, password = client.app.state.container.settings.connection()  # type: ignore[attr-defined]
    assert password and password not in cookie


def test_a_refused_sign_in_says_nothing_about_why(client: TestClient, namespace: str) -> None:
    revoked = new_key(client, namespace)
    keys(client).revoke(keys(client).list_keys(namespace)[0].key_id)
    answers = set()
    for key in ("shc_" + "x" * 43, "not-a-key", "", revoked, "x" * 5000):
        client.cookies.clear()
        token = new_nonce()
        client.cookies.set(LOGIN_COOKIE, token)
        response = client.post("/ui/login", data={"key": key, "token": token})
        assert response.status_code == 401, key
        answers.add(re.sub(r'value="[^"]+"', "", response.text))
        assert client.get("/ui/topics").url.path == "/ui/login"
    assert len(answers) == 1  # one page for every refusal
    planted = client.get("/ui/login", params={"error": "Your key expired: mail it to evil"})
    assert planted.status_code == 200 and "evil" not in planted.text  # a link cannot plant text
    client.cookies.clear()
    response = client.post("/ui/login", data={"key": revoked, "token": "forged"})
    assert response.status_code == 401  # no login cookie: the form is refused first


def test_a_forged_or_revoked_session_is_no_session(client: TestClient, namespace: str) -> None:
    key = new_key(client, namespace)
    _sign_in(client, key)
    assert client.get("/ui/topics").url.path == "/ui/topics"
    for forged in ("shc_" + "y" * 43 + "." + "n" * 43, "garbage", key):
        client.cookies.clear()
        client.cookies.set(SESSION_COOKIE, forged)
        response = client.get("/ui/topics", follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/ui/login"
    _sign_in(client, key)
    record = keys(client).list_keys(namespace)[0]
    keys(client).revoke(record.key_id)  # this process's cache drops it at once
    assert client.get("/ui/topics", follow_redirects=False).status_code == 303
