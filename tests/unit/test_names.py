"""Names in a message (text/english.py): which words may name a participant of the
conversation (looked up against the speakers), and the message without them (how the sentences
of the evidence are picked: a greeting "Hey Audrey!" shares only the name with the question)."""

from __future__ import annotations

from text.english import MAX_NAME_WORDS, drop_names, name_candidates


def test_lower_case_names_and_possessives_are_candidates_function_words_are_not() -> None:
    got = name_candidates("What does caroline like? Melanie's kids and the pottery class")
    assert got[0] == "Melanie"  # noun phrases first
    assert "caroline" in got and "kids" in got and "pottery" in got
    assert not {"what", "does", "the", "and"} & {w.lower() for w in got}
    assert len({w.lower() for w in got}) == len(got)  # distinct, case aside


def test_a_long_message_asks_about_a_bounded_number_of_words() -> None:
    text = " ".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}x" for i in range(400))
    assert len(name_candidates(text.replace("x", ""))) <= MAX_NAME_WORDS


def test_names_are_dropped_as_whole_words_with_their_possessive() -> None:
    assert drop_names("When did Audrey see a hummingbird?", {"audrey"}).split() == [
        "When", "did", "see", "a", "hummingbird?"
    ]  # fmt: skip
    assert "Audreyx" in drop_names("Audreyx met AUDREY's dog", {"audrey"})
    assert "dog" in drop_names("Audreyx met AUDREY's dog", {"audrey"})
    assert "AUDREY" not in drop_names("Audreyx met AUDREY's dog", {"audrey"})
    assert drop_names("Dr Smith and Ann", {"dr smith", "ann"}).split() == ["and"]
    # nothing but the name: the text stays as it was (a search needs something to look for)
    assert drop_names("Audrey?", {"audrey"}) == "Audrey?"
    assert drop_names("Hi (a+b)", {"a+b"}).split() == ["Hi", "(", ")"]  # regex-safe


def test_a_comparison_word_ends_a_phrase() -> None:
    # "the city center versus the suburbs" named a topic "city center versus" (LongMemEval).
    from text.english import noun_phrases

    assert noun_phrases("Should I live in the city center versus the suburbs?") == [
        "city center",
        "suburbs",
    ]
