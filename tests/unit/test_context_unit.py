"""The context stages (retrieval/context.py, spec §4.1, §5, seed 003) on the in-memory fakes:
request class and consult confidence decide whether anything is injected, the packer stays within
the token budget and its trace says why each candidate was kept or dropped, a session does not get
the same memory twice, time phrases pick a window, packed topics are marked used, and a model
outage or a broken skill router degrades instead of failing. Two days of conversation are slept
with the hashed embedder first; which topic a paraphrase finds is the integration tests' job.
"""

from __future__ import annotations

import logging
import math
import threading
from datetime import timedelta
from typing import Any

import pytest

from graph.errors import Neo4jUnavailable
from graph.models import Topic, TopicTime
from graph.topics import partial_topic
from retrieval.context import ContextBuilder, ContextRequest, ContextResult
from retrieval.search import TopicSearch
from sleepwake.conversation import IncomingMessage
from sleepwake.policy import SleepPolicy
from tests.fakes import DownEmbedder
from tests.fakes.context import SeparateReads
from tests.fakes.passages import FakePassages
from tests.fakes.pipelines import T0, Memory, sleep_history, wire

NOW = T0 + timedelta(days=9)
PARTY = "how's the party planning going?"
IMPLICIT = "I should book the caterer for the lake house party soon"
OFF_TOPIC = "I painted the fence green and watered the tomatoes, then cleaned my bike"

DAY1 = [
    (
        "user",
        "We're planning Mel's surprise party at the lake house for Saturday with Anna and Ben.",
    ),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. We still need to book the caterer for the Party Planning."),
    ("user", "The caterer is Rosa's Kitchen; they want a deposit by Thursday."),
    ("assistant", "Noted: Rosa's Kitchen, deposit by Thursday."),
    ("user", "Separately, my bike needs new brake pads before the spring ride."),
    ("assistant", "Good idea to do that early."),
    ("user", "ok, that's all for today"),
    ("assistant", "Talk tomorrow."),
]
DAY2 = [
    ("user", "We chose Postgres for the billing migration because of JSONB support."),
    ("assistant", "Makes sense for the billing migration."),
    ("user", "I'm also reading a book about Roman aqueducts."),
    ("assistant", "Sounds fascinating."),
    ("user", "enough for today"),
    ("assistant", "Bye."),
]


def remembered() -> Memory:
    """Two days of conversation, each slept in the evening."""
    m = wire(SleepPolicy(tail_turns=2))
    for day, turns in enumerate([DAY1, DAY2]):
        at = T0 + timedelta(days=day)
        m.say(at, *turns)
        m.sleeper.sleep(m.namespace, at + timedelta(hours=10))
    return m


@pytest.fixture(scope="module")
def shared() -> Memory:
    """One memory for the tests that only read (each build marks packed topics used)."""
    return remembered()


def build(m: Memory, message: str, **kw: Any) -> ContextResult:
    now = kw.pop("now", NOW)
    return m.context.build(ContextRequest(namespace=m.namespace, message=message, now=now, **kw))


def topic_ids(result: ContextResult) -> list[str]:
    return [i["record_id"] for i in result.items if i["kind"] == "topic"]


def why(result: ContextResult) -> dict[str, str]:
    return {e["record_id"]: str(e.get("why", "")) for e in result.trace}


# -- whether anything is injected ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("message", "explicit", "request_class", "injects"),
    [
        ("thanks!", False, "C", False),  # small talk
        (PARTY, False, "A", True),  # names a topic memory knows
        (OFF_TOPIC, False, "B", False),  # implicit, below the consult threshold
        (OFF_TOPIC, True, "A", True),  # the same words as an explicit search
    ],
    ids=["small-talk", "known-topic", "implicit-skip", "explicit"],
)
def test_the_request_class_and_consult_confidence_decide_what_is_injected(
    shared: Memory, message: str, explicit: bool, request_class: str, injects: bool
) -> None:
    result = build(shared, message, explicit=explicit)
    assert result.request_class == request_class
    assert bool(result.items) is injects
    assert bool(result.context_text) is injects and (result.used_tokens > 0) is injects
    if request_class == "B" and not injects:
        assert result.consult["band"] == "skip" and result.consult["confidence"] < 0.55
        # nothing is packed, so nothing is traced either (the blocked reason stays internal)
        assert all(e["decision"] == "excluded" for e in result.trace)


def test_a_question_about_a_known_topic_brings_it_back_first(shared: Memory) -> None:
    result = build(shared, PARTY)
    titles = [i["title"].lower() for i in result.items]
    # one topic per subject now (the party is one topic, not "party", "party planning",
    # "caterer" and "lake house"), so it must come first and the unrelated ones after it
    assert "party" in titles[0], titles
    assert "caterer" in result.context_text or "lake house" in result.context_text
    assert not {"spring ride", "billing migration", "roman aqueducts"} & set(titles[:1])


# -- the budget and the trace ----------------------------------------------------------------------
@pytest.mark.parametrize("budget", [40, 60, 120, 250, 1000])
def test_the_context_fits_the_budget_and_the_trace_explains_every_candidate(
    shared: Memory, budget: int
) -> None:
    result = build(shared, PARTY, budget=budget)
    assert result.budget == budget and 0 < result.used_tokens <= budget
    assert math.ceil(len(result.context_text) / 4) <= budget
    assert result.trace
    for entry in result.trace:
        assert entry["decision"] in {"included", "excluded"}, entry
        if entry["decision"] == "excluded":
            assert entry["why"], entry
        else:
            assert entry["layer"] in {"L0", "L1", "L2"}
    included = {e["record_id"] for e in result.trace if e["decision"] == "included"}
    assert included == set(topic_ids(result))
    scores = [e["score"] for e in result.trace]
    assert scores == sorted(scores, reverse=True)  # best candidates first


def test_a_smaller_budget_keeps_fewer_items_and_says_the_budget_dropped_them(
    shared: Memory,
) -> None:
    results = [build(shared, PARTY, budget=b) for b in (40, 120, 1000)]
    kept = [len(r.items) for r in results]
    assert kept == sorted(kept) and kept[0] < kept[-1]
    dropped = [w for w in why(results[0]).values() if w.startswith("budget")]
    assert dropped, why(results[0])
    assert len(dropped) > len([w for w in why(results[-1]).values() if w.startswith("budget")])


def test_every_item_cites_stored_messages_and_l2_comes_only_when_asked(shared: Memory) -> None:
    stored = {m.message_id for m in shared.stores.messages.tail(shared.namespace, 1000)}
    plain = build(shared, "what did we choose for billing?", explicit=True)
    full = build(shared, "what did we choose for billing?", explicit=True, full_records=True)
    assert "L2" not in {i["layer"] for i in plain.items}
    assert full.items[0]["layer"] == "L2"
    assert "billing" in full.items[0]["title"].lower()
    for item in plain.items + full.items:
        sources = item["provenance"]["source_ids"]
        assert sources and set(sources) <= stored, item["title"]


# -- sessions, use and time ------------------------------------------------------------------------
def test_a_session_gets_a_memory_once_unless_it_searches_for_it() -> None:
    m = remembered()
    first = build(m, IMPLICIT, session_id="s1")
    injected = set(topic_ids(first))
    assert first.request_class == "B" and injected
    again = build(m, IMPLICIT, session_id="s1", now=NOW + timedelta(minutes=1))
    assert not injected & set(topic_ids(again))
    assert all(why(again)[rid].startswith("suppressed") for rid in injected)
    other = build(m, IMPLICIT, session_id="s2", now=NOW + timedelta(minutes=1))
    assert injected <= set(topic_ids(other))  # another session is not suppressed
    explicit = build(m, IMPLICIT, session_id="s1", explicit=True, now=NOW + timedelta(minutes=2))
    assert injected <= set(topic_ids(explicit))


def test_packed_topics_are_marked_used_and_dropped_ones_are_not() -> None:
    m = remembered()
    result = build(m, PARTY, budget=60)
    packed = set(topic_ids(result))
    cut = {rid for rid, w in why(result).items() if w.startswith("budget")}
    assert packed and cut
    stats = {t.topic_id: t.stats for t in m.topics.get(m.namespace, [*packed, *cut])}
    assert all(stats[t].usage_count == 1 and stats[t].last_used_at == NOW for t in packed)
    assert all(stats[t].usage_count == 0 and stats[t].last_used_at is None for t in cut)


@pytest.mark.parametrize(
    ("message", "window", "trigger"),
    [
        (PARTY, None, None),
        (
            "what did we choose for billing last week?",
            {"phrase": "last week", "kind": "last_week",
             "start": (NOW - timedelta(days=7)).isoformat(), "end": NOW.isoformat()},
            "relative_time: 'last week'",
        ),
        (
            "what were we doing before you slept?",
            {"phrase": "before you slept", "kind": "before_sleep", "start": None,
             "end": (T0 + timedelta(days=1, hours=10)).isoformat()},
            "relative_time: 'before you slept'",
        ),
    ],
    ids=["no-phrase", "last-week", "before-sleep"],
)  # fmt: skip
def test_a_time_phrase_resolves_to_a_window_and_goes_deep(
    shared: Memory, message: str, window: dict[str, Any] | None, trigger: str | None
) -> None:
    result = build(shared, message)
    if window is None:
        assert result.time_window is None
        return
    assert result.time_window is not None
    assert {k: result.time_window[k] for k in ("phrase", "start", "end")} == {
        k: window[k] for k in ("phrase", "start", "end")
    }
    assert trigger in result.triggers and result.deep


# -- degraded paths --------------------------------------------------------------------------------
def test_without_the_model_the_lexical_paths_still_answer(shared: Memory) -> None:
    s = shared.stores
    search = TopicSearch(s.topics, s.events, DownEmbedder())
    reads = SeparateReads(s.topics, s.messages, search.events, sleep_history(s))
    builder = ContextBuilder(s.topics, s.messages, search, reads)
    result = builder.build(ContextRequest(namespace=shared.namespace, message=PARTY, now=NOW))
    assert result.degraded is True
    assert result.items and "party" in result.context_text.lower()
    assert all(e["components"].get("vector_cosine", 0.0) == 0.0 for e in result.trace)


def broken(text: str, last: str | None, vector: list[float] | None = None) -> dict[str, Any]:
    raise RuntimeError("skills store down")


def docs(text: str, last: str | None, vector: list[float] | None = None) -> dict[str, Any]:
    return {"skills": [{"skill_id": "write_docs"}], "intent": "docs", "mode": "light",
            "triggers": [], "trace": ["docs intent"], "ignored": "not passed on"}  # fmt: skip


@pytest.mark.parametrize(
    ("router", "mode", "skills"),
    [(None, "off", []), (broken, "error", []), (docs, "light", [{"skill_id": "write_docs"}])],
    ids=["no-router", "broken-router", "router"],
)
def test_skills_ride_along_and_a_broken_router_leaves_the_memory_intact(
    shared: Memory, router: Any, mode: str, skills: list[dict[str, Any]]
) -> None:
    s = shared.stores
    reads = SeparateReads(s.topics, s.messages, s.events, sleep_history(s))
    builder = ContextBuilder(s.topics, s.messages, shared.search, reads,
                             skill_router=router)  # fmt: skip
    result = builder.build(ContextRequest(namespace=shared.namespace, message=PARTY, now=NOW))
    assert result.skill_routing["mode"] == mode and result.skills == skills
    assert "ignored" not in result.skill_routing
    assert result.items  # the memory context is there whatever the router did


# -- questions about the people of a conversation ------------------------------------------------
def test_a_question_naming_a_participant_asks_memory_though_no_topic_is_named_after_them() -> None:
    # people are a topic's entities, not topics of their own, so "Caroline" names no topic; she is
    # a speaker of this conversation, so a question about her is a question to memory (class A,
    # the full budget), and naming her is not a reintroduced entity (no deep search for it)
    m = wire(SleepPolicy(tail_turns=2))
    turns = [
        ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "That's great! I signed up for a pottery class last week."),
        ("Caroline", "The support group made me feel accepted."),
    ]
    items = [
        IncomingMessage.model_validate(
            {"role": "user", "speaker": who, "content": text, "at": T0 + timedelta(minutes=i)}
        )
        for i, (who, text) in enumerate(turns)
    ]
    m.conversation.append(m.namespace, items)
    m.sleeper.sleep(m.namespace, T0 + timedelta(hours=2))
    # present tense: no past-tense cue makes it a memory question by itself
    question = build(m, "What does caroline like most?")
    assert question.request_class == "A", question.consult
    assert not any(t.startswith("reintroduced_entity") for t in question.triggers)
    # not a question, or a name nobody in this conversation goes by: no reason to ask memory
    assert build(m, "Caroline says hi to everyone").request_class == "B"
    assert build(m, "What does Rosalind like most?").request_class == "B"


def test_topic_search_reads_a_question_without_the_participants_names() -> None:
    # the topics' vectors and full text leave the speakers out, so the context's topic search
    # embeds the question without "Caroline" (the start read already named her: no extra
    # lookup), and the skill router is given that same vector rather than embedding again
    m = wire(SleepPolicy(tail_turns=2))
    turns = [
        ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "That's great! I signed up for a pottery class last week."),
    ]
    items = [
        IncomingMessage.model_validate(
            {"role": "user", "speaker": who, "content": text, "at": T0 + timedelta(minutes=i)}
        )
        for i, (who, text) in enumerate(turns)
    ]
    m.conversation.append(m.namespace, items)
    m.sleeper.sleep(m.namespace, T0 + timedelta(hours=2))
    seen: list[str] = []
    routed: list[Any] = []

    class Recording:
        model_name, dimensions = m.search.embedder.model_name, m.search.embedder.dimensions

        def embed(self, texts: Any) -> Any:
            seen.extend(texts)
            return m.search.embedder.embed(texts)

    def router(message: str, tool_output: Any, vector: Any, **_: Any) -> dict[str, Any]:
        routed.append(vector)
        return {"skills": [], "mode": "test"}

    s = m.stores
    engine = TopicSearch(s.topics, s.events, Recording(), m.search.cfg)
    reads = SeparateReads(s.topics, s.messages, s.events, sleep_history(s))
    builder = ContextBuilder(s.topics, s.messages, engine, reads, skill_router=router)
    question = "Which support group did Caroline go to yesterday?"
    builder.build(ContextRequest(namespace=m.namespace, message=question, now=NOW))
    assert seen[0] == "Which support group did go to yesterday?", seen
    assert all("caroline" not in text.lower() for text in seen), seen
    assert routed and routed[0] is not None


def test_semantic_signal_is_the_nearest_ranked_topic_not_the_first() -> None:
    """A topic only full text found can rank first with no cosine of its own; the consult
    confidence's semantic part is how near the nearest ranked topic is."""
    from graph.models import Topic, TopicTime
    from retrieval.candidates import consult_signals as _signals
    from retrieval.config import ContextConfig
    from retrieval.gather import Gathered as _Gathered
    from retrieval.search import TopicHit

    def hit(name: str, **components: float) -> TopicHit:
        t = Topic(namespace="ns", name=name, time=TopicTime(first_seen_at=T0, last_seen_at=T0))
        return TopicHit(t, 1.0, {"score": 1.0, **components})

    got = _Gathered()
    got.topic_hits = [hit("Weekend", text_score=6.5), hit("Roof repair", vector_cosine=0.69)]
    assert _signals(got, frozenset({"roof"}), [], ContextConfig()).semantic == 0.69
    got.topic_hits = [hit("Weekend", text_score=6.5)]
    assert _signals(got, frozenset({"roof"}), [], ContextConfig()).semantic == 0.0


def test_a_topic_aliased_with_a_time_phrase_is_found_by_name_with_no_window() -> None:
    # "Any news on this month's novel?" names the book club (its alias), not a window: a window
    # of this month would filter out the club's topic, last seen weeks ago
    m = remembered()
    club = Topic(
        namespace=m.namespace, name="Book club", one_liner="The book club meets monthly.",
        aliases=["this month's novel"], time=TopicTime(first_seen_at=T0, last_seen_at=T0),
    )  # fmt: skip
    m.topics.create([club], None, T0)
    result = build(m, "Any news on this month's novel?")
    assert result.time_window is None
    assert result.triggers == ["reintroduced_entity: 'this month's novel'"] and result.deep
    assert club.topic_id in why(result)  # found (a candidate; it has no citable sentence)
    # without the alias, the same words are a window
    other = build(remembered(), "Any news on this month's novel?")
    assert other.time_window is not None and other.time_window["phrase"] == "this month"


def test_a_name_the_session_was_just_given_is_not_reintroduced() -> None:
    # "lake house" names the surprise party (an alias) and is not in the tail: the first
    # mention goes deep; the session then holds the party's topic (injected within the
    # suppression cool-down, 5 turns / 15 minutes), so naming it again re-introduces nothing
    m = remembered()
    party = next(t for t in m.topics.list_live(m.namespace) if t.name == "surprise party")
    first = build(m, "What about the lake house?", session_id="s")
    assert first.triggers == ["reintroduced_entity: 'lake house'"] and first.deep
    assert party.topic_id in topic_ids(first)
    again = build(m, "Is the lake house booked?", session_id="s", now=NOW + timedelta(minutes=1))
    assert again.triggers == [] and not again.deep
    # another session was never given it
    other = build(m, "Is the lake house booked?", session_id="t", now=NOW + timedelta(minutes=1))
    assert other.triggers == ["reintroduced_entity: 'lake house'"]
    # past the cool-down (five more turns and 20 minutes) the session no longer holds it
    for i in range(5):
        build(m, "ok", session_id="s", now=NOW + timedelta(minutes=2 + i))
    later = build(m, "Is the lake house booked?", session_id="s", now=NOW + timedelta(minutes=20))
    assert later.triggers == ["reintroduced_entity: 'lake house'"] and later.deep


def _partial_pool(m: Memory, forget: str | None = None) -> None:
    """Every candidate of the context's searches made partial (as a full-text row gives it),
    and the topic named ``forget`` deleted (as forgetting deletes it) once the search is over."""
    pool = m.context.search.pool

    def partial_pool(*args: Any, **kwargs: Any) -> Any:
        found = pool(*args, **kwargs)
        for tid, t in list(found.topics.items()):
            row = {
                "topic_id": tid, "name": t.name, "one_liner": t.one_liner,
                "utility_score": t.stats.utility_score,
                "first_seen_at": t.time.first_seen_at.isoformat(),
                "last_seen_at": t.time.last_seen_at.isoformat(),
            }  # fmt: skip
            found.topics[tid] = partial_topic(m.namespace, row)
            found.partial.add(tid)
        for t in m.topics.list_live(m.namespace):
            if t.name == forget:  # the node and its mention links, as a forget deletes them
                graph = m.topics.graph
                del graph.topics[t.topic_id]
                graph.mentions = {(tid, mid) for tid, mid in graph.mentions if tid != t.topic_id}
        return found

    m.context.search.pool = partial_pool  # type: ignore[method-assign]


def test_a_hit_scored_from_its_full_text_row_shows_the_topic_as_read() -> None:
    # the context reads every hit with its summaries: a partial hit gets its whole light topic
    # there, so the context is the one a search that read its candidates by id gives (each
    # memory has its own ids: compared by what the context shows)
    def shown(r: ContextResult) -> list[tuple[Any, ...]]:
        keys = ("kind", "layer", "title", "reason_label", "durable_summary")
        return [tuple(i.get(k) for k in keys) for i in r.items]

    expected = build(remembered(), PARTY, session_id="s")
    m = remembered()
    _partial_pool(m)
    got = build(m, PARTY, session_id="s")
    assert got.items and got.context_text == expected.context_text
    assert shown(got) == shown(expected)
    # a topic forgotten between the search and that read is left out, as a read by id leaves it
    m = remembered()
    party = next(t.topic_id for t in m.topics.list_live(m.namespace) if t.name == "surprise party")
    _partial_pool(m, forget="surprise party")
    gone = build(m, PARTY, session_id="s")

    def labels(r: ContextResult, record_id: str | None = None) -> list[str]:
        return [i["reason_label"] for i in r.items if record_id in (None, i["record_id"])]

    assert ("surprise party", "topic_match") in [
        (i["title"], i["reason_label"]) for i in expected.items
    ]
    # no search hit (its evidence, read before the forget, may still name it)
    assert labels(gone, party) in ([], ["conversation_match"]) and "topic_match" in labels(gone)


def test_a_topic_reached_only_through_its_messages_is_shown_from_its_brief() -> None:
    # the search's hits cut to the first: the other topics come in through matching messages,
    # are read as briefs (name, one-liner, dates) and shown exactly as a whole read shows them
    asked = "what did we say about the deposit and the caterer and Postgres and aqueducts?"

    def built(briefs: bool) -> tuple[ContextResult, list[list[str]]]:
        m = remembered()
        rank, summaries = m.context.search.rank, m.topics.cited_summaries
        seen: list[list[str]] = []

        def first_hit(*args: Any, **kwargs: Any) -> Any:
            found = rank(*args, **kwargs)
            found.hits = found.hits[:1]
            return found

        def read(*args: Any, brief_ids: Any = (), **kwargs: Any) -> Any:
            seen.append(list(brief_ids))
            return summaries(*args, brief_ids=brief_ids if briefs else (), **kwargs)

        m.context.search.rank = first_hit  # type: ignore[method-assign]
        m.topics.cited_summaries = read  # type: ignore[method-assign]
        return build(m, asked, explicit=True), seen

    got, seen = built(briefs=True)
    whole, _ = built(briefs=False)
    reached = [i for i in got.items if i["reason_label"] == "conversation_match"]
    assert {i["title"] for i in reached} == {"billing migration", "Roman aqueducts"}
    assert {i["record_id"] for i in reached} <= set(seen[0])  # read as briefs
    assert all(i["freshness"]["first_seen_at"] and i["provenance"]["source_ids"] for i in reached)

    def shown(r: ContextResult) -> list[tuple[Any, ...]]:  # ids differ between memories
        keys = ("kind", "title", "reason_label", "durable_summary", "freshness", "score")
        return [tuple(str(i.get(k)) for k in keys) for i in r.items]

    assert got.context_text == whole.context_text and shown(got) == shown(whole)


def test_a_message_is_embedded_beside_the_first_read_when_it_names_no_participant() -> None:
    """Once a namespace's message named no participant, the next is embedded on its own thread
    while the first read runs (``ContextRun.embed``): one embedding, the same context as a
    builder that embeds it after the read."""
    m = remembered()
    threads: list[str] = []

    class Recording:
        model_name, dimensions = m.search.embedder.model_name, m.search.embedder.dimensions

        def embed(self, texts: Any) -> Any:
            threads.extend(threading.current_thread().name for _ in texts)
            return m.search.embedder.embed(texts)

    s = m.stores
    engine = TopicSearch(s.topics, s.events, Recording(), m.search.cfg)
    early = ContextBuilder(s.topics, s.messages, engine, s.context)
    late = ContextBuilder(s.topics, s.messages, m.search, s.context)
    req = ContextRequest(namespace=m.namespace, message=IMPLICIT, now=NOW)
    early.build(req)  # the namespace's first: after the read, as always
    assert early.named_speakers == {m.namespace: False} and len(threads) == 1
    assert not threads[0].startswith("early-embedding")
    threads.clear()
    got = early.build(req)
    assert len(threads) == 1 and threads[0].startswith("early-embedding"), threads
    late.named_speakers[m.namespace] = True  # never early
    expected = late.build(req)
    assert got.model_dump(exclude={"timings_ms"}) == expected.model_dump(exclude={"timings_ms"})


def test_the_best_topics_passages_failing_leave_the_topics_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The best topics' own passages are an add-on to the evidence: when the read that brings
    them with the topics fails, the topics are read alone and the context is the one built
    without passages."""
    m = remembered()
    s = m.stores

    class Failing:
        def read_topics(self, *args: Any) -> Any:
            raise Neo4jUnavailable("passages down")

        def __getattr__(self, name: str) -> Any:
            return getattr(s.context, name)

    failing = ContextBuilder(s.topics, s.messages, m.search, Failing(), passages=FakePassages([]))  # type: ignore[arg-type]
    plain = ContextBuilder(s.topics, s.messages, m.search, s.context)
    req = ContextRequest(namespace=m.namespace, message=IMPLICIT, now=NOW)
    with caplog.at_level(logging.WARNING, logger="retrieval.topic_reads"):
        got = failing.build(req)
    assert "topic passages unavailable" in caplog.text
    assert got.items
    expected = plain.build(req)
    assert got.model_dump(exclude={"timings_ms"}) == expected.model_dump(exclude={"timings_ms"})
