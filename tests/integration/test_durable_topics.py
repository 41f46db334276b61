"""Topics that last (issue #32): real Neo4j, real MiniLM, a controlled clock.

A subject two friends keep coming back to over months (his dogs) is one topic that every sleep
grows, with an event per session it came back in, whatever the words of the day ("my puppy",
"the dogs", "Max and Luna"); each person of the chat has a topic of their news; no topic name carries a date stamp or a running number; and a
wedding and a marathon said before sixteen turns of small talk stay topics of their own.
"""

from __future__ import annotations

from datetime import timedelta

from neo4j import Driver

from api.eval_durability import stamped
from graph.models import EdgeType
from retrieval.embedding import MiniLMEmbedder
from sleepwake.config_sections import AspectsConfig
from sleepwake.conversation import IncomingMessage
from sleepwake.turn_facts import FIRST_PERSON
from tests.integration.test_sleep_wake import DAY1, Memory, build

# five sessions over five months; the dogs come back in four of them, between other subjects
DOGS_1 = [
    ("James", "Big news, John: I adopted a puppy from the shelter! His name is Max."),
    ("John", "No way! What kind of dog is Max?"),
    ("James", "Max is a labrador puppy, ten weeks old, and he already chews my shoes."),
    ("John", "Ha, labrador puppies chew everything."),
    ("James", "I take Max to puppy training classes on Saturdays at the shelter."),
    ("John", "Training early is smart. I started a new job at the bank this week, by the way."),
    ("James", "Congrats on the bank job! How is the new team treating you?"),
    ("John", "My manager at the bank is great, and the team meets for lunch every Friday."),
    ("James", "A team that eats together is a good sign."),
    ("John", "I'm still learning the bank's loan software, it is a maze."),
]
DOGS_2 = [
    ("James", "Max graduated from puppy training class today, he can sit and stay now!"),
    ("John", "Way to go, Max! Did he get a certificate?"),
    ("James", "He got a little certificate and a bag of dog treats from the trainer."),
    ("John", "Haha, the dog treats are the real prize for him."),
    ("James", "I'm thinking of getting a second dog so Max has company."),
    ("John", "Two dogs is double the walks, but double the fun."),
]
TRIP = [
    ("John", "I just got back from a week in Lisbon with my brother."),
    ("James", "Lisbon! What did you two do there?"),
    ("John", "We rode the old tram to the castle and ate custard tarts every single day."),
    ("James", "The custard tarts in Lisbon are famous for a reason."),
    ("John", "My brother wants to go back to Lisbon next spring to see Sintra too."),
    ("James", "Sintra is beautiful, you should both go."),
]
DOGS_3 = [
    ("James", "I did it: I adopted a second dog, a border collie named Luna."),
    ("John", "Luna! How do Max and Luna get along?"),
    ("James", "My two dogs play all day; Luna herds Max around the yard like a sheep."),
    ("John", "A border collie herding a labrador, that must be a sight."),
    ("James", "I take both dogs to the park by the lake every morning now."),
    ("John", "Morning walks with two dogs will keep you fit."),
]
DOGS_4 = [
    ("James", "Luna won second place at the dog agility contest in the park on Sunday!"),
    ("John", "Second place! Did Max compete too?"),
    ("James", "Max just watched and barked at the other dogs the whole time."),
    ("John", "Classic labrador. Are you going to train Luna for the next agility contest?"),
    ("James", "Yes, Luna and I train for agility three evenings a week now."),
    ("John", "Good luck to Luna at the next agility contest."),
]


def _said(memory: Memory, day: int, turns: list[tuple[str, str]]) -> None:
    at = DAY1 + timedelta(days=day)
    items = [
        IncomingMessage(role="user", speaker=who, content=text, at=at + timedelta(minutes=i))
        for i, (who, text) in enumerate(turns)
    ]
    memory.conversation.append(memory.namespace, items, auto_sleep=False)
    memory.sleeper.sleep(memory.namespace, at + timedelta(hours=3))


def test_a_subject_over_months_is_one_topic_that_every_sleep_grows(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    memory = build(driver, embedder, namespace)
    _said(memory, 0, DOGS_1)
    _said(memory, 30, DOGS_2)
    _said(memory, 55, TRIP)
    _said(memory, 80, DOGS_3)
    _said(memory, 140, DOGS_4 + [("John", "Talk soon!")] * 4)
    topics = memory.topics.list_live(namespace)
    names = [t.name for t in topics]
    assert not [n for n in names if stamped(n)], names

    def holds(topic_facts: list[str], *words: str) -> bool:
        return any(all(w in f.lower() for w in words) for f in topic_facts)

    texts = {t.topic_id: [f.text for f in t.facts] for t in topics}

    people = [t for t in topics if t.name in ("James", "John")]
    # a theme's topic holds copies of its episodes' facts (sleepwake/themes.py)
    themes = [t for t in topics if t.name.startswith(("James's ", "John's ")) and t.facts and all(
        any(f.text in texts[o.topic_id] for o in topics if o.topic_id != t.topic_id)
        for f in t.facts
    )]  # fmt: skip
    subjects = [t for t in topics if t not in people and t not in themes]

    def one(*words: str) -> str:
        found = [t.topic_id for t in subjects if holds(texts[t.topic_id], *words)]
        assert len(found) == 1, (words, names)
        return found[0]

    # each dog is a topic that lasts: Max from his adoption to his graduation a month later,
    # Luna from her adoption to the agility contest two months after
    max_, luna = one("adopted", "max"), one("adopted", "luna")
    assert one("graduated") == max_, names
    assert one("agility contest", "second place") == luna, names
    for tid, days in ((max_, 28), (luna, 55)):
        topic = next(t for t in topics if t.topic_id == tid)
        events = memory.events.for_topics(namespace, [tid])
        assert len({e.at.date() for e in events}) >= 2, (topic.name, names)
        assert topic.time.last_seen_at - topic.time.first_seen_at > timedelta(days=days)
        # the other subjects are not in it: the bank job and Lisbon are topics of their own
        # (the turn that moves from the puppy to the bank job, "Training early is smart. I
        # started a new job at the bank", is filed with the puppy it answers)
        assert not holds(texts[tid], "lisbon") and not holds(texts[tid], "manager"), texts[tid]
    assert one("lisbon", "brother") not in (max_, luna)
    assert one("bank", "manager") not in (max_, luna)
    # each of them has a topic of their own, their news across the months (sleepwake/people.py)
    james = next(t for t in people if t.name == "James")
    assert holds(texts[james.topic_id], "adopted", "max"), texts[james.topic_id]
    assert holds(texts[james.topic_id], "adopted", "luna"), texts[james.topic_id]
    assert james.time.last_seen_at - james.time.first_seen_at > timedelta(days=120)
    assert all(f.startswith("James: ") for f in texts[james.topic_id])  # only his own news
    # what he keeps coming back to has a topic of its own: his dogs, Max's and Luna's news,
    # across the months; the episodes' topics are PART_OF it
    dogs = [
        t for t in themes if holds(texts[t.topic_id], "max") and holds(texts[t.topic_id], "luna")
    ]
    # one topic whatever the word of the day: "puppy" (said first, three times in March) and
    # "dog" (from April) are one theme (sleepwake/theme_words.py), named by the word it started
    # with, or the area of his life they belong to when that came first (sleepwake/aspects.py:
    # one topic of an owner's area, never "James's pets" beside "James's puppy")
    pets = ("James's dog", "James's puppy", "James's pets")
    assert [t.name for t in dogs] in ([name] for name in pets), [t.name for t in themes]
    assert not [t for t in themes if t.name in pets and t not in dogs]
    assert dogs[0].time.last_seen_at - dogs[0].time.first_seen_at > timedelta(days=50)
    assert all(f.startswith("James: ") for f in texts[dogs[0].topic_id])
    parts = memory.topics.edges(namespace, dogs[0].topic_id)
    assert luna in {e.from_topic_id for e in parts if e.type == EdgeType.PART_OF}, parts


ROCKY_1 = [
    ("James", "Big news, John: meet Rocky, my puppy! I adopted him from the shelter."),
    ("John", "Congrats! He looks tiny."),
    ("James", "My puppy Rocky chews my shoes all day long."),
    ("James", "I take my puppy to training classes on Saturdays."),
    ("John", "Training early is smart."),
]
ROCKY_2 = [
    ("James", "Rocky learned to sit today, I am so proud of him."),
    ("John", "Good boy!"),
    ("James", "Rocky sleeps on my bed every night now."),
    ("James", "I bought Rocky a new ball and he chases it around my garden."),
]
ROCKY_3 = [
    ("James", "Rocky won a ribbon at my town's show yesterday!"),
    ("John", "Wow, a ribbon already!"),
    ("James", "Rocky and I walk by the lake every morning before my work."),
    ("James", "My vet says Rocky is healthy and strong."),
]


def test_a_pet_named_once_gathers_what_is_said_of_it_by_name(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    """ "meet Rocky, my puppy": later sessions say only "Rocky", and what they say joins James's
    puppy's topic (sleepwake/theme_words.py), which goes by "Rocky (James's puppy)"."""
    memory = build(driver, embedder, namespace)
    _said(memory, 0, ROCKY_1)
    _said(memory, 20, TRIP)
    bye = [("John", "Talk soon!")] * 4  # each session out of the tail by its own sleep
    _said(memory, 35, ROCKY_2 + bye)
    _said(memory, 70, ROCKY_3 + bye)
    topics = memory.topics.list_live(namespace)
    names = [t.name for t in topics]
    pet = [t for t in topics if t.name.startswith("James's ") and any(
        a.startswith("Rocky (James's ") for a in t.aliases
    )]  # fmt: skip
    assert len(pet) == 1, [(t.name, t.aliases) for t in topics]
    texts = [f.text for f in pet[0].facts]
    # by name alone, a month and two months after he was introduced
    assert any("sleeps on my bed" in t for t in texts), (names, texts)
    assert any("walk by the lake" in t or "healthy and strong" in t for t in texts), texts
    assert not any("lisbon" in t.lower() for t in texts), texts
    assert pet[0].time.last_seen_at - pet[0].time.first_seen_at > timedelta(days=30)
    events = memory.events.for_topics(namespace, [pet[0].topic_id])
    assert len({e.at.date() for e in events}) >= 2, events


SMALL_TALK = [
    ("user", "It has been raining all week here, so grey."),
    ("assistant", "Grey weeks are tough. Is it supposed to clear up?"),
    ("user", "The forecast says more rain until Friday."),
    ("assistant", "At least Friday is not far away."),
    ("user", "I had to buy a new umbrella, the old one broke in the wind."),
    ("assistant", "Windy rain is hard on umbrellas."),
    ("user", "The wind was so strong yesterday that a tree fell on our street."),
    ("assistant", "I hope nobody was hurt by the tree."),
    ("user", "No, everyone was fine, the city cleared it in an hour."),
    ("assistant", "That was quick of the city."),
    ("user", "Now it is cold too, I turned the heating on today."),
    ("assistant", "Heating season already, then."),
    ("user", "My cat sleeps on the radiator all day now."),
    ("assistant", "Cats know where the warm spots are."),
    ("user", "Anyway, the weather should be better next week."),
    ("assistant", "Fingers crossed for sunshine next week."),
]


def test_a_wedding_and_a_marathon_are_not_buried_by_small_talk(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    memory = build(driver, embedder, namespace)
    at = DAY1 + timedelta(days=3)
    memory.say(
        at,
        ("user", "My sister is getting married in Lisbon on the 14th of June."),
        ("assistant", "Congratulations to your sister! A wedding in Lisbon sounds wonderful."),
        ("user", "I'm giving a speech at her wedding and I'm nervous about it."),
        ("assistant", "A heartfelt wedding speech doesn't need to be long."),
        ("user", "I'm also training for the Berlin marathon in September."),
        ("assistant", "The Berlin marathon is fast and flat, great for a first marathon."),
        ("user", "My marathon plan has me running 50 kilometres a week now."),
        ("assistant", "50 kilometres a week is a solid base for the marathon."),
        *SMALL_TALK,
    )
    memory.sleeper.sleep(namespace, at + timedelta(hours=3))
    topics = memory.topics.list_live(namespace)
    names = [t.name for t in topics]
    texts = {t.topic_id: " ".join(f.text.lower() for f in t.facts) for t in topics}
    wedding = [
        t for t in topics if "married" in texts[t.topic_id] or "wedding" in texts[t.topic_id]
    ]
    marathon = [t for t in topics if "marathon" in texts[t.topic_id]]
    assert wedding and marathon, names
    # each is filed under a name that says so, not under the small talk that followed
    assert any("wedding" in t.name.lower() or "sister" in t.name.lower() for t in wedding), names
    assert any("marathon" in t.name.lower() for t in marathon), names
    for topic in wedding + marathon:
        assert not any(w in topic.name.lower() for w in ("weather", "rain", "umbrella")), names


MUSIC_1 = [
    ("Melanie", "I ran a charity race for mental health last Saturday, it was so rewarding."),
    ("Caroline", "That's amazing, Melanie! How do you unwind after a race?"),
    ("Melanie", "I unwind by playing my violin every evening, it calms me down."),
    ("Caroline", "A violin, how lovely."),
]
MUSIC_2 = [
    ("Caroline", "I went to a pride parade last weekend, it was powerful."),
    ("Melanie", "So glad you went! I have played the clarinet since I was young."),
    ("Melanie", "I joined a small band that plays at the park on Sundays."),
    ("Caroline", "A band! You are full of surprises."),
    ("Melanie", "Our band played my favorite song at the summer concert."),
]


def test_an_area_of_a_life_said_in_other_words_each_time_is_one_topic(
    driver: Driver, embedder: MiniLMEmbedder, namespace: str
) -> None:
    """With aspects on (the default; set here all the same): the violin in
    May and the clarinet and the band in June share no noun, yet "What instruments does
    Melanie play?" has one topic to read, "Melanie's music", made when the area came back and
    started with what the May episode said of it; the race and Caroline's parade are not in it.
    Consolidated (``merge.absorb_share``, on by default): its history shows May (the violin,
    gathered from the May episode) and June, and the June episode made no topic of its own."""
    memory = build(driver, embedder, namespace)
    on = AspectsConfig(cosine=0.6)
    memory.sleeper.config = memory.sleeper.config.model_copy(update={"aspects": on})
    bye = [("Caroline", "Talk soon!")] * 4  # each session out of the tail by its own sleep
    _said(memory, 0, MUSIC_1 + bye)
    _said(memory, 35, MUSIC_2 + bye)
    topics = memory.topics.list_live(namespace)
    music = [t for t in topics if t.name == "Melanie's music"]
    assert len(music) == 1, [t.name for t in topics]
    texts = [f.text for f in music[0].facts]
    assert any("violin" in t for t in texts) and any("clarinet" in t for t in texts), texts
    assert not any("race" in t or "parade" in t for t in texts), texts
    # her news, and of the others' only replies to it ("A band! You are full of surprises."),
    # never their own news (the parade is filed under Caroline)
    others = [t.split(": ", 1)[1] for t in texts if not t.startswith("Melanie: ")]
    assert not [t for t in others if FIRST_PERSON.search(t)], texts
    assert music[0].time.last_seen_at - music[0].time.first_seen_at > timedelta(days=30)
    events = memory.events.for_topics(namespace, [music[0].topic_id])
    assert len({e.at.date() for e in events}) == 2, [(e.at, e.delta_summary) for e in events]
    june = DAY1 + timedelta(days=35)
    made_in_june = [t.name for t in topics if t.time.first_seen_at >= june]
    assert set(made_in_june) <= {"Melanie", "Caroline"}, [t.name for t in topics]
