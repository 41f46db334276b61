"""API-key authentication: a key maps to exactly one namespace.

``ApiKeys`` wraps the ``ApiKeyStore`` with a short in-process cache, so authenticating a request
does not cost a Neo4j round trip every time. Revoking through ``ApiKeys`` drops the key from this
process's cache at once; a key revoked by another process (``sheriff keys revoke``) stops working
here within the cache TTL (``SHERIFF_API_KEY_CACHE_SECONDS``, default 30 s; 0 disables the cache).
Unknown keys are never cached, so a key created by the CLI works on its first request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from graph.clock import Clock
from graph.errors import SheriffError
from graph.keys import ApiKey, ApiKeyStore, hash_key, looks_like_key
from graph.ttl_cache import TtlCache

if TYPE_CHECKING:
    from api.container import Container

AuthReason = Literal["missing", "malformed", "unknown", "revoked"]

_MESSAGES: dict[AuthReason, str] = {
    "missing": "no API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
    "malformed": "the API key is malformed (expected 'shc_' followed by 43 characters)",
    "unknown": "the API key is not known",
    "revoked": "the API key has been revoked",
}


class AuthFailed(SheriffError):
    """The request carries no usable API key (HTTP 401)."""

    def __init__(self, reason: AuthReason) -> None:
        self.reason: AuthReason = reason
        super().__init__(_MESSAGES[reason])


class KeyCache:
    """The stored keys by hash, each kept ``ttl_s`` seconds (thread-safe; the least recently
    used goes first when full; a ``ttl_s`` of zero or less keeps nothing): ``graph/ttl_cache.py``."""

    def __init__(self, ttl_s: float, max_entries: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: TtlCache[str, ApiKey] = TtlCache(ttl_s, max_entries)

    def get(self, key_hash: str) -> ApiKey | None:
        return self._entries.get(key_hash)

    def put(self, record: ApiKey) -> None:
        self._entries.put(record.key_hash, record)

    def drop(self, key_hash: str) -> None:
        self._entries.drop(key_hash)


class ApiKeys:
    """Create, list, revoke and check API keys."""

    def __init__(
        self,
        store: ApiKeyStore,
        clock: Clock,
        ttl_s: float = 30.0,
        observe: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.cache = KeyCache(ttl_s)
        self.observe = observe  # called with "hit" or "miss" (metrics)

    def authenticate(self, key: str | None) -> ApiKey:
        """The live key record for ``key``; ``AuthFailed`` says why when there is none."""
        record = self.from_cache(key)
        if record is not None:
            return record
        assert key is not None  # from_cache refused a missing key
        return self.from_store(key)

    def from_cache(self, key: str | None) -> ApiKey | None:
        """The live key record for ``key`` when this process's cache holds it, else None (then
        :meth:`from_store` answers); ``AuthFailed`` for a missing, malformed or revoked key. No
        I/O, so the server checks a cached key on its event loop without a thread hand-off."""
        if not key:
            raise AuthFailed("missing")
        if not looks_like_key(key):
            raise AuthFailed("malformed")
        record = self.cache.get(hash_key(key))
        self._observe("hit" if record is not None else "miss")
        if record is not None and record.revoked:
            raise AuthFailed("revoked")
        return record

    def from_store(self, key: str) -> ApiKey:
        """The live key record for ``key`` read from the store (one round trip), then cached;
        ``AuthFailed`` when it is unknown or revoked."""
        record = self.store.find(key)
        if record is None:
            raise AuthFailed("unknown")
        self.cache.put(record)
        if record.revoked:
            raise AuthFailed("revoked")
        return record

    def create(self, namespace: str, label: str | None = None) -> tuple[ApiKey, str]:
        """A new key for ``namespace``: the record and the key (shown once)."""
        return self.store.create(namespace, label, self.clock.now())

    def list_keys(self, namespace: str | None = None, include_revoked: bool = True) -> list[ApiKey]:
        return self.store.list_keys(namespace, include_revoked)

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key; it stops working in this process immediately."""
        record = self.store.revoke(key_id, self.clock.now())
        self.cache.drop(record.key_hash)
        return record

    def revoke_namespace(self, namespace: str) -> list[ApiKey]:
        """Revoke every key of ``namespace``; they stop working in this process immediately."""
        records = self.store.revoke_namespace(namespace, self.clock.now())
        for record in records:
            self.cache.drop(record.key_hash)
        return records

    def _observe(self, outcome: str) -> None:
        if self.observe is not None:
            self.observe(outcome)


def api_keys_for(container: Container, observe: Callable[[str], None] | None = None) -> ApiKeys:
    """The key service over the container's driver, with the configured cache TTL."""
    store = ApiKeyStore(container.driver, container.settings.neo4j_database)
    return ApiKeys(store, container.clock, container.settings.api_key_cache_seconds, observe)
