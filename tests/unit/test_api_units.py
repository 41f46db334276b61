"""The API's pure parts, without Neo4j: the body limit middleware on a bare ASGI app, the key
cache and authentication against an in-memory store, route templates for metrics, and the
input schemas' refusals."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from api.auth import ApiKeys, AuthFailed, KeyCache
from api.limits import BodyLimitMiddleware
from api.metrics import UNMATCHED, _route_template
from api.schemas import ContextCreate, MessageCreate, SkillRunCreate, TopicCreate
from graph.clock import FixedClock
from graph.keys import ApiKey, hash_key, looks_like_key, new_key

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


# -- body limit -----------------------------------------------------------------------------------
async def _echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def _call(
    chunks: list[bytes], headers: list[tuple[bytes, bytes]], limit: int
) -> list[dict[str, Any]]:
    incoming = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    asyncio.run(BodyLimitMiddleware(_echo, limit)(scope, receive, send))
    return sent


def test_bodies_within_the_limit_reach_the_app_whole() -> None:
    sent = _call([b"abc", b"def", b"gh"], [], limit=8)
    assert sent[0]["status"] == 200 and sent[1]["body"] == b"abcdefgh"


def test_a_chunked_body_over_the_limit_is_413_and_never_reaches_the_app() -> None:
    sent = _call([b"abc", b"def", b"ghi"], [], limit=8)
    assert sent[0]["status"] == 413
    assert b"PayloadTooLarge" in sent[1]["body"]


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    sent = _call([b"a"], [(b"content-length", b"100")], limit=8)
    assert sent[0]["status"] == 413 and b"Content-Length 100" in sent[1]["body"]


# -- keys -----------------------------------------------------------------------------------------
class MemoryKeyStore:
    """The ApiKeyStore surface ApiKeys uses, in memory."""

    def __init__(self) -> None:
        self.by_hash: dict[str, ApiKey] = {}
        self.finds = 0

    def create(self, namespace: str, label: str | None, now: datetime) -> tuple[ApiKey, str]:
        key = new_key()
        record = ApiKey(key_id=f"key_{len(self.by_hash)}", key_hash=hash_key(key),
                        prefix=key[:12], namespace=namespace, label=label, created_at=now)  # fmt: skip
        self.by_hash[record.key_hash] = record
        return record, key

    def find(self, key: str) -> ApiKey | None:
        self.finds += 1
        return self.by_hash.get(hash_key(key))

    def revoke(self, key_id: str, now: datetime) -> ApiKey:
        [record] = [r for r in self.by_hash.values() if r.key_id == key_id]
        revoked = record.model_copy(update={"revoked": True, "revoked_at": now})
        self.by_hash[record.key_hash] = revoked
        return revoked


def _keys(ttl: float = 30.0) -> tuple[ApiKeys, MemoryKeyStore]:
    store = MemoryKeyStore()
    return ApiKeys(store, FixedClock(T0), ttl), store  # type: ignore[arg-type]


def test_keys_have_the_documented_shape_and_only_the_hash_is_kept() -> None:
    keys, store = _keys()
    record, key = keys.create("ns-a", "laptop")
    assert looks_like_key(key) and len(key) == 47 and record.prefix == key[:12]
    assert key not in repr(store.by_hash) and record.key_hash == hash_key(key)
    assert keys.authenticate(key).namespace == "ns-a"


@pytest.mark.parametrize(
    ("key", "reason"),
    [(None, "missing"), ("", "missing"), ("Bearer x", "malformed"), ("shc_" + "A" * 43, "unknown")],
)
def test_unusable_keys_say_why(key: str | None, reason: str) -> None:
    keys, store = _keys()
    with pytest.raises(AuthFailed) as failed:
        keys.authenticate(key)
    assert failed.value.reason == reason
    assert store.finds == (1 if reason == "unknown" else 0)


def test_the_cache_saves_lookups_and_revocation_drops_it() -> None:
    keys, store = _keys()
    record, key = keys.create("ns-a")
    for _ in range(3):
        keys.authenticate(key)
    assert store.finds == 1
    keys.revoke(record.key_id)
    with pytest.raises(AuthFailed, match="revoked"):
        keys.authenticate(key)


def test_the_cache_alone_answers_without_the_store_and_the_store_fills_it() -> None:
    """The server checks a cached key on its event loop (``from_cache``: no I/O) and reads an
    uncached one in a thread (``from_store``); a revoked key is refused either way."""
    keys, store = _keys()
    record, key = keys.create("ns-a")
    assert keys.from_cache(key) is None and store.finds == 0
    assert keys.from_store(key).namespace == "ns-a" and store.finds == 1
    assert keys.from_cache(key) == record and store.finds == 1
    store.revoke(record.key_id, T0)  # another process: this cache still holds the live record
    assert keys.from_cache(key) == record
    keys.cache.drop(record.key_hash)  # the entry expired
    with pytest.raises(AuthFailed, match="revoked"):
        keys.from_store(key)
    with pytest.raises(AuthFailed, match="revoked"):
        keys.from_cache(key)  # the revoked record is cached: refused without a lookup
    assert store.finds == 2
    for bad, reason in [(None, "missing"), ("x", "malformed")]:
        with pytest.raises(AuthFailed) as failed:
            keys.from_cache(bad)
        assert failed.value.reason == reason


def test_unknown_keys_are_not_cached_so_new_keys_work_at_once() -> None:
    keys, store = _keys()
    key = new_key()
    with pytest.raises(AuthFailed):
        keys.authenticate(key)
    store.by_hash[hash_key(key)] = ApiKey(key_id="key_x", key_hash=hash_key(key), prefix=key[:12],
                                          namespace="ns-b", created_at=T0)  # fmt: skip
    assert keys.authenticate(key).namespace == "ns-b"


def test_cache_entries_expire_and_a_zero_ttl_disables_it() -> None:
    record = ApiKey(key_id="k", key_hash="0" * 64, prefix="shc_", namespace="n", created_at=T0)
    expired = KeyCache(ttl_s=-1)
    expired.put(record)
    assert expired.get(record.key_hash) is None
    cache = KeyCache(ttl_s=60, max_entries=2)
    for i in range(3):
        cache.put(record.model_copy(update={"key_hash": f"{i}" * 64}))
    assert cache.get("0" * 64) is None and cache.get("2" * 64) is not None


# -- metrics --------------------------------------------------------------------------------------
class _Route:
    def __init__(self, path: str) -> None:
        self.path = path


@pytest.mark.parametrize(
    ("path", "template", "expected"),
    [
        ("/v1/topics/abc", "/topics/{topic_id}", "/v1/topics/{topic_id}"),
        ("/v1/topics/abc/links", "/topics/{topic_id}/links", "/v1/topics/{topic_id}/links"),
        ("/health", "/health", "/health"),
        ("/v1/messages", "/messages", "/v1/messages"),
    ],
)
def test_route_templates_keep_the_router_prefix(path: str, template: str, expected: str) -> None:
    assert _route_template({"path": path, "route": _Route(template)}) == expected


def test_unmatched_requests_share_one_label() -> None:
    assert _route_template({"path": "/nope/123"}) == UNMATCHED


# -- schemas --------------------------------------------------------------------------------------
def _fields(exc: ValidationError) -> set[str]:
    return {".".join(str(p) for p in e["loc"]) for e in exc.errors()}


def test_schemas_refuse_what_would_break_downstream() -> None:
    with pytest.raises(ValidationError) as bad:
        MessageCreate.model_validate(
            {"role": "user", "content": "\ud800", "at": "0001-01-01T00:00:00+14:00"}
        )
    assert _fields(bad.value) == {"content", "at"}
    with pytest.raises(ValidationError) as bad:
        SkillRunCreate.model_validate({"name": "Bad Name", "args": {"x": float("nan")}})
    assert _fields(bad.value) == {"name", "args"}
    with pytest.raises(ValidationError) as bad:
        TopicCreate.model_validate({"name": "x", "first_seen_at": "2026-03-02T00:00:00Z",
                                    "last_seen_at": "2026-03-01T00:00:00Z"})  # fmt: skip
    assert "first_seen_at must not be after last_seen_at" in str(bad.value)
    with pytest.raises(ValidationError) as bad:
        TopicCreate.model_validate({"name": "x", "numbers": [{"key": "k", "value": "Infinity",
                                                              "at": "2026-03-01T00:00:00Z"}]})  # fmt: skip
    assert _fields(bad.value) == {"numbers.0.value"}
    assert ContextCreate.model_validate({"message": "hi"}).budget == 1000


@pytest.mark.parametrize("value", [0, 338872, "0.0", " 1700000000 ", "1e9"])
def test_timestamps_must_be_iso_text_not_unix_numbers(value: object) -> None:
    with pytest.raises(ValidationError, match="ISO-8601"):
        ContextCreate.model_validate({"message": "hi", "now": value})
    ok = ContextCreate.model_validate({"message": "hi", "now": "2026-03-02T09:00:00+01:00"})
    assert ok.now == datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
