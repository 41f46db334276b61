"""Exceptions raised by Sheriff Claw.

Hierarchy (one root, so callers can catch everything the product raises)::

    SheriffError
    ├── ValidationFailed      bad input, refused before it reaches Neo4j (HTTP 422)
    ├── NotFound              an id that does not exist in the caller's namespace (HTTP 404)
    ├── VersionConflict       optimistic-concurrency check failed; re-read and retry (HTTP 409)
    ├── Conflict              the input contradicts what is stored, e.g. a message older than
    │   │                     the conversation's newest one (HTTP 409)
    │   └── Contended         a transient refusal by Neo4j (a deadlock, a lock not granted)
    │                         still there when the retries ran out (HTTP 409, Retry-After)
    ├── AlreadyRunning        a lease is held by another worker, e.g. "already sleeping" (HTTP 409)
    │   └── LeaseLost         a sleep's lease expired and was taken over before it committed
    ├── Neo4jUnavailable      the database cannot be reached or did not start (HTTP 503); its
    │                         message says which: refused, lost, not available, no connection
    ├── DatabaseFailed        Neo4j refused a query for any other reason: a bug or a limit, not
    │                         an outage (HTTP 500; the server log has the driver's message)
    └── EmbeddingUnavailable  the embedding model cannot be loaded (HTTP 503)

Driver exceptions (``neo4j.exceptions``) never leave ``graph/``: every store method, the health
check and the driver's start-up raise these instead (``graph.db.translate`` is the one table).
"""

from __future__ import annotations


class SheriffError(Exception):
    """Root of every error the product raises on purpose.

    ``field`` optionally names the input at fault (``"body.messages.3.at"``), so the API can
    point at it the way it points at schema errors."""

    field: str | None = None

    def __init__(self, message: str = "", *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ValidationFailed(SheriffError):
    """Input was refused before anything was written."""


class NotFound(SheriffError):
    """The requested object does not exist in this namespace."""


class VersionConflict(SheriffError):
    """Someone else updated the record since it was read."""


class Conflict(SheriffError):
    """The input is well-formed but contradicts what is stored; nothing was written."""


class AlreadyRunning(SheriffError):
    """Another worker holds the lease for this job."""


class LeaseLost(AlreadyRunning):
    """A sleep's lease was taken over (its heartbeat stopped); it committed nothing."""


class Contended(Conflict):
    """Neo4j refused the work as transient (a deadlock with a concurrent transaction, a lock it
    could not grant) and retrying within the time allowed did not get it through; nothing was
    written. ``code`` is Neo4j's status code."""

    def __init__(self, message: str = "", *, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class Neo4jUnavailable(SheriffError):
    """Neo4j could not be reached, started or configured."""


class DatabaseFailed(SheriffError):
    """Neo4j (or the driver) refused a query for a reason no retry mends: a query the product
    should not have sent, a limit of the server. ``code`` is Neo4j's status code (or the
    driver's exception name)."""

    def __init__(self, message: str = "", *, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class EmbeddingUnavailable(SheriffError):
    """The embedding model could not be loaded or used."""
