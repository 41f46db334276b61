"""A person's facts filed by the area of life they are about (``sleepwake.aspects``): the
violin in May and the clarinet in October are Melanie's music; an area a theme already stands
for goes to the theme's topic; nobody's facts go to another speaker's area."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import partial

import pytest
from pydantic import ValidationError

from graph.models import Fact, Topic, TopicTime
from graph.sleep import MatchFields, PoolHit
from sleepwake.aspects import (
    area_lookups,
    areas_of,
    file_aspects,
    own_facts,
    seed_aspects,
)
from sleepwake.candidates import Candidate, SliceCandidates
from sleepwake.config import DEFAULT
from sleepwake.config_sections import AspectsConfig
from sleepwake.merge_plan import match_rows
from sleepwake.themes import ASPECT, ASPECT_BACK, covered_themes_dropped, keep_recurring, words_of
from tests.unit.test_themes import T0, episode

AREAS = {"music": ("music", "guitar"), "pets": ("pet", "dog")}
ON = AspectsConfig(
    areas=AREAS, cosine=0.6
)  # the areas of these tests (sleepwake/config_sections.py)
CFG = DEFAULT.model_copy(update={"aspects": ON.model_copy(update={"new_facts": 2})})
BACK_ONLY = DEFAULT.model_copy(update={"aspects": ON})  # an area made only when it comes back
# unit vectors: the instruments near "guitar", "puppy" near "dog"; "team" as near music as
# pets (no margin); every other word its own axis
_VECTORS = {
    "music": [1.0, 0.0, 0.0, 0.0],
    "guitar": [0.9, 0.44, 0.0, 0.0],
    "violin": [0.8, 0.6, 0.0, 0.0],
    "clarinet": [0.75, 0.66, 0.0, 0.0],
    "pet": [0.0, 0.0, 1.0, 0.0],
    "dog": [0.0, 0.0, 0.9, 0.44],
    "puppy": [0.0, 0.0, 0.8, 0.6],
    "team": [0.707, 0.0, 0.707, 0.0],
    "guitar lessons": [0.95, 0.3, 0.0, 0.0],
}
embedded: list[list[str]] = []


def embed(texts: Sequence[str]) -> list[list[float]]:
    embedded.append(list(texts))
    out = []
    for t in texts:
        if t in _VECTORS:
            out.append(_VECTORS[t] + [0.0] * 8)
        else:  # an axis of its own, past the four above
            axis = [0.0] * 12
            axis[4 + sum(map(ord, t)) % 8] = 1.0
            out.append(axis)
    return out


def test_a_word_is_the_area_of_its_nearest_seed_when_no_other_area_is_as_near() -> None:
    cfg = ON
    found = areas_of(["violin", "clarinet", "puppy", "team", "weather", "guitar"], cfg, embed)
    assert found == {"violin": "music", "clarinet": "music", "puppy": "pets", "guitar": "music"}
    assert "team" not in found  # as near one area as the other: nobody's
    embedded.clear()
    assert areas_of(["violin"], AspectsConfig(areas=AREAS, cosine=0.0), embed) == {}
    assert areas_of([], cfg, embed) == {} and embedded == []  # nothing to place, nothing run


def test_a_speakers_own_facts_are_filed_under_the_area_they_are_about() -> None:
    """Three of Melanie's own facts name instruments: her music's topic is made; Caroline's
    one fact about her dog makes her pets' topic only when the area comes back (the episode
    goes by its name); praise of the listener is nobody's."""
    messages, race = episode(
        "charity race",
        [
            ("Melanie", "I ran a charity race and then played my violin all evening."),
            ("Melanie", "I have played the clarinet since I was young, it relaxes me."),
            ("Melanie", "I bought a new guitar last week for our music nights."),
            ("Caroline", "My dog Max came with me to the park on Sunday."),
            ("Caroline", "Your violin playing sounds wonderful, Melanie!"),
        ],
    )
    cands = SliceCandidates([race], [], None, {})
    out = file_aspects(messages, cands, CFG, embed)
    areas = {c.label: c for c in out.candidates[1:]}
    assert set(areas) == {"Melanie's music", "Caroline's pets"}
    music = areas["Melanie's music"]
    assert music.theme == ASPECT and len(music.facts) == 3  # enough to make the topic
    assert all(f.text.startswith("Melanie:") for f in music.facts)
    # one fact: made only once an earlier topic went by "Caroline's pets" (the episode does now)
    assert areas["Caroline's pets"].theme == ASPECT_BACK
    assert race.theme_names == ["Caroline's pets", "Melanie's music"]  # by speaker
    assert music.first_at == T0 and music.summary is not None
    # by default an area makes its topic only when it comes back, however much one slice says
    later = file_aspects(messages, SliceCandidates([race], [], None, {}), BACK_ONLY, embed)
    assert {c.theme for c in later.candidates[1:]} == {ASPECT_BACK}
    fact, held_by = own_facts(messages, cands)["Caroline"][0]
    assert fact.text.startswith("Caroline: My dog") and held_by is race
    # the slice's episodes are unchanged: the facts are copies
    assert len(race.facts) == 5


def test_a_turns_other_sentences_are_filed_by_area_as_facts_of_their_own() -> None:
    """Andrew's turn gave its episode one fact, its best sentence ("He is a bundle of joy");
    the sentence naming his puppy is filed under his pets as a fact of its own, citing the
    same turn, while the episode keeps its one fact; a sentence to the listener and what a
    photo shows are nobody's news."""
    text = (
        "So much has changed since we talked - meet Toby, my puppy. He is a bundle of joy and "
        "I love him. [shares a photo: a puppy on a guitar] Your guitar sounds great these days."
    )
    messages, hike = episode("hike", [("Andrew", text)])
    best = Fact(
        text="Andrew: He is a bundle of joy and I love him.",
        at=T0,
        source_message_ids=[messages[0].message_id],
    )
    hike.facts = [best]
    out = file_aspects(messages, SliceCandidates([hike], [], None, {}), CFG, embed)
    areas = {c.label: c for c in out.candidates[1:]}
    assert set(areas) == {"Andrew's pets"}  # not his music: the guitar is the listener's
    (filed,) = areas["Andrew's pets"].facts
    assert filed.text == "Andrew: So much has changed since we talked - meet Toby, my puppy."
    assert filed.source_message_ids == [messages[0].message_id]
    assert hike.facts == [best] and hike.theme_names == ["Andrew's pets"]
    owned = [
        f.text for f, _ in own_facts(messages, SliceCandidates([hike], [], None, {}))["Andrew"]
    ]
    assert owned[0] == best.text and len(owned) == 2


def test_an_area_a_kept_theme_stands_for_goes_to_the_themes_topic() -> None:
    """Audrey's puppy news is her pets'; "Audrey's dog", a theme the sleep keeps (it has its
    topic), takes it: no "Audrey's pets" beside it. Andrew's pets, with no theme, stay his."""
    messages, walk = episode(
        "walk",
        [
            ("Audrey", "My puppy Pixie loves the long walks in the park."),
            ("Audrey", "I took my puppy to the vet for her shots yesterday."),
            ("Andrew", "My puppy Toby learned to sit in one afternoon."),
            ("Andrew", "I bought my puppy a new bed last weekend."),
        ],
    )
    cands = file_aspects(messages, SliceCandidates([walk], [], None, {}), CFG, embed)
    assert [c.label for c in cands.candidates[1:]] == ["Andrew's pets", "Audrey's pets"]
    theme = Candidate(key="audrey's dog", label="Audrey's dog", returns=1, theme="said")
    candidates = [*cands.candidates, theme]
    vectors = [[1.0, 0.0]] * 4
    own = MatchFields("t-dog", "Audrey's dog", (), "", (), T0, T0)
    found = keep_recurring(candidates, vectors, [PoolHit(3, own, 0.9)])
    assert [c.label for c in found[0]] == ["walk", "Andrew's pets", "Audrey's pets", "Audrey's dog"]
    place = partial(areas_of, cfg=CFG.aspects, embed=embed)
    kept, kept_vectors, _, _ = seed_aspects(*found, lambda ids: [], {}, CFG, place)
    assert [c.label for c in kept] == ["walk", "Andrew's pets", "Audrey's dog"]
    assert len(kept_vectors) == 3
    assert sorted(f.text for f in theme.facts) == [
        "Audrey: I took my puppy to the vet for her shots yesterday.",
        "Audrey: My puppy Pixie loves the long walks in the park.",
    ]


def test_an_areas_topic_is_kept_without_an_earlier_one_and_never_dropped_as_a_copy() -> None:
    music = Candidate(key="melanie's music", label="Melanie's music", returns=1, theme=ASPECT)
    pets = Candidate(key="caroline's pets", label="Caroline's pets", returns=1, theme="said")
    back = Candidate(key="caroline's art", label="Caroline's art", returns=1, theme=ASPECT_BACK)
    vectors = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    kept, _, _, seeds = keep_recurring([music, pets, back], vectors, [])
    assert kept == [music] and seeds == {"melanie's music": []}
    chosen = covered_themes_dropped([music], [[1.0, 0.0]], [("t-new", True)], {})
    assert chosen[0] == [music]


def test_an_area_that_comes_back_starts_with_what_the_earlier_topics_said_of_it() -> None:
    """May: the violin, in an episode about a charity race (which went by "Melanie's music").
    October: one fact about the clarinet. The area's topic is made from both sleeps, without
    the race's running or Caroline's words; with too few facts in all, it is not made."""
    may = T0 - timedelta(days=150)
    _, race = episode(
        "charity race",
        [
            ("Melanie", "I ran a charity race for mental health last Saturday."),
            ("Melanie", "I unwind by playing my violin every evening."),
            ("Melanie", "My guitar teacher says my music has come a long way."),
            ("Caroline", "I played my guitar at the support group on Friday."),
        ],
        at=may,
    )
    earlier = Topic(
        topic_id="t-race", namespace="ns", name="charity race", aliases=["Melanie's music"],
        one_liner="", facts=race.facts, time=TopicTime(first_seen_at=may, last_seen_at=may),
    )  # fmt: skip
    messages, concert = episode("concert", [("Melanie", "I have played the clarinet for years.")])
    cands = file_aspects(messages, SliceCandidates([concert], [], None, {}), CFG, embed)
    music = cands.candidates[1]
    assert music.theme == ASPECT_BACK and len(music.facts) == 1
    hits = [
        PoolHit(
            1, MatchFields("t-race", "charity race", ("melanie's music",), "", (), may, may), 0.4
        )
    ]
    vectors = [[1.0, 0.0], [0.0, 1.0]]
    found = keep_recurring(cands.candidates, vectors, hits)
    assert found[3] == {"melanie's music": ["t-race"]}
    seeded: dict[str, list[str]] = {}
    place = partial(areas_of, cfg=CFG.aspects, embed=embed)
    three = CFG.model_copy(update={"aspects": CFG.aspects.model_copy(update={"topic_facts": 3})})
    kept, _, _, rest = seed_aspects(*found, lambda ids: [earlier], seeded, three, place)
    assert rest == {} and seeded == {"melanie's music": ["t-race"]}
    assert kept == [concert, music] and music.first_at == may
    assert sorted(f.text for f in music.facts) == [
        "Melanie: I have played the clarinet for years.",
        "Melanie: I unwind by playing my violin every evening.",
        "Melanie: My guitar teacher says my music has come a long way.",
    ]
    # with too few facts in all (the default topic_facts, 4), it is not made
    assert CFG.aspects.topic_facts == 4
    cands = file_aspects(messages, SliceCandidates([concert], [], None, {}), CFG, embed)
    found = keep_recurring(cands.candidates, vectors, hits)
    kept, _, _, _ = seed_aspects(*found, lambda ids: [earlier], {}, CFG, place)
    assert kept == [concert]


def test_an_area_whose_owner_has_a_theme_topic_for_it_joins_that_topic() -> None:
    """Audrey's "Audrey's dog" topic is in the sleep's pool but not among the slice's themes
    (she said "puppy" only): her pets' facts join it under its name, not a new "Audrey's
    pets"; another speaker's theme topic takes nothing of hers."""
    messages, walk = episode(
        "walk",
        [
            ("Audrey", "My puppy Pixie loves the long walks in the park."),
            ("Audrey", "I took my puppy to the vet for her shots yesterday."),
        ],
    )
    cands = file_aspects(messages, SliceCandidates([walk], [], None, {}), CFG, embed)
    pets = cands.candidates[1]
    vectors = [[1.0, 0.0]] * 2
    dogs = MatchFields("t-dog", "Audrey's dog", (), "", (), T0, T0)
    his = MatchFields("t-his", "Andrew's dog", (), "", (), T0, T0)
    hits = [PoolHit(1, his, 0.95), PoolHit(1, dogs, 0.9)]
    found = keep_recurring(cands.candidates, vectors, hits)
    place = partial(areas_of, cfg=CFG.aspects, embed=embed)
    kept, _, _, _ = seed_aspects(*found, lambda ids: [], {}, CFG, place)
    assert kept == [walk, pets]
    assert (pets.key, pets.label, pets.theme) == ("audrey's dog", "Audrey's dog", "said")
    assert len(pets.facts) == 2


def test_a_new_theme_whose_owner_has_the_areas_topic_joins_that_topic() -> None:
    """James's "James's pets" topic came first (April); in June he says "puppy" in two
    episodes, a theme with no topic of its own: it joins "James's pets" under that name, not a
    "James's puppy" beside it. A theme that has its own topic keeps it; another owner's area
    takes nothing."""
    _messages, walk = episode(
        "walk",
        [
            ("James", "My puppy Max graduated from training class today."),
            ("James", "I take my puppy to the park every morning."),
        ],
    )
    puppy = Candidate(key="james's puppy", label="James's puppy", returns=1, theme="episode")
    puppy.add_fact(walk.facts[0])
    own = Candidate(key="james's dog", label="James's dog", returns=1, theme="episode")
    own.add_fact(walk.facts[1])
    pets = MatchFields("t-pets", "James's pets", (), "", (), T0, T0)
    hers = MatchFields("t-hers", "Audrey's pets", (), "", (), T0, T0)
    dog = MatchFields("t-dog", "James's dog", (), "", (), T0, T0)
    hits = [
        PoolHit(1, hers, 0.95),
        PoolHit(1, pets, 0.9),
        PoolHit(2, pets, 0.9),
        PoolHit(2, dog, 1.0),
    ]
    candidates, vectors = [walk, puppy, own], [[1.0, 0.0]] * 3
    place = partial(areas_of, cfg=BACK_ONLY.aspects, embed=embed)
    kept, _, _, _ = seed_aspects(
        candidates, vectors, hits, {}, lambda ids: [], {}, BACK_ONLY, place
    )
    assert kept == [walk, puppy, own]
    assert (puppy.key, puppy.label, puppy.theme) == ("james's pets", "James's pets", "said")
    assert (own.key, own.label) == ("james's dog", "James's dog")  # it has its topic


def test_a_new_theme_joins_its_owners_topic_of_another_word_of_the_area() -> None:
    """No "James's pets" yet, but "James's dog" (a theme's topic, made in March): his new
    "James's puppy" of June joins it, the best of its pool; another owner's is never taken."""
    _messages, walk = episode("walk", [("James", "My puppy Max graduated from class today.")])
    puppy = Candidate(key="james's puppy", label="James's puppy", returns=1, theme="episode")
    puppy.add_fact(walk.facts[0])
    dog = MatchFields("t-dog", "James's dog", (), "", (), T0, T0)
    hers = MatchFields("t-hers", "Audrey's dog", (), "", (), T0, T0)
    hits = [PoolHit(1, hers, 0.95), PoolHit(1, dog, 0.9)]
    place = partial(areas_of, cfg=BACK_ONLY.aspects, embed=embed)
    candidates, vectors = [walk, puppy], [[1.0, 0.0]] * 2
    kept, _, _, _ = seed_aspects(
        candidates, vectors, hits, {}, lambda ids: [], {}, BACK_ONLY, place
    )
    assert kept == [walk, puppy]
    assert (puppy.key, puppy.label, puppy.theme) == ("james's dog", "James's dog", "said")


def test_an_areas_candidate_joins_its_own_topic_in_the_pool() -> None:
    """The area's own topic ("Melanie's music", made in May) in its candidate's pool is where
    the October clarinet goes: the candidate stays, with its facts."""
    messages, talk = episode(
        "concert",
        [
            ("Melanie", "I play the clarinet in a band now."),
            ("Melanie", "My violin needs new strings before the concert."),
        ],
    )
    cands = file_aspects(messages, SliceCandidates([talk], [], None, {}), CFG, embed)
    music = next(c for c in cands.candidates if c.label == "Melanie's music")
    mine = MatchFields("t-music", "Melanie's music", (), "", (), T0, T0)
    index = cands.candidates.index(music)
    found = keep_recurring(
        cands.candidates, [[1.0, 0.0]] * len(cands.candidates), [PoolHit(index, mine, 1.0)]
    )
    place = partial(areas_of, cfg=CFG.aspects, embed=embed)
    kept, _, _, _ = seed_aspects(*found, lambda ids: [], {}, CFG, place)
    assert music in kept and music.label == "Melanie's music" and len(music.facts) == 2


def test_the_pool_read_of_a_theme_looks_up_its_owners_area_and_of_an_area_its_themes() -> None:
    """Whichever came first, the other is in the pool: "James's puppy" looks up "james's pets"
    and his other theme of that area ("james's dog"), "James's pets" the owner's themes of that
    area ("james's dog"), not another owner's nor another area's; nothing with aspects off."""
    puppy = Candidate(key="james's puppy", label="James's puppy", returns=1, theme="episode")
    pets = Candidate(key="james's pets", label="James's pets", returns=1, theme=ASPECT_BACK)
    music = Candidate(key="james's music", label="James's music", returns=1, theme=ASPECT_BACK)
    plain = Candidate(key="park", label="park", returns=1)
    owned = ["james's dog", "james's guitar", "audrey's dog", "luna (james's dog)"]
    place = partial(areas_of, cfg=BACK_ONLY.aspects, embed=embed)
    found = area_lookups([plain, puppy, pets, music], owned, place, BACK_ONLY.aspects)
    assert found == {1: {"james's pets", "james's dog"}, 2: {"james's dog"}, 3: {"james's guitar"}}
    dog = Candidate(key="james's dog", label="James's dog", returns=1, theme="episode")
    assert area_lookups([dog], owned, place, BACK_ONLY.aspects) == {0: {"james's pets"}}
    assert area_lookups([puppy], owned, place, ON.model_copy(update={"cosine": 0.0})) == {}


def test_an_area_joins_its_owners_theme_named_by_a_phrase() -> None:
    """ "Melanie's guitar lessons" (a theme named by a phrase, made in May) is her music: her
    music news of June joins it, no "Melanie's music" beside it."""
    _messages, talk = episode("talk", [("Melanie", "I play the guitar every evening now.")])
    music = Candidate(key="melanie's music", label="Melanie's music", returns=1, theme=ASPECT_BACK)
    music.add_fact(talk.facts[0])
    lessons = MatchFields("t-lessons", "Melanie's guitar lessons", (), "", (), T0, T0)
    place = partial(areas_of, cfg=BACK_ONLY.aspects, embed=embed)
    candidates, vectors = [talk, music], [[1.0, 0.0]] * 2
    hits = [PoolHit(1, lessons, 0.9)]
    kept, _, _, _ = seed_aspects(
        candidates, vectors, hits, {}, lambda ids: [], {}, BACK_ONLY, place
    )
    assert kept == [talk, music]
    assert (music.label, music.theme) == ("Melanie's guitar lessons", "said")


def test_an_area_without_seed_words_is_refused_at_start_up() -> None:
    for areas in ({"music": ()}, {"Music": ("song",)}, {"music": ("rock band",)}):
        with pytest.raises(ValidationError, match="aspect area"):
            AspectsConfig(areas=areas)


def test_pronouns_and_a_name_are_no_subject_words() -> None:
    """ "Her name is Shadow!" names the dog, not the family ("her" is near "sister" by the
    model); "Our kid is cute." keeps its kid."""
    assert words_of("Maria: Her name is Shadow!") == ["shadow"]
    assert words_of("John: Our kid is cute.") == ["kid", "cute"]
    assert words_of("Maria: Its fur is soft, and she loves him.") == ["fur", "soft", "love"]


def test_a_candidates_pool_read_looks_up_its_own_name() -> None:
    """A candidate named "John's community" from its phrase "community" looks up its name too:
    a live topic of that name is then in its pool, and a new topic is named apart from it."""
    episode = Candidate(key="community", label="John's community", returns=1)
    (row,) = match_rows([episode], [[1.0, 0.0]])
    assert "john's community" in row["names"] and "community" in row["names"]


def test_an_answer_is_filed_under_the_area_its_question_asks_about() -> None:
    """ "Luna and Oliver! They are so sweet." says no "I" and names no pet: it answers
    Caroline's question about Melanie's pets, so it is Melanie's pets' news. What the question
    asks decides over the answer's own words (the guitar there is not the news); thanks and
    cheers are no answer, and a turn after a statement answers nothing."""
    messages, visit = episode(
        "visit",
        [
            ("Caroline", "They're adorable! What are their names? Pets bring such joy!"),
            ("Melanie", "Thanks, Caroline! Luna and Oliver! They sleep on the guitar case."),
            ("Caroline", "I played the violin at the park yesterday."),
            ("Melanie", "Luna and Oliver love the park too."),
            ("Caroline", "Do your pets like music?"),
            ("Melanie", "My dog Luna howls along when I play the guitar."),
        ],
    )
    cands = SliceCandidates([visit], [], None, {})
    out = file_aspects(messages, cands, CFG, embed)
    areas = {c.label: c for c in out.candidates[1:]}
    # the violin: Caroline's own news; the guitar: Melanie's own words, filed by them
    assert set(areas) == {"Melanie's pets", "Melanie's music", "Caroline's music"}
    pets = {f.text: f for f in areas["Melanie's pets"].facts}
    own = "Melanie: My dog Luna howls along when I play the guitar."
    assert set(pets) == {"Melanie: Luna and Oliver! They sleep on the guitar case.", own}
    answer = pets["Melanie: Luna and Oliver! They sleep on the guitar case."]
    assert answer.source_message_ids == [messages[1].message_id]
    assert [f.text for f in areas["Melanie's music"].facts] == [own]  # not twice
    owned = own_facts(messages, SliceCandidates([visit], [], None, {}))
    assert [f.text for f, _ in owned["Melanie"]] == [own]  # the rest: answers only
    assert "Luna and Oliver love" not in str(areas)  # after a statement: no answer
    assert len(visit.facts) == 6  # copies: the episode keeps its facts
