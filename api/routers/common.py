"""What every ``/v1`` route may answer besides success, for the OpenAPI document; the marker of
routes that a repeat would apply twice."""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from api.deadline import no_deadline
from api.schemas import ErrorPublic

# Route dependencies of a write that is not safe to retry after a 503 whose commit may have
# happened (a repeat would create or add a second time): the deadline never cuts it
# (api/deadline.py), so its 503 means the driver gave up, like any Neo4j error.
NOT_RETRY_SAFE = [Depends(no_deadline)]

_WHY = {
    401: "no API key, or an unknown or revoked one",
    403: "a tool call the policy refuses (path outside the workspace, command not allowed)",
    404: "no such id in your namespace",
    409: "version conflict, or a sleep of this namespace is already running",
    413: "request body over the size limit",
    422: "invalid input: each bad field is named",
    502: "the model (Responses API) failed",
    503: "Neo4j or the embedding model is unavailable",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for these status codes, all with the ``ErrorPublic`` body."""
    return {code: {"model": ErrorPublic, "description": _WHY[code]} for code in codes}


V1_ERRORS = errors(401, 413, 422, 503)
