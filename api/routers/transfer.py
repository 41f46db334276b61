"""Export and import: ``GET /v1/export`` (JSON Lines, streamed), ``POST /v1/import`` and
``POST /v1/import/chatgpt``.

Uploads are the request body itself (the document, not a form); they may be larger than the
general body limit, up to ``SHERIFF_API_MAX_IMPORT_BYTES``, enforced while the body streams into
a spool (memory, then a temporary file: api/uploads.py); the key was checked before any of it
was read (api/keygate.py). One import per namespace at a time (409 for a second, before its
body is read); ``GET /v1/import/status`` shows the running one's progress. Parsing and writing
run in a thread of their own at a lower CPU priority, never on the event loop: a first pass
over the spool validates the whole file keeping nothing but its ids, a second parses it for
the plan, which is written in bounded batches. The namespace is always the key's, whatever the file
says. See ``service.export``, ``service.importer`` and ``service.chatgpt``.
"""

from __future__ import annotations

from typing import IO, Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from api.deps import ChatGPTDep, ExportDep, ImportDep, ImportSlotsDep, NamespaceDep
from api.routers.common import NOT_RETRY_SAFE, errors
from api.uploads import ImportStatus, progress_of, receive_import
from service.chatgpt import ChatGPTReport, read_history
from service.import_pacing import iter_lines
from service.import_plan import ImportReport
from service.importer import parse_document

router = APIRouter(tags=["export and import"])

IMPORT_PATHS = ("/v1/import", "/v1/import/chatgpt")
DryRun = Annotated[bool, Query(description="report what would happen; write nothing")]


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}},
                     "description": "the namespace as JSON Lines (docs/export.md)"}},
)  # fmt: skip
def export(
    exporter: ExportDep,
    ns: NamespaceDep,
    vectors: Annotated[bool, Query(description="include topic and event vectors")] = False,
) -> StreamingResponse:
    """Stream your namespace: header, messages, topics (with facts and validity), events,
    edges, wake packets, skill runs, end. Versioned: docs/export-schema.json."""
    name = f"sheriff-{ns}.jsonl"
    return StreamingResponse(
        exporter.lines(ns, vectors=vectors),  # a sync iterator: Starlette runs it in a thread
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


NDJSON_BODY = {
    "requestBody": {
        "required": True,
        "description": "the export document (JSON Lines; docs/export-schema.json per line)",
        "content": {
            "application/x-ndjson": {"schema": {"type": "string"}},
            "text/plain": {"schema": {"type": "string"}},
        },
    }
}
CHATGPT_BODY = {
    "requestBody": {
        "required": True,
        "description": "conversations.json of a ChatGPT data export",
        "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}},
    }
}


@router.post(  # a large upload, written in batches
    "/import",
    responses=errors(409, 413),
    openapi_extra=NDJSON_BODY,
    dependencies=NOT_RETRY_SAFE,
)
async def import_document(
    request: Request,
    importer: ImportDep,
    slots: ImportSlotsDep,
    ns: NamespaceDep,
    dry_run: DryRun = False,
) -> ImportReport:
    """Import an export document into your namespace (idempotent by ids): each record is
    created, merged, unchanged or refused (with the reason). The body is the JSON Lines file.
    Written in batches: an import cut off half-way is completed by sending the file again."""

    def work(spool: IO[bytes], status: ImportStatus) -> ImportReport:
        parse_document(iter_lines(spool), keep=False)  # the whole file valid, nothing kept
        spool.seek(0)
        doc = parse_document(iter_lines(spool))  # the second pass, for the plan and writes
        return importer.run(ns, doc, dry_run=dry_run, progress=progress_of(status))

    return await receive_import(request, slots, ns, "validating", work, importer.pacing.niceness)


@router.get("/import/status")
async def import_status(slots: ImportSlotsDep, ns: NamespaceDep) -> ImportStatus:
    """Your namespace's running import in the worker that answers: its phase (receiving,
    validating, writing) and the records written of those to write."""
    return slots.status(ns)


@router.post(
    "/import/chatgpt",
    responses=errors(409, 413),
    openapi_extra=CHATGPT_BODY,
    dependencies=NOT_RETRY_SAFE,
)
async def import_chatgpt(
    request: Request,
    chatgpt: ChatGPTDep,
    importer: ImportDep,
    slots: ImportSlotsDep,
    ns: NamespaceDep,
    dry_run: DryRun = False,
) -> ChatGPTReport:
    """Ingest a ChatGPT data export (``conversations.json`` as the body): the current branch
    of every conversation, ordered by time, through the production sleep policy."""

    def work(spool: IO[bytes], _status: ImportStatus) -> ChatGPTReport:
        return chatgpt.run(ns, read_history(spool.read()), dry_run=dry_run)

    return await receive_import(request, slots, ns, "writing", work, importer.pacing.niceness)
