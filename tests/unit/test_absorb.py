"""A session's episode about what a durable topic holds joins that topic instead of making a
topic of one sleep (``sleepwake.absorb``): the pet salon's episode goes to "Audrey's pets";
an episode mostly about other things, a person's own topic and the knob at 0 change nothing."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from functools import partial

from graph.models import Fact, Topic, TopicTime
from sleepwake.absorb import absorb_episodes, absorb_seeds, bounded
from sleepwake.candidates import Candidate
from sleepwake.config import DEFAULT
from sleepwake.merge_plan import Work, fold
from sleepwake.themes import ASPECT
from tests.unit.test_themes import T0, episode, said

ON = DEFAULT.model_copy(update={"merge": DEFAULT.merge.model_copy(update={"absorb_share": 0.5})})
OFF = DEFAULT.model_copy(update={"merge": DEFAULT.merge.model_copy(update={"absorb_share": 0.0})})
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
    for cfg in (stricter, OFF):  # 2 of 3 facts held: under 0.9; 0 is off
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


def _seeded_sleep(old: Topic) -> tuple[Work, dict[str, list[str]]]:
    """A new area topic of a later sleep, seeded from ``old`` (its Audrey facts copied)."""
    later = T0 + timedelta(days=60)
    _, news = episode("salon again", [("Audrey", "The salon trimmed my dogs' nails today.")], later)
    area = _area("Audrey's pets", [*news.facts, *(f for f in old.facts if "Audrey" in f.text)])
    area.first_at, area.last_at = T0, later
    work = fold([], "ns", ([area], [[1.0, 0.0]], [("t-pets", True)]), "s2", later, "m", ON)
    return work, {area.key: [old.topic_id]}


def _old(lines: list[tuple[str, str]], days: int = 0) -> Topic:
    return Topic(
        namespace="ns",
        name="salon",
        one_liner="Audrey took her fur kids to the pet salon.",
        facts=[said(w, t)[1] for w, t in lines],
        time=TopicTime(first_seen_at=T0, last_seen_at=T0 + timedelta(days=days)),
        version=3,
    )


def test_a_one_session_topic_a_new_durable_topic_was_seeded_from_joins_it_and_is_archived() -> None:
    old = _old(SALON)
    work, seeded = _seeded_sleep(old)
    now = T0 + timedelta(days=60)
    took = absorb_seeds(
        work, seeded, lambda ids: [old] if ids == [old.topic_id] else [], ON, "s2", now
    )
    assert took == {"t-pets"}
    pets = work.topics["t-pets"]
    assert "Andrew: They must have loved it!" in [f.text for f in pets.facts]  # the rest joined
    assert "salon" in pets.aliases and pets.time.first_seen_at == T0
    archived = work.topics[old.topic_id]
    assert archived.archived_at == now and work.versions[old.topic_id] == 3  # written, guarded
    event = work.events[-1][0]
    assert event.topic_id == "t-pets" and event.at == T0  # when the salon was talked about
    assert event.delta_summary.startswith("joined 'salon': ")


def _only(topic: Topic, ids: list[str]) -> list[Topic]:
    return [topic] if ids == [topic.topic_id] else []


def test_a_topic_of_several_sessions_or_mostly_other_news_stays_and_dates_what_it_gave() -> None:
    now = T0 + timedelta(days=60)
    for old in (
        _old(SALON, days=9),  # first..last seen over nine days: not one session's segment
        _old([*SALON, *[("Andrew", f"My new job, day {i}.") for i in range(4)]]),  # 2 of 7
    ):
        work, seeded = _seeded_sleep(old)
        assert absorb_seeds(work, seeded, partial(_only, old), ON, "s2", now) == set()
        assert old.topic_id not in work.topics  # not archived, not written
        event = work.events[-1][0]  # the seed's facts are dated when they were said
        assert len(work.events) == 2 and event.at == T0 and event.topic_id == "t-pets"
        assert event.delta_summary.startswith("gathered from 'salon': Audrey: ")
    work, seeded = _seeded_sleep(_old(SALON))
    assert absorb_seeds(work, seeded, partial(_only, _old(SALON)), OFF, "s2", now) == set()
    assert len(work.events) == 1  # off: no history added either


def test_what_another_durable_topic_files_stays_there_when_an_episode_is_absorbed() -> None:
    cands, vectors, targets = _sleep()
    andrew = Candidate(key="andrew", label="Andrew", person=True, returns=1)
    andrew.add_fact(next(f for f in cands[1].facts if f.text.startswith("Andrew")))
    (out, _, out_targets), took = absorb_episodes(
        [*cands, andrew], [*vectors, [1.0, 0.0]], [*targets, ("t-andrew", False)], ON
    )
    salon = next(c for c in out if c.key == "salon")
    assert out_targets[[c.key for c in out].index("salon")] == ("t-pets", False)
    assert [f.text for f in salon.facts] == [f"Audrey: {SALON[0][1]}", f"Audrey: {SALON[2][1]}"]
    assert took == {"t-pets"}
