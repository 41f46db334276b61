"""The ``/v1`` routers. ``create_app`` mounts every router in ``V1_ROUTERS`` under ``/v1``
behind API-key authentication; to add endpoints, add a module here and append its router."""

from __future__ import annotations

from fastapi import APIRouter

from api.routers import (
    agent,
    context,
    facts,
    forget,
    messages,
    skills,
    sleepwake,
    timeline,
    topics,
    transfer,
)

V1_ROUTERS: list[APIRouter] = [
    messages.router,
    context.router,
    topics.router,
    timeline.router,
    sleepwake.router,
    skills.router,
    agent.router,
    forget.router,
    facts.router,
    transfer.router,
]
