"""One grammar of time phrases (text/timegrammar.py): detection (``text.english.time_spans``)
and resolution (``text.timephrases.find_windows``) read the same table, so a phrase added to
it is found by both."""

from datetime import UTC, datetime, timedelta

import pytest

from text.english import time_spans
from text.timegrammar import GRAMMAR, Phrase
from text.timephrases import find_windows
from text.timewindows import HANDLERS

NOW = datetime(2026, 3, 2, 15, 30, tzinfo=UTC)
TEXT = "I have been sleeping badly of late, says Mel."


def test_a_phrase_added_to_the_grammar_is_detected_and_resolved() -> None:
    assert time_spans(TEXT) == []
    assert find_windows(TEXT, NOW) == []

    grammar = GRAMMAR.extended(Phrase(r"of\s+late", family="vague"))

    start = TEXT.index("of late")
    assert grammar.spans(TEXT) == [(start, start + len("of late"))]
    [window] = find_windows(TEXT, NOW, grammar=grammar)
    assert (window.phrase, window.kind) == ("of late", "of_late")
    assert (window.start, window.end) == (NOW - timedelta(days=14), NOW)
    assert time_spans(TEXT) == []  # the grammar in use is unchanged


def test_a_phrase_is_read_only_by_the_readers_its_row_names() -> None:
    detected_only = GRAMMAR.extended(Phrase(r"of\s+late"))
    resolved_only = GRAMMAR.extended(Phrase(r"of\s+late", family="vague", detect=False))

    assert detected_only.spans(TEXT) != [] and find_windows(TEXT, NOW, grammar=detected_only) == []
    assert resolved_only.spans(TEXT) == [] and find_windows(TEXT, NOW, grammar=resolved_only)


def test_sleep_phrases_are_resolved_but_not_taken_for_time_words() -> None:
    text = "What did we do before you slept?"
    assert time_spans(text) == []
    assert [w.kind for w in find_windows(text, NOW)] == []  # no sleep history: no window


def test_every_family_of_the_grammar_has_a_handler() -> None:
    families = {p.family for p in GRAMMAR.phrases if p.family is not None}
    assert families == set(HANDLERS)


def test_a_family_without_a_handler_is_a_clear_error() -> None:
    grammar = GRAMMAR.extended(Phrase(r"of\s+late", family="nonsense"))
    with pytest.raises(ValueError, match="nonsense"):
        find_windows(TEXT, NOW, grammar=grammar)
