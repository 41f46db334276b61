"""What the commands of ``sheriff`` share: the settings, a one-shot container, the error console."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console

from api import terminal
from api.settings import Settings

err = Console(stderr=True)


def settings() -> Settings:
    return Settings()


def one_shot_container() -> Any:
    """The container of a one-shot command: sleeps run inline (no worker runs here)."""
    from api.container import Container

    return Container(settings().model_copy(update={"sleep_mode": "inline"}))


def fail(exc: Exception, code: int = 1) -> None:
    terminal.error(err, exc)
    raise typer.Exit(code)
