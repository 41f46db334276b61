"""Request schemas of the memory-control routes (forget, facts, import). The responses are the
services' own models (``ForgetReport``, ``FactChange``, ``TopicHistory``, ``ImportReport``...)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graph.validation import Phrase, Reason, ShortText, SourceIds, Time


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ForgetCreate(_In):
    """Forget everything a phrase matches (whole words, any case)."""

    query: Phrase = Field(description="the phrase: topics named by it go whole; facts, open "
                          "loops, aliases and messages containing it go")  # fmt: skip
    dry_run: bool = Field(default=True, description="list the matches, delete nothing "
                          "(the default: send false to delete)")  # fmt: skip


class FactCorrect(_In):
    text: ShortText = Field(description="what is true instead")
    at: Time | None = Field(default=None, description="when it was said; default now")
    valid_from: Time | None = Field(default=None, description="when it became true; default "
                                    "`at` (the old fact is closed then)")  # fmt: skip
    reason: Reason | None = None
    source_message_ids: SourceIds


class FactRetract(_In):
    at: Time | None = Field(default=None, description="when it stopped being true; default now")
    reason: Reason | None = None
    source_message_ids: SourceIds
