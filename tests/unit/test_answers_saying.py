"""``sleepwake.heads.answers_saying``: the answers that say a phrase, counted as the phrase's
pattern counts them (any surface form as whole words, a plural allowed), with the pattern
compiled only for answers that hold a form's first word."""

from __future__ import annotations

from collections import Counter

import pytest

from sleepwake.candidates import Candidate
from sleepwake.heads import _phrase_pattern, answers_saying

ANSWERS = [
    "the quarterly budgets are due on friday.",
    "a budget\nreview is planned; c++ builds are slow.",
    "concatenate the files, then feed the cats.",
    "your cat   food order shipped.",
    "nothing about that here.",
    "",
]
CASES = [
    ("budget", []),
    ("budget review", []),
    ("cat", []),
    ("cat food", ["Cat Food"]),
    ("c++", []),
    ("friday", ["Friday"]),
    ("dog", ["Dog"]),
    ("", []),
    (" ", []),
    ("Budget", []),  # a key the pattern reads as written (no answer has a capital)
]


@pytest.mark.parametrize(("key", "surfaces"), CASES)
def test_the_same_count_as_the_pattern_over_every_answer(key: str, surfaces: list[str]) -> None:
    cand = Candidate(key=key, surfaces=Counter(surfaces))
    expected = sum(1 for text in ANSWERS if _phrase_pattern(cand).search(text))
    assert answers_saying(cand, ANSWERS) == expected


def test_counts_plural_and_spacing_and_not_a_word_inside_another() -> None:
    assert answers_saying(Candidate(key="budget"), ANSWERS) == 2  # "budgets", "budget\nreview"
    assert answers_saying(Candidate(key="cat food"), ANSWERS) == 1  # "cat   food"
    assert answers_saying(Candidate(key="cat"), ANSWERS) == 2  # "cats", "cat"; not "concatenate"
    assert answers_saying(Candidate(key="dog"), ANSWERS) == 0
    assert answers_saying(Candidate(key="budget"), []) == 0
