"""The pure logic of sleep and wake: policy, candidates, matching (§8.1), normalisation,
subjects, tiers, export, LoCoMo replay, ingest parsing, the resume decision and the full-text
phrase query. No I/O, no Neo4j, no model: candidates, topics and packets are built by hand.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest
import yaml

from graph.errors import ValidationFailed
from graph.fulltext import in_namespace, name_query
from graph.models import (
    Fact,
    InProgress,
    Message,
    NotableEvent,
    OpenLoop,
    Topic,
    TopicStats,
    TopicTime,
    TypedNumber,
    WakePacket,
)
from sleepwake.candidates import (
    Candidate,
    build_candidates,
    constraint_phrase,
    normalise_key,
)
from sleepwake.config import DEFAULT
from sleepwake.conversation import parse_jsonl
from sleepwake.export import export_memory, topic_entry
from sleepwake.matching import (
    MatchScore,
    MergeConfig,
    PoolTopic,
    alias_score,
    best_match,
    called_by_name,
    embedding_score,
    full,
    required_cosine,
    score,
)
from sleepwake.normalise import merge_candidate, stable_id, utility_delta
from sleepwake.policy import SleepPolicy, estimate_tokens, select_slice, tail_length
from sleepwake.replay import locomo_sessions, parse_session_date
from sleepwake.subjects import compute_subjects
from sleepwake.tiers import bucket, decayed, recency
from sleepwake.wake import resume_plan
from text.tokens import stem

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
W = MergeConfig()
DECAY_PER_DAY = DEFAULT.tiers.decay_per_day


def budget_exceeded(buffer: Sequence[Message], policy: SleepPolicy) -> bool:
    """The buffer holds more than ``buffer_share`` of the context budget (the rule the
    budget trigger starts from; ``budget_sleep_due`` adds the slice's worth)."""
    used = sum(m.token_estimate or estimate_tokens(m.content) for m in buffer)
    return used > policy.buffer_share * policy.context_budget_tokens


def idle_since(last_at: datetime | None, now: datetime, policy: SleepPolicy) -> bool:
    """Nothing was said for at least ``idle_gap``."""
    return last_at is not None and now - last_at >= policy.idle_gap


Role = Literal["user", "assistant", "system", "tool"]


def msg(
    seq: int,
    content: str,
    role: Role = "user",
    minutes: float | None = None,
    speaker: str | None = None,
    tokens: int = 0,
) -> Message:
    """A stored message with explicit id, seq and time (``minutes`` after T0, default ``seq``)."""
    return Message(
        namespace="t",
        role=role,
        speaker=speaker,
        content=content,
        at=T0 + timedelta(minutes=seq if minutes is None else minutes),
        seq=seq,
        message_id=f"m{seq}",
        token_estimate=tokens,
    )


def by_key(messages: list[Message]) -> dict[str, Candidate]:
    return {c.key: c for c in build_candidates(messages).candidates}


def cand(
    key: str,
    *,
    co: set[str] | None = None,
    hint: datetime | None = None,
    at: datetime = T0,
    facts: list[str] | None = None,
    user: list[str] | None = None,
    assistant: list[str] | None = None,
    ids: list[str] | None = None,
    constraints: int = 0,
    corrected: bool = False,
) -> Candidate:
    user_forms, other_forms = Counter(user or []), Counter(assistant or [])
    return Candidate(
        key=key,
        surfaces=user_forms + other_forms or Counter([key]),
        user_surfaces=user_forms,
        facts=[Fact(text=t, at=at, source_message_ids=ids or ["m1"]) for t in facts or []],
        co_entities=co or set(),
        message_ids=ids or ["m1"],
        first_at=at,
        last_at=at,
        constraint_count=constraints,
        corrected=corrected,
        time_hint=hint,
    )


def pool_topic(
    names: tuple[str, ...],
    text: str = "",
    first: datetime = T0,
    last: datetime = T0,
    topic_id: str = "t1",
) -> PoolTopic:
    return PoolTopic(topic_id, names, text, first, last)


def topic(
    topic_id: str = "t1",
    *,
    name: str = "Billing Migration",
    one_liner: str = "",
    first: datetime = T0,
    last: datetime = T0,
    utility: float = 0.0,
    facts: list[str] | None = None,
    aliases: list[str] | None = None,
    numbers: list[TypedNumber] | None = None,
) -> Topic:
    return Topic(
        topic_id=topic_id,
        namespace="t",
        name=name,
        one_liner=one_liner,
        aliases=aliases or [],
        facts=[Fact(text=t, at=first, source_message_ids=["m0"]) for t in facts or []],
        numbers=numbers or [],
        time=TopicTime(first_seen_at=first, last_seen_at=last),
        stats=TopicStats(utility_score=utility),
    )


# ----------------------------------------------------------------------------------- policy


@pytest.mark.parametrize(
    ("chars", "tokens"), [(0, 0), (1, 1), (3, 1), (4, 1), (5, 2), (8, 2), (9, 3), (401, 101)]
)
def test_estimate_tokens_is_ceil_of_chars_over_four(chars: int, tokens: int) -> None:
    assert estimate_tokens("x" * chars) == tokens


def test_budget_is_exceeded_only_past_the_buffer_share() -> None:
    policy = SleepPolicy(context_budget_tokens=1000, buffer_share=0.5)  # threshold: 500 tokens
    at_share = [msg(1, "a", tokens=300), msg(2, "b", tokens=200)]
    assert not budget_exceeded(at_share, policy)
    assert budget_exceeded([*at_share, msg(3, "c", tokens=1)], policy)


def test_budget_falls_back_to_estimating_messages_without_a_token_count() -> None:
    policy = SleepPolicy(context_budget_tokens=1000, buffer_share=0.5)
    assert not budget_exceeded([msg(1, "x" * 2000)], policy)  # 500 tokens: at the share
    assert budget_exceeded([msg(1, "x" * 2001)], policy)  # 501 tokens


def test_idle_since_needs_a_full_idle_gap_and_a_last_message() -> None:
    policy = SleepPolicy(idle_gap=timedelta(hours=6))
    assert idle_since(T0, T0 + timedelta(hours=6), policy)
    assert not idle_since(T0, T0 + timedelta(hours=6) - timedelta(seconds=1), policy)
    assert not idle_since(None, T0 + timedelta(days=30), policy)


def test_select_slice_keeps_the_last_tail_turns_verbatim() -> None:
    buffer = [msg(i, f"turn {i}") for i in range(10)]
    piece = select_slice(buffer, SleepPolicy(tail_turns=4))
    assert [m.seq for m in piece] == [0, 1, 2, 3, 4, 5]


def test_a_tail_of_long_turns_keeps_only_its_token_share() -> None:
    """Chat-assistant turns of ~2,000 characters: twelve of them would hold two thirds of the
    buffer threshold (4,800 tokens), so the tail keeps what fits a quarter of it (1,200)."""
    roles: list[Role] = ["user", "assistant"] * 10
    buffer = [msg(i, f"turn {i}", role, tokens=100 if role == "user" else 500)
              for i, role in enumerate(roles)]  # fmt: skip
    piece = select_slice(buffer, SleepPolicy())
    assert len(piece) == 16  # the last two exchanges (1,200 tokens) stay verbatim
    huge = [msg(i, "x", tokens=3000) for i in range(5)]
    assert len(select_slice(huge, SleepPolicy())) == 3  # never fewer than min_tail_turns


def test_a_token_cut_tail_never_starts_with_an_answer() -> None:
    # q1 300, a1 700, q2 300 tokens: 1,000 fit, so the cut would fall between q1 and a1
    tokens, roles = [200, 300, 700, 300], ["assistant", "user", "assistant", "user"]
    assert tail_length(tokens, SleepPolicy(), roles) == 3  # a1 keeps its question q1
    assert tail_length(tokens, SleepPolicy()) == 2  # without roles: tokens alone
    short = [10] * 8  # short turns: the turn count rules, as before
    assert tail_length(short, SleepPolicy(tail_turns=4), ["assistant", "user"] * 4) == 4


def test_select_slice_caps_at_max_slice_messages_oldest_first() -> None:
    buffer = [msg(i, f"turn {i}") for i in range(10)]
    piece = select_slice(buffer, SleepPolicy(tail_turns=2, max_slice_messages=3))
    assert [m.seq for m in piece] == [0, 1, 2]


@pytest.mark.parametrize("size", [0, 3, 4])
def test_a_buffer_no_longer_than_the_tail_gives_an_empty_slice(size: int) -> None:
    buffer = [msg(i, f"turn {i}") for i in range(size)]
    assert select_slice(buffer, SleepPolicy(tail_turns=4)) == []


# --------------------------------------------------------------------------------- matching


def test_exact_alias_scores_the_full_alias_weight() -> None:
    assert alias_score("billing migration", ("billing migration", "billing"), W) == 3.0


def test_varied_wording_of_one_concept_matches_via_stems() -> None:
    assert alias_score("billing migration", ("migrating the billing tables",), W) == 3.0


def test_half_overlap_scores_half_and_unrelated_words_score_zero() -> None:
    assert alias_score("billing service", ("billing migration",), W) == pytest.approx(1.5)
    assert alias_score("garden beds", ("billing migration", "invoices table"), W) == 0.0


@pytest.mark.parametrize(
    ("cosine", "expected"),
    [(-0.5, 0.0), (0.0, 0.0), (0.3, 0.0), (0.45, 0.75), (0.6, 1.5), (0.9, 3.0), (1.0, 3.0)],
)
def test_embedding_score_is_linear_between_the_floor_and_full_cosines(
    cosine: float, expected: float
) -> None:
    assert embedding_score(cosine, W) == pytest.approx(expected)


def test_time_proximity_counts_only_when_the_candidate_has_a_time_hint() -> None:
    pool = pool_topic(("lake house",), first=T0, last=T0 + timedelta(days=1))
    assert score(cand("lake house"), pool, 0.5, W).time == 0.0
    inside = score(cand("lake house", hint=T0 + timedelta(hours=12)), pool, 0.5, W)
    assert inside.time == pytest.approx(2.0)
    week_later = score(cand("lake house", hint=T0 + timedelta(days=8)), pool, 0.5, W)
    assert week_later.time == pytest.approx(2.0 * math.exp(-1.0))


def test_entity_overlap_is_the_share_of_co_entities_the_topic_mentions() -> None:
    pool = pool_topic(("party",), text="the party with anna and ben at the lake house")
    assert score(cand("party", co={"anna", "carla"}), pool, 0.0, W).entity == pytest.approx(0.75)
    assert score(cand("party", co={"anna", "ben"}), pool, 0.0, W).entity == pytest.approx(1.5)
    assert score(cand("party"), pool, 0.0, W).entity == 0.0


def test_a_different_party_months_later_is_vetoed_whatever_else_matches() -> None:
    march = pool_topic(("party",), text="party: the party with anna and ben was fun")
    june = cand("party", co={"carla"}, hint=T0 + timedelta(days=100))
    assert june.event_like
    result = score(june, march, 0.95, W)
    assert result.total >= W.threshold  # alias 3 + embedding 3: it would merge...
    assert result.vetoed
    assert best_match([result], W) is None  # ...but it is a different event


def test_the_event_veto_needs_a_gap_over_14_days_and_no_shared_entity() -> None:
    march = pool_topic(("party",), text="party: the party with anna and ben was fun")
    near = score(cand("party", hint=T0 + timedelta(days=13)), march, 0.95, W)
    assert not near.vetoed
    shared = score(cand("party", co={"anna"}, hint=T0 + timedelta(days=100)), march, 0.95, W)
    assert not shared.vetoed
    not_event = score(cand("billing", hint=T0 + timedelta(days=100)), march, 0.95, W)
    assert not not_event.vetoed


def test_the_same_name_weeks_apart_needs_one_liners_that_agree() -> None:
    photo = pool_topic(("photo",), text="photo: a photo of the beach at sunset")
    later = cand("photo", hint=T0 + timedelta(days=40))
    later.hint_is_mention = True  # talked about then, not an event happening then
    unlike = score(later, photo, W.min_cosine - 0.05, W)
    assert unlike.total >= W.threshold - W.embedding and unlike.vetoed
    assert not score(later, photo, W.min_cosine + 0.05, W).vetoed
    same_day = cand("photo", hint=T0 + timedelta(hours=3))
    same_day.hint_is_mention = True  # a conversation a sleep cut in two
    assert not score(same_day, photo, W.min_cosine - 0.05, W).vetoed


def test_a_big_topic_takes_only_what_is_like_it() -> None:
    """A topic of dozens of facts merging whatever shares a word with its aliases becomes a
    topic about everything: the cosine a merge needs rises with the topic's size."""
    assert required_cosine(0, W) == required_cosine(W.size_free_facts, W) == W.min_cosine
    assert required_cosine(4 * W.size_free_facts, W) == pytest.approx(
        W.min_cosine + 2 * W.size_step
    )
    # (the size cap, ``max_facts``, is tested below; here it is out of the way)
    w = W.model_copy(update={"max_facts": 100})
    small = pool_topic(("photo",), text="photo: a photo of the beach at sunset")
    big = PoolTopic("t2", ("photo",), small.text, T0, T0, facts=4 * w.size_free_facts)
    later = cand("photo", hint=T0 + timedelta(days=40))
    later.hint_is_mention = True
    middling = w.min_cosine + w.size_step
    assert not score(later, small, middling, w).vetoed
    assert score(later, big, middling, w).vetoed
    assert not score(later, big, w.min_cosine + 3 * w.size_step, w).vetoed
    same_day = cand("photo", hint=T0 + timedelta(hours=3))
    same_day.hint_is_mention = True  # the same day no longer excuses an unlike newcomer
    assert score(same_day, big, w.min_cosine - 0.05, w).vetoed
    assert not score(same_day, small, w.min_cosine - 0.05, w).vetoed


def test_a_topic_at_its_size_cap_takes_no_more_facts_under_another_name() -> None:
    """A topic of dozens of facts is found for questions about any of them and fills a context
    alone: past ``max_facts`` what was said under another name (a "beach picture" that also
    goes by "photo") goes on in a new topic, however alike; the subject by the topic's own
    name of two words or more, or a kind of it ("advanced pottery class"), still merges (the
    same pottery class in three sessions is one topic)."""
    text = "photo: a photo of the beach at sunset"
    room = PoolTopic("t1", ("photo",), text, T0, T0, facts=W.max_facts - 2)

    def sunset(facts: list[str]) -> Candidate:
        c = cand("beach picture", hint=T0 + timedelta(hours=3), facts=facts)
        c.alias_keys = ["photo"]
        c.hint_is_mention = True
        return c

    assert not score(sunset(["I took a photo.", "At dusk."]), room, 0.95, W).vetoed  # fills it
    assert score(sunset(["a.", "b.", "c."]), room, 0.95, W).vetoed
    full_topic = PoolTopic("t2", ("photo",), text, T0, T0, facts=W.max_facts)
    assert score(sunset(["I took a photo."]), full_topic, 0.99, W).vetoed
    assert best_match([score(sunset(["I took a photo."]), full_topic, 0.99, W)], W) is None
    # a one-word name is in every kind of it ("sunset photo", "family photo"): no exemption
    for name in ("photo", "sunset photo"):
        again = cand(name, hint=T0 + timedelta(hours=3), facts=["I took another photo."])
        again.hint_is_mention = True
        assert score(again, full_topic, 0.99, W).vetoed, name
    pottery = PoolTopic("t3", ("pottery class",), "pottery class", T0, T0, facts=W.max_facts)
    for name in ("pottery class", "advanced pottery class"):
        same = cand(name, hint=T0 + timedelta(hours=3), facts=["I signed up again."])
        same.hint_is_mention = True
        assert not score(same, pottery, 0.99, W).vetoed, name
    assert full(W.max_facts, 1, W) and not full(W.max_facts - 1, 1, W) and not full(0, 99, W)


def test_a_co_entity_only_counts_as_a_whole_word_of_the_topic() -> None:
    march = pool_topic(("party",), text="party: the party with anna went on for a long time")
    june = cand("party", co={"tim"}, hint=T0 + timedelta(days=100))
    result = score(june, march, 0.95, W)
    assert result.entity == 0.0
    assert result.vetoed


def test_best_match_is_none_under_the_threshold_and_the_highest_over_it() -> None:
    low = MatchScore("t1", alias=1.5, embedding=2.0, entity=0.0, time=0.0, vetoed=False)
    assert low.total < W.threshold
    assert best_match([low], W) is None
    good = MatchScore("t2", alias=3.0, embedding=1.0, entity=0.0, time=0.0, vetoed=False)
    better = MatchScore("t3", alias=3.0, embedding=2.0, entity=0.0, time=0.0, vetoed=False)
    assert best_match([low, good, better], W) == better
    assert best_match([], W) is None


def test_best_match_breaks_ties_on_the_lowest_topic_id() -> None:
    a = MatchScore("a", alias=3.0, embedding=1.0, entity=0.0, time=0.0, vetoed=False)
    b = MatchScore("b", alias=3.0, embedding=1.0, entity=0.0, time=0.0, vetoed=False)
    assert best_match([b, a], W) == a


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("migration", "migrat"),
        ("migrations", "migrat"),
        ("migrating", "migrat"),
        ("migrated", "migrat"),
        ("party", "parti"),
        ("parties", "parti"),
        ("table", "tabl"),
        ("tables", "tabl"),
        ("booked", "book"),
        ("boxes", "box"),
        ("bed", "bed"),  # too short to strip "ed"
        ("is", "is"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


# ------------------------------------------------------------------------------- candidates


def test_facts_carry_the_ids_of_the_messages_they_came_from() -> None:
    found = by_key(
        [
            msg(1, "The Lake House has a new dock."),
            msg(2, "Anna booked the Lake House for June.", minutes=200),
        ]
    )
    house = found["lake house"]
    assert house.message_ids == ["m1", "m2"]
    assert [(f.text, f.source_message_ids) for f in house.facts] == [
        ("The Lake House has a new dock.", ["m1"]),
        ("Anna booked the Lake House for June.", ["m2"]),
    ]
    assert found["anna"].message_ids == ["m2"]
    assert house.first_at == T0 + timedelta(minutes=1)
    assert house.last_at == T0 + timedelta(minutes=200)


def test_a_follow_up_without_entities_within_30_minutes_joins_the_previous_message() -> None:
    found = by_key(
        [
            msg(1, "The Billing Migration starts next week."),
            msg(2, "It has to be done by Friday.", minutes=20),
            msg(3, "It should be quick.", minutes=60),  # 40 min after m2: a new thread
        ]
    )
    texts = [(f.text, f.source_message_ids) for f in found["billing migration"].facts]
    assert ("It has to be done by Friday.", ["m2"]) in texts
    assert all("quick" not in t for t, _ in texts)


def test_numbers_loops_and_decisions_go_to_the_candidate_of_their_sentence() -> None:
    found = by_key(
        [
            msg(1, "The Garden Party needs about 30 guests. We still need to book the caterer."),
            msg(2, "We chose Postgres over MySQL because of JSONB. The Lake House is lovely."),
        ]
    )
    assert [(n.key, n.value) for n in found["garden party"].numbers] == [("guests", 30.0)]
    assert found["garden party"].numbers[0].source_message_ids == ["m1"]
    assert found["caterer"].numbers == []
    assert [o.text for o in found["caterer"].open_loops] == ["We still need to book the caterer."]
    assert found["garden party"].open_loops == []
    decision = "Decided: Postgres over MySQL because of JSONB"
    assert [e.event for e in found["postgres"].events] == [decision]
    assert found["lake house"].events == []


def test_a_rule_without_a_named_entity_becomes_a_candidate_of_what_it_is_about() -> None:
    assert constraint_phrase("Never use plastic plates") == "plastic plates"
    found = by_key([msg(1, "Never use plastic plates, we prefer real dishes.")])
    plates = found["plastic plates"]
    assert plates.constraint_count == 1
    assert [f.text for f in plates.facts] == ["Never use plastic plates, we prefer real dishes."]


def test_what_a_rule_is_about_is_a_noun_phrase_not_its_last_words() -> None:
    """Between friends most rule-shaped sentences are encouragement (LoCoMo dev): their last
    three words other than rule words named episodes "me updated", "pushing", "give up",
    "through this again". What a rule constrains is its object, a noun phrase, or nothing."""
    for said in [
        "Keep me updated!",
        "Keep pushing on.",
        "Don't give up, buddy!",
        "I never want to go through this again.",
        "Keep motivating each other!",
        "He never gives up and always stands up for justice.",
    ]:
        assert constraint_phrase(said) == "", said
    assert constraint_phrase("Keep the wiki updated") == "wiki"
    assert constraint_phrase("Always format dates as ISO") == "dates"
    reach = "Use social media channels and work with influencers for bigger reach."
    assert constraint_phrase(reach) == "social media channels"
    found = by_key([msg(1, "Keep me updated!"), msg(2, "Keep pushing on.")])
    assert "me updated" not in found and "pushing" not in found


def test_a_rule_does_not_constrain_an_entity_of_another_sentence() -> None:
    found = by_key([msg(1, "Never use plastic plates. The Garden Shed has a new roof.")])
    assert found["plastic plates"].constraint_count == 1
    assert found["garden shed"].constraint_count == 0


SECRETS = [
    "sk-proj-Zx81QmP0v2Lr7Tt9Yb3Kd6Hs1Wq4Ne5Uc8Af",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "Hunter2!x",
]


def test_a_secret_never_reaches_a_candidate() -> None:
    sliced = build_candidates(
        [
            msg(1, f"Use the OpenAI key {SECRETS[0]} for the Billing Service deploy."),
            msg(2, f"The Staging Server uses {SECRETS[1]} and token {SECRETS[2]}."),
            msg(3, f"The Staging DB password is {SECRETS[3]} now."),
            msg(4, f"We still need to rotate {SECRETS[2]} before the Billing Service launch."),
        ]
    )
    assert {"billing service", "staging server"} <= {c.key for c in sliced.candidates}
    for c in sliced.candidates:
        text = " ".join(
            [
                c.key,
                *c.surfaces,
                *(f.text for f in c.facts),
                *(o.text for o in c.open_loops),
                *(e.event for e in c.events),
                *(n.key for n in c.numbers),
                *c.co_entities,
            ]
        )
        for secret in SECRETS:
            assert secret not in text, (c.key, secret)
    facts = [f.text for c in sliced.candidates for f in c.facts]
    assert any("[REDACTED:openai_key]" in f for f in facts)


def test_a_speaker_name_prefixes_the_fact() -> None:
    found = by_key([msg(1, "Anna booked the Lake House.", speaker="Caroline")])
    assert [f.text for f in found["lake house"].facts] == ["Caroline: Anna booked the Lake House."]


@pytest.mark.parametrize(
    ("phrase", "key"),
    [
        ("The Lake House", "lake house"),
        ("my  Billing   Migration", "billing migration"),
        ("an apple", "apple"),
        ("Our team's plan!", "team's plan"),
        ("Theory", "theory"),  # "the" only as a whole word
    ],
)
def test_normalise_key_strips_determiners_case_and_punctuation(phrase: str, key: str) -> None:
    assert normalise_key(phrase) == key


# -------------------------------------------------------------------------------- normalise


def test_merge_deduplicates_facts_ignoring_case_and_punctuation() -> None:
    base = topic(facts=["The billing migration starts Monday."])
    new = cand(
        "billing migration",
        facts=["the Billing Migration starts monday", "Invoices are next."],
    )
    merged, summary = merge_candidate(base, new)
    assert [f.text for f in merged.facts] == [
        "The billing migration starts Monday.",
        "Invoices are next.",
    ]
    assert "1 facts" in summary


def test_merge_deduplicates_numbers_on_key_value_and_unit() -> None:
    def number(key: str, value: float, unit: str | None) -> TypedNumber:
        return TypedNumber(key=key, value=value, unit=unit, at=T0, source_message_ids=["m1"])

    base = topic(numbers=[number("budget", 500.0, "USD")])
    new = cand("billing migration")
    new.numbers = [
        number("Budget", 500.0, "usd"),  # the same number
        number("budget", 600.0, "USD"),  # a new value
        number("budget", 500.0, "EUR"),  # a new unit
    ]
    merged, _ = merge_candidate(base, new)
    assert [(n.value, n.unit) for n in merged.numbers] == [
        (500.0, "USD"),
        (600.0, "USD"),
        (500.0, "EUR"),
    ]


def test_merge_keeps_a_one_liner_once_set_and_fills_an_empty_one() -> None:
    new = cand("billing migration", facts=["We are moving the billing tables to Postgres."])
    kept, _ = merge_candidate(topic(one_liner="Moving billing to Postgres."), new)
    assert kept.one_liner == "Moving billing to Postgres."
    filled, _ = merge_candidate(topic(one_liner=""), new)
    assert filled.one_liner == "We are moving the billing tables to Postgres."


def test_a_composed_one_liner_follows_the_facts_a_merge_adds() -> None:
    """A topic that grew over sessions says what it holds now: its composed one-liner (parts
    quoting its facts) is composed again when a merge adds facts, from the current ones."""
    first = "Melanie: I signed up for a pottery class at the studio."
    base = topic(name="pottery class", one_liner=first, facts=[first])
    news = [
        "Caroline: I adopted a guinea pig and I love him.",
        "Melanie: My pottery class made six bowls and my pottery teacher loved them.",
        "Melanie: In pottery class we made bowls on the wheel for my kids.",
    ]
    merged, _ = merge_candidate(base, cand("pottery class", facts=news))
    assert merged.one_liner.startswith("Melanie: ") and " Caroline: I adopted" in merged.one_liner
    unchanged, _ = merge_candidate(merged, cand("pottery class", facts=news[1:]))
    assert unchanged.one_liner == merged.one_liner  # nothing added: nothing recomposed


def test_merge_adds_the_users_words_as_aliases_but_not_the_assistants() -> None:
    new = cand(
        "billing migration",
        user=["billing move", "Billing Migration", "billing move"],
        assistant=["the migration project"],
    )
    merged, _ = merge_candidate(topic(name="Billing Migration", aliases=["Billing"]), new)
    assert merged.aliases == ["Billing", "billing move"]


def test_merge_extends_first_and_last_seen() -> None:
    base = topic(first=T0, last=T0 + timedelta(days=1))
    earlier, _ = merge_candidate(base, cand("billing migration", at=T0 - timedelta(days=2)))
    assert earlier.time.first_seen_at == T0 - timedelta(days=2)
    assert earlier.time.last_seen_at == T0 + timedelta(days=1)
    later, _ = merge_candidate(base, cand("billing migration", at=T0 + timedelta(days=5)))
    assert later.time.first_seen_at == T0
    assert later.time.last_seen_at == T0 + timedelta(days=5)


def test_merge_keeps_decisions_and_loops_once_in_time_order() -> None:
    base = topic()
    base.time.notable_events = [
        NotableEvent(at=T0 + timedelta(days=1), event="Decided: Postgres", source_message_ids=[])
    ]
    base.open_loops = [OpenLoop(text="Book the caterer.", source_message_ids=[])]
    new = cand("billing migration")
    new.events = [
        NotableEvent(at=T0 + timedelta(days=1), event="decided: postgres", source_message_ids=[]),
        NotableEvent(at=T0, event="Decided: keep MySQL for now", source_message_ids=[]),
    ]
    new.open_loops = [OpenLoop(text="book the caterer", source_message_ids=[])]
    merged, _ = merge_candidate(base, new)
    assert [e.event for e in merged.time.notable_events] == [
        "Decided: keep MySQL for now",
        "Decided: Postgres",
    ]
    assert [o.text for o in merged.open_loops] == ["Book the caterer."]


@pytest.mark.parametrize(
    ("mentions", "constraints", "corrected", "delta"),
    [(1, 0, False, 1.0), (3, 0, False, 3.0), (2, 2, False, 5.0), (1, 0, True, 6.0),
     (2, 1, True, 10.0)],
)  # fmt: skip
def test_utility_delta(mentions: int, constraints: int, corrected: bool, delta: float) -> None:
    c = cand("x", ids=[f"m{i}" for i in range(mentions)], constraints=constraints,
             corrected=corrected)  # fmt: skip
    assert utility_delta(c) == delta
    merged, _ = merge_candidate(topic(utility=2.0), c)
    assert merged.stats.utility_score == 2.0 + delta


def test_stable_id_is_deterministic_and_depends_on_every_part() -> None:
    assert stable_id("ns", "slice", "key") == stable_id("ns", "slice", "key")
    assert stable_id("ns", "slice", "key") != stable_id("ns", "slice", "key2")
    assert stable_id("a", "bc") != stable_id("ab", "c")


# --------------------------------------------------------------------------------- subjects

SUBJECT_SLICE = [
    msg(1, "Anna and Ben are planning the Lake House trip."),
    msg(2, "The Billing Migration and the Invoice Table are next."),
    msg(3, "Anna booked the Lake House again.", minutes=200),
    msg(4, "The Billing Migration blocks the Invoice Table release.", minutes=400),
]


def test_subjects_group_co_mentioned_candidates_deterministically() -> None:
    sliced = build_candidates(SUBJECT_SLICE)
    first = compute_subjects(sliced.candidates, sliced.per_message, {})
    again = compute_subjects(sliced.candidates, sliced.per_message, {})
    assert first == again
    groups = [set(s.keys) for s in first]
    assert {"anna", "ben", "lake house"} in groups
    assert {"billing migration", "invoice table"} in groups
    assert first[0].salience >= first[-1].salience
    assert sum(s.salience for s in first) <= 1.0 + 1e-9
    assert all(0.0 < s.salience <= 1.0 for s in first)


LONE = [
    msg(5, "The Garden Shed is old.", minutes=600),
    *[msg(6 + i, f"The Bike Shop is {w}.", minutes=700 + 100 * i) for i, w in enumerate("abc")],
]


def test_a_lone_passing_mention_is_no_subject_but_a_recurring_one_is() -> None:
    sliced = build_candidates(SUBJECT_SLICE + LONE)
    subjects = compute_subjects(sliced.candidates, sliced.per_message, {})
    keys = [s.keys for s in subjects]
    assert ("bike shop",) in keys  # three mentions
    assert all("garden shed" not in k for k in keys)  # one mention, nothing said with it
    assert sum(s.salience for s in subjects) < 1.0  # the dropped mention counts in the total


def test_a_similar_vector_joins_a_lone_candidate_to_a_subject() -> None:
    sliced = build_candidates(SUBJECT_SLICE + LONE)
    keys = [c.key for c in sliced.candidates]
    vectors = {k: [float(i == j) for j in range(len(keys))] for i, k in enumerate(keys)}
    for k in ("garden shed", "invoice table"):
        vectors[k] = vectors["billing migration"]
    subjects = compute_subjects(sliced.candidates, sliced.per_message, vectors)
    groups = [set(s.keys) for s in subjects]
    assert {"billing migration", "invoice table", "garden shed"} in groups


def test_no_candidates_no_subjects() -> None:
    assert compute_subjects([], {}, {}) == []


# ------------------------------------------------------------------------------------ tiers


def test_decay_is_two_percent_per_day_unless_exempt() -> None:
    assert DECAY_PER_DAY == 0.98
    assert decayed(10.0, T0, T0 + timedelta(days=10)) == pytest.approx(10.0 * 0.98**10)
    assert decayed(10.0, T0, T0 + timedelta(hours=36)) == pytest.approx(10.0 * 0.98**1.5)
    assert decayed(10.0, T0, T0 + timedelta(days=10), exempt=True) == 10.0
    assert decayed(10.0, T0, T0 - timedelta(days=1)) == 10.0  # never grows


@pytest.mark.parametrize(
    ("age_days", "utility", "expected"),
    [
        (0, 0.0, "hot"),
        (3, 0.0, "hot"),
        (3.01, 0.0, "warm"),
        (100, 10.0, "hot"),
        (100, 9.99, "warm"),
        (30, 0.0, "warm"),
        (30.01, 0.0, "cold"),
        (100, 3.0, "warm"),
        (100, 2.99, "cold"),
        (-1, 0.0, "hot"),  # seen "in the future": as recent as it gets
    ],
)
def test_bucket_boundaries(age_days: float, utility: float, expected: str) -> None:
    assert bucket(T0 - timedelta(days=age_days), utility, T0) == expected


def test_recency_is_exponential_with_a_week_time_constant() -> None:
    assert recency(T0, T0) == 1.0
    assert recency(T0 - timedelta(days=7), T0) == pytest.approx(math.exp(-1))
    assert recency(T0 + timedelta(days=1), T0) == 1.0
    assert recency(T0 - timedelta(days=1), T0, timedelta(days=1)) == pytest.approx(math.exp(-1))


# ----------------------------------------------------------------------------------- export


def cost(t: Topic) -> int:
    return estimate_tokens(yaml.safe_dump([topic_entry(t)], sort_keys=False))


def sized(topic_id: str, tokens: int, age_days: float, utility: float) -> Topic:
    """A topic whose exported entry costs exactly ``tokens``."""
    last = T0 - timedelta(days=age_days)
    base = topic(topic_id, name=f"Topic {topic_id}", first=last, last=last, utility=utility)
    pad = (tokens - cost(base.model_copy(update={"one_liner": "x"}))) * 4 + 1
    assert pad > 0, "tokens below the cost of an empty topic"
    for extra in range(8):
        t = base.model_copy(update={"one_liner": "x" * (pad - extra)})
        if cost(t) == tokens:
            return t
    raise AssertionError(f"no padding gives {tokens} tokens")


def exported(text: str) -> dict[str, Any]:
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


def test_export_fits_the_budget_and_puts_hot_topics_first() -> None:
    topics = [
        sized("cold1", 80, age_days=90, utility=0.0),
        sized("warm1", 100, age_days=10, utility=1.0),
        sized("hot-low", 120, age_days=1, utility=1.0),
        sized("hot-high", 120, age_days=1, utility=8.0),
        sized("hot-more", 120, age_days=1, utility=5.0),
    ]
    text = export_memory(topics, 500, T0)
    doc = exported(text)
    assert list(doc) == ["exported_at", "budget_tokens", "hot", "warm", "cold"]
    # hot gets 300 tokens: the two most useful hot topics (240), not the third
    assert [t["topic_id"] for t in doc["hot"]] == ["hot-high", "hot-more"]
    assert [t["topic_id"] for t in doc["warm"]] == ["warm1"]  # 150 + 60 carried
    assert [t["topic_id"] for t in doc["cold"]] == ["cold1"]  # 50 + 110 carried
    assert estimate_tokens(text) <= 500
    entry = doc["hot"][0]
    assert entry["first_seen_at"] == (T0 - timedelta(days=1)).isoformat()
    assert entry["utility_score"] == 8.0


def test_export_carries_unused_budget_to_the_next_tier() -> None:
    warm = [sized(f"w{i}", 200, age_days=10, utility=float(i)) for i in range(3)]
    # no hot topics: warm gets its 300 plus hot's 600, enough for all three (600)
    doc = exported(export_memory(warm, 1000, T0))
    assert doc["hot"] == []
    assert [t["topic_id"] for t in doc["warm"]] == ["w2", "w1", "w0"]
    # with a hot topic using 500 of its 600, warm has 400: the two most useful
    hot = sized("h", 500, age_days=0, utility=1.0)
    doc = exported(export_memory([hot, *warm], 1000, T0))
    assert [t["topic_id"] for t in doc["warm"]] == ["w2", "w1"]


def test_the_whole_exported_file_fits_the_budget_when_topics_fill_it() -> None:
    topics = [sized("cold", 1000, age_days=90, utility=0.0)]  # cold gets 100 + 900 carried
    text = export_memory(topics, 1000, T0)
    assert [t["topic_id"] for t in exported(text)["cold"]] in ([], ["cold"])
    assert estimate_tokens(text) <= 1000


# ----------------------------------------------------------------------------------- replay


def test_parse_session_date() -> None:
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_session_date("10:04 am on 19 Sep,2023") == datetime(2023, 9, 19, 10, 4, tzinfo=UTC)
    assert parse_session_date("12:00 am on 1 January, 2024") == datetime(2024, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationFailed, match="unrecognised LoCoMo session date"):
        parse_session_date("yesterday at noon")


def test_locomo_sessions_replay_in_order_with_provenance_and_captions() -> None:
    sample = {
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_10": [{"speaker": "Melanie", "dia_id": "D10:1", "text": "Much later."}],
            "session_10_date_time": "9:00 am on 1 June, 2023",
            "session_2": [
                {"speaker": "Caroline", "dia_id": "D2:1", "text": "Back again!"},
                {
                    "speaker": "Melanie",
                    "dia_id": "D2:2",
                    "text": "Look at this.",
                    "blip_caption": "a photo of a dog on a beach",
                },
                {"speaker": "Caroline", "dia_id": "D2:3", "text": "So cute."},
            ],
            "session_2_date_time": "7:30 pm on 9 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "Hi Caroline."},
            ],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
        }
    }
    sessions = locomo_sessions(sample)
    starts = [start for start, _ in sessions]
    assert starts == [
        datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
        datetime(2023, 5, 9, 19, 30, tzinfo=UTC),
        datetime(2023, 6, 1, 9, 0, tzinfo=UTC),
    ]
    second = sessions[1][1]
    assert [m.external_id for m in second] == ["D2:1", "D2:2", "D2:3"]
    assert [m.at for m in second] == [starts[1] + timedelta(seconds=30 * i) for i in range(3)]
    assert {m.role for _, ms in sessions for m in ms} == {"user"}
    assert [m.speaker for m in second] == ["Caroline", "Melanie", "Caroline"]
    assert second[1].content == "Look at this. [shares a photo: a photo of a dog on a beach]"
    assert second[0].content == "Back again!"


# ------------------------------------------------------------------------------ parse_jsonl

GOOD = '{"role": "user", "content": "hi", "at": "2026-03-02T09:00:00+00:00"}'


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"role": "user", "content": "hi", "at": ', "not valid JSON"),
        ('{"role": "user", "content": "hi"}', "'at' is required"),
        ('{"role": "user", "content": "hi", "at": "2026-03-02T09:00:00"}', "timezone"),
        ('{"role": "robot", "content": "hi", "at": "2026-03-02T09:00:00Z"}', "role"),
    ],
)
def test_a_malformed_line_is_refused_with_its_line_number(bad: str, message: str) -> None:
    with pytest.raises(ValidationFailed) as info:
        parse_jsonl([GOOD, "", bad, GOOD])
    assert str(info.value).startswith("line 3:")
    assert message in str(info.value)


def test_blank_lines_are_skipped_and_order_kept() -> None:
    lines = [
        GOOD,
        "   ",
        "\n",
        '{"role": "assistant", "content": "hello", "at": "2026-03-02T10:00:00+01:00"}\n',
    ]
    items = parse_jsonl(lines)
    assert [(i.role, i.content) for i in items] == [("user", "hi"), ("assistant", "hello")]
    assert items[1].at == T0


# ----------------------------------------------------------------------------------- resume


def packet(status: Literal["idle", "running", "blocked"], hint: str = "") -> WakePacket:
    return WakePacket(
        namespace="t",
        slept_at=T0,
        in_progress=InProgress(status=status, resume_hint=hint, topic_id="t1"),
    )


POLICY = SleepPolicy(fresh_window=timedelta(hours=12))
HINT = "migrating the billing tables; next step: the invoices table"


def test_nothing_to_resume_without_a_packet_or_a_running_task() -> None:
    assert resume_plan(None, T0, POLICY).action == "none"
    idle = resume_plan(packet("idle", HINT), T0 + timedelta(minutes=5), POLICY)
    assert idle.action == "none" and idle.goal == ""


def test_a_fresh_running_task_resumes_with_goal_and_next_step() -> None:
    plan = resume_plan(packet("running", HINT), T0 + timedelta(hours=12), POLICY)
    assert plan.action == "resume"
    assert plan.goal == "migrating the billing tables"
    assert plan.next_step == "the invoices table"
    assert plan.topic_id == "t1"
    assert plan.slept_for_seconds == 12 * 3600


def test_a_hint_without_a_next_step_resumes_with_the_goal_only() -> None:
    plan = resume_plan(packet("running", "tidying the docs"), T0 + timedelta(hours=1), POLICY)
    assert (plan.action, plan.goal, plan.next_step) == ("resume", "tidying the docs", "")


def test_a_stale_running_task_asks_to_confirm() -> None:
    plan = resume_plan(packet("running", HINT), T0 + timedelta(hours=12, seconds=1), POLICY)
    assert plan.action == "confirm"
    assert "stale" in plan.reason
    assert plan.goal == "migrating the billing tables"
    assert plan.next_step == "the invoices table"


# ------------------------------------------------------------------------------ name_query


def test_name_query_asks_the_namespace_for_whole_names_escaping_quotes_and_backslashes() -> None:
    def within(lucene: str) -> str:
        return in_namespace("ns-a", lucene)

    assert name_query("ns-a", ["lake house"]) == within(
        'name_lc:"lake house" OR aliases_lc:"lake house"'
    )
    assert name_query("ns-a", ['the "big" one']) == within(
        'name_lc:"the \\"big\\" one" OR aliases_lc:"the \\"big\\" one"'
    )
    assert name_query("ns-a", ["c:\\temp"]) == within(
        'name_lc:"c:\\\\temp" OR aliases_lc:"c:\\\\temp"'
    )
    assert name_query("ns-a", ["a", "b"]) == within(
        'name_lc:"a" OR aliases_lc:"a" OR name_lc:"b" OR aliases_lc:"b"'
    )


def test_name_query_of_nothing_matches_nothing() -> None:
    assert name_query("ns-a", []) == in_namespace("ns-a", 'name_lc:"__none__"')


def test_the_subject_called_by_its_name_months_later_joins_its_topic() -> None:
    """Issue #32: "painting" in May and "abstract painting" in September are one subject; the
    score's threshold (alias + embedding + entity + time) alone kept them apart, because months
    later the time part is 0 and two episodes' one-liners are only moderately alike."""
    painting = pool_topic(("painting",), text="painting: I painted that lake sunrise")
    later = cand("abstract painting", hint=T0 + timedelta(days=120))
    later.hint_is_mention = True
    alike = score(later, painting, W.subject_cosine + 0.02, W)
    assert alike.subject and not alike.vetoed
    # half the words in common: under the threshold, and still the same subject
    workshop = pool_topic(("pottery workshop",), text="pottery workshop: I took the kids")
    project = cand("pottery project", hint=T0 + timedelta(days=45))
    project.hint_is_mention = True
    same = score(project, workshop, W.subject_cosine + 0.02, W)
    assert same.subject and same.total < W.threshold and best_match([same], W) == same
    # owners are left aside: "Melanie's horse painting" is called by "painting"
    assert called_by_name(cand("melanie's horse painting"), painting)
    assert called_by_name(cand("pottery project"), pool_topic(("pottery workshop",)))
    # not alike enough, or not called by its name: a topic of its own
    assert not score(later, painting, W.subject_cosine - 0.02, W).subject
    assert not called_by_name(cand("road trip"), pool_topic(("camping gear",)))
    unrelated = score(cand("guitar", hint=T0 + timedelta(days=120)), painting, 0.6, W)
    assert not unrelated.subject and best_match([unrelated], W) is None
    # a big topic still takes only what is like it (the size-raised bar)
    big = PoolTopic("t2", ("painting",), painting.text, T0, T0, facts=4 * W.size_free_facts)
    assert not score(later, big, W.subject_cosine + 0.02, W).subject


def test_a_person_of_the_conversation_has_a_topic_of_their_own() -> None:
    """Issue #32: a question about a person ("What activities does Melanie partake in?") has
    its answer spread over many subject topics; each sleep files every named speaker's best
    first-person news under a topic of their name, which takes nothing else."""
    from sleepwake.candidates import SliceCandidates
    from sleepwake.people import speakers_of, with_people
    from sleepwake.retention import kept_facts

    said = [
        Message(namespace="ns", role="user", speaker="Melanie", content=text, at=T0)
        for text in ("I signed up for a pottery class at the studio.", "Nice!")
    ]
    pottery = cand("pottery class", facts=[])
    pottery.add_fact(
        Fact(text=f"Melanie: {said[0].content}", source_message_ids=[said[0].message_id], at=T0)
    )
    pottery.add_fact(Fact(text="Caroline: Nice!", source_message_ids=[said[1].message_id], at=T0))
    both = with_people(said, SliceCandidates([pottery], [], None, {}))
    person = both.candidates[-1]
    assert person.person and person.key == "melanie" and person.name == "Melanie"
    assert [f.text for f in person.facts] == [f"Melanie: {said[0].content}"]  # not "Nice!"
    assert speakers_of(said) == {"melanie"}
    own, other = pool_topic(("melanie",)), pool_topic(("caroline",), topic_id="t2")
    assert best_match([score(person, own, 0.1, W)], W) is not None
    assert best_match([score(person, other, 0.99, W)], W) is None
    # a person's topic keeps a bounded digest: the most telling fact of each day first
    facts = [
        Fact(text=f"Melanie: I painted picture number {i} today.", source_message_ids=["m"],
             at=T0 + timedelta(days=i))
        for i in range(40)
    ]  # fmt: skip
    past = facts[0].model_copy(update={"invalid_at": T0 + timedelta(days=1)})
    kept = kept_facts([past, *facts], 24)
    assert past in kept and len(kept) == 25 and facts[-1] in kept
