"""What a sleep keeps of a chat with an assistant (sleepwake/side_topics.py): a passing
remark's one fact joins the most similar topic of the sleep instead of making a topic."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np

from graph.models import Fact, Message, OpenLoop
from sleepwake.candidates import Candidate
from sleepwake.side_topics import fold_side_topics, is_remark, structured, with_assistant

T0 = datetime(2023, 5, 23, 7, 4, tzinfo=UTC)


def _cand(key: str, facts: int, **kw: object) -> Candidate:
    return Candidate(
        key=key,
        user_surfaces=Counter({key: 1}),
        facts=[
            Fact(text=f"{key} fact {n}.", source_message_ids=[f"{key}-{n}"]) for n in range(facts)
        ],
        **kw,  # type: ignore[arg-type]
    )


def _turn(role: str, text: str, n: int) -> Message:
    return Message(
        message_id=f"m{n}", namespace="ns", role=role, content=text,
        at=T0 + timedelta(seconds=30 * n), seq=n,
    )  # fmt: skip


# consumer behaviour (0), data analysis (1), a remark "recommendations" (2) most like 1,
# an existing topic (3) merged again
SIMS = np.array(
    [[1.0, 0.2, 0.3, 0.1], [0.2, 1.0, 0.6, 0.1], [0.3, 0.6, 1.0, 0.5], [0.1, 0.1, 0.5, 1.0]]
)
TARGETS = [("t-consumer", True), ("t-data", True), ("t-recs", True), ("t-old", False)]


def test_a_remark_joins_the_most_similar_topic_of_the_sleep_without_its_name() -> None:
    cands = [_cand("consumer behavior", 4), _cand("data analysis", 3),
             _cand("recommendations", 1), _cand("marketing", 2)]  # fmt: skip
    room = {"t-consumer": 8, "t-data": 9, "t-recs": 11, "t-old": 1}
    out, targets, order = fold_side_topics(cands, TARGETS, SIMS, room)
    assert targets == [TARGETS[0], TARGETS[1], ("t-data", True), TARGETS[3]]
    assert out[2].facts == cands[2].facts and out[2].key == "recommendations"
    assert not out[2].user_surfaces  # "recommendations" does not become an alias of it
    assert cands[2].user_surfaces  # the caller's candidate is left as it was
    assert order == [0, 1, 3, 2]  # the topic it joins is made (and named) by its own candidate
    assert room["t-data"] == 8


def test_a_one_fact_request_is_a_remark_and_keeps_its_rule_but_a_correction_is_not() -> None:
    assert is_remark(_cand("web page", 1))
    assert is_remark(_cand("original table format", 1, constraint_count=1))
    assert not is_remark(_cand("web page", 2))
    assert not is_remark(_cand("typo", 1, corrected=True))
    loop = OpenLoop(text="Check the dosages.", source_message_ids=["m1"])
    cands = [_cand("treatment plan", 3), _cand("dosages", 1, constraint_count=1, open_loops=[loop])]
    targets = [("t-plan", True), ("t-dosages", True)]
    sims = np.array([[1.0, 0.9], [0.9, 1.0]])
    out, folded, _ = fold_side_topics(cands, targets, sims, {"t-plan": 9, "t-dosages": 11})
    assert folded == [targets[0], targets[0]]
    assert out[1].open_loops == [loop] and out[1].constraint_count == 1  # they go with it


def test_a_remark_stays_a_topic_when_no_other_topic_has_room_or_it_is_not_alone() -> None:
    cands = [_cand("consumer behavior", 4), _cand("data analysis", 3),
             _cand("recommendations", 1), _cand("marketing", 2)]  # fmt: skip
    full = {"t-consumer": 0, "t-data": 0, "t-recs": 11, "t-old": 0}
    assert fold_side_topics(cands, TARGETS, SIMS, full)[1] == TARGETS
    # a second candidate joined its topic in matching: a subject, not a remark
    shared = [*TARGETS[:3], ("t-recs", True)]
    assert fold_side_topics(cands, shared, SIMS, {"t-consumer": 8, "t-data": 9})[1] == shared
    # the room left by one fold counts for the next: the fuller target is skipped
    two = [*cands[:2], _cand("ages", 1), _cand("shade", 1)]
    targets = [("t-consumer", True), ("t-data", True), ("t-ages", True), ("t-shade", True)]
    sims = np.array(
        [[1.0, 0.2, 0.3, 0.3], [0.2, 1.0, 0.6, 0.6], [0.3, 0.6, 1.0, 0.1], [0.3, 0.6, 0.1, 1.0]]
    )
    folded = fold_side_topics(two, targets, sims, {"t-consumer": 5, "t-data": 1})[1]
    assert folded[2:] == [("t-data", True), ("t-consumer", True)]


def test_only_a_slice_with_a_long_answer_is_a_chat_with_an_assistant() -> None:
    long = "Here are some ideas for your marketing research. " * 12
    assert with_assistant([_turn("user", "Help me plan it.", 0), _turn("assistant", long, 1)])
    assert not with_assistant(
        [_turn("user", "Book the caterer.", 0), _turn("assistant", "Noted.", 1)]
    )
    assert not with_assistant([_turn("user", long, 0), _turn("user", long, 1)])


def test_an_aside_between_people_joins_only_a_near_topic_and_never_a_persons_or_theme() -> None:
    """Talk between people (``aside_topic_facts`` 2, ``floor`` the merge floor): "nasty flood"
    (two facts) joins the community meeting it was said in; "outside" has no topic near
    enough and stays one; a person's and a theme's candidates are never asides."""
    cands = [_cand("community meeting", 5), _cand("nasty flood", 2), _cand("outside", 1),
             _cand("john", 1, person=True), _cand("maria's pottery", 2, theme="episode")]  # fmt: skip
    targets = [("t-meeting", True), ("t-flood", True), ("t-outside", True),
               ("t-john", True), ("t-pottery", True)]  # fmt: skip
    sims = np.array(
        [
            [1.0, 0.45, 0.1, 0.6, 0.5],
            [0.45, 1.0, 0.2, 0.6, 0.5],
            [0.1, 0.2, 1.0, 0.25, 0.2],
            [0.6, 0.6, 0.25, 1.0, 0.5],
            [0.5, 0.5, 0.2, 0.5, 1.0],
        ]
    )
    room = {tid: 18 for tid, _ in targets}
    out, folded, order = fold_side_topics(cands, targets, sims, room, 2, floor=0.3)
    assert not out[1].user_surfaces  # the aside's name does not become an alias
    # the flood's nearest is John's topic (0.6), but a person's topic takes only their news
    assert folded[1] == ("t-meeting", True)
    assert folded[2] == ("t-outside", True)  # nothing at cosine >= 0.3: stays a topic
    assert folded[3] == ("t-john", True) and folded[4] == ("t-pottery", True)
    assert order[-1] == 1


def test_an_end_of_a_dependency_or_a_candidate_with_structure_is_never_an_aside() -> None:
    """ "The billing migration depends on the schema review": the schema review (one fact) is
    the topic the DEPENDS_ON edge points to; a rule, an open loop or a number keeps its own."""
    loop = OpenLoop(text="Book the caterer.", source_message_ids=["m1"])
    cands = [_cand("billing migration", 4), _cand("schema review", 1), _cand("caterer", 1,
             open_loops=[loop]), _cand("plates", 1, constraint_count=1), _cand("weather", 1)]  # fmt: skip
    kept = structured(cands, [("billing migration", "schema review")])
    assert kept == {"billing migration", "schema review", "caterer", "plates"}
    targets = [(f"t-{c.key}", True) for c in cands]
    sims = np.full((5, 5), 0.5)
    room = {tid: 18 for tid, _ in targets}
    folded = fold_side_topics(cands, targets, sims, room, 2, floor=0.3, kept=kept)[1]
    assert folded[:4] == targets[:4]  # each keeps its topic
    assert folded[4] == ("t-billing migration", True)  # small talk joins the nearest
