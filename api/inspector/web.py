"""The inspector's plumbing: templates (autoescape on for everything), the signed-in session
as a dependency, HTML error pages and the security headers every ``/ui`` answer carries.

The pages run no script at all (the neighbourhood graph is server-rendered SVG), so the
Content-Security-Policy forbids scripts outright: stored text that looks like markup is escaped
by Jinja2, and would not run even if it were not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader
from starlette.concurrency import run_in_threadpool

from api.auth import AuthFailed
from api.deps import Principal, cached_principal, stored_principal
from api.errors import status_of
from api.inspector.session import (
    COOKIE_PATH,
    SESSION_COOKIE,
    Session,
    parse_session,
    same_token,
)
from graph.errors import SheriffError

log = logging.getLogger(__name__)

# the ids a /ui path takes, bounded as the REST routes bound them
TopicId = Annotated[str, Path(min_length=1, max_length=64)]
FactId = Annotated[str, Path(min_length=1, max_length=64)]
MessageId = Annotated[str, Path(min_length=1, max_length=200)]

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _when(value: datetime | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return value.astimezone(UTC).strftime(fmt) if value is not None else "—"


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("api.inspector", "templates"), autoescape=True)
    env.filters["when"] = _when
    env.filters["day"] = lambda v: _when(v, "%Y-%m-%d")
    return env


templates = Jinja2Templates(env=_environment())


class SignInNeeded(Exception):
    """No live session: the page answers with the sign-in page."""


@dataclass(frozen=True)
class Signed:
    """The signed-in caller of a page: the principal (its namespace scopes every read) and the
    session (its CSRF token goes in every form)."""

    principal: Principal
    session: Session

    @property
    def namespace(self) -> str:
        return self.principal.namespace


async def signed_in(request: Request) -> Signed:
    """The session's key checked as the REST API checks a key (the cache on the event loop,
    else one Neo4j read in a thread); ``SignInNeeded`` when there is none or it is refused."""
    session = parse_session(request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SignInNeeded
    try:
        principal = cached_principal(request, session.key)
        if principal is None:
            principal = await run_in_threadpool(stored_principal, request, session.key)
    except AuthFailed as exc:
        raise SignInNeeded from exc
    return Signed(principal, session)


SignedDep = Annotated[Signed, Depends(signed_in)]


async def checked_form(request: Request, signed: SignedDep) -> dict[str, str]:
    """The posted form of a signed-in page, refused (403) unless it carries the session's CSRF
    token; its fields as text (a file field is refused)."""
    form = await request.form()
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    if len(fields) != len(form):
        raise CsrfRefused
    if not same_token(signed.session.csrf, fields.get("csrf")):
        raise CsrfRefused
    return fields


FormDep = Annotated[dict[str, str], Depends(checked_form)]


class CsrfRefused(Exception):
    """A form without this session's token: refused, nothing done."""


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page rendered with ``context``; the template reads the session's ``csrf`` token and
    the ``namespace`` from it when signed in."""
    return templates.TemplateResponse(request, name, context, status_code=status)


def error_page(request: Request, status: int, title: str, detail: str) -> HTMLResponse:
    return page(request, "error.html", status, title=title, detail=detail)


def to_sign_in() -> RedirectResponse:
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH)
    return response


class InspectorRoute(APIRoute):
    """A ``/ui`` route: errors are HTML pages (the product's errors with the status the API
    gives them, their message shown escaped; anything else a bare 500), a missing session goes
    to the sign-in page, and every answer carries the security headers."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                response = await handler(request)
            except SignInNeeded:
                response = to_sign_in()
            except CsrfRefused:
                response = error_page(request, 403, "Refused",
                                      "The form is stale or was not sent by this page; reload it.")  # fmt: skip
            except RequestValidationError as exc:
                detail = "; ".join(
                    f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}"
                    for e in exc.errors()
                )
                response = error_page(request, 422, "Not valid", detail)
            except SheriffError as exc:
                status = status_of(exc)
                if status >= 500:
                    log.error("inspector page failed: %s", exc, exc_info=exc)
                    detail = "The memory could not answer just now; try again shortly."
                else:
                    detail = str(exc)
                response = error_page(request, status, _TITLES.get(status, "Error"), detail)
            response.headers.update(SECURITY_HEADERS)
            return response

        return route


_TITLES = {404: "Not found", 409: "Conflict", 422: "Not valid", 401: "Signed out", 503: "Busy"}
