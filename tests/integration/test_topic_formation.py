"""Topic formation end to end: real Neo4j, real MiniLM, a controlled clock (issue #12).

A three-session conversation must become the few topics a person would name, with one topic per
subject across sessions (one TopicEvent per session it came back in); a long assistant answer
must make a handful of topics, not one per noun phrase.
"""

from __future__ import annotations

from datetime import timedelta

from neo4j import Driver

from retrieval.embedding import MiniLMEmbedder
from retrieval.search import TopicSearch
from sleepwake.conversation import IncomingMessage
from tests.integration.test_sleep_wake import DAY1, Memory, build

POTTERY_1 = [
    ("user", "I signed up for a pottery class at the community studio last week."),
    ("assistant", "That sounds lovely! What do you make in the pottery class?"),
    ("user", "We started with bowls on the wheel. My first pottery bowl was lopsided."),
    ("assistant", "Everyone's first bowl is lopsided; the wheel takes practice."),
    ("user", "The pottery teacher says glazing comes next month."),
    ("assistant", "Glazing is the fun part of a pottery class."),
]
ADOPTION = [
    ("user", "Also, my partner and I are starting the adoption process for a child."),
    ("assistant", "That's a big step. Which adoption agency are you working with?"),
    ("user", "We picked an adoption agency that supports LGBTQ families."),
    ("assistant", "Good that the adoption agency supports families like yours."),
    ("user", "The adoption home study is scheduled for June."),
    ("assistant", "Good luck with the adoption home study."),
]
POTTERY_2 = [
    ("user", "Pottery class update: I finally glazed my first bowl in class yesterday."),
    ("assistant", "Congrats! How did the glaze on the bowl come out?"),
    ("user", "The glaze came out deep blue. The pottery teacher loved it."),
    ("assistant", "Deep blue glaze on a handmade bowl sounds beautiful."),
    ("user", "Next pottery class we will try making mugs on the wheel."),
    ("assistant", "Mugs are a nice next step after bowls in a pottery class."),
]
POTTERY_3 = [
    ("user", "My pottery class ended today and I brought home six mugs and two bowls."),
    ("assistant", "What a nice finish to the pottery class! Will you sign up again?"),
    ("user", "Yes, I signed up for the advanced pottery class in the autumn."),
    ("assistant", "The advanced pottery class will be great after this one."),
    ("user", "I want to learn to throw bigger pieces on the wheel."),
    ("assistant", "Bigger pieces on the wheel take patience; you'll get there."),
]


# two friends, three sessions over three weeks (LoCoMo-style: both speak as users, by name)
FRIENDS_1 = [
    ("Melanie", "I finally signed up for my pottery class at the community studio."),
    ("Caroline", "That's awesome, Mel! What are you making there?"),
    ("Melanie", "Bowls on the wheel. My first pottery bowl came out lopsided."),
    ("Caroline", "Ha, a lopsided bowl still counts as a bowl."),
    ("Melanie", "The pottery teacher says we start glazing next month."),
    ("Caroline", "Guess what, I adopted a guinea pig! My guinea pig is called Oscar."),
    ("Melanie", "A guinea pig! How is Oscar settling in?"),
    ("Caroline", "Oscar hides in his hay house all day, but he eats carrots from my hand."),
    ("Melanie", "Guinea pigs need a while to trust people, he'll come around."),
    ("Caroline", "I bought Oscar a bigger cage and a second hay house this weekend."),
]
FRIENDS_2 = [
    ("Melanie", "Pottery class news: I glazed my first bowl in class yesterday."),
    ("Caroline", "Oh nice! What colour did you pick for the glaze?"),
    ("Melanie", "The glaze came out deep blue and the teacher loved my bowl."),
    ("Caroline", "A deep blue bowl sounds gorgeous, Mel."),
    ("Caroline", "Wow, Mel, your teacher must be proud of you!"),
    ("Melanie", "Next pottery class we are making mugs on the wheel."),
    ("Caroline", "Mugs are a nice next step after the bowls."),
]
FRIENDS_3 = [
    ("Melanie", "My pottery class ended today; I brought home six mugs and two bowls."),
    ("Caroline", "Wow, six mugs! Will you take the pottery class again?"),
    ("Melanie", "Yes, I signed up for the advanced pottery class in the autumn."),
    ("Caroline", "Oscar says hi, by the way. My guinea pig finally sits on my lap."),
    ("Melanie", "Aw, so Oscar trusts you now. Guinea pigs are sweet once they settle."),
    ("Caroline", "He even squeaks when I open the fridge because he wants carrots."),
]


def _said(memory: Memory, day: int, turns: list[tuple[str, str]]) -> None:
    at = DAY1 + timedelta(days=day)
    items = [
        IncomingMessage(role="user", speaker=who, content=text, at=at + timedelta(minutes=i))
        for i, (who, text) in enumerate(turns)
    ]
    memory.conversation.append(memory.namespace, items, auto_sleep=False)
    memory.sleeper.sleep(memory.namespace, at + timedelta(hours=3))


def _session(memory: Memory, day: int, turns: list[tuple[str, str]]) -> None:
    at = DAY1 + timedelta(days=day)
    memory.say(at, *turns)
    memory.sleeper.sleep(memory.namespace, at + timedelta(hours=3))


def test_three_sessions_make_the_topics_a_person_would_name(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    memory = build(driver, embedder, namespace)
    _session(memory, 0, POTTERY_1 + ADOPTION)
    _session(memory, 9, POTTERY_2)
    _session(memory, 20, POTTERY_3 + [("assistant", "Talk soon!")] * 4)
    topics = memory.topics.list_live(namespace)
    names = [t.name.lower() for t in topics]
    pottery = [t for t in topics if "pottery" in t.name.lower()]
    adoption = [t for t in topics if "adoption" in t.name.lower()]
    assert len(pottery) == 1 and len(adoption) == 1, names
    assert len(topics) <= 4, names
    events = memory.events.for_topics(namespace, [pottery[0].topic_id])
    assert len(events) == 3, names  # one per session it came back in
    assert pottery[0].time.first_seen_at.date() == DAY1.date()
    assert pottery[0].time.last_seen_at.date() == (DAY1 + timedelta(days=20)).date()
    assert not any(f.text.endswith("?") for t in topics for f in t.facts)
    glazed = [f for f in pottery[0].facts if "glazed" in f.text]
    assert glazed and glazed[0].valid_from == DAY1 + timedelta(days=8) - timedelta(hours=9)


def test_two_friends_topics_are_named_as_theirs_and_found_by_any_of_their_facts(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    """Each friend's subject is one topic across the sessions it came back in, named as theirs;
    topic search finds it by a fact that is not its one-liner (its gist, text/gist.py)."""
    memory = build(driver, embedder, namespace)
    _said(memory, 0, FRIENDS_1)
    _said(memory, 9, FRIENDS_2)
    _said(memory, 20, FRIENDS_3 + [("Caroline", "Talk soon!")] * 4)
    topics = memory.topics.list_live(namespace)
    names = [t.name for t in topics]
    pottery = [t for t in topics if "pottery" in t.name.lower()]
    pig = [t for t in topics if "guinea pig" in t.name.lower() or "oscar" in t.name.lower()]
    assert len(pottery) == 1 and len(pig) == 1, names
    assert len(topics) <= 4, names
    assert pottery[0].name.startswith("Melanie's"), names  # her class, not any pottery class
    assert pig[0].name == "Caroline's guinea pig", names
    events = memory.events.for_topics(namespace, [pottery[0].topic_id])
    assert len(events) == 3, names  # one per session it came back in
    assert pig[0].time.first_seen_at.date() == DAY1.date()
    assert pig[0].time.last_seen_at.date() == (DAY1 + timedelta(days=20)).date()
    # applause for the other's news is no fact (sleepwake.turn_facts.is_exclamation_at_listener)
    assert not any("must be proud" in f.text for t in topics for f in t.facts)
    # the one-liner gives Melanie's news (Caroline's remarks on it are not news of hers)
    assert pottery[0].one_liner.startswith("Melanie: "), pottery[0].one_liner
    assert "Caroline:" not in pottery[0].one_liner, pottery[0].one_liner
    assert pig[0].one_liner.startswith("Caroline: "), pig[0].one_liner
    for topic in topics:  # a one-liner quotes its topic's facts, and cites them
        lead = [f for f in topic.facts if topic.one_liner.startswith(f.text[:40])]
        assert lead, topic.one_liner
        assert set(topic.one_liner_sources()) >= set(lead[0].source_message_ids)
    # the mugs are not what the one-liner says, yet a question about them finds the class
    mugs = "How many mugs did Melanie bring home?"
    assert "mugs" not in pottery[0].one_liner.lower()
    search = TopicSearch(memory.topics, memory.events, embedder)
    hits = search.search(namespace, mugs, DAY1 + timedelta(days=21), k=3)
    assert hits[0].topic.topic_id == pottery[0].topic_id, [h.topic.name for h in hits]


def test_a_long_assistant_answer_makes_a_handful_of_topics(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    memory = build(driver, embedder, namespace)
    answer = (
        "Here is a plan for your vegetable garden. Start with raised beds filled with compost "
        "and topsoil; tomatoes, peppers and basil like full sun, while lettuce and spinach "
        "tolerate partial shade. Water deeply twice a week rather than a little every day, "
        "mulch with straw to keep the soil moist, and rotate the crops each season so pests "
        "and diseases do not build up. For pests, use row covers, hand-pick beetles and "
        "attract ladybugs with marigolds. Feed heavy feeders such as tomatoes and squash with "
        "a balanced organic fertiliser every three weeks. "
    ) * 6
    assert len(answer) > 3000
    turns = [
        ("user", "How should I plan my first vegetable garden?"),
        ("assistant", answer),
        ("user", "Thanks, I will start with the raised beds this weekend."),
        ("assistant", "Great, enjoy the vegetable garden!"),
    ]
    memory.say(DAY1, *turns, *[("assistant", "ok")] * 4)
    memory.sleeper.sleep(memory.namespace, DAY1 + timedelta(hours=1))
    topics = memory.topics.list_live(namespace)
    assert 1 <= len(topics) <= 3, [t.name for t in topics]
    assert sum(len(t.facts) for t in topics) <= 4
