"""Forget for real: ``DELETE /v1/topics/{id}``, ``DELETE /v1/messages/{id}``,
``DELETE /v1/messages?external_id=``, ``POST /v1/forget`` and ``DELETE /v1/namespace``.

Every route has ``dry_run`` (the plan, nothing deleted). The namespace is the key's: another
namespace's id is a 404 and nothing is deleted. See ``service.forget``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from api.deps import ApiKeysDep, ForgetDep, NamespaceDep
from api.routers.common import errors
from api.schemas_memory import ForgetCreate
from graph.errors import ValidationFailed
from graph.validation import Ident
from service.forget import ForgetQueryResult, ForgetReport, NamespaceReport

router = APIRouter(tags=["forget"])

WITH_MESSAGES = "also delete the messages it was made from, so a later sleep cannot rebuild it"
DryRun = Annotated[bool, Query(description="report what would be deleted; delete nothing")]


@router.delete("/topics/{topic_id}", responses=errors(404, 409))
def forget_topic(
    topic_id: Annotated[str, Path(min_length=1, max_length=64)],
    forget: ForgetDep,
    ns: NamespaceDep,
    messages: Annotated[bool, Query(description=WITH_MESSAGES)] = False,
    dry_run: DryRun = False,
) -> ForgetReport:
    """Delete a topic, its events and every trace (indexes, edges, wake packets, caches)."""
    return forget.topic(ns, topic_id, with_messages=messages, dry_run=dry_run)


@router.delete("/messages/{message_id}", responses=errors(404, 409))
def forget_message(
    message_id: Annotated[str, Path(min_length=1, max_length=200)],
    forget: ForgetDep,
    ns: NamespaceDep,
    dry_run: DryRun = False,
) -> ForgetReport:
    """Delete a message and whatever came only from it (facts, topics left empty)."""
    return forget.messages_by_id(ns, [message_id], dry_run=dry_run)


@router.delete("/messages", responses=errors(404, 409))
def forget_external(
    external_id: Annotated[Ident, Query(description="your id of the message")],
    forget: ForgetDep,
    ns: NamespaceDep,
    dry_run: DryRun = False,
) -> ForgetReport:
    """Delete the message(s) stored under your ``external_id``."""
    return forget.messages_by_external_id(ns, external_id, dry_run=dry_run)


@router.post("/forget", responses=errors(409))
def forget_query(body: ForgetCreate, forget: ForgetDep, ns: NamespaceDep) -> ForgetQueryResult:
    """Everything a phrase matches: topics named by it (whole), facts, open loops, aliases and
    messages containing it. ``dry_run`` (the default) lists them; ``false`` deletes them."""
    return forget.query(ns, body.query, dry_run=body.dry_run)


@router.delete("/namespace", responses=errors(409))
def forget_namespace(
    forget: ForgetDep,
    keys: ApiKeysDep,
    ns: NamespaceDep,
    confirm: Annotated[str, Query(max_length=64, description="your namespace, to confirm")],
    dry_run: DryRun = False,
) -> NamespaceReport:
    """Delete all data of your namespace and revoke its API keys (this one included: the next
    request with it is a 401)."""
    if confirm != ns:
        raise ValidationFailed("query.confirm: must be your namespace (the key's), spelled out")
    return forget.namespace(ns, keys.revoke_namespace, dry_run=dry_run)
