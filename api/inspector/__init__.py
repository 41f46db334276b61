"""The web inspector at ``/ui``: what the memory holds and why it recalled it (docs/inspector.md).

Server-rendered pages (Jinja2, autoescape on) in the API's own process, signed in with an API
key (its namespace only); every page reads through the services the REST routes call.
``mount`` adds its routes and its static files to the app: plain routes, no middleware, so the
``/v1`` requests pay nothing for it.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from api.inspector import actions, pages

STATIC_PATH = "/ui/static"


def mount(app: FastAPI) -> None:
    """Add the inspector's routes and static files to ``app``."""
    app.include_router(pages.router)
    app.include_router(actions.router)
    app.mount(STATIC_PATH, StaticFiles(packages=[("api.inspector", "static")]), name="ui-static")
