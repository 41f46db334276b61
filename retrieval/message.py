"""The user's message parsed once per context request. Pure.

Every step of a context (the plan's reads and triggers, the request class, the searches, the
snippets, the fact ranking, the suppression's task) reads the message through one
``ParsedMessage`` instead of scanning its text again. Each reading is computed the first time a
step asks for it and kept (small talk asks for few of them): a new reading of the message is
one property here, read by the steps that need it.

Readings that depend on more than the words (the time windows, which need the names the memory
knows, the sleep history and the clock; the message without the conversation's participants)
are made once by the context's plan (``retrieval.context_run``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from retrieval import intent
from retrieval.snippets import terms
from text.cues import MEMORY_CUE
from text.english import name_candidates, noun_phrases, timed_names


@dataclass(frozen=True)
class ParsedMessage:
    """One message's readings (``parsed`` makes one from text)."""

    text: str

    @cached_property
    def terms(self) -> frozenset[str]:
        """Its stemmed content words (``retrieval.snippets.terms``)."""
        return terms(self.text)

    @cached_property
    def noun_phrases(self) -> tuple[str, ...]:
        """The noun phrases that may name a topic (``text.english.noun_phrases``)."""
        return tuple(noun_phrases(self.text))

    @cached_property
    def timed_names(self) -> tuple[str, ...]:
        """Names a time phrase begins ("this month's novel"): a topic may be named so."""
        return tuple(timed_names(self.text))

    @property
    def names(self) -> tuple[str, ...]:
        """Every phrase that may name a known topic: noun phrases, then timed names."""
        return (*self.noun_phrases, *self.timed_names)

    @cached_property
    def name_candidates(self) -> tuple[str, ...]:
        """The words that may name a person (``text.english.name_candidates``)."""
        return tuple(name_candidates(self.text))

    @cached_property
    def memory_cue(self) -> str | None:
        """The memory words it uses ("remember", "what did we"), or None."""
        m = MEMORY_CUE.search(self.text)
        return None if m is None else m.group(0)

    @cached_property
    def past_question(self) -> str | None:
        """The past-tense question it opens with (the weak memory cue), or None."""
        return intent.past_question(self.text)

    @cached_property
    def personal(self) -> str | None:
        """Why it is a personal request (``retrieval.intent.personal_cue``), or None."""
        return intent.personal_cue(self.text)

    @cached_property
    def latest(self) -> str | None:
        """Why it asks for the value as it stands now (``intent.latest_cue``), or None."""
        return intent.latest_cue(self.text)

    @cached_property
    def asks_decision(self) -> bool:
        """Whether it asks what was decided or chosen."""
        return intent.asks_decision(self.text)

    @cached_property
    def fingerprint(self) -> str:
        """The fingerprint of its line of work (``intent.task_fingerprint``)."""
        return intent.task_fingerprint(self.text)


def parsed(message: str | ParsedMessage) -> ParsedMessage:
    """``message`` parsed (itself when it already is: the readings it holds are kept)."""
    return message if isinstance(message, ParsedMessage) else ParsedMessage(message)
