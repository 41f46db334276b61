"""``Section``, the base of every section of a tuning config (``RetrievalConfig``,
``SleepConfig`` and their parts): frozen once built, and a field it does not have is an error.
Pure: no Neo4j."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
