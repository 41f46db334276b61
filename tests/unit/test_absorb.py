"""A session's episode about what a durable topic holds joins that topic instead of making a
topic of one sleep (``sleepwake.absorb``): the pet salon's episode goes to "Audrey's pets";
an episode mostly about other things, a person's own topic and the knob at 0 change nothing."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from graph.models import Fact
from sleepwake.absorb import absorb_episodes, bounded
from sleepwake.candidates import Candidate
from sleepwake.config import DEFAULT
from sleepwake.merge_plan import fold
from sleepwake.themes import ASPECT
from tests.unit.test_themes import T0, episode

ON = DEFAULT.model_copy(update={"merge": DEFAULT.merge.model_copy(update={"absorb_share": 0.5})})
SALON = [
    ("Audrey", "Last Friday I took my fur kids to the pet salon."),
    ("Andrew", "They must have loved it!"),
    ("Audrey", "They were really good at the salon, I always worry about them."),
]


def _area(label: str, facts: list[Fact]) -> Candidate:
    cand = Candidate(key=label.lower(), label=label, theme=ASPECT, returns=1)
    for fact in facts:
        cand.add_fact(fact)
    cand.first_at = cand.last_at = T0
    return cand


def _sleep() -> tuple[list[Candidate], list[list[float]], list[tuple[str, bool]]]:
    """An episode (the salon), the area its owner's facts were filed under, and an episode
    about something else (the new job) of the same slice."""
    _, salon = episode("salon", SALON)
    salon.user_surfaces = Counter({"salon": 2})
    pets = _area("Audrey's pets", [f for f in salon.facts if f.text.startswith("Audrey")])
    _, job = episode("new job", [("Andrew", "I started a new job as a Financial Analyst.")])
    return (
        [pets, salon, job],
        [[1.0, 0.0]] * 3,
        [("t-pets", False), ("t-salon", True), ("t-job", True)],
    )


def test_an_episode_mostly_filed_under_a_durable_topic_joins_it_after_it() -> None:
    (cands, _, targets), took = absorb_episodes(*_sleep(), ON)
    assert [c.key for c in cands] == ["audrey's pets", "new job", "salon"]  # folded last
    assert targets == [("t-pets", False), ("t-job", True), ("t-pets", False)]
    assert took == {"t-pets"}
    # its own name is not made an alias of the durable topic
    assert not cands[2].user_surfaces and not cands[2].theme_names


def test_an_episode_is_kept_when_too_little_of_it_is_filed_elsewhere_or_the_knob_is_zero() -> None:
    stricter = ON.model_copy(update={"merge": ON.merge.model_copy(update={"absorb_share": 0.9})})
    for cfg in (stricter, DEFAULT):  # 2 of 3 facts held: under 0.9; 0 is off
        (cands, _, targets), took = absorb_episodes(*_sleep(), cfg)
        assert targets == [("t-pets", False), ("t-salon", True), ("t-job", True)]
        assert took == set() and [c.key for c in cands][1] == "salon"


def test_a_person_topic_or_an_existing_target_never_takes_or_gives_an_episode() -> None:
    cands, vectors, targets = _sleep()
    cands[0].theme, cands[0].person = "", True  # Audrey's own topic, not an area
    assert absorb_episodes(cands, vectors, targets, ON)[1] == set()
    cands, vectors, targets = _sleep()
    targets[1] = ("t-old-salon", False)  # the episode merges into a topic it already has
    assert absorb_episodes(cands, vectors, targets, ON)[1] == set()


def test_the_topic_that_took_episodes_keeps_its_most_telling_facts_within_the_bound() -> None:
    _, big = episode(
        "salon",
        [("Audrey", f"I took my dogs to the salon on visit number {i}.") for i in range(30)],
    )
    for i, fact in enumerate(big.facts):  # thirty days, one visit each
        big.facts[i] = fact.model_copy(update={"at": T0 + timedelta(days=i)})
    pets = _area("Audrey's pets", big.facts[:20])
    chosen, took = absorb_episodes(
        [pets, big], [[1.0], [1.0]], [("t-pets", True), ("t-salon", True)], ON
    )
    work = fold([], "ns", chosen, "slice", T0, "m", ON)
    assert len(work.topics["t-pets"].facts) == 30  # the episode's facts joined the area
    small = ON.model_copy(update={"merge": ON.merge.model_copy(update={"absorb_kept_facts": 12})})
    bounded(work, took, small)
    kept = work.topics["t-pets"].facts
    assert len(kept) == 12 and max(f.at for f in kept if f.at) == T0 + timedelta(days=29)
