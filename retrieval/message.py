"""The user's message parsed once per context request. Pure.

Every step of a context (the plan's reads and triggers, the request class, the searches, the
snippets, the fact ranking, the suppression's task) reads the message through one
``ParsedMessage`` instead of scanning its text again. Each reading is computed the first time a
step asks for it and kept (small talk asks for few of them): a new reading of the message is
one property here, read by the steps that need it.

Readings that depend on more than the words take what they depend on: the time windows
(``windows``) need the clock, the zone, the sleep history and the names the memory knows, and are
found once for them (the plan's window and the relative-time trigger read the same); the message
without the conversation's participants is made once by the context's plan
(``retrieval.context_run``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from retrieval import intent
from retrieval.snippets import terms
from text.claims import StateQuestion, state_question
from text.cues import MEMORY_CUE
from text.english import drop_names, name_candidates, noun_phrases, time_spans, timed_names
from text.timephrases import SleepHistory, TimeWindow, find_windows

_WindowKey = tuple[datetime, str, SleepHistory | None, frozenset[str]]


@dataclass(frozen=True)
class ParsedMessage:
    """One message's readings (``parsed`` makes one from text)."""

    text: str
    # the time windows found, by what they were found for (``windows``)
    _windows: dict[_WindowKey, tuple[TimeWindow, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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
    def own_life(self) -> str | None:
        """Why it asks about the user's own life and nothing the assistant said
        (``intent.own_life_cue``), or None."""
        return intent.own_life_cue(self.text)

    @cached_property
    def latest(self) -> str | None:
        """Why it asks for the value as it stands now (``intent.latest_cue``), or None."""
        return intent.latest_cue(self.text)

    @cached_property
    def asks_decision(self) -> bool:
        """Whether it asks what was decided or chosen."""
        return intent.asks_decision(self.text)

    @cached_property
    def state_question(self) -> StateQuestion | None:
        """The state of a life it asks about ("Where do I live now?"), or None
        (``text.claims.state_question``)."""
        return state_question(self.text)

    @cached_property
    def fingerprint(self) -> str:
        """The fingerprint of its line of work (``intent.task_fingerprint``, of its terms)."""
        return intent.fingerprint(self.terms)

    def windows(
        self,
        now: datetime,
        tz: str = "UTC",
        sleep: SleepHistory | None = None,
        known_names: Collection[str] = (),
    ) -> tuple[TimeWindow, ...]:
        """The windows of its time phrases that have begun by ``now``, in text order
        (``text.timephrases.find_windows`` of its ``time_text``: a time phrase inside a name
        the memory knows is part of the name). A window still ahead ("tomorrow", "this
        weekend" on a Monday) holds nothing said: left out. Found once for the same clock,
        zone, sleep history and names; ``ValidationFailed`` as ``find_windows``."""
        key = (now, tz, sleep, frozenset(known_names))
        found = self._windows.get(key)
        if found is None:
            read = time_text(self.text, known_names)
            found = tuple(w for w in find_windows(read, now, tz, sleep) if not w.ahead(now))
            self._windows[key] = found
        return found


def time_text(text: str, known_names: Collection[str]) -> str:
    """``text`` as its time phrases are read: without the names the memory knows, so that a
    topic named or aliased with a time phrase ("this month's novel", "last week's retro") is a
    name, not a window (the name finds its topic; its words say nothing of when the message
    is looking)."""
    timed = [n for n in known_names if time_spans(n)]  # only those: the rest read as before
    return drop_names(text, timed) if timed else text


def parsed(message: str | ParsedMessage) -> ParsedMessage:
    """``message`` parsed (itself when it already is: the readings it holds are kept)."""
    return message if isinstance(message, ParsedMessage) else ParsedMessage(message)
