"""A bounded topic keeps the facts that name what a question asks for (``sleepwake.retention``):
"Their names are Pepper, Precious and Panda" outlasts news as telling but naming nothing, and
the listener called by name ("Thanks, Melanie!") is not a name kept for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graph.models import Fact
from sleepwake.retention import kept_facts, names_in
from sleepwake.turn_facts import FORMATION as FORMATION_DEFAULT

T0 = datetime(2023, 3, 27, tzinfo=UTC)


def _fact(text: str, day: int) -> Fact:
    return Fact(text=text, source_message_ids=[f"m{day}"], at=T0 + timedelta(days=day))


def test_names_are_the_capitalised_words_inside_a_sentence_not_the_listener() -> None:
    assert names_in("Audrey: Their names are Pepper, Precious and Panda.") == {
        "Pepper",
        "Precious",
        "Panda",
    }
    assert names_in("Andrew: So much has changed - meet Toby, my puppy.") == {"Toby"}
    assert names_in("Caroline: Thanks, Melanie! I went to the park.") == set()
    assert names_in("Audrey: Hey Andrew, we adopted a puppy called Pixie.") == {"Pixie"}
    assert names_in("Tim: I went to the park with my sister.") == set()


def test_a_bounded_topic_keeps_the_fact_that_names_what_it_is_about() -> None:
    named = _fact("Audrey: I've had them for years and their names are Pepper and Panda.", 0)
    places = ["lake", "river", "park", "hill", "beach", "forest", "field", "bridge"]
    plain = [
        _fact(f"Audrey: I walked my dogs around the {p} for a whole hour with them.", d)
        for d, p in enumerate(places, start=1)
    ]
    kept = kept_facts([named, *plain], 6, FORMATION_DEFAULT)
    assert named in kept
    assert len([f for f in kept if f.invalid_at is None]) == 6
    # without the weight, the oldest (and as telling) goes first
    plainer = FORMATION_DEFAULT.model_copy(update={"named_weight": 0.0})
    assert named not in kept_facts([named, *plain], 6, plainer)


def test_a_name_every_fact_says_is_the_subject_and_weighs_nothing() -> None:
    facts = [
        _fact(f"James: I took Max to the park again on day {d} of the month.", d) for d in range(10)
    ]
    same = FORMATION_DEFAULT.model_copy(update={"named_weight": 0.0})
    assert kept_facts(facts, 4, FORMATION_DEFAULT) == kept_facts(facts, 4, same)
