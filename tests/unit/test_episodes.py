"""Topic formation's pure parts: episodes, phrase ranking, fact selection, date notes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from graph.models import Fact, Message
from sleepwake import episodes, heads, segments
from sleepwake.candidates import Candidate, build_candidates, happened_at
from sleepwake.config import DEFAULT, FormationConfig
from sleepwake.episodes import form_topics
from sleepwake.extract import extract, subject_phrases
from sleepwake.heads import PhraseStats, eligible, is_said_to_listener, phrase_score
from sleepwake.names_apart import distinct_label, name_identity, number_variants
from sleepwake.one_liners import (
    compose_one_liner,
    is_reaction,
    owned_name,
    person_news,
    summary_fact,
)
from sleepwake.segments import segment
from sleepwake.turn_facts import has_content, select_sentences, sentence_weight, turn_fact
from tests.fakes import HashEmbedder

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
FORMATION = DEFAULT.formation


def _cluster(direction: int, n: int, dims: int = 8) -> list[np.ndarray]:
    base = np.zeros(dims)
    base[direction] = 1.0
    return [base + 0.05 * np.eye(dims)[(direction + 1 + i) % dims] for i in range(n)]


def test_segment_cuts_where_the_subject_changes() -> None:
    vectors = np.asarray(_cluster(0, 6) + _cluster(3, 6))
    assert segment(vectors, min_turns=3) == [(0, 6), (6, 12)]


def test_segment_keeps_a_minimum_length_and_splits_long_runs() -> None:
    vectors = np.asarray(_cluster(0, 2) + _cluster(3, 30))
    spans = segment(vectors, min_turns=4, max_turns=10)
    assert all(end - start >= 4 for start, end in spans)
    assert all(end - start <= 10 for start, end in spans)
    assert spans[0][0] == 0 and spans[-1][1] == 32


def test_a_pause_always_cuts_and_shared_words_hold_turns_together() -> None:
    vectors = np.asarray(_cluster(0, 8))
    pauses = [i == 3 for i in range(7)]
    assert segment(vectors, pauses, min_turns=2) == [(0, 4), (4, 8)]
    apart = np.asarray(_cluster(0, 4) + _cluster(3, 4))
    assert segment(apart, min_turns=2) == [(0, 4), (4, 8)]
    drift = np.asarray(_cluster(0, 4) + [v + 3 * np.eye(8)[3] for v in _cluster(0, 4)])
    assert segment(drift, min_turns=2) == [(0, 4), (4, 8)]
    linked = [0, 0, 0, 2, 0, 0, 0]  # turns 3 and 4 share words: a mild drift is no new subject
    assert segment(drift, min_turns=2, links=linked) == [(0, 8)]


def _stats(key: str, **kw: object) -> PhraseStats:
    base: dict[str, object] = dict(
        key=key, turns=1, words=len(key.split()), named=False, event=False, spread=0.0, slice_turns=1,
        structural=False,
    )  # fmt: skip
    base.update(kw)
    return PhraseStats(**base)  # type: ignore[arg-type]


def test_specific_repeated_phrases_outrank_names_and_generic_words() -> None:
    support = phrase_score(_stats("support group", turns=3), centrality=0.5)
    name = phrase_score(_stats("caroline", named=True, turns=3), centrality=0.6)
    generic = phrase_score(_stats("life", spread=0.9), centrality=0.5)
    assert support > name and support > generic
    # a thing only in the description of a shared photo ("[shares a photo: a blue vase]") is
    # what was shown; the talk is about the phrase said in words
    shown = phrase_score(_stats("blue vase", turns=2, shown_only=True), centrality=0.55)
    said = phrase_score(_stats("pottery class", turns=2), centrality=0.5)
    assert said > shown


def test_the_one_liner_is_what_was_done_not_a_reaction_to_it() -> None:
    assert is_reaction("Caroline: Glad your son is okay, Melanie.")
    assert not is_reaction("Melanie: My son got into an accident; you would have been scared.")
    texts = [
        "Caroline: Love all the details and how you got the horse's grace.",  # near the centre
        "Melanie: I painted a horse in oils last spring.",
    ]
    # c: a turn of the topic with no fact, like the reaction: the centroid leans its way
    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([0.6, 0.8]), "c": np.array([1.0, 0.0])}
    cand = Candidate(key="horse painting", message_ids=["a", "b", "c"])
    for mid, text in zip("ab", texts, strict=True):
        cand.add_fact(Fact(text=text, at=T0, source_message_ids=[mid]))
    assert summary_fact(cand, vectors) == texts[1]
    no_penalty = FormationConfig(reaction_penalty=0.0)
    assert summary_fact(cand, vectors, cfg=no_penalty) == texts[0]  # what the penalty changes


def test_a_thing_someone_calls_theirs_is_named_as_theirs() -> None:
    def said(*turns: tuple[str, str]) -> list[Message]:
        return [
            Message(namespace="ns", role="user", speaker=who, content=text, at=T0)
            for who, text in turns
        ]

    pig = said(("Caroline", "And yup, I do - Oscar, my guinea pig."), ("Mel", "So cute!"))
    assert owned_name("guinea pig", pig) == "Caroline's guinea pig"
    kids = said(("Mel", "My two kids love the beach."), ("Caroline", "Fun!"))
    assert owned_name("kids", kids) == "Mel's kids"
    both = said(("Mel", "my family is great"), ("Caroline", "My family too"))
    assert owned_name("family", both) == "family"  # everyone's: no owner
    assert owned_name("family", said(("Mel", "family matters"))) == "family"
    assert owned_name("Oscar", pig) == "Oscar"  # a name is a name already
    assert owned_name("pig", said(("Ann", "my guinea pigs"))) == "pig"  # whole words only


def test_contractions_and_time_words_never_name_a_topic() -> None:
    def cand(surface: str) -> Candidate:
        c = Candidate(key=surface.lower())
        c.surfaces[surface] += 1
        return c

    assert eligible(cand("pottery class"))
    assert not eligible(cand("must've"))
    assert not eligible(cand("last week"))
    assert not eligible(cand("ok"))


def test_facts_are_statements_one_or_two_sentences_never_questions() -> None:
    sentences = [
        "Hey!",
        "What happened that was so awesome?",
        "I signed up for a pottery class last week.",
        "It was nice.",
        "We are going to Tahoe on the 20th with the kids.",
    ]
    chosen = select_sentences(sentences)
    assert chosen == [sentences[2], sentences[4]]
    assert select_sentences(["How are you?", "What about you?"]) == []


def test_relative_dates_are_resolved_beside_the_fact() -> None:
    assert happened_at("I went to the support group yesterday.", T0, "UTC") == datetime(
        2023, 5, 7, tzinfo=UTC
    )
    assert happened_at("I went to the support group.", T0, "UTC") is None
    assert happened_at("We are going camping next month.", T0, "UTC") is None  # a plan
    message = Message(
        message_id="m1", namespace="ns", role="user", content="x", at=T0, speaker="Caroline"
    )
    fact = turn_fact(message, extract("I went to a LGBTQ support group yesterday."), "UTC")
    assert fact is not None
    assert fact.text == "Caroline: I went to a LGBTQ support group yesterday."
    assert fact.valid_from == datetime(2023, 5, 7, tzinfo=UTC) and fact.at == T0


def _messages(turns: list[tuple[str, str]], start: datetime = T0) -> list[Message]:
    return [
        Message(
            message_id=f"m{i}", namespace="ns", role=role, content=text,  # type: ignore[arg-type]
            at=start + timedelta(seconds=30 * i), seq=i,
        )
        for i, (role, text) in enumerate(turns)
    ]  # fmt: skip


def test_a_long_assistant_answer_makes_a_handful_of_topics() -> None:
    paragraph = (
        "Sourdough bread needs a lively starter, strong flour, water and salt. Feed the starter "
        "the night before, mix the dough, rest it, then fold it every half hour for two hours. "
        "Shape the loaf, proof it in a basket in the fridge overnight and bake it in a hot "
        "Dutch oven with the lid on for twenty minutes, then without the lid until it is dark. "
    )
    answer = paragraph * 12  # ~4,000 characters, dozens of noun phrases
    turns = [("user", "How do I bake sourdough bread at home?"), ("assistant", answer)]
    messages = _messages(turns)
    phrases = build_candidates(messages)
    assert len(phrases.candidates) >= 8
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    assert 1 <= len(topics.candidates) <= 3
    assert sum(len(c.facts) for c in topics.candidates) <= 2  # one per turn at most


def test_an_answer_takes_its_questions_vector_and_is_not_embedded() -> None:
    """A long answer right after its question shares the question's vector (its opening is
    "Great question! ..."); a short answer, an answer that follows another answer, or one that
    opens the slice is embedded by its own lead."""
    long = "Great question! Here is how. " + "Water it weekly and keep it out of the sun. " * 12
    turns = [("assistant", "Welcome back."), ("user", "How do I repot a peace lily?"),
             ("assistant", long), ("tool", "search: peace lily"),
             ("user", "And my cactus?"), ("assistant", long.replace("how", "why")),
             ("user", "Thanks."), ("assistant", "Cacti need gritty soil.")]  # fmt: skip
    messages = _messages(turns)
    embedded: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return HashEmbedder().embed(texts)

    vectors = segments.turn_vectors(messages, embed)
    assert embedded == [turns[i][1] for i in (0, 1, 3, 4, 6, 7)]
    assert vectors.shape[0] == 8
    assert np.allclose(vectors[2], vectors[1]) and np.allclose(vectors[5], vectors[4])
    assert not np.allclose(vectors[3], vectors[1])


def test_a_long_turn_is_embedded_by_its_lead_cut_after_a_whole_word() -> None:
    """Segmentation embeds a user's long request by its opening (``EMBEDDED_LEAD_CHARS``), cut
    after a whole word; its content words still link it to its neighbours over a longer lead."""
    cap = FORMATION.turn_lead_chars
    request = "I am planning a week in Lisbon next spring with my sister " * 8
    short = "What should I pack?"
    messages = _messages([("user", request), ("user", short)])
    embedded: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return HashEmbedder().embed(texts)

    segments.turn_vectors(messages, embed)
    lead, whole = embedded
    assert cap // 2 < len(lead) <= cap and request.startswith(lead)
    assert request[len(lead)] == " "  # not a severed word
    assert whole == short
    assert cap <= FORMATION.turn_lead_chars  # the lexical links read at least as far
    unbroken = "x" * (cap + 50)  # no space to cut at: the plain cut
    assert segments.turn_text(_messages([("user", unbroken)])[0]) == unbroken[:cap]


def test_an_answer_is_never_cut_from_its_question() -> None:
    # turns 0-2 on one subject, then a question (3) whose answer (4) opens on a new one, and
    # two more turns on it: the cut falls before the question, not between it and its answer
    vectors = np.asarray(_cluster(0, 3) + _cluster(3, 1) + _cluster(5, 3))
    assert segment(vectors, min_turns=1) == [(0, 3), (3, 4), (4, 7)]
    joined = [i == 3 for i in range(6)]  # turn 4 answers turn 3
    assert segment(vectors, min_turns=1, joined=joined) == [(0, 3), (3, 7)]


def test_a_lone_gap_left_by_an_answer_still_cuts_a_change_of_subject() -> None:
    # "The billing migration is finished." / "Next, the roadmap review." / "Noted: the
    # roadmap review.": the answer leaves one gap that may cut, and it is a change of subject
    vectors = np.asarray(_cluster(0, 1) + _cluster(3, 2))
    assert segment(vectors, min_turns=1, joined=[False, True]) == [(0, 1), (1, 3)]
    same = np.asarray(_cluster(0, 3))  # one subject throughout: no cut
    assert segment(same, min_turns=1, joined=[False, True]) == [(0, 3)]


ADVICE = (
    "Packing for a two-week trek on the Inca Trail takes careful planning. "
    "**Layers**: Make sure to pack a warm fleece and a rain jacket. "
    "**Footwear**: Always break in your hiking boots before the trip. "
    "**Altitude**: Avoid heavy meals and drink plenty of water. "
    "**Permits**: Never leave your passport at the hotel. "
    "**Money**: Keep some small bills for tips and snacks. "
    "**Safety First**: Make sure to carry a first aid kit and a headlamp. "
)


def test_an_answers_advice_heads_no_topic_of_its_own() -> None:
    """The imperatives of a long answer ("Make sure to...", "Avoid...") are advice, not rules
    the user set: the exchange makes one topic, named by what the user asked about."""
    turns = [
        ("user", "I'm planning a two-week trek on the Inca Trail in May. What should I pack?"),
        ("assistant", ADVICE * 3),
        ("user", "Thanks! I already bought new hiking boots for the Inca Trail trek."),
        ("assistant", "Great choice. " + ADVICE),
    ]
    messages = _messages(turns)
    phrases = build_candidates(messages)
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    names = [c.name.lower() for c in topics.candidates]
    assert len(names) == 1 and "inca trail" in names[0], names
    # a user's own rule still heads a topic of its own
    rule = [("user", "Never use plastic water bottles on a trek.")]
    mine = _messages([*turns, *rule])
    phrases = build_candidates(mine)
    topics = form_topics(mine, phrases, phrases.extractions, HashEmbedder().embed)
    assert len(topics.candidates) == 2, [c.name for c in topics.candidates]


def test_an_answer_offers_phrases_from_its_opening_only() -> None:
    turns = [("user", "What should I pack for the Inca Trail?"), ("assistant", ADVICE)]
    keys = {c.key for c in build_candidates(_messages(turns)).candidates}
    assert "inca trail" in keys and "warm fleece" in keys  # the first three sentences
    assert not keys & {"aid kit", "bills", "headlamp", "passport"}, keys
    said = _messages([("user", ADVICE)])  # the same words from the user are all read
    assert "headlamp" in {c.key for c in build_candidates(said).candidates}


def test_greetings_and_sign_offs_make_no_topic_and_no_fact() -> None:
    assert not has_content("ok, that's all for today")
    assert has_content("Good idea to do that early.")
    assert sentence_weight("ok, that's all for today") == 0.0
    turns = [
        ("user", "My bike needs new brake pads before the spring ride."),
        ("assistant", "Good idea to get the brake pads done early."),
        ("user", "ok, that's all for today"),
        ("assistant", "Talk tomorrow."),
    ]
    messages = _messages(turns)
    phrases = build_candidates(messages)
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    names = [c.name.lower() for c in topics.candidates]
    assert names and "talk" not in names, names
    facts = [f.text for c in topics.candidates for f in c.facts]
    assert not any("all for today" in f or "Talk tomorrow" in f for f in facts), facts


def test_a_topic_is_named_by_what_is_owned_or_talked_about() -> None:
    assert "surprise party" in subject_phrases("We're planning Mel's surprise party at noon.")
    assert "Roman aqueducts" in subject_phrases("I'm reading a book about Roman aqueducts.")
    assert subject_phrases("We talked about it. Mel's been busy.") == []
    turns = [
        ("user", "I'm also reading a book about Roman aqueducts."),
        ("assistant", "The Roman aqueducts carried water for hundreds of miles."),
    ]
    messages = _messages(turns)
    phrases = build_candidates(messages)
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    assert [c.name for c in topics.candidates] == ["Roman aqueducts"]


def test_utility_counts_the_episodes_a_topic_heads_not_its_turns() -> None:
    cand = Candidate(key="pottery class", returns=1, message_ids=["a", "b", "c", "d"])
    assert cand.mentions == 1
    assert Candidate(key="bowl", message_ids=["a", "b"]).mentions == 2  # a phrase: per turn


def test_a_second_topic_of_a_name_gets_a_name_of_its_own() -> None:
    party = Candidate(key="party", label="party", first_at=T0, alias_keys=["birthday party"])
    party.user_surfaces["birthday party"] += 0
    assert distinct_label(party, set()) is None
    assert distinct_label(party, {name_identity("Party")}) == "birthday party"
    # the phrase lookup of matching also asks for the other number: "business plans" finds
    # the live "business plan", so it merges into it or takes a name of its own
    assert number_variants("business plans") == {"business plan"}
    assert number_variants("business plan") == {"business plans"}
    assert number_variants("stained glass") == number_variants("art") == set()
    # never a date stamp or a running number ("May 2023 photos 2"): what sets it apart
    plain = Candidate(key="photos", label="photos", first_at=T0)
    plain.add_fact(
        Fact(text="Ann: Here are the photos from the beach at sunset.", source_message_ids=["a"])
    )
    plain.add_fact(
        Fact(text="Ann: The beach was empty, just us and the gulls.", source_message_ids=["b"])
    )
    assert distinct_label(plain, {"photo"}) == "photos (beach)"
    assert distinct_label(plain, {"photo", name_identity("photos (beach)")}) == "photos (sunset)"
    assert distinct_label(Candidate(key="photos", label="photos"), {"photo"}) is None


def test_the_one_liner_is_the_fact_nearest_the_topics_turns() -> None:
    texts = [
        "user: Aside about the weather today here.",  # first said, off the subject
        "user: I glazed my first bowl in class.",
        "user: The kiln firing takes all weekend.",
        "user: Ok.",  # too short to sum anything up
    ]
    vectors = {"a": np.array([0.0, 1.0]), "b": np.array([1.0, 0.0]), "c": np.array([1.0, -0.3])}
    vectors["d"] = np.array([1.0, 0.0])

    def topic(key: str) -> Candidate:
        cand = Candidate(key=key, message_ids=["a", "b", "c", "d"])
        for mid, text in zip("abcd", texts, strict=True):
            cand.add_fact(Fact(text=text, at=T0, source_message_ids=[mid]))
        return cand

    cand = topic("pottery class")
    assert cand.one_liner() == texts[0]  # no summary chosen: the first informative fact
    assert summary_fact(cand, vectors) == texts[1]  # the turn nearest the centroid
    cand.summary = summary_fact(cand, vectors)
    assert cand.one_liner() == texts[1]
    assert summary_fact(topic("kiln"), vectors) == texts[2]  # a fact naming the topic
    assert summary_fact(Candidate(key="x"), vectors) is None


def test_an_exclamation_at_the_listener_is_no_fact() -> None:
    """Applause for the other person's news names nothing worth keeping; the statement beside
    it, or the speaker's own exclamation, is kept."""
    for said in (
        "Wow, Caroline, that looks amazing!",
        "Wow, Caroline, your group sounds awesome!",
        "That painting of yours is so vivid!",
    ):
        assert sentence_weight(said) == 0.0, said
    assert sentence_weight("Wow, I finished my first marathon!") > 0
    assert sentence_weight("Paris was lovely in the spring.") > 0
    turn = [
        "Wow, Caroline, sounds like the parade was an awesome experience!",
        "It's great to see the love and support for the LGBTQ+ community.",
    ]
    assert select_sentences(turn) == turn[1:]


FRIENDS = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, Caroline, that sounds like a lovely group!",  # applause: no part
    "Caroline: The support group has made me feel accepted and given me courage.",
    "Melanie: Yeah, I painted that lake sunrise last year! It's special to me.",
    "Caroline: Thanks, Melanie, you're always so kind to me and you listen.",
    "Melanie: Painting's a fun way to express my feelings and get creative.",
]


def test_the_one_liner_gives_each_persons_news_a_part() -> None:
    """An episode where both friends share news sums up both: the lead (summary_fact's) first,
    then the other person's news fact, never their applause or a remark to the listener."""
    lead = FRIENDS[0]
    one_liner = compose_one_liner("support group", FRIENDS, lead)
    assert one_liner.startswith(lead + " Melanie: ")
    assert "lake sunrise" in one_liner or "Painting's a fun way" in one_liner
    assert "lovely group" not in one_liner and len(one_liner) <= FORMATION.one_liner_chars
    # without a lead: the person with most facts first, each by their most central news
    assert compose_one_liner("support group", FRIENDS).startswith("Caroline: ")
    assert person_news(FRIENDS[1:2]) is None  # applause only: no news
    assert person_news([FRIENDS[4], FRIENDS[2]], "support group") == FRIENDS[2]
    assert compose_one_liner("x", [FRIENDS[1]]) == ""
    # a user's chat with an assistant (no speakers' names): the lead alone, as before
    chat = ["The tax return is due on the 15th.", "I will collect all the receipts myself."]
    assert compose_one_liner("tax return", chat, chat[0]) == chat[0]
    # another person's part is their own news, not a remark on the first one's
    remark = "Melanie: Ha, a lopsided bowl still counts as a bowl."
    assert compose_one_liner("bowl", [lead, remark], lead) == lead
    # a long fact is cut to its first sentence, verbatim
    long = "Melanie: " + "I ran a charity race for mental health last Saturday. " * 4
    assert compose_one_liner("race", [long]) == long.split(". ")[0] + "."


def test_a_topic_of_two_friends_names_both_in_its_one_liner_but_embeds_neither() -> None:
    candidate = Candidate(key="support group", label="support group")
    for i, text in enumerate(FRIENDS):
        candidate.add_fact(Fact(text=text, at=T0, source_message_ids=[f"m{i}"]))
    candidate.summary = compose_one_liner(candidate.name, [f.text for f in candidate.facts])
    semantic = candidate.semantic_text()
    assert "Melanie" in candidate.one_liner() and "Caroline" in candidate.one_liner()
    assert "Melanie:" not in semantic and "Caroline:" not in semantic


def test_a_guess_at_the_listeners_experience_is_no_rule() -> None:
    """ "That must feel surreal." guesses how it is for the other person: with the exclamations
    it heads nothing between friends (on LoCoMo conv-42 such guesses headed topics of one fact,
    "experience", "feel sureal"); a rule with "must" still counts, and so does a guess in the
    first person."""
    for said in ("That must feel sureal.", "Having pets must be a wonderful experience."):
        assert is_said_to_listener(said), said
    assert not is_said_to_listener("Guests must bring their own plates.")
    assert not is_said_to_listener("My garden must be watered every morning.")


def test_encouragement_between_friends_heads_no_topic_of_its_own() -> None:
    """Between two people "Keep on trying!" and "Make sure you watch other videos first" are
    for the listener, not rules; a user's rule to an assistant still heads its topic."""
    for said in (
        "Keep on trying and believe in yourself!",
        "Make sure you watch other peoples videos first.",
        "Must feel so liberating!",
    ):
        assert is_said_to_listener(said), said
    assert not is_said_to_listener("Never use plastic plates at the party.")
    assert not is_said_to_listener("I always keep my turtles' tank at 25 degrees!")


def test_a_subject_talked_about_for_an_hour_is_not_one_topic_of_forty_facts() -> None:
    """Episode after episode headed by "basketball game": once it holds ``MAX_TOPIC_FACTS``
    facts, the next episode is named by its own best phrase (a topic of forty facts is found
    by every question and fills a context alone)."""
    places = ["park", "lake", "cafe", "library", "stadium", "beach", "garden", "museum"]
    turns = [
        ("user", f"I watched the basketball game with my cousin near the {places[i % 8]} {i}.")
        for i in range(40)
    ]
    messages = _messages(turns)
    phrases = build_candidates(messages)
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    sizes = {c.name: len(c.facts) for c in topics.candidates}
    assert sizes.get("basketball game", 0) >= FORMATION.max_topic_facts, sizes
    assert len(sizes) >= 3 and sum(sizes.values()) == 40, sizes
    # a head is only ever filled past the cap by the one episode that reached it
    assert max(sizes.values()) < FORMATION.max_topic_facts + FORMATION.max_turns, sizes


def test_a_fact_is_one_statement_and_a_second_only_when_both_are_short() -> None:
    short = ["I joined a pottery class.", "It meets on Tuesdays at noon."]
    assert select_sentences(short) == short
    long = [
        "I signed up for the advanced pottery class at the community studio downtown.",
        "We are going to Tahoe on the 20th with the kids and my sister's family.",
    ]
    chosen = select_sentences(long)
    assert len(chosen) == 1 and chosen[0] in long
    assert sum(len(s) for s in short) < FORMATION.pair_chars < sum(len(s) for s in long)


def test_a_lone_remark_between_two_subjects_joins_the_talk_before_it() -> None:
    """In a long slice, an episode of one or two facts (a photo and a "wow") is an aside of
    the episode before it, not a topic: on LoCoMo such topics were most of those citing one
    message. A short slice may change subject every turn or two: there it stays."""
    counts = [str(n) for n in range(2, 16)]  # 14 turns of talk, then the aside: 17 turns
    talk = [
        ("user", f"My pottery class made {n} bowls and I glazed the pottery bowl.") for n in counts
    ]
    aside = [
        ("user", "Wow!"),
        ("user", "Here is the sunset over the harbor tonight."),
        ("user", "Cool!"),
    ]
    for size, expected in ((len(counts), ["pottery class"]), (3, ["pottery class", "sunset"])):
        messages = _messages([*talk[:size], *aside])
        phrases = build_candidates(messages)
        extractions = phrases.extractions
        by_key = {c.key: c for c in phrases.candidates}
        assert {"pottery class", "sunset"} <= set(by_key)  # each could name a topic
        ep = [
            heads.Episode(messages[:size], np.zeros((size, 2))),
            heads.Episode(messages[size:], np.zeros((3, 2))),
        ]
        assert episodes._fact_count(ep[1], extractions, "UTC") == 1
        ep[0].heads, ep[1].heads = ["pottery class"], ["sunset"]
        out = episodes._assemble(ep, by_key, extractions, phrases, "UTC")
        assert sorted(c.key for c in out.candidates) == expected, size
    assert len(messages) < FORMATION.long_slice <= len(counts) + len(aside)


def test_an_aside_joins_a_full_neighbour_rather_than_making_a_topic_of_one_fact() -> None:
    """An aside whose neighbour already holds ``MAX_TOPIC_FACTS`` facts still joins it (one or
    two facts past the cap); a full head that an episode of real talk would head is renamed by
    the episode's own phrase, as before. Renamed, an aside made a topic of one fact (LoCoMo
    conv-42: "peaceful presence around", "feel sureal")."""
    talk = [("user", f"My pottery class made {n} bowls and I glazed the pottery bowl.") for n in range(2, 16)]  # fmt: skip
    aside = [
        ("user", "Wow!"),
        ("user", "Here is the sunset over the harbor tonight."),
        ("user", "Cool!"),
    ]
    more = [("user", f"The sunset over the harbor was red {n} times and I watched the sunset.") for n in range(2, 6)]  # fmt: skip
    for tail, expected in ((aside, ["pottery class"]), (more, ["pottery class", "sunset"])):
        messages = _messages([*talk, *tail])
        phrases = build_candidates(messages)
        by_key = {c.key: c for c in phrases.candidates}
        size = len(talk)
        ep = [
            heads.Episode(messages[:size], np.zeros((size, 2))),
            heads.Episode(messages[size:], np.zeros((len(tail), 2))),
        ]
        ep[0].heads, ep[1].heads = ["pottery class"], ["pottery class"]
        ep[1].phrases = [heads.PhraseStats("sunset", 2, 1, False, False, 0.5, 2, False)]
        out = episodes._assemble(ep, by_key, phrases.extractions, phrases, "UTC")
        names = sorted(c.key for c in out.candidates)
        assert names == expected, names
    assert len(talk) >= FORMATION.max_topic_facts


def test_a_head_that_would_get_one_fact_of_its_episode_is_dropped() -> None:
    """Of an episode's heads, one that would get fewer than ``MIN_HEAD_FACTS`` facts heads
    nothing: its turn goes to the other head (a second head named in one turn made a topic of
    one fact). Named in two turns, it keeps its topic."""
    talk = [("user", f"My pottery class made {n} bowls and I glazed the pottery bowl.") for n in range(2, 8)]  # fmt: skip
    sunset = [
        ("user", "Here is the sunset over the harbor tonight."),
        ("user", "The sunset was red over the harbor again."),
    ]
    for said, expected in ((1, {"pottery class": 7}), (2, {"pottery class": 6, "sunset": 2})):
        messages = _messages([*talk, *sunset[:said]])
        phrases = build_candidates(messages)
        by_key = {c.key: c for c in phrases.candidates}
        assert {"pottery class", "sunset"} <= set(by_key)
        ep = heads.Episode(messages, np.zeros((len(messages), 2)))
        ep.heads = ["pottery class", "sunset"]
        out = episodes._assemble([ep], by_key, phrases.extractions, phrases, "UTC")
        assert {c.key: len(c.facts) for c in out.candidates} == expected
    assert FORMATION.min_head_facts == 2


def test_of_several_heads_the_one_named_once_gives_way() -> None:
    """A first head named in one turn gives way to a head named in several ("peaceful presence
    around" beside "dog"); but a head that is a part of the first one's name ("pottery" of
    "pottery class") gives way to the first, the more specific name."""
    talk = [("user", f"My pottery class made {n} bowls and I glazed the pottery bowl.") for n in range(2, 8)]  # fmt: skip
    messages = _messages([*talk, ("user", "Here is the sunset over the harbor tonight.")])
    phrases = build_candidates(messages)
    by_key = {c.key: c for c in phrases.candidates}
    ep = heads.Episode(messages, np.zeros((len(messages), 2)))
    thin = episodes._thin_heads
    assert thin(ep, ["sunset", "pottery class"], by_key, phrases.extractions, "UTC") == [
        "pottery class"
    ]
    assert thin(ep, ["sunset", "harbor"], by_key, phrases.extractions, "UTC") == ["sunset"]
    # "pottery class" named once here, "pottery" (a part of its name) in six turns
    parts = {"pottery class": by_key["sunset"], "pottery": by_key["pottery class"]}
    assert thin(ep, ["pottery class", "pottery"], parts, phrases.extractions, "UTC") == [
        "pottery class"
    ]


def test_a_second_head_needs_the_user_to_come_back_to_it() -> None:
    """A phrase of a long episode heads a second topic only when the user named it in two
    turns; said once beside a long answer that repeats it ("passport"), it is an aside."""
    main = _stats("travel requirements", turns=4, user_turns=3)
    vec = {"travel requirements": np.array([1.0, 0.0]), "passport": np.array([0.0, 1.0])}
    centroid = np.array([1.0, 1.0]) / np.sqrt(2)
    once = _stats("passport", turns=4, user_turns=1)
    twice = _stats("passport", turns=4, user_turns=2)
    turns = FORMATION.second_head_turns
    assert heads._second_head([main, once], main, vec, centroid, turns) == []
    assert heads._second_head([main, twice], main, vec, centroid, turns) == ["passport"]


ARTICLE = (
    "Latent conditions are problems hidden below the ground or behind walls that nobody could "
    "see when the contract was signed. When latent conditions are found, the builder may issue "
    "a variation claim for the extra work. A homeowner should ask for the report that shows the "
    "latent conditions and check the variation claim against the contract. "
)


def test_in_a_chat_the_answer_names_the_topic_not_the_form_asked_for() -> None:
    """A request's subject is what its answer takes up; the form asked for ("in English
    language", "using 210 words") is carried out, not talked about, and names nothing."""
    turns = [
        ("user", "Write me the part on latent conditions of the article using 210 words. "
                 "Please write in English language."),
        ("assistant", ARTICLE * 3),
    ]  # fmt: skip
    messages = _messages(turns)
    phrases = build_candidates(messages)
    keys = {c.key for c in phrases.candidates}
    assert {"latent conditions", "english", "article using"} <= keys, keys
    topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
    names = [c.name.lower() for c in topics.candidates]
    assert names == ["latent conditions"], names
    # between people (no long answer) the same words are ranked as before: nothing moves
    asked = _stats("english language", user_turns=1)
    assert heads.answered(asked, answers=0, repeated=0) == 0.0
    assert heads.answered(asked, answers=1, repeated=0) == -FORMATION.directive_only
    taken_up = _stats("latent conditions", user_turns=1)
    assert heads.answered(taken_up, answers=1, repeated=1) == 0.0
    only_the_answer = _stats("variation claim", user_said=False)
    assert heads.answered(only_the_answer, answers=1, repeated=1) == 0.0


def test_an_answers_fact_is_not_what_the_assistant_says_of_itself() -> None:
    message = Message(
        message_id="m1", namespace="ns", role="assistant", content="x", at=T0
    )  # fmt: skip
    text = (
        "As an AI language model, I don't have brand or product preferences. "
        "Popular workout headphones are the Jaybird X4 and the Powerbeats Pro."
    )
    fact = turn_fact(message, extract(text), "UTC")
    assert fact is not None and "Jaybird" in fact.text and "AI language model" not in fact.text
    # a person's first person is their news
    mine = Message(message_id="m2", namespace="ns", role="user", content="x", at=T0)
    text = "I bought the Jaybird X4 for my runs. Popular workout headphones are the Powerbeats Pro."
    fact = turn_fact(mine, extract(text), "UTC")
    assert fact is not None and "I bought" in fact.text
    # an answer that only speaks of itself still gives its fact
    alone = turn_fact(message, extract("I'm happy to help you plan the trip to Seoul!"), "UTC")
    assert alone is not None


def test_a_request_with_no_subject_of_its_own_goes_on_with_the_one_before() -> None:
    """In a chat with an assistant, an episode whose best phrase the request and the answer do
    not share ("ME3.2, please give it a nice heading") continues the topic before it; a new
    session (after a pause) or the slice's first episode keeps its own."""

    def episode(key: str, answered: float, user_turns: int = 1) -> heads.Episode:
        ep = heads.Episode(_messages([("user", "x"), ("assistant", "y")]), np.zeros((2, 2)))
        ep.phrases = [_stats(key, answered=answered, user_turns=user_turns)]
        ep.heads = [key]
        return ep

    asked = -FORMATION.directive_only
    only_the_answer = episode("excel files", 0.0, user_turns=0)
    eps = [episode("python exercises", 0.0), episode("heading", asked), only_the_answer]
    heads.continue_requests(eps, [False] * 5)
    assert [ep.heads for ep in eps] == [["python exercises"], [], []]
    eps = [episode("python exercises", 0.0), episode("heading", asked), episode("roadmap", 0.0)]
    heads.continue_requests(eps, [False, True, False, False, False])  # a pause before the 2nd
    assert [ep.heads for ep in eps] == [["python exercises"], ["heading"], ["roadmap"]]
    # an episode that has a subject of its own, though not as its best phrase, keeps its head
    eps = [episode("python exercises", 0.0), episode("heading", asked)]
    eps[1].phrases.append(_stats("excel files", user_turns=1))
    heads.continue_requests(eps, [False] * 3)
    assert eps[1].heads == ["heading"]
    eps = [episode("heading", asked)]
    heads.continue_requests(eps, [False])
    assert eps[0].heads == ["heading"]


def test_in_a_chat_one_passing_exchange_joins_the_talk_before_it() -> None:
    """A chat with an assistant moves in exchanges: one exchange between two subjects (a
    question and its answer, two facts) is an aside of the talk before it, even in a slice
    shorter than ``LONG_SLICE``; between people (no long answer) such a slice keeps every
    episode's own head."""
    bread = "Sourdough bread needs a lively starter, strong flour, water and salt. " * 8
    helmet = [
        ("user", "My bike helmet cracked on the ride yesterday, so I need a new bike helmet."),
        ("assistant", "Sorry to hear about the bike helmet; a cracked bike helmet must go."),
    ]

    def slice_of(answer: str) -> list[Message]:
        first = _messages(
            [
                ("user", "How do I bake sourdough bread at home with my sourdough starter?"),
                ("assistant", answer),
                ("user", "I fed my sourdough starter last night for the sourdough bread."),
                ("assistant", answer),
            ]
        )
        later = T0 + timedelta(hours=2)
        second = _messages(helmet, start=later)
        third = _messages(
            [
                ("user", "I'm planning a two-week trek on the Inca Trail in May."),
                ("assistant", ADVICE if len(answer) > 500 else "Sounds great."),
                ("user", "I already bought new hiking boots for the Inca Trail trek."),
                ("assistant", "Great choice for the Inca Trail."),
            ],
            start=later + timedelta(hours=2),
        )
        messages = [*first, *second, *third]
        return [
            Message(
                message_id=f"m{i}", namespace="ns", role=m.role, content=m.content, at=m.at, seq=i
            )
            for i, m in enumerate(messages)
        ]

    def names(messages: list[Message]) -> list[str]:
        phrases = build_candidates(messages)
        topics = form_topics(messages, phrases, phrases.extractions, HashEmbedder().embed)
        return [c.name.lower() for c in topics.candidates]

    chat = slice_of(bread)
    assert len(chat) < FORMATION.long_slice
    assert not any("helmet" in n for n in names(chat)), names(chat)
    between_people = slice_of("Sourdough takes a starter, flour, water and salt.")
    assert any("helmet" in n for n in names(between_people)), names(between_people)
