"""Which of a speaker's words are one theme (``sleepwake.theme_words``): "pup" and "puppy" said
of Audrey's dogs join "Audrey's dog", a theme she already has wins over a word of the slice, and
nothing joins another speaker's theme or a word merely near it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from graph.models import Topic, TopicTime
from sleepwake.candidates import Candidate, SliceCandidates
from sleepwake.config import DEFAULT
from sleepwake.theme_words import SAME, known_words, members, theme_words
from sleepwake.themes import Theme, mentions, seed, subject_words, with_themes
from tests.unit.test_themes import T0, episode
from text.tokens import stem

# unit vectors in 3-d: dog/pup/puppy/pet close (cos >= .9), hike apart, dad at .76 of mom
_VECTORS = {
    "dog": [1.0, 0.0, 0.0],
    "pup": [0.95, 0.31, 0.0],
    "puppy": [0.9, 0.43, 0.0],
    "pet": [0.92, 0.0, 0.39],
    "hike": [0.0, 1.0, 0.0],
    "trail": [0.0, 0.67, 0.74],
    "mom": [0.0, 0.0, 1.0],
    "dad": [0.0, 0.65, 0.76],
    # compounds, as MiniLM has them: "video game" is a game (.70 to "game", .45 to "video"),
    # "pottery class" pottery (.85 / .58)
    "video": [0.45, 0.0, 0.89],
    "game": [0.70, 0.71, 0.0],
    "video game": [1.0, 0.0, 0.0],
    "pottery": [0.85, 0.0, 0.53],
    "class": [0.58, 0.81, 0.0],
    "pottery class": [1.0, 0.0, 0.0],
    "agility": [0.0, 0.0, 1.0],
    "dog agility": [0.0, 0.0, 1.0],
}


class CountingEmbed:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [_VECTORS.get(t, [0.3, 0.3, 0.3]) for t in texts]


def test_a_word_joins_the_speakers_theme_of_the_same_meaning() -> None:
    embed = CountingEmbed()
    said = {"Audrey": Counter(pup=2, hike=1, mom=1, dad=1), "Andrew": Counter(puppy=1)}
    words = theme_words(said, {"Audrey": ["dog"]}, embed, 0.78)
    assert words.word("Audrey", "pup") == "dog"  # her existing theme, not a new "pup"
    assert words.word("Audrey", "hike") == "hike"
    assert words.word("Audrey", "dad") == "dad"  # .76 of "mom": a pair a person keeps apart
    assert words.word("Andrew", "puppy") == "puppy"  # Audrey's dog is not Andrew's theme
    assert {k: v for k, v in words.canon.items() if v == "dog"} == {("Audrey", "pup"): "dog"}
    assert len(embed.calls) == 1  # one batch for the sleep


def test_the_word_said_more_often_leads_when_there_is_no_theme_yet() -> None:
    said = {"Audrey": Counter(puppy=3, pup=1, pet=1)}
    words = theme_words(said, {}, CountingEmbed(), 0.78)
    assert words.word("Audrey", "pup") == "puppy"
    assert words.word("Audrey", "pet") == "puppy"  # .83 of puppy
    assert words.word("Audrey", "puppy") == "puppy"


def test_a_known_theme_wins_over_a_nearer_word_of_the_slice() -> None:
    said = {"Audrey": Counter(puppy=3, pup=1)}
    words = theme_words(said, {"Audrey": ["pet"]}, CountingEmbed(), 0.78)
    assert words.word("Audrey", "pup") == "pet"  # pup/puppy .99, pup/pet .87: the theme she has
    assert words.word("Audrey", "puppy") == "pet"


def test_off_or_nothing_said_embeds_nothing() -> None:
    embed = CountingEmbed()
    assert theme_words({"Audrey": Counter(pup=1)}, {"Audrey": ["dog"]}, embed, 0.0) is SAME
    assert theme_words({"Audrey": Counter()}, {}, embed, 0.78) is SAME
    assert embed.calls == []


def test_known_words_are_one_word_themes_of_the_speakers() -> None:
    names = [
        "audrey's dog",
        "audrey's dog park",
        "andrew's job",
        "audreys pet",
        "bob's car",
        "toby (andrew's dog)",
        "rex (bob's dog)",
    ]
    themes, named = known_words(names, ["Audrey", "Andrew"])
    assert themes == {"Audrey": ["dog"], "Andrew": ["job"]}
    assert named == {("Andrew", "toby"): "dog"}


PUPS = [
    ("Audrey", "We adopted another puppy called Pixie and I love my pup so much."),
    ("Andrew", "That's great, congrats!"),
    ("Audrey", "My pup Pixie sleeps all day and I take my puppy to the park."),
    ("Audrey", "I bought my puppy a new collar and my pup loves it."),
]


def test_the_slice_files_its_synonyms_under_the_theme_she_has() -> None:
    """Audrey has "Audrey's dog"; a session about "pup" and "puppy" adds to it instead of
    making "Audrey's pup" and "Audrey's puppy"."""
    messages, pups = episode("puppy", PUPS)
    cands = SliceCandidates([pups], [], None, {})
    said, _ = subject_words(messages, cands)
    assert said["Audrey"]["pup"] >= 2 and said["Audrey"]["puppy"] >= 2
    words = theme_words(said, {"Audrey": ["dog"]}, CountingEmbed(), 0.78)
    themed = with_themes(messages, cands, words=words)
    labels = {c.label for c in themed.candidates if c.theme}
    assert "Audrey's dog" in labels
    assert not {"Audrey's pup", "Audrey's puppy"} & labels
    dog = next(c for c in themed.candidates if c.label == "Audrey's dog")
    assert dog.theme == "episode" and len(dog.facts) >= 2
    assert "Audrey's dog" in pups.theme_names  # the episode goes by her theme
    plain = with_themes(messages, cands)  # without the words: the old behaviour
    assert "Audrey's dog" not in {c.label for c in plain.candidates if c.theme}


def test_seeding_reads_the_synonyms_of_earlier_topics() -> None:
    """A new "Audrey's dog" topic starts with what an earlier topic said of her pup."""
    messages, pups = episode("puppy", PUPS)
    earlier = Topic(
        namespace="ns",
        name="puppy",
        facts=list(pups.facts),
        time=TopicTime(first_seen_at=T0, last_seen_at=T0),
    )
    said, _ = subject_words(messages, SliceCandidates([pups], [], None, {}))
    words = theme_words(said, {"Audrey": ["dog"]}, CountingEmbed(), 0.78)
    dog = Theme("Audrey", stem("dog"), "dog")
    first = f"Audrey: {PUPS[0][1]}"
    assert mentions(first, dog, words) and not mentions(first, dog)
    cand = Candidate(key="audrey's dog", label="Audrey's dog", returns=1, theme="episode")
    seed(cand, [earlier], 10, DEFAULT.formation, words)
    assert {f.text for f in cand.facts} == {f"Audrey: {t}" for who, t in PUPS if who == "Audrey"}
    alone = Candidate(key="audrey's dog", label="Audrey's dog", returns=1, theme="episode")
    seed(alone, [earlier], 10, DEFAULT.formation)
    assert alone.facts == []  # by the word "dog" alone nothing of the pup is found


def test_a_member_named_by_a_theme_word_is_a_word_of_that_theme() -> None:
    """ "meet Toby, my puppy": Toby is Andrew's dog, and what he says of Toby later joins it."""
    lines = {"Andrew": ["So much has changed - meet Toby, my puppy.", "I love my new dog."]}
    said = {"Andrew": Counter(puppy=1, dog=1)}
    words = theme_words(said, {"Andrew": ["dog"]}, CountingEmbed(), 0.78, texts=lines)
    assert words.word("Andrew", "toby") == "dog"
    assert words.aliases("Andrew", "dog") == ["Toby (Andrew's dog)"]
    assert mentions(
        "Andrew: Toby and I hiked the trail.", Theme("Andrew", stem("dog"), "dog"), words
    )
    # a name the graph holds ("toby (andrew's dog)") maps the same without being said again
    later = theme_words(
        {"Andrew": Counter(hike=2)}, {"Andrew": ["dog"]}, CountingEmbed(), 0.78,
        named={("Andrew", "toby"): "dog"},
    )  # fmt: skip
    assert later.word("Andrew", "toby") == "dog" and later.found == {}
    # no member: an interjection leading a sentence, the speaker's own name
    other = {"Andrew": ["Yeah, my dog is cute.", "I'm Andrew, my dog Rex is cute."]}
    none = theme_words(said, {"Andrew": ["dog"]}, CountingEmbed(), 0.78, texts=other)
    assert none.found == {("Andrew", "rex"): "dog"}
    # "my childhood dog Max": the noun is "dog"; a member's noun said nowhere else is matched
    # by meaning ("pup" -> Andrew's "dog")
    pup = theme_words(
        {"Andrew": Counter(hike=1)}, {"Andrew": ["dog"]}, CountingEmbed(), 0.78,
        texts={"Andrew": ["That one is Max, my childhood dog.", "meet Bobo, my pup!"]},
    )  # fmt: skip
    assert pup.found == {("Andrew", "max"): "dog", ("Andrew", "bobo"): "dog"}
    assert members("Audrey", ["I love my recipes for Mediterranean food"]) == {}


def test_an_adjective_or_a_title_names_no_member() -> None:
    """ "my favorite, Lord of the Rings" (LoCoMo conv-43) made the alias "Lord (Tim's
    favorite)" and a theme "Tim's favorite": "favorite" stands for a noun left out, and "Lord"
    begins a title."""
    assert members("Tim", ["Here's a pic of my favorite, Lord of the Rings!"]) == {}
    assert members("Tim", ["Seen my favorite, Frodo?"]) == {}  # the adjective alone
    assert members("Tim", ["I love my book Lord of the Rings."]) == {}  # the title alone
    assert members("Andrew", ["So much has changed - meet Toby, my puppy."]) == {"toby": "puppy"}


def test_a_word_said_only_in_a_compound_that_means_its_head_is_that_heads_theme() -> None:
    """ "video" said only in "video game(s)" (LoCoMo conv-42) was the theme "Nate's video"
    beside "Nate's game"; a video game is a game. A pottery class is pottery: "pottery" stays."""
    nate = [
        "Hey Joanna! That's cool! I won my first video game tournament last week!",
        "Playing video games and watching movies are my main hobbies.",
        "The game was intense.",
        "",  # a turn that only shares a photo
    ]
    said = {"Nate": Counter(video=2, game=3, tournament=1)}
    words = theme_words(said, {}, CountingEmbed(), 0.78, texts={"Nate": nate})
    assert words.word("Nate", "video") == "game"
    mel = ["I'm taking a pottery class this month.", "My class was great.", "Class ran late."]
    said = {"Melanie": Counter(pottery=1, **{"class": 3})}
    words = theme_words(said, {}, CountingEmbed(), 0.78, texts={"Melanie": mel})
    assert words.word("Melanie", "pottery") == "pottery"
    # a theme she already has keeps its name, whatever it is said before
    known = theme_words(
        said, {"Melanie": ["pottery"]}, CountingEmbed(), 0.78, texts={"Melanie": mel}
    )
    assert known.word("Melanie", "pottery") == "pottery"
    video = theme_words(
        {"Nate": Counter(video=2, game=3)}, {"Nate": ["video"]}, CountingEmbed(), 0.78,
        texts={"Nate": nate},
    )  # fmt: skip
    assert video.word("Nate", "video") == "video"
    # nor a word of a theme he has by meaning: "dog" of "dog agility contest" is James's puppy
    luna = ["Luna won second place at the dog agility contest!", "We train for agility."]
    said = {"James": Counter(dog=1, agility=2)}
    dogs = theme_words(said, {"James": ["puppy"]}, CountingEmbed(), 0.78, texts={"James": luna})
    assert dogs.word("James", "dog") == "puppy"


def test_the_episode_and_the_theme_go_by_the_members_alias() -> None:
    lines = [
        ("Andrew", "Hey! So much has changed - meet Toby, my puppy. I love my puppy."),
        ("Audrey", "Aww, congrats!"),
        ("Andrew", "Toby is my first dog and my puppy sleeps in my bed."),
        ("Andrew", "I take my puppy Toby to the park every day."),
    ]
    messages, toby = episode("puppy", lines)
    cands = SliceCandidates([toby], [], None, {})
    said, texts = subject_words(messages, cands)
    words = theme_words(said, {"Andrew": ["dog"]}, CountingEmbed(), 0.78, texts=texts)
    themed = with_themes(messages, cands, words=words)
    dog = next(c for c in themed.candidates if c.label == "Andrew's dog")
    assert "Toby (Andrew's dog)" in dog.theme_names
    assert "Toby (Andrew's dog)" in toby.theme_names


def test_a_chat_without_named_speakers_reads_no_words() -> None:
    """An assistant chat (no speaker names) has no themes: the sleep embeds and reads nothing."""
    messages, pups = episode("puppy", PUPS)
    anonymous = [m.model_copy(update={"speaker": None}) for m in messages]
    assert subject_words(anonymous, SliceCandidates([pups], [], None, {})) == ({}, {})
