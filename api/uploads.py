"""Uploads: the body spooled as it arrives (never held whole in memory), and one import at a
time per namespace in this process.

``receive_import`` is the life of one upload, the same for every import route: the namespace's
slot, the body spooled, then the route's work in the background. ``in_background`` runs an import's parsing, planning, embedding and writing in a thread of its
own at a lower CPU priority (``SHERIFF_IMPORT_NICENESS``), so the kernel serves the other
tenants' requests first while an import keeps a core busy (its embeddings above all).

``spool_body`` copies the request stream into a temporary file that stays in memory up to
``SPOOL_MEMORY_BYTES`` and moves to disk past it; the size limit is enforced while the stream is
read (api/limits.py raises ``PayloadTooLarge`` on the chunk that passes it). ``ImportSlots``
refuses a second import of a namespace while one runs (409 before its body is read) and keeps
each running import's progress for ``GET /v1/import/status``. Across worker processes the
namespace's sleep lease, which an import holds while it writes, refuses the second one (409).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import IO, Literal, TypeVar

from pydantic import BaseModel
from starlette.requests import Request

from graph.errors import AlreadyRunning, ValidationFailed
from sleepwake.worker import lower_priority

SPOOL_MEMORY_BYTES = 1_048_576  # an upload larger than this goes to a temporary file
_BLANK = b" \t\r\n"

Phase = Literal["receiving", "validating", "writing"]
T = TypeVar("T")


class ImportStatus(BaseModel):
    """A namespace's import in this worker: whether one runs, its phase and progress."""

    running: bool
    phase: Phase | None = None
    received_bytes: int = 0
    written: int = 0  # records written so far
    total: int | None = None  # records to write, once planned


@contextmanager
def spooled() -> Iterator[IO[bytes]]:
    """A temporary file for one upload: in memory while small, on disk past that; removed at
    the end of the block."""
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES) as spool:
        yield spool


async def spool_body(request: Request, spool: IO[bytes], status: ImportStatus) -> None:
    """Copy the request body into ``spool`` chunk by chunk (rewound at the end); a body of
    nothing but whitespace is refused."""
    blank = True
    async for chunk in request.stream():
        spool.write(chunk)
        status.received_bytes += len(chunk)
        blank = blank and not chunk.strip(_BLANK)
    if blank:
        raise ValidationFailed("body: empty; send the file as the request body")
    spool.seek(0)


async def in_background(work: Callable[[], T], niceness: int) -> T:
    """``work()`` in a thread of its own whose CPU priority is lowered by ``niceness`` (Linux
    gives each thread its own; the shared worker threads are never reniced, as no thread can
    raise its priority again). The result, or the exception, comes back to the awaiting task;
    cancelled, that task still waits for the thread (as a worker thread is awaited), since the
    work reads the request's spool and holds the namespace's import slot."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.cancelled():
            outcome()

    def run() -> None:
        lower_priority(niceness, "an import")
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting request, whatever it is
            loop.call_soon_threadsafe(settle, partial(done.set_exception, exc))
            return
        loop.call_soon_threadsafe(settle, partial(done.set_result, result))

    threading.Thread(target=run, name="sheriff-import", daemon=True).start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:  # the work goes on with the spool and the slot: wait for it
        while not done.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([done])
        raise


async def receive_import(
    request: Request,
    slots: ImportSlots,
    namespace: str,
    phase: Phase,
    work: Callable[[IO[bytes], ImportStatus], T],
    niceness: int,
) -> T:
    """One upload into ``namespace``: its import slot claimed (409 while another runs, before
    the body is read), the body spooled, the status set to ``phase``, then ``work(spool,
    status)`` run ``in_background`` at ``niceness``; the slot and spool are released after."""
    with slots.claim(namespace) as status, spooled() as spool:
        await spool_body(request, spool, status)
        status.phase = phase
        return await in_background(partial(work, spool, status), niceness)


class ImportSlots:
    """At most one import per namespace, and at most ``limit`` in all, in this process
    (thread-safe), with its progress. The process-wide limit bounds what imports hold at once
    (each parses its file's records): many tenants' uploads cannot add up past it."""

    def __init__(self, limit: int = 2) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, ImportStatus] = {}
        self.limit = limit

    @contextmanager
    def claim(self, namespace: str) -> Iterator[ImportStatus]:
        """The namespace's slot for the block; ``AlreadyRunning`` (409) while another holds it."""
        with self._lock:
            other = self._running.get(namespace)
            if other is not None:
                why = f"an import into this namespace is already running ({_describe(other)})"
                raise AlreadyRunning(why + "; retry when it has finished")
            if len(self._running) >= self.limit:
                raise AlreadyRunning(
                    f"this server is running as many imports as it takes at once ({self.limit});"
                    " retry shortly"
                )
            status = self._running[namespace] = ImportStatus(running=True, phase="receiving")
        try:
            yield status
        finally:
            with self._lock:
                del self._running[namespace]

    def status(self, namespace: str) -> ImportStatus:
        """A copy of the namespace's running import, or ``running: false``."""
        with self._lock:
            status = self._running.get(namespace)
            return status.model_copy() if status is not None else ImportStatus(running=False)


def progress_of(status: ImportStatus) -> Callable[[int, int], None]:
    """The importer's progress callback, recorded in ``status``."""

    def update(written: int, total: int) -> None:
        status.phase, status.written, status.total = "writing", written, total

    return update


def _describe(status: ImportStatus) -> str:
    if status.phase == "writing":
        return f"{status.written} of {status.total} records written"
    return f"{status.phase}, {status.received_bytes} bytes received"
