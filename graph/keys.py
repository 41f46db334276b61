"""ApiKeyStore: API keys as ``:ApiKey`` nodes, each mapping one key to one namespace.

Only the SHA-256 hash of a key is stored (keys are 256 random bits, so a fast hash is enough:
there is nothing to brute-force). A key is shown once, when it is created; afterwards it is
known by its public ``key_id`` and a short ``prefix`` that helps a person recognise it.
Revocation is a flag, never a delete, so the audit trail stays.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime
from typing import Annotated, Any

from neo4j.exceptions import ConstraintError
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from graph.clock import ensure_utc
from graph.cypher import query
from graph.db import Store
from graph.errors import NotFound, ValidationFailed
from graph.mapping import native
from graph.models import Namespace, UtcDatetime, parse

KEY_PREFIX = "shc_"
KEY_PATTERN = re.compile(r"^shc_[A-Za-z0-9_-]{43}$")  # prefix + token_urlsafe(32)
SHOWN_CHARS = 12  # "shc_" + 8 random characters: enough to recognise, far too few to guess

Label = Annotated[str, StringConstraints(max_length=200, strip_whitespace=True)]


class ApiKey(BaseModel):
    """A stored key: everything except the key itself."""

    model_config = ConfigDict(extra="forbid")

    key_id: str = Field(min_length=1, max_length=64)
    key_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    prefix: str = Field(max_length=SHOWN_CHARS)
    namespace: Namespace
    label: Label | None = None
    created_at: UtcDatetime
    revoked: bool = False
    revoked_at: UtcDatetime | None = None


def new_key() -> str:
    """A fresh random API key (shown to its owner once)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    """The SHA-256 hex digest under which a key is stored and looked up."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def looks_like_key(value: str) -> bool:
    """Cheap shape check, so garbage is refused without a database round trip."""
    return bool(KEY_PATTERN.match(value))


class ApiKeyStore(Store):
    def create(self, namespace: str, label: str | None, now: datetime) -> tuple[ApiKey, str]:
        """Create a key for ``namespace``; returns the stored record and the key itself."""
        key = new_key()
        record = parse(
            ApiKey,
            {
                "key_id": "key_" + secrets.token_hex(8),
                "key_hash": hash_key(key),
                "prefix": key[:SHOWN_CHARS],
                "namespace": namespace,
                "label": label or None,
                "created_at": ensure_utc(now),
            },
        )
        try:
            self._run(query("create_api_key"), {"props": record.model_dump()})
        except ConstraintError as exc:  # 2^-64 per key id; say so rather than fail obscurely
            raise ValidationFailed(f"key id collision, try again: {exc}") from exc
        return record, key

    def find(self, key: str) -> ApiKey | None:
        """The record of a presented key (revoked or not), or None when it is unknown."""
        records = self._run(query("find_api_key"), {"key_hash": hash_key(key)}, read=True)
        return _from_props(records[0]["k"]) if records else None

    def list_keys(self, namespace: str | None = None, include_revoked: bool = True) -> list[ApiKey]:
        """Keys, newest first, optionally of one namespace."""
        records = self._run(
            query("list_api_keys"),
            {"namespace": namespace, "include_revoked": include_revoked},
            read=True,
        )
        return [_from_props(r["k"]) for r in records]

    def revoke(self, key_id: str, now: datetime) -> ApiKey:
        """Revoke a key by its id; ``NotFound`` when there is no such key."""
        records = self._run(query("revoke_api_key"), {"key_id": key_id, "now": ensure_utc(now)})
        if not records:
            raise NotFound(f"no API key with id {key_id!r}")
        return _from_props(records[0]["k"])

    def revoke_namespace(self, namespace: str, now: datetime) -> list[ApiKey]:
        """Revoke every key of ``namespace`` (idempotent); returns them all."""
        records = self._run(
            query("revoke_namespace_keys"), {"namespace": namespace, "now": ensure_utc(now)}
        )
        return [_from_props(r["k"]) for r in records]


def _from_props(props: dict[str, Any]) -> ApiKey:
    return ApiKey.model_validate({k: native(v) for k, v in props.items()})
