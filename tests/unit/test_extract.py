"""The deterministic extractor: what a user would notice in the memory it builds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.errors import ValidationFailed
from sleepwake.extract import Decision, Extraction, extract
from text.english import noun_phrases, split_sentences, time_expressions, timed_names

LOCOMO = "Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful."


# ------------------------------------------------------------------------------- sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went home. Then I slept!", ["I went home.", "Then I slept!"]),
        ("Is it done? yes it is", ["Is it done?", "yes it is"]),
        ("Dr. Smith met Mr. Jones, e.g. at the U.S. office.", None),
        ("graph.store holds 3.5 GB.", ["graph.store holds 3.5 GB."]),
        ("J. K. Rowling wrote it. I read it.", ["J. K. Rowling wrote it.", "I read it."]),
        ("Plan:\n- book the venue\n- order food", ["Plan:", "book the venue", "order food"]),
        (
            "a line that is hard\nwrapped in the middle",
            ["a line that is hard wrapped in the middle"],
        ),
        ("   ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str] | None) -> None:
    got = split_sentences(text)
    assert got == (expected if expected is not None else [text])


def test_greetings_and_filler_are_not_fact_sentences() -> None:
    ex = extract("Hey Mel! ok. Thanks, Caroline! I adopted a puppy named Oscar. Wow, that's great!")
    assert ex.sentences == ["I adopted a puppy named Oscar."]


@pytest.mark.parametrize("text", ["ok", "Thanks!", "thank you so much!!", "Hi there", "lol 😂"])
def test_pure_filler_gives_no_sentences(text: str) -> None:
    assert extract(text).sentences == []


# -------------------------------------------------------------------------------- entities


def test_locomo_message() -> None:
    ex = extract(LOCOMO)
    assert "LGBTQ support group" in ex.entities
    assert ex.time_expressions == ["yesterday"]
    assert ex.sentences == ["I went to a LGBTQ support group yesterday and it was so powerful."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Open the Neo4j Browser and log in.", ["Neo4j Browser"]),
        ("I work on Sheriff Claw at night.", ["Sheriff Claw"]),
        ("We went to the Bank of America office.", ["Bank of America"]),
        ('The project is called "Blue Harbor".', ["Blue Harbor"]),
        ("I went with my mom and Caroline to Lake Tahoe.", ["mom", "Caroline", "Lake Tahoe"]),
        ("How is the party planning going?", ["party planning"]),
        ("We migrated the billing tables.", ["billing tables"]),
        ("TopicStore lives in graph.store next to repo_refactor.", None),
        ("Caroline went to the pride parade.", ["Caroline", "pride parade"]),
        ("My friend Jolene adopted a puppy.", ["friend", "Jolene", "puppy"]),
        ("We used the great support group resources.", ["support group resources"]),
        ("I called agencies that support LGBTQ+ folks.", ["LGBTQ+"]),
        ("The sleep job compacts conversations nightly.", ["sleep job"]),
        # "my favorite" alone is of nothing named (conv-43); "my favorite book" names a book
        ("Here's a pic of my favorite, Lord of the Rings!", ["pic", "Lord of the Rings"]),
        ("Harry Potter is my favorite book.", ["Harry Potter", "favorite book"]),
    ],
)
def test_noun_phrases(text: str, expected: list[str] | None) -> None:
    if expected is None:
        expected = ["TopicStore", "graph.store", "repo_refactor"]
    assert noun_phrases(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Hey! Yesterday was fun.",
        "Thanks so much, that was amazing!",
        "Wow. The best day ever.",
        "I think so too.",
        "Remind me to call later.",
        "Honestly, it was a lot of fun.",
        "On Monday in May we met at 3pm.",
    ],
)
def test_ordinary_words_do_not_become_entities(text: str) -> None:
    assert noun_phrases(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Any news on this month's novel?", ["this month's novel"]),
        ("What came up at last week's retro?", ["last week's retro"]),
        ("Yesterday's standup and the demo went well.", ["Yesterday's standup"]),
        (
            "This week's big planning meeting moved.",
            ["This week's big", "This week's big planning", "This week's big planning meeting"],
        ),
        ("I met Sam yesterday about the novel.", []),  # a time phrase, no possessive
        ("Last week the novel was late.", []),
    ],
)
def test_timed_names_are_the_possessive_phrases_a_time_phrase_begins(
    text: str, expected: list[str]
) -> None:
    assert timed_names(text) == expected
    assert not set(noun_phrases(text)) & set(expected)  # which noun_phrases leaves out


def test_entities_are_deduplicated_case_insensitively() -> None:
    assert noun_phrases("Neo4j is fast. I like neo4j. NEO4J rocks.").count("Neo4j") == 1
    assert (
        len([e for e in noun_phrases("Neo4j is fast. NEO4J rocks.") if e.lower() == "neo4j"]) == 1
    )


def test_secrets_never_become_entities() -> None:
    ex = extract("Use token ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 for the Deploy Bot.")
    assert ex.entities == ["Deploy Bot"]
    assert all("ghp_" not in s for s in ex.sentences)


# ------------------------------------------------------------------------------- decisions


@pytest.mark.parametrize(
    ("text", "chosen", "rejected", "reason"),
    [
        (
            "We chose Neo4j over Postgres because we need graph traversals.",
            "Neo4j",
            ["Postgres"],
            "we need graph traversals",
        ),
        (
            "We decided to migrate to Postgres instead of MySQL since it's cheaper.",
            "migrate to Postgres",
            ["MySQL"],
            "it's cheaper",
        ),
        ("Let's go with pnpm instead of npm or yarn.", "pnpm", ["npm", "yarn"], None),
        ("We'll use ruff rather than flake8.", "ruff", ["flake8"], None),
        ("I went with the blue one instead of the red one.", "the blue one", ["the red one"], None),
        ("We decided to postpone the launch.", "postpone the launch", [], None),
        (
            "We picked Neo4j because vectors are built in, rather than pgvector.",
            "Neo4j",
            ["pgvector"],
            "vectors are built in",
        ),
        ("Decision: ship on Friday because QA signed off.", "ship on Friday", [], "QA signed off"),
    ],
)
def test_decisions_keep_alternatives_and_reason(
    text: str, chosen: str, rejected: list[str], reason: str | None
) -> None:
    assert extract(text).decisions == [
        Decision(text=text, chosen=chosen, rejected=rejected, reason=reason)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Should we go with Neo4j over Postgres?",
        "I went with my mom to the store.",  # company, not a choice
        "I'll use your advice, thanks.",
        "I picked up the kids at five.",
        "We didn't decide anything yet.",
        "I prefer tea over coffee.",
    ],
)
def test_not_decisions(text: str) -> None:
    assert extract(text).decisions == []


# ----------------------------------------------------------------------------- constraints


@pytest.mark.parametrize(
    "text",
    [
        "Never use tabs.",
        "Please always answer in British English.",
        "You must run the tests before merging.",
        "Don't ever push to main.",
        "I prefer pnpm over npm.",
        "I like short answers better.",
        "I'd rather you didn't use emojis.",
        "Use four spaces for indentation.",
        "Don't use semicolons in Python.",
        "Make sure to pin the Neo4j version.",
        "I never drink coffee after 3pm.",  # a standing personal rule, worth keeping
        "I'm allergic to peanuts.",
        "Passwords must be at least 12 characters.",
    ],
)
def test_constraints(text: str) -> None:
    assert extract(text).constraints == [text]


@pytest.mark.parametrize(
    "text",
    [
        "I never knew that.",  # past-tense "never" is a fact, not a rule
        "She always loved dancing.",
        "I've never been to Paris.",
        "That must be tough!",  # epistemic "must"
        "You must have been so tired.",
        "Don't worry about it.",
        "Never mind.",
        "Which editor do you prefer?",  # a question sets no rule
        "As always, thanks for the help.",
        "I always forget my keys.",  # involuntary habit
    ],
)
def test_not_constraints(text: str) -> None:
    assert extract(text).constraints == []


# ------------------------------------------------------------------------------ open loops


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("We still need to book the venue.", "user"),
        ("Next step is wiring the API.", "user"),
        ("TODO: add retries to the client.", "user"),
        ("We should add an index on Topic.name.", "user"),
        ("Remind me to call Sarah on Friday.", "user"),
        ("I haven't sent the invitations yet.", "user"),
        ("I'm planning to join an art class.", "user"),
        ("Which port does Neo4j use by default?", "user"),
        ("I'll need to check the logs.", "assistant"),
    ],
)
def test_open_loops(text: str, role: str) -> None:
    assert extract(text, role).open_loops == [text]


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("I should have called her.", "user"),  # regret, nothing left to do
        ("How are you?", "user"),  # small talk
        ("We booked the venue last week.", "user"),
        ("Which port does Neo4j use by default?", "assistant"),  # only user questions count
    ],
)
def test_not_open_loops(text: str, role: str) -> None:
    assert extract(text, role).open_loops == []


# --------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "key", "value", "unit"),
    [
        ("The context window is 400000 tokens.", "context window", 400000, "tokens"),
        ("It has a 400k token context window.", "context window", 400000, "tokens"),
        ("My budget is about $30.", "budget", 30, "USD"),
        ("The budget is 1200 dollars.", "budget", 1200, "USD"),
        ("I bought 3 kg of flour.", "flour", 3, "kg"),
        ("The walk takes 45 minutes.", "walk", 45, "minutes"),
        ("It takes 45 minutes.", "duration", 45, "minutes"),
        ("Neo4j listens on port 7687.", "port", 7687, None),
        ("We have 1,250 users.", "users", 1250, None),
        ("Memory limit: 512 MB.", "memory limit", 512, "MB"),
        ("Coverage is 87.5%.", "coverage", 87.5, "%"),
        ("The flight is 450 EUR.", "flight", 450, "EUR"),
    ],
)
def test_numbers(text: str, key: str, value: float, unit: str | None) -> None:
    [number] = extract(text).numbers
    assert (number.key, number.value, number.unit, number.text) == (key, value, unit, text)


@pytest.mark.parametrize(
    "text",
    [
        "We met on May 8 in 2022.",  # dates and years are time expressions
        "I run Neo4j and Python3 with a v2 API.",  # digits inside identifiers
        "See you at 3pm on the 5th.",
        "Call 555-1234 or visit 10.0.0.1.",
        "It was the 90s.",
    ],
)
def test_not_numbers(text: str) -> None:
    assert extract(text).numbers == []


def test_durations_are_both_numbers_and_time_expressions() -> None:
    ex = extract("Running late, be there in 10 minutes!")
    assert ex.time_expressions == ["in 10 minutes"]
    assert [(n.key, n.value, n.unit) for n in ex.numbers] == [("duration", 10, "minutes")]


# -------------------------------------------------------------------------- time expressions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I saw her yesterday.", ["yesterday"]),
        ("We talked last week and again on May 8.", ["last week", "on May 8"]),
        ("Let's meet next Friday at 3pm.", ["next Friday", "at 3pm"]),
        ("I moved two weeks ago, in 2022 I lived in Berlin.", ["two weeks ago", "in 2022"]),
        ("The review is on 2024-05-08 and again this coming weekend.", None),
        ("I'm in Tokyo from June 3 to June 10.", ["from June 3", "June 10"]),
        ("Swimming lessons are on Tuesdays, see you the following Monday.", None),
        ("Last time we spoke you were busy.", []),  # a memory reference, not a date
        ("You may go now.", []),  # the modal "may" is not the month
    ],
)
def test_time_expressions(text: str, expected: list[str] | None) -> None:
    if expected is None:
        expected = (
            ["on Tuesdays", "the following Monday"]
            if "Tuesdays" in text
            else ["2024-05-08", "this coming weekend"]
        )
    assert time_expressions(text) == expected
    assert extract(text).time_expressions == expected


# ----------------------------------------------------------------------- memory references


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Do you remember what I said about my dog?", ["Do you remember"]),
        ("Last time we spoke about the venue.", ["Last time", "we spoke about"]),
        ("As I said, the budget is fixed.", ["As I said"]),
        ("You told me to try pottery.", ["You told me"]),
        ("Remember that I'm vegetarian.", ["Remember"]),
        ("Remember when we went camping?", ["Remember"]),
        ("I remember the 90s fondly.", []),  # the speaker's own memory, not the chat's
        ("I remember when I was a kid.", []),
    ],
)
def test_memory_references(text: str, expected: list[str]) -> None:
    assert extract(text).memory_references == expected


# ---------------------------------------------------------------------------- dependencies


@pytest.mark.parametrize(
    ("text", "dependent", "dependency"),
    [
        ("The deploy depends on the schema migration.", "deploy", "schema migration"),
        ("The frontend is blocked by the API review.", "frontend", "API review"),
        ("Billing needs the new schema first.", "Billing", "new schema"),
        ("Before the launch, we need to fix the login bug.", "launch", "fix the login bug"),
        ("We need to renew the cert before we deploy.", "deploy", "renew the cert"),
        ("We can't ship the release until the audit is done.", "ship the release", "audit"),
    ],
)
def test_dependencies(text: str, dependent: str, dependency: str) -> None:
    [dep] = extract(text).dependencies
    assert (dep.dependent, dep.dependency, dep.text) == (dependent, dependency, text)


def test_pronoun_dependencies_are_dropped() -> None:
    assert extract("It depends on the weather.").dependencies == []


# ----------------------------------------------------------------------------- in progress


def test_in_progress_with_next_step() -> None:
    text = "We're halfway through migrating the billing tables; next step is the invoices table."
    progress = extract(text).in_progress
    assert progress is not None
    assert progress.goal == "migrating the billing tables"
    assert progress.next_step == "the invoices table"
    assert progress.text == text


def test_in_progress_next_step_in_following_sentence() -> None:
    text = "I'm in the middle of rewriting the parser. Next, I'll add error recovery."
    progress = extract(text).in_progress
    assert progress is not None
    assert (progress.goal, progress.next_step) == ("rewriting the parser", "add error recovery")
    assert progress.text == text


def test_in_progress_without_next_step() -> None:
    progress = extract("I'm currently refactoring the TopicStore class.").in_progress
    assert progress is not None
    assert (progress.goal, progress.next_step) == ("refactoring the TopicStore class", None)


@pytest.mark.parametrize("text", ["We finished the migration.", "Next step is the invoices."])
def test_no_in_progress(text: str) -> None:
    assert extract(text).in_progress is None


# ------------------------------------------------------------------------------ corrections


@pytest.mark.parametrize(
    "text",
    [
        "No, actually it's Tuesday.",
        "That's wrong, the port is 7687.",
        "I meant the other repo.",
        "Actually no, I said Thursday, not Tuesday.",
        "Not Tuesday but Wednesday.",
        "You misunderstood me.",
    ],
)
def test_corrections(text: str) -> None:
    assert extract(text).is_correction


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("No worries!", "user"),
        ("No, thanks.", "user"),
        ("I meant to call you yesterday.", "user"),
        ("It's not expensive but it's far.", "user"),
        ("That's wrong, the port is 7687.", "assistant"),  # only the user corrects us
    ],
)
def test_not_corrections(text: str, role: str) -> None:
    assert not extract(text, role).is_correction


# --------------------------------------------------------------------------------- contract


def test_unknown_role_is_refused() -> None:
    with pytest.raises(ValidationFailed):
        extract("hello", role="human")


def test_extraction_is_frozen_and_deterministic() -> None:
    first = extract(LOCOMO)
    assert first == extract(LOCOMO)
    with pytest.raises(ValueError, match="frozen"):
        first.is_correction = True  # type: ignore[misc]


def test_empty_message() -> None:
    ex = extract("")
    assert ex == Extraction(
        entities=[],
        decisions=[],
        constraints=[],
        open_loops=[],
        numbers=[],
        time_expressions=[],
        memory_references=[],
        dependencies=[],
        is_correction=False,
        in_progress=None,
        sentences=[],
    )


_WORDS = st.sampled_from(
    [
        *LOCOMO.split(),
        *"we chose over because never always must next step TODO remind me halfway through"
        " depends on blocked by before need first no actually I meant last time remember"
        " $30 400k tokens port 7687 May 8 next Friday 2022 3.5 1,200 % kg e.g. Dr. U.S.".split(),
        ".",
        "?",
        "!",
        ",",
        ";",
        "\n",
        "'",
        '"',
        "`",
        "-",
        "",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.text(), st.lists(_WORDS, max_size=40).map(" ".join)),
    st.sampled_from(["user", "assistant"]),
)
def test_extract_never_raises(text: str, role: str) -> None:
    ex = extract(text, role)
    assert isinstance(ex, Extraction)
    assert all(s.strip() == s and s for s in ex.sentences)
    assert all(e.strip() == e and e for e in ex.entities)
