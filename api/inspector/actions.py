"""The inspector's sign-in and its actions: ask the memory, forget a topic or a message (a
dry run first, then a confirmed form), correct or retract a fact. Every form carries the
session's CSRF token (``checked_form``); each action calls the service its REST route calls."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from api.admission import ContextGate
from api.auth import AuthFailed
from api.deps import (
    ContextDep,
    FactsDep,
    ForgetDep,
    NowDep,
    cached_principal,
    stored_principal,
)
from api.inspector.session import (
    COOKIE_PATH,
    LOGIN_COOKIE,
    LOGIN_SECONDS,
    SESSION_COOKIE,
    SESSION_SECONDS,
    new_nonce,
    new_session,
    same_token,
)
from api.inspector.views import trace_rows
from api.inspector.web import (
    FactId,
    FormDep,
    InspectorRoute,
    MessageId,
    Signed,
    SignedDep,
    TopicId,
    page,
)
from api.routers.context import memory_context
from api.schemas import ContextCreate
from graph.errors import ValidationFailed
from service.forget import ForgetReport

router = APIRouter(prefix="/ui", route_class=InspectorRoute, include_in_schema=False)

MAX_FIELD = 2000
SIGN_IN_REFUSED = "That key was not accepted. Check it and try again."


def _cookie(response: Response, request: Request, name: str, value: str, age: int) -> None:
    response.set_cookie(name, value, max_age=age, path=COOKIE_PATH, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")  # fmt: skip


@router.get("/login")
def login_form(request: Request) -> HTMLResponse:
    """The sign-in form (no query parameter reaches the page: nothing a link could plant)."""
    return _login_page(request, None)


def _login_page(request: Request, error: str | None) -> HTMLResponse:
    """The sign-in form with ``error`` (401), a fresh token in a cookie and in the form."""
    token = new_nonce()
    response = page(request, "login.html", 401 if error else 200, token=token, error=error)
    _cookie(response, request, LOGIN_COOKIE, token, LOGIN_SECONDS)
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the key as the API does; a good one opens a session (its namespace only)."""
    form = await request.form()
    key, token = form.get("key"), form.get("token")
    if not isinstance(token, str) or not same_token(request.cookies.get(LOGIN_COOKIE), token):
        return _login_page(request, "The sign-in form expired; try again.")
    if not isinstance(key, str) or len(key) > 200:
        return _login_page(request, SIGN_IN_REFUSED)
    key = key.strip()
    try:
        if cached_principal(request, key) is None:
            await run_in_threadpool(stored_principal, request, key)
    except AuthFailed:
        return _login_page(request, SIGN_IN_REFUSED)  # which check failed is not said
    response = RedirectResponse("/ui/topics", status_code=303)
    _cookie(response, request, SESSION_COOKIE, new_session(key).cookie, SESSION_SECONDS)
    response.delete_cookie(LOGIN_COOKIE, path=COOKIE_PATH)
    return response


@router.post("/logout")
def logout(form: FormDep) -> RedirectResponse:
    """Sign out: the session cookie is dropped (the key itself stays valid)."""
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH)
    return response


@router.get("/ask")
def ask_form(request: Request, signed: SignedDep) -> HTMLResponse:
    return page(request, "ask.html", signed=signed, message="", budget=1000, result=None)


@router.post("/ask")
async def ask(
    request: Request, signed: SignedDep, form: FormDep, context: ContextDep, now: NowDep
) -> HTMLResponse:
    """The context an agent would get for a message (``POST /v1/context`` with its trace),
    admitted by the same context gate as the API's."""
    message, budget = form.get("message", ""), form.get("budget", "1000")
    try:
        body = ContextCreate(message=message, budget=int(budget or 1000), trace=True)
    except (ValidationError, ValueError) as exc:
        raise ValidationFailed(_first_error(exc)) from exc
    gate: ContextGate = request.app.state.context_gate
    result = await gate.run(signed.namespace, memory_context, context, signed.namespace, body, now)
    return page(request, "ask.html", signed=signed, message=message, budget=body.budget,
                result=result, rows=trace_rows(result.trace or []))  # fmt: skip


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
    return "budget: must be a whole number"


@router.get("/topics/{topic_id}/forget")
def forget_topic_plan(
    request: Request, topic_id: TopicId, signed: SignedDep, forget: ForgetDep,
    messages: bool = False,
) -> HTMLResponse:  # fmt: skip
    """What forgetting the topic would delete (the API's dry run), and the confirm form."""
    report = forget.topic(signed.namespace, topic_id, with_messages=messages, dry_run=True)
    return _forget_page(request, signed, report, "topic", topic_id, messages, confirm=True)


@router.post("/topics/{topic_id}/forget")
def forget_topic(
    request: Request, topic_id: TopicId, signed: SignedDep, form: FormDep, forget: ForgetDep
) -> HTMLResponse:
    """Forget the topic (and its messages when the form says so), for real."""
    with_messages = form.get("messages") == "1"
    report = forget.topic(signed.namespace, topic_id, with_messages=with_messages, dry_run=False)
    return _forget_page(request, signed, report, "topic", topic_id, with_messages, confirm=False)


@router.get("/messages/{message_id}/forget")
def forget_message_plan(
    request: Request, message_id: MessageId, signed: SignedDep, forget: ForgetDep
) -> HTMLResponse:
    report = forget.messages_by_id(signed.namespace, [message_id], dry_run=True)
    return _forget_page(request, signed, report, "message", message_id, False, confirm=True)


@router.post("/messages/{message_id}/forget")
def forget_message(
    request: Request, message_id: MessageId, signed: SignedDep, form: FormDep, forget: ForgetDep
) -> HTMLResponse:
    report = forget.messages_by_id(signed.namespace, [message_id], dry_run=False)
    return _forget_page(request, signed, report, "message", message_id, False, confirm=False)


def _forget_page(
    request: Request,
    signed: Signed,
    report: ForgetReport,
    what: Literal["topic", "message"],
    target: str,
    messages: bool,
    *,
    confirm: bool,
) -> HTMLResponse:
    """The forget page: what forgetting ``target`` deletes (or deleted), and, before it is
    done (``confirm``), the form posting back to the same path."""
    action = f"/ui/{what}s/{target}/forget" if confirm else None
    return page(request, "forget.html", signed=signed, report=report, what=what,
                target=target, messages=messages, action=action)  # fmt: skip


@router.post("/topics/{topic_id}/facts/{fact_id}/correct")
def correct_fact(
    topic_id: TopicId, fact_id: FactId, signed: SignedDep, form: FormDep, facts: FactsDep
) -> RedirectResponse:
    """Replace one fact by the text given (``POST /v1/topics/{id}/facts/{fact_id}/correct``)."""
    text = form.get("text", "").strip()
    if not text or len(text) > MAX_FIELD:
        raise ValidationFailed(f"text: give the corrected fact (1 to {MAX_FIELD} characters)")
    facts.correct(signed.namespace, topic_id, fact_id, text, reason=_reason(form))
    return RedirectResponse(f"/ui/topics/{topic_id}", status_code=303)


@router.post("/topics/{topic_id}/facts/{fact_id}/retract")
def retract_fact(
    topic_id: TopicId, fact_id: FactId, signed: SignedDep, form: FormDep, facts: FactsDep
) -> RedirectResponse:
    """Close one fact with no successor (``POST .../facts/{fact_id}/retract``)."""
    facts.retract(signed.namespace, topic_id, fact_id, reason=_reason(form))
    return RedirectResponse(f"/ui/topics/{topic_id}", status_code=303)


def _reason(form: dict[str, str]) -> str | None:
    reason = form.get("reason", "").strip()[:300]
    return reason or None
