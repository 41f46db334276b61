"""Export and import: ``GET /v1/export`` (JSON Lines, streamed), ``POST /v1/import`` and
``POST /v1/import/chatgpt``.

Uploads are the request body itself (the document, not a form); they may be larger than the
general body limit, up to ``SHERIFF_API_MAX_IMPORT_BYTES``. Parsing and writing run in a worker
thread, never on the event loop. The namespace is always the key's, whatever the file says.
See ``service.export``, ``service.importer`` and ``service.chatgpt``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.deps import ChatGPTDep, ExportDep, ImportDep, NamespaceDep
from api.routers.common import NOT_RETRY_SAFE, errors
from graph.errors import ValidationFailed
from service.chatgpt import ChatGPTReport, read_history
from service.importer import ImportReport, parse_document, read_lines

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
    request: Request, importer: ImportDep, ns: NamespaceDep, dry_run: DryRun = False
) -> ImportReport:
    """Import an export document into your namespace (idempotent by ids): each record is
    created, merged, unchanged or refused (with the reason). The body is the JSON Lines file."""
    data = await _body(request)

    def work() -> ImportReport:
        return importer.run(ns, parse_document(read_lines(data)), dry_run=dry_run)

    return await run_in_threadpool(work)


@router.post(
    "/import/chatgpt",
    responses=errors(409, 413),
    openapi_extra=CHATGPT_BODY,
    dependencies=NOT_RETRY_SAFE,
)
async def import_chatgpt(
    request: Request, chatgpt: ChatGPTDep, ns: NamespaceDep, dry_run: DryRun = False
) -> ChatGPTReport:
    """Ingest a ChatGPT data export (``conversations.json`` as the body): the current branch
    of every conversation, ordered by time, through the production sleep policy."""
    data = await _body(request)

    def work() -> ChatGPTReport:
        return chatgpt.run(ns, read_history(data), dry_run=dry_run)

    return await run_in_threadpool(work)


async def _body(request: Request) -> bytes:
    data = await request.body()
    if not data.strip():
        raise ValidationFailed("body: empty; send the file as the request body")
    return data
