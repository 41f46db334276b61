"""The ids an import gives records: derived from the namespace and a server secret.

An id in an import file is kept only when the importing namespace already holds it (re-importing
its own export changes nothing). Every other id is replaced by an HMAC of the namespace, the kind
and the id under the server's import key, so:

- nobody can compute another namespace's remapped ids, hence nobody can claim them first (a
  tenant who knew them could make a victim's import of a shared file refuse every record);
- whether an id is remapped depends on the importing namespace alone, never on whether the id
  exists elsewhere: no answer (a dry run's ``remapped_ids`` included) reveals another namespace's
  ids;
- importing the same file into the same namespace again derives the same ids (idempotent).

The key is 32 random bytes in ``<home>/import-id.key`` (created on first use, mode 0600), shared
by every worker of the server: keep it with the home folder, or a re-import after a move creates
the records again under new ids.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_FILE = "import-id.key"
KEY_BYTES = 32


def server_key(home: Path) -> bytes:
    """The server's import key, created if missing: written whole to a temporary file, then
    linked into place (atomic: a worker never reads half a key, and two workers starting
    together agree on the first one linked)."""
    path = home / KEY_FILE
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        tmp = home / f".{KEY_FILE}.{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(KEY_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
            os.link(tmp, path)
        except FileExistsError:
            pass  # another worker linked its key first: use that one
        finally:
            tmp.unlink(missing_ok=True)
    key = path.read_bytes()
    if len(key) < KEY_BYTES:
        raise RuntimeError(f"{path}: the import key is shorter than {KEY_BYTES} bytes")
    return key


def derived_id(key: bytes, namespace: str, kind: str, old_id: str) -> str:
    """The id ``old_id`` of a ``kind`` record gets in ``namespace`` (128 bits, hex)."""
    message = "\x1f".join(("import", namespace, kind, old_id)).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
