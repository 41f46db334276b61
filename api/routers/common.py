"""What every ``/v1`` route may answer besides success, for the OpenAPI document."""

from __future__ import annotations

from typing import Any

from api.schemas import ErrorPublic

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
