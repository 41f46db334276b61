"""The pure logic of retrieval: the six §5.2 topic triggers, request classes and consult
confidence (seed 003), the session suppression cache, the snippet packer and the snippet helpers.
No I/O, no Neo4j, no model: candidates and snippets are built by hand.

The four §5.3 skill triggers (``skills.routing.deep_triggers``) are covered in
tests/unit/test_skill_routing.py (change request fires, small talk does not).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from retrieval.classify import ConsultSignals, RequestClass, classify, consult
from retrieval.config import DEFAULT
from retrieval.intent import past_question, task_fingerprint
from retrieval.packer import GENERAL, Candidate, Packed, Snippet, day, pack, tokens
from retrieval.snippets import best_sentences, overlap, sentences, terms
from retrieval.suppression import SuppressionCache
from retrieval.triggers import (
    RetrievalSignals,
    TriggerContext,
    after_search,
    context_switch,
    debug_recurrence,
    fired,
    low_confidence,
    memory_reference,
    reintroduced_entity,
    relative_time,
    time_text,
)
from text.timephrases import SleepHistory

WEIGHTS = DEFAULT.consult.weights
SKIP_BELOW, NORMAL_FROM = DEFAULT.consult.skip_below, DEFAULT.consult.normal_from
RELATED_FROM = DEFAULT.consult.related_from
COOL_TURNS, COOL_TIME = DEFAULT.suppression.cool_turns, DEFAULT.suppression.cool_time

NOW = datetime(2026, 3, 11, 12, tzinfo=UTC)  # a Wednesday
CTX = TriggerContext(now=NOW)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "billing/migrate.py", line 42, in run\n'
    "KeyError: 'invoice_id'"
)


# -- §5.2 topic triggers ---------------------------------------------------------------------------
def test_memory_reference_fires_on_memory_words_and_past_questions() -> None:
    assert memory_reference("Do you remember the caterer we liked?", CTX) == (
        "memory_reference: 'remember'"
    )
    assert memory_reference("what did we pick for dessert", CTX) == (
        "memory_reference: 'what did we'"
    )
    reason = memory_reference("When did Anna book the lake house?", CTX)
    assert reason is not None and reason.startswith("memory_reference: past-tense question")


@pytest.mark.parametrize(
    "text",
    [
        "Check the last timetable for trains.",  # "last time" only as a whole phrase
        "We spoke to the vendor this morning.",  # "we spoke about", not "spoke to"
        "Set a reminder for the caterer.",  # "remind-er" is not "remember"
        "Remind me to call the caterer tomorrow.",  # a reminder, not a question to memory
        "What would you recommend for dinner?",  # asks for a recommendation now
        "We were at the lake house all day.",  # past tense, but a statement
    ],
)
def test_memory_reference_near_misses_do_not_fire(text: str) -> None:
    assert memory_reference(text, CTX) is None


def test_a_past_tense_question_defers_to_the_light_search() -> None:
    """A bare past-tense question is a weak cue: deep only when the light search has no clear
    topic; memory words fire whatever the search found; before the search it waits."""
    text = "How much did the new laptop cost?"
    clear_hit = TriggerContext(now=NOW, signals=RetrievalSignals(0.88, 0.86, 1.2))
    lexical_hit = TriggerContext(now=NOW, signals=RetrievalSignals(0.40, 0.39, 4.6))
    vague = TriggerContext(now=NOW, signals=RetrievalSignals(0.50, 0.49, 1.4))
    pending = TriggerContext(now=NOW, search_pending=True)
    assert memory_reference(text, clear_hit) is None
    assert memory_reference(text, lexical_hit) is None
    reason = memory_reference(text, vague)
    assert reason is not None and "past-tense question 'How much did'" in reason
    assert "no clear topic" in reason and "best_cosine 0.500" in reason
    assert memory_reference(text, pending) is None
    assert after_search(text, vague) == reason
    assert memory_reference("what did we pick for dessert", clear_hit) == (
        "memory_reference: 'what did we'"
    )
    assert memory_reference("Do you remember the caterer?", pending) == (
        "memory_reference: 'remember'"
    )
    assert past_question(text) and not past_question("We were at the lake house all day.")


def test_relative_time_fires_with_the_phrase() -> None:
    assert relative_time("what did we decide last week?", CTX) == "relative_time: 'last week'"
    assert relative_time("the invoices broke yesterday", CTX) == "relative_time: 'yesterday'"


def test_relative_time_before_you_slept_needs_a_known_sleep() -> None:
    text = "what were we doing before you slept?"
    assert relative_time(text, CTX) is None  # no sleep recorded: no window to resolve
    slept = TriggerContext(now=NOW, sleep=SleepHistory(slept_at=NOW - timedelta(hours=3)))
    assert relative_time(text, slept) == "relative_time: 'before you slept'"


def test_relative_time_needs_a_window_that_has_begun() -> None:
    """A window still ahead names when a plan happens; nothing in memory was said in it."""
    # NOW is a Wednesday: "this weekend" is the coming one, "tonight" starts at 18:00
    assert relative_time("What's the plan for the roof repair this weekend?", CTX) is None
    assert relative_time("Are we still on for tonight?", CTX) is None
    sunday = TriggerContext(now=NOW + timedelta(days=4))  # inside this weekend's window
    assert relative_time("What did we plan this weekend?", sunday) == (
        "relative_time: 'this weekend'"
    )
    evening = TriggerContext(now=NOW + timedelta(hours=8))  # 20:00: tonight has begun
    assert relative_time("Are we still on for tonight?", evening) == "relative_time: 'tonight'"
    # a past window beside a future one still fires, with the past one named
    text = "Last week you said the roof repair happens this weekend."
    assert relative_time(text, CTX) == "relative_time: 'Last week'"


def test_relative_time_near_misses() -> None:
    assert relative_time("the week was long and the sprint was hard", CTX) is None
    assert relative_time("I remember the 90s", CTX) is None
    # "last weekend" is its own (longer) phrase: it wins over "last week"
    assert relative_time("the last weekend sale was great", CTX) == (
        "relative_time: 'last weekend'"
    )


def test_reintroduced_entity_fires_for_a_known_name_missing_from_the_tail() -> None:
    ctx = TriggerContext(
        now=NOW,
        tail_text="we talked about brake pads for the bike",
        known_names=frozenset({"lake house"}),
    )
    assert reintroduced_entity("What about the lake house?", ctx) == (
        "reintroduced_entity: 'lake house'"
    )


def test_reintroduced_entity_near_misses() -> None:
    in_tail = TriggerContext(
        now=NOW,
        tail_text="Anna booked the lake house for Saturday.",
        known_names=frozenset({"lake house"}),
    )
    assert reintroduced_entity("What about the lake house?", in_tail) is None
    unknown = TriggerContext(now=NOW, known_names=frozenset({"caterer"}))
    assert reintroduced_entity("What about the lake house?", unknown) is None


def test_a_time_phrase_inside_a_known_name_names_the_topic_not_a_window() -> None:
    # "this month's novel" is the book club's alias: the phrase finds the topic (reintroduced
    # when the tail lacks it); "this month" is no window to filter by
    known = TriggerContext(now=NOW, known_names=frozenset({"this month's novel", "book club"}))
    text = "Any news on this month's novel?"
    assert relative_time(text, known) is None
    assert reintroduced_entity(text, known) == "reintroduced_entity: 'this month's novel'"
    assert time_text(text, known.known_names) == "Any news on  ?"
    # unknown, the same words are a window (and no name)
    assert relative_time(text, CTX) == "relative_time: 'this month'"
    assert reintroduced_entity(text, CTX) is None
    # a window beside the name still fires, and a known name without a time phrase leaves the
    # text as it was (its windows read exactly as before)
    both = "What did we say about this month's novel last week?"
    assert relative_time(both, known) == "relative_time: 'last week'"
    plain = "what did we say about the book club last week?"
    assert time_text(plain, known.known_names) == plain


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        (
            RetrievalSignals(0.30, 0.29, 1.5),
            "low_confidence: best_cosine < 0.45 and best_text < 4.0 "
            "(best_cosine 0.300, cosine_margin 0.010, best_text 1.500)",
        ),
        (
            RetrievalSignals(0.50, 0.49, 2.0),
            "low_confidence: best_cosine < 0.55 with cosine_margin < 0.02 and best_text < 4.0 "
            "(best_cosine 0.500, cosine_margin 0.010, best_text 2.000)",
        ),
        (
            RetrievalSignals(None, None, 1.0),
            "low_confidence: no vector search and best_text < 4.0 (best_text 1.000)",
        ),
    ],
)
def test_low_confidence_fires_when_nothing_is_near_or_the_nearest_are_tied(
    signals: RetrievalSignals, expected: str
) -> None:
    ctx = TriggerContext(now=NOW, signals=signals)
    assert low_confidence("how is it going", ctx) == expected


def test_low_confidence_near_misses() -> None:
    def fires(sig: RetrievalSignals) -> bool:
        return low_confidence("how is it going", TriggerContext(now=NOW, signals=sig)) is not None

    assert not fires(RetrievalSignals(0.30, 0.10, 4.0))  # far, but a topic shares rare words
    assert not fires(RetrievalSignals(0.50, 0.45, 0.0))  # moderately near and clearly first
    assert not fires(RetrievalSignals(0.60, 0.60, 0.0))  # near: a tie of near topics is fine
    assert not fires(RetrievalSignals(0.46, None, 0.0))  # one topic only: nothing to tie
    assert fires(RetrievalSignals(0.44, None, 3.9))
    assert low_confidence("how is it going", CTX) is None  # no search yet: no opinion


def test_retrieval_signals_of_a_search() -> None:
    sig = RetrievalSignals.of({"a": 0.41, "b": 0.72, "c": 0.70}, {"a": 2.5, "c": 6.0})
    assert (sig.best_cosine, sig.second_cosine, sig.best_text) == (0.72, 0.70, 6.0)
    assert sig.as_dict() == {"best_cosine": 0.72, "cosine_margin": 0.02, "best_text": 6.0}
    empty = RetrievalSignals.of({}, {})
    assert empty.margin is None and empty.as_dict() == {"best_text": 0.0}


def test_context_switch_fires_on_a_leading_marker() -> None:
    assert context_switch("Anyway, what about the caterer?", CTX) == "context_switch: 'Anyway'"
    assert context_switch("  separately: the bike", CTX) == "context_switch: 'separately'"
    assert context_switch("New thing: billing", CTX) == "context_switch: 'New thing'"


def test_context_switch_near_misses() -> None:
    assert context_switch("I'll book the caterer anyway.", CTX) is None
    assert context_switch("We keep them separately in the fridge.", CTX) is None


def test_debug_recurrence_fires_on_recurrence_words_and_stack_traces() -> None:
    assert debug_recurrence("It's the same error as before in billing", CTX) == (
        "debug_recurrence: 'same error as'"
    )
    assert debug_recurrence("the migration fails again", CTX) == ("debug_recurrence: 'fails again'")
    assert debug_recurrence(TRACEBACK, CTX) == "debug_recurrence: stack trace"


def test_debug_recurrence_near_misses() -> None:
    assert debug_recurrence("the menu is the same as before", CTX) is None
    assert debug_recurrence("the error message is clear now", CTX) is None


def test_fired_lists_every_trigger_in_order() -> None:
    ctx = TriggerContext(now=NOW, signals=RetrievalSignals(0.2, 0.1, 0.0))
    reasons = fired("Anyway, do you remember what broke last week? same error as before", ctx)
    assert [r.split(":")[0] for r in reasons] == [
        "memory_reference",
        "relative_time",
        "low_confidence",
        "context_switch",
        "debug_recurrence",
    ]
    assert fired("thanks, sounds good", CTX) == []


# -- request classes -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "search memory for the last fix",
        "what did we decide about retrieval scoring?",
        "restore the previous task context",
        "do you remember the caterer?",
        "Can you remind me of the name of the restaurant in Rome you recommended?",
        "remind me which caterer we picked",
        "I was looking back at our previous chat about the caterer.",
    ],
)
def test_explicit_memory_phrases_are_class_a(text: str) -> None:
    assert classify(text, []) is RequestClass.EXPLICIT


def test_a_memory_reference_trigger_makes_class_a() -> None:
    text = "When was the lake house booked?"
    assert classify(text, [], names_known=False) is RequestClass.IMPLICIT
    assert classify(text, ["memory_reference: past-tense question 'When was'"]) is (
        RequestClass.EXPLICIT
    )


def test_a_question_naming_a_known_entity_is_class_a() -> None:
    text = "how's the party planning going?"
    assert classify(text, [], names_known=True) is RequestClass.EXPLICIT
    assert classify(text, [], names_known=False) is RequestClass.IMPLICIT
    # a statement naming it is not a request to memory
    assert classify("The party planning is fun.", [], names_known=True) is RequestClass.IMPLICIT


@pytest.mark.parametrize("text", ["thanks!", "ok", "Good morning.", "hi", "  "])
def test_small_talk_is_class_c(text: str) -> None:
    assert classify(text, []) is RequestClass.NONE


def test_a_statement_is_class_b() -> None:
    assert classify("The invoices table is next on the billing migration.", []) is (
        RequestClass.IMPLICIT
    )


# -- consult confidence ----------------------------------------------------------------------------
def test_consult_weights_sum_to_one_and_match_seed_003() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    assert WEIGHTS["lexical"] == 0.30 and WEIGHTS["semantic"] == 0.25
    assert WEIGHTS["same_task"] == 0.20 and WEIGHTS["scope"] == 0.10
    full = consult(ConsultSignals(**dict.fromkeys(WEIGHTS, 1.0)))
    assert full.confidence == pytest.approx(1.0) and full.band == "related"


def test_consult_clamps_signals_to_their_weight() -> None:
    decision = consult(ConsultSignals(lexical=5.0, semantic=-2.0, scope=0.0))
    assert decision.components["lexical"] == pytest.approx(0.30)
    assert decision.components["semantic"] == 0.0
    assert decision.confidence == pytest.approx(0.30)


@pytest.mark.parametrize(
    ("signals", "confidence", "band"),
    [
        (ConsultSignals(lexical=1, semantic=0.9996, scope=0), 0.5499, "skip"),
        (ConsultSignals(lexical=1, semantic=1, scope=0), 0.55, "consult"),
        (ConsultSignals(lexical=1, semantic=1, same_task=0.8495, scope=0), 0.7199, "consult"),
        (ConsultSignals(lexical=1, semantic=1, same_task=0.85, scope=0), 0.72, "normal"),
        (ConsultSignals(lexical=1, semantic=1, same_task=1, scope=0.699), 0.8199, "normal"),
        (ConsultSignals(lexical=1, semantic=1, same_task=1, scope=0.7), 0.82, "related"),
    ],
)
def test_consult_bands_at_and_just_below_each_threshold(
    signals: ConsultSignals, confidence: float, band: str
) -> None:
    assert (SKIP_BELOW, NORMAL_FROM, RELATED_FROM) == (0.55, 0.72, 0.82)
    decision = consult(signals)
    assert decision.confidence == pytest.approx(confidence, abs=1e-9)
    assert decision.band == band


# -- suppression cache -----------------------------------------------------------------------------
def _cache_after_injection(turns_later: int) -> tuple[SuppressionCache, str]:
    """A cache where topic t1 was injected at NOW, then ``turns_later`` turns went by."""
    cache = SuppressionCache()
    fp = task_fingerprint("book the caterer for the lake house party")
    cache.record("t1", NOW, 0.70, fp)
    for _ in range(turns_later):
        cache.turn += 1
    return cache, fp


@pytest.mark.parametrize(
    ("turns", "minutes", "blocked"),
    [
        (1, 1, True),
        (6, 10, True),  # enough turns, not enough time
        (3, 20, True),  # enough time, not enough turns
        (6, 16, False),  # both cooled down
        (COOL_TURNS, int(COOL_TIME.total_seconds() // 60), False),  # both exactly over
    ],
)
def test_suppression_lasts_five_turns_or_fifteen_minutes_whichever_ends_later(
    turns: int, minutes: int, blocked: bool
) -> None:
    cache, fp = _cache_after_injection(turns)
    why = cache.blocked("t1", NOW + timedelta(minutes=minutes), 0.70, fp, explicit=False)
    assert (why is not None) is blocked
    if why is not None:
        assert why.startswith("suppressed:") and f"{turns} turn(s)" in why


def test_suppression_only_applies_to_the_injected_record() -> None:
    cache, fp = _cache_after_injection(1)
    assert cache.blocked("t2", NOW + timedelta(minutes=1), 0.70, fp, explicit=False) is None


def test_a_confidence_rise_of_015_unblocks() -> None:
    cache, fp = _cache_after_injection(1)
    later = NOW + timedelta(minutes=1)
    assert cache.blocked("t1", later, 0.84, fp, explicit=False) is not None
    assert cache.blocked("t1", later, 0.85, fp, explicit=False) is None


def test_a_changed_task_fingerprint_unblocks() -> None:
    cache, fp = _cache_after_injection(1)
    other = task_fingerprint("why does the billing migration fail on invoices")
    assert other != fp
    assert cache.blocked("t1", NOW + timedelta(minutes=1), 0.70, other, explicit=False) is None


def test_explicit_search_is_never_blocked() -> None:
    cache, fp = _cache_after_injection(0)
    assert cache.blocked("t1", NOW, 0.70, fp, explicit=True) is None
    assert cache.blocked("t1", NOW, 0.70, fp, explicit=False) is not None


def test_task_fingerprint_ignores_word_order_case_and_stop_words() -> None:
    assert task_fingerprint("Book the caterer for the party") == task_fingerprint(
        "party: book a caterer"
    )


# -- packer ----------------------------------------------------------------------------------------
DAY = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _cand(rid: str, score: float, **kw: object) -> Candidate:
    return Candidate(
        record_id=rid,
        kind="topic",
        title=kw.pop("title", rid.capitalize()),  # type: ignore[arg-type]
        score=score,
        reason_label="topic_match",
        reason_summary=f"matched {rid}",
        first_seen_at=kw.pop("first_seen_at", DAY),  # type: ignore[arg-type]
        last_seen_at=kw.pop("last_seen_at", DAY),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def _snip(mid: str, score: float, text: str, *homes: str) -> Snippet:
    return Snippet(
        message_id=mid,
        source_id=f"ext-{mid}",
        at=DAY,
        speaker="",
        text=text,
        score=score,
        record_ids=list(homes),
    )


PARTY = _cand("party", 2.0, title="Party Planning")
BIKE = _cand("bike", 1.0, title="bike")
SNIPS = [
    _snip("m1", 0.9, "We still need to book the caterer for the party.", "party"),
    _snip("m2", 0.5, "About 30 guests are coming to the lake house.", "party"),
    _snip("m3", 0.7, "My bike needs new brake pads.", "bike"),
    _snip("m4", 0.2, "The party starts at noon on Saturday.", "party"),
]


def _trace(packed: Packed, rid: str) -> dict[str, object]:
    return next(e for e in packed.trace if e["record_id"] == rid)


def test_pack_respects_the_budget() -> None:
    for budget in (10, 25, 40, 60, 1000):
        packed = pack([PARTY, BIKE], SNIPS, budget)
        assert packed.used_tokens <= budget
        assert tokens(packed.text) <= budget, budget


def test_pack_l0_lines_that_fill_the_budget_exactly_stay_within_it() -> None:
    a = _cand("a", 2.0, title="abcd", one_liner="x" * 31, one_liner_sources=["m1"])
    b = _cand("b", 1.0, title="abcd", one_liner="y" * 31, one_liner_sources=["m2"])
    assert tokens("## abcd: " + "x" * 31) == 10
    packed = pack([a, b], [], 20)
    assert tokens(packed.text) <= 20


def test_pack_puts_the_best_snippets_first_and_drops_the_worst() -> None:
    packed = pack([PARTY, BIKE], SNIPS, 1000)
    lines = [line for line in packed.text.splitlines() if line.startswith("- ")]
    assert lines[0].endswith(SNIPS[0].text)  # the best snippet opens the context
    party = packed.items[0]
    assert party.record_id == "party"
    # lines within the topic in score order: m1 (0.9), m2 (0.5), m4 (0.2)
    assert [ln.split(" ", 4)[-1] for ln in party.text.splitlines()[1:]] == [
        SNIPS[0].text,
        SNIPS[1].text,
        SNIPS[3].text,
    ]
    header = "## Party Planning"
    tight = tokens(header) + 1 + sum(tokens(s.line()) + 1 for s in SNIPS[:2])
    packed = pack([PARTY], [SNIPS[0], SNIPS[1], SNIPS[3]], tight)
    assert "lake house" in packed.text and "noon" not in packed.text


def test_pack_pays_a_topic_header_once() -> None:
    two = [SNIPS[0], SNIPS[1]]
    packed = pack([PARTY], two, 1000)
    header = "## Party Planning"
    assert packed.text.count(header) == 1
    assert packed.text.splitlines()[0] == header
    assert packed.used_tokens == tokens(header) + 1 + sum(tokens(s.line()) + 1 for s in two)


def test_pack_caps_lines_per_topic_and_files_the_rest_under_the_conversation() -> None:
    many = [_snip(f"p{i}", 1.0 - i / 10, f"Party detail number {i}.", "party") for i in range(5)]
    packed = pack([PARTY], many, 1000)
    party = next(i for i in packed.items if i.record_id == "party")
    assert party.source_ids == ["ext-p0", "ext-p1", "ext-p2"]
    general = next(i for i in packed.items if i.record_id == GENERAL)
    assert general.text.startswith("## From the conversation")
    assert general.source_ids == ["ext-p3", "ext-p4"]


def test_pack_items_cite_exactly_the_sources_of_their_lines() -> None:
    tight = pack([PARTY, BIKE], SNIPS, 40)
    full = pack([PARTY, BIKE], SNIPS, 1000)
    for packed in (tight, full):
        by_source = {s.source_id: s for s in SNIPS}
        for item in packed.items:
            carried = [s for s in SNIPS if s.line() in item.text.splitlines()]
            assert item.source_ids == [s.source_id for s in carried], item.record_id
            assert all(by_source[sid].text in item.text for sid in item.source_ids)
    assert sorted(sid for i in full.items for sid in i.source_ids) == [
        "ext-m1",
        "ext-m2",
        "ext-m3",
        "ext-m4",
    ]
    assert "ext-m4" not in {sid for i in tight.items for sid in i.source_ids}


def test_pack_excludes_a_blocked_candidate_with_its_reason() -> None:
    reason = "suppressed: injected 1 turn(s) / 2 min ago"
    blocked = _cand("party", 2.0, title="Party Planning", blocked=reason)
    packed = pack([blocked, BIKE], SNIPS, 1000)
    assert "party" not in {i.record_id for i in packed.items}
    assert "Party Planning" not in packed.text
    entry = _trace(packed, "party")
    assert entry["decision"] == "excluded" and entry["why"] == reason


def test_pack_does_not_inject_the_lines_of_a_blocked_candidate_elsewhere() -> None:
    reason = "suppressed: injected 1 turn(s) / 2 min ago"
    blocked = _cand("party", 2.0, title="Party Planning", blocked=reason)
    packed = pack([blocked, BIKE], SNIPS, 1000)
    assert "caterer" not in packed.text
    assert [i.record_id for i in packed.items] == ["bike"]


def test_pack_traces_every_candidate_with_a_decision() -> None:
    reason = "consult confidence below 0.55: implicit resurfacing skipped"
    cands = [
        PARTY,
        BIKE,
        _cand("deposit", 0.5, one_liner="Rosa wants a deposit.", one_liner_sources=["m9"]),
        _cand("noise", 0.1),  # no snippet, no one-liner: nothing to show
        _cand("cold", 0.05, blocked=reason),
    ]
    packed = pack(cands, SNIPS, 45)
    assert sorted(e["record_id"] for e in packed.trace) == sorted(c.record_id for c in cands)
    assert all(e["decision"] in ("included", "excluded") for e in packed.trace)
    assert [e["score"] for e in packed.trace] == sorted(
        (e["score"] for e in packed.trace), reverse=True
    )
    included = {i.record_id for i in packed.items}
    for entry in packed.trace:
        assert (entry["decision"] == "included") is (entry["record_id"] in included)
        if entry["decision"] == "excluded":
            assert entry["why"]
    assert _trace(packed, "cold")["why"] == reason
    assert _trace(packed, "noise")["decision"] == "excluded"


def test_pack_l0_one_liners_carry_their_sources() -> None:
    deposit = _cand(
        "deposit", 0.5, one_liner="Rosa wants a deposit by Thursday.", one_liner_sources=["m9"]
    )
    packed = pack([PARTY, deposit], [SNIPS[0]], 1000)
    l0 = [i for i in packed.items if i.layer == "L0"]
    assert [(i.record_id, i.text, i.source_ids) for i in l0] == [
        ("deposit", "## Deposit: Rosa wants a deposit by Thursday.", ["m9"])
    ]
    assert _trace(packed, "deposit")["layer"] == "L0"
    # a topic with its own L1 lines does not repeat itself as an L0 line
    with_one_liner = _cand(
        "party", 2.0, title="Party Planning", one_liner="Mel's party.", one_liner_sources=["m1"]
    )
    packed = pack([with_one_liner], [SNIPS[0]], 1000)
    assert [i.layer for i in packed.items] == ["L1"]


def test_pack_l0_needs_sources() -> None:
    uncited = _cand("deposit", 0.5, one_liner="Rosa wants a deposit by Thursday.")
    packed = pack([uncited], [], 1000)
    assert packed.items == []
    assert _trace(packed, "deposit")["decision"] == "excluded"


def test_pack_l2_only_when_full_records_asked() -> None:
    record = "## Party Planning\n- 2 Mar 2026 book the caterer\n- open: deposit by Thursday"
    party = _cand(
        "party", 2.0, title="Party Planning", full_record=record, full_record_sources=["m1", "m9"]
    )
    plain = pack([party, BIKE], SNIPS, 1000)
    assert all(i.layer != "L2" for i in plain.items)
    full = pack([party, BIKE], SNIPS, 1000, full_records=1)
    l2 = [i for i in full.items if i.layer == "L2"]
    assert [(i.record_id, i.text, i.source_ids) for i in l2] == [("party", record, ["m1", "m9"])]
    assert full.items[0].layer == "L2"
    assert sum(1 for i in full.items if i.record_id == "party") == 1  # no L1 beside its L2
    assert _trace(full, "party")["layer"] == "L2"


# -- snippets --------------------------------------------------------------------------------------
def test_terms_are_stemmed_content_words() -> None:
    found = terms("The caterers were booked for the parties at the lake house")
    assert terms("caterer") <= found and terms("party") <= found and terms("booking") <= found
    assert not found & {"the", "were", "for", "at"}
    assert terms("a an of it is") == frozenset()


def matching_sentences(content: str, query_terms: frozenset[str]) -> list[str]:
    """The sentences of ``content`` that share a term with the query, in order."""
    return [s for s in sentences(content) if terms(s) & query_terms]


def test_matching_sentences_keep_order_and_only_matches() -> None:
    content = "We booked the caterer. The bike is broken! Party at noon?"
    assert matching_sentences(content, terms("party caterer")) == [
        "We booked the caterer.",
        "Party at noon?",
    ]
    assert matching_sentences(content, terms("invoices")) == []
    assert sentences(content) == ["We booked the caterer.", "The bike is broken!", "Party at noon?"]


def test_a_bulleted_answer_gives_the_matching_item_not_the_whole_list() -> None:
    answer = (
        "Here are some places:\n\n1. **Roscioli** - a cozy wine bar\n"
        "2. **Pizzarium** - pizza by the slice\n3. **Da Enzo** - classic Roman trattoria"
    )
    assert best_sentences(answer, terms("pizza slice"), 1) == ["**Pizzarium** - pizza by the slice"]


def test_overlap_is_the_share_of_query_terms_found() -> None:
    query = terms("caterer party")
    assert overlap("the caterer is booked", query) == 0.5
    assert overlap("the caterers for the parties", query) == 1.0
    assert overlap("brake pads", query) == 0.0
    assert overlap("anything", frozenset()) == 0.0


def test_a_packed_line_is_dated_as_strftime_dates_it_in_the_c_locale() -> None:
    start = datetime(2019, 12, 25, 23, 59, tzinfo=UTC)
    for i in range(0, 800, 3):
        when = start + timedelta(days=i, hours=i % 24)
        assert day(when) == when.strftime("%-d %b %Y")
    assert day(datetime(2026, 3, 2, tzinfo=UTC)) == "2 Mar 2026" and day(None) == "undated"


def test_a_topic_block_is_headed_by_its_name_its_dates_on_the_lines_and_the_item() -> None:
    """The header says which topic; the span is the item's ``freshness`` and every line says
    when it was said, so the text does not pay for the dates twice."""
    later = _cand("party", 2.0, title="Party Planning", last_seen_at=DAY + timedelta(days=40))
    packed = pack([later], SNIPS[:1], 1000)
    assert packed.text.splitlines() == ["## Party Planning", f"- 2 Mar 2026 {SNIPS[0].text}"]
    freshness = packed.items[0].payload()["freshness"]
    assert freshness["first_seen_at"] == DAY.isoformat()
    assert freshness["last_seen_at"] == (DAY + timedelta(days=40)).isoformat()
