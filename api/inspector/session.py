"""The inspector's sign-in session: the API key in an HttpOnly, SameSite=Strict cookie, and a
CSRF token per session.

The cookie holds ``<key>.<nonce>``: the key is checked on every request exactly as the REST API
checks it (``api.deps``: revoking the key ends the session within the key cache's TTL), and the
nonce, new at each sign-in, makes the session's CSRF token ``HMAC-SHA256(key, nonce)``. Every
form that changes something carries the token; a cross-site page can neither read the cookie
(HttpOnly) nor send it (SameSite=Strict) nor compute the token (it needs the key). The sign-in
form has its own token, a nonce in a short-lived cookie of the same kind (double submit).
Pure functions: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

SESSION_COOKIE = "sheriff_ui"
LOGIN_COOKIE = "sheriff_ui_login"
COOKIE_PATH = "/ui"
SESSION_SECONDS = 12 * 3600
LOGIN_SECONDS = 3600
MAX_COOKIE = 300  # a key (47 characters), a dot and a nonce (43): anything longer is forged


@dataclass(frozen=True)
class Session:
    """A parsed session cookie: the API key and this sign-in's nonce."""

    key: str
    nonce: str

    @property
    def csrf(self) -> str:
        return csrf_token(self.key, self.nonce)

    @property
    def cookie(self) -> str:
        return f"{self.key}.{self.nonce}"


def new_nonce() -> str:
    return secrets.token_urlsafe(32)


def new_session(key: str) -> Session:
    """A fresh session for ``key`` (a new nonce, so a new CSRF token)."""
    return Session(key, new_nonce())


def parse_session(value: str | None) -> Session | None:
    """The session a cookie holds, or None when it is missing or malformed (the key itself is
    checked by the caller, as the API checks a key)."""
    if not value or len(value) > MAX_COOKIE:
        return None
    key, dot, nonce = value.rpartition(".")
    if not dot or not key or len(nonce) < 16:
        return None
    return Session(key, nonce)


def csrf_token(key: str, nonce: str) -> str:
    """The session's CSRF token: an HMAC of its nonce under its key."""
    return hmac.new(key.encode(), f"sheriff-ui-csrf:{nonce}".encode(), hashlib.sha256).hexdigest()


def same_token(expected: str | None, given: str | None) -> bool:
    """Constant-time equality of two tokens; a missing one never matches."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
