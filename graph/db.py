"""Driver lifecycle: one driver per process, built by the composition root and passed to stores."""

from __future__ import annotations

import functools
import inspect
import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Record,
)
from neo4j.exceptions import (
    AuthError,
    ConnectionPoolError,
    ConstraintError,
    DatabaseUnavailable,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graph.errors import (
    Conflict,
    Contended,
    DatabaseFailed,
    Neo4jUnavailable,
    SheriffError,
)
from graph.redaction import DEFAULT, Redactor

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Timeouts:
    """How long the driver may wait before a request fails (seconds). The driver's own defaults
    (60 s to get a connection, 30 s of transaction retries) made a request hang half a minute or
    more while Neo4j was down; with these, it fails in a few seconds (503) and the client retries.

    - ``connect``: TCP connect and Bolt handshake of one new connection.
    - ``acquire``: waiting for a connection from the pool, creating one included.
    - ``retry``: how long a failed transaction (server gone, leader switch, deadlock) is retried;
      the driver's back-off (1 s, 2 s, ...) means a dead server is given up after ~1.5x this."""

    connect: float = 2.0
    acquire: float = 3.0
    retry: float = 1.0


def connect(uri: str, user: str, password: str, timeouts: Timeouts | None = None) -> Driver:
    """Open a driver and check that the server answers; raise ``Neo4jUnavailable`` if not.
    The driver reconnects by itself when a server that went away comes back."""
    t = timeouts or Timeouts()
    driver = GraphDatabase.driver(
        uri,
        auth=(user, password),
        connection_timeout=t.connect,
        connection_acquisition_timeout=t.acquire,
        max_transaction_retry_time=t.retry,
        max_connection_pool_size=50,
        notifications_min_severity="OFF",
    )
    try:
        driver.verify_connectivity()
    except (Neo4jError, DriverError, OSError) as exc:
        driver.close()
        raise Neo4jUnavailable(f"cannot reach Neo4j at {uri}: {exc}") from exc
    return driver


_SERVER_INFO = (
    "CALL dbms.components() YIELD name, versions, edition WHERE name = 'Neo4j Kernel' "
    "RETURN name, versions[0] AS version, edition"
)
_INDEX_STATES = (
    "SHOW INDEXES YIELD name, type, state, populationPercent "
    "RETURN name, type, state, populationPercent ORDER BY name"
)


def server_info(driver: Driver, database: str = "neo4j") -> dict[str, Any]:
    """Version and edition of the server, as reported by ``dbms.components()``."""
    records, _, _ = driver.execute_query(_SERVER_INFO, database_=database, routing_="r")
    return dict(records[0])


def index_states(driver: Driver, database: str = "neo4j") -> list[dict[str, Any]]:
    """Name, type, state and population of every index (for health and diagnostics)."""
    records, _, _ = driver.execute_query(_INDEX_STATES, database_=database, routing_="r")
    return [dict(r) for r in records]


def health_check(driver: Driver, database: str = "neo4j") -> tuple[dict[str, Any], list[Any]]:
    """(server info, index states) in one session and without the driver's retries: a health
    probe must answer "down" in a connection timeout, not after the transaction retry time.
    Raises the product's errors (``translate``)."""
    with driver_errors(), driver.session(database=database, default_access_mode="READ") as session:
        server = dict(session.run(_SERVER_INFO).single(strict=True))
        indexes = [dict(r) for r in session.run(_INDEX_STATES)]
    return server, indexes


class _QuietList(list[Any]):
    """A list parameter that the driver's debug line shows as its size (``quiet``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


class _QuietMap(dict[str, Any]):
    """A map parameter that the driver's debug line shows as its size (``quiet``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<map of {len(self)}>"


def quiet(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every list and map value in a subclass whose ``repr`` is its size. The
    driver formats each RUN's parameters for its debug log line before it knows whether debug
    logging is on (``Bolt5x5.run``: ``" ".join(map(repr, fields))``), so a query vector's 384
    floats were turned into text on every search: ~0.2 ms a query, ~1.2 ms of a context
    request's CPU (docs/performance.md, tenth pass). The values are packed as before (the
    packer takes list and dict subclasses); a debug log shows sizes instead of the values (it
    showed them whole, secrets included, before)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, (list, tuple)):
            value = _QuietList(value)
        elif isinstance(value, dict):
            value = _QuietMap(value)
        out[key] = value
    return out


def iso(value: datetime | None) -> str | None:
    """A datetime parameter as ISO text, for a query that reads it as ``datetime($name)``
    (null stays null). The driver converts a ``datetime`` parameter in pure Python (its
    ``dehydrate_datetime``, ~0.1-0.2 ms each); Neo4j parses the text for a few microseconds.
    Used by the queries every context request runs (docs/performance.md, tenth pass)."""
    return None if value is None else value.isoformat()


@dataclass(frozen=True)
class Retry:
    """How a query Neo4j refused as transient (a deadlock, a lock it could not grant: rolled
    back, so running it again is safe) is run again: after a pause of ``first`` seconds doubled
    each time up to ``cap``, scaled by a random factor in [0.5, 1.5) so that the two sides of a
    deadlock do not meet again, for as long as a retry still starts within ``window`` seconds of
    the first attempt. The window sits well inside a request's deadline budget (api/deadline.py,
    3 s) and is the driver's default retry time (``Timeouts.retry``). A read that lost its
    connection is retried the same way (a refused connection: ~6 tries in the second). Time is
    injected."""

    window: float = 1.0
    first: float = 0.02
    cap: float = 0.25
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    jitter: Callable[[], float] = field(default=random.random, repr=False)

    def pause(self, attempt: int) -> float:
        """The pause before retry ``attempt`` + 1 (attempt 0: the first retry)."""
        return min(self.cap, self.first * 2.0**attempt) * (0.5 + self.jitter())


RETRY = Retry()


def translate(exc: Exception) -> SheriffError:
    """The product's error for a driver exception (the one table; graph/errors.py): a 503 kind
    (``Neo4jUnavailable``) only when the database cannot be reached or used, its message saying
    which; a transient refusal that outlived its retries is ``Contended``; a constraint
    violation a ``Conflict``; anything else ``DatabaseFailed``. Neo4j's own message (which may
    quote stored values) stays in the exception chain for the server log, not in the text."""
    if isinstance(exc, SheriffError):
        return exc
    code = str(getattr(exc, "code", None) or type(exc).__name__)
    if isinstance(exc, IncompleteCommit):
        why = "the connection was lost while a write committed; whether it was applied is unknown"
    elif isinstance(exc, ServiceUnavailable):
        why = "no connection to it could be opened, or it was lost"
    elif isinstance(exc, SessionExpired):
        why = "the connection to it was lost"
    elif isinstance(exc, ConnectionPoolError):
        why = "no connection to it within the pool's wait (it does not answer, or all are busy)"
    elif isinstance(exc, DatabaseUnavailable):
        why = "it is not available (starting, stopping or offline)"
    elif isinstance(exc, TransientError):
        return Contended(
            f"the database refused the work for now ({code}) and retries did not get it "
            "through; nothing was written, retry",
            code=code,
        )
    elif isinstance(exc, ConstraintError):
        return Conflict(f"the write conflicts with a stored record ({code})")
    elif isinstance(exc, AuthError):
        return DatabaseFailed(f"the database refused the server's credentials ({code})", code=code)
    else:
        return DatabaseFailed(f"the database refused the query ({code})", code=code)
    return Neo4jUnavailable(f"the database is not reachable: {why}")


@contextmanager
def driver_errors() -> Iterator[None]:
    """Raise the product's error (``translate``) for a driver exception raised inside."""
    try:
        yield
    except (Neo4jError, DriverError) as exc:
        raise translate(exc) from exc


def read_query(
    driver: Driver, database: str, text: str, params: dict[str, Any], retry: Retry | None = None
) -> list[Record]:
    """One read as an auto-commit transaction in a read session: RUN and PULL in one network
    round trip, where ``execute_query``'s managed transaction adds BEGIN and a COMMIT of its
    own (0.41 against 0.58 ms a small read, 0.21 against 0.33 ms of this process's CPU;
    docs/performance.md, eleventh pass). It shares ``execute_query``'s bookmarks (a read sees
    every write this driver made before it) and is retried (``retry``, default ``RETRY``), as
    ``execute_query`` retries, when the error says a retry may succeed (a read changes
    nothing, so running it again is safe)."""
    return _auto_commit(
        driver, database, text, params, READ_ACCESS, (Neo4jError, DriverError), retry
    )


def write_query(
    driver: Driver, database: str, text: str, params: dict[str, Any], retry: Retry | None = None
) -> list[Record]:
    """One write as an auto-commit transaction in a write session: RUN and PULL, and Neo4j
    commits before it answers the PULL (a commit that fails is that answer's error, so the
    records are returned only once the write is durable). One network round trip where
    ``execute_query`` sends BEGIN, RUN and PULL, then COMMIT (1.27 against 1.43 ms p50, 1.41
    against 1.80 ms mean, the context's write with a 256-entry session, 360 each alternated;
    docs/performance.md, twelfth pass). It shares ``execute_query``'s bookmarks (the next read
    sees it). Retried (``retry``, default ``RETRY``) only when Neo4j refused it as transient (a
    deadlock, a lock it could not get: the transaction was rolled back, so running it again is
    safe); a connection lost on the way is not retried, since the write may have been
    committed (``execute_query`` would not know either once COMMIT was sent)."""
    return _auto_commit(driver, database, text, params, WRITE_ACCESS, (Neo4jError,), retry)


def _auto_commit(
    driver: Driver,
    database: str,
    text: str,
    params: dict[str, Any],
    access: str,
    retried: tuple[type[Neo4jError | DriverError], ...],
    retry: Retry | None,
) -> list[Record]:
    """``text`` as an auto-commit transaction in an ``access`` session with the driver's
    bookmarks, run again (``retry``: backing off, within its window) after an error of a
    ``retried`` kind that says a retry may succeed; each retry is logged with the error's code
    (a deadlock that was retried away still shows in the log)."""
    retry = retry or RETRY
    started, attempt = retry.clock(), 0
    while True:
        try:
            with driver.session(
                database=database,
                bookmark_manager=driver.execute_query_bookmark_manager,
                default_access_mode=access,
            ) as session:
                return list(session.run(text, params))
        except retried as exc:
            pause = retry.pause(attempt)
            if not exc.is_retryable() or retry.clock() - started + pause > retry.window:
                raise
            code = getattr(exc, "code", None) or type(exc).__name__
            log.warning("%s query retried after %s (retry %d, in %.0f ms)", access.lower(),
                        code, attempt + 1, 1000 * pause)  # fmt: skip
            retry.sleep(pause)
            attempt += 1


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` raising the product's errors instead of the driver's (``driver_errors``);
    a generator's are translated while it is iterated."""
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def generate(*args: Any, **kwargs: Any) -> Any:
            with driver_errors():
                return (yield from method(*args, **kwargs))

        return generate

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        with driver_errors():
            return method(*args, **kwargs)

    return call


class Store:
    """Base of the per-aggregate stores: holds the driver (never creates one) and runs queries.
    Stores redact every text they write with ``redactor`` (the built-in secret shapes unless the
    composition root passes one with the operator's patterns).

    Every public method of a store raises the product's errors, never the driver's: each is
    wrapped in ``driver_errors`` when the subclass is defined (a method may still catch a
    driver exception of its own query, e.g. ``ConstraintError``, to say what it means)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, member in list(vars(cls).items()):
            if not name.startswith("_") and inspect.isfunction(member):
                setattr(cls, name, _translating(member))

    def __init__(
        self, driver: Driver, database: str = "neo4j", *, redactor: Redactor | None = None
    ) -> None:
        self._driver = driver
        self._db = database
        self.redactor = redactor or DEFAULT

    def _run(
        self, text: str, params: dict[str, Any], *, read: bool = False, once: bool = False
    ) -> list[Record]:
        """One query in its own transaction: a write through ``execute_query`` (a managed
        transaction, retried on transient errors), or as an auto-commit transaction
        (``once``: ``write_query``, the context's write on every request), a read (``read``)
        as ``read_query`` runs it."""
        if read:
            return read_query(self._driver, self._db, text, quiet(params))
        if once:
            return write_query(self._driver, self._db, text, quiet(params))
        records, _, _ = self._driver.execute_query(
            text, parameters_=quiet(params), database_=self._db, routing_="w"
        )
        return list(records)

    def _read_ids(
        self, text: str, namespace: str, key: str, ids: Sequence[str], **extra: Any
    ) -> list[Record]:
        """The records of read ``text`` for ``ids`` (its ``$key``, plus ``extra``) in
        ``namespace``; no round trip when ``ids`` is empty."""
        if not ids:
            return []
        return self._run(text, {"namespace": namespace, key: list(ids), **extra}, read=True)

    def _read_tx(self, work: Callable[[ManagedTransaction], T]) -> T:
        """Run ``work`` (several reads) in ONE read transaction: one begin and one commit
        instead of one of each per query, and one consistent snapshot. The session shares
        ``execute_query``'s bookmarks, so it sees every write made before it."""
        bookmarks = self._driver.execute_query_bookmark_manager
        with self._driver.session(
            database=self._db, bookmark_manager=bookmarks, default_access_mode=READ_ACCESS
        ) as session:
            return session.execute_read(work)


def drop_namespace(driver: Driver, namespace: str, database: str = "neo4j") -> None:
    """Delete every node of ``namespace``, API keys included (demo and evaluation namespaces; a
    user forgets through ``service.forget``, which keeps the keys, revoked). Batched, so it runs
    as an auto-commit transaction."""
    from graph.cypher import query

    with driver_errors(), driver.session(database=database) as session:
        session.run(query("delete_namespace"), namespace=namespace).consume()
