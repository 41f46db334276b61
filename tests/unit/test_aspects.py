"""A person's facts filed by the area of life they are about (``sleepwake.aspects``): the
violin in May and the clarinet in October are Melanie's music; an area a theme already stands
for goes to the theme's topic; nobody's facts go to another speaker's area."""

from __future__ import annotations

from collections.abc import Sequence

from sleepwake.aspects import areas_of, file_aspects, own_facts, theme_words_of, with_aspects
from sleepwake.candidates import Candidate, SliceCandidates
from sleepwake.config import DEFAULT
from sleepwake.config_sections import AspectsConfig
from sleepwake.themes import ASPECT, covered_themes_dropped, keep_recurring
from tests.unit.test_themes import T0, episode

AREAS = {"music": ("music", "guitar"), "pets": ("pet", "dog")}
CFG = DEFAULT.model_copy(update={"aspects": AspectsConfig(areas=AREAS)})
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
    cfg = AspectsConfig(areas=AREAS)
    found = areas_of(["violin", "clarinet", "puppy", "team", "weather", "guitar"], cfg, embed)
    assert found == {"violin": "music", "clarinet": "music", "puppy": "pets", "guitar": "music"}
    assert "team" not in found  # as near one area as the other: nobody's
    embedded.clear()
    assert areas_of(["violin"], AspectsConfig(areas=AREAS, cosine=0.0), embed) == {}
    assert areas_of([], cfg, embed) == {} and embedded == []  # nothing to place, nothing run


def test_a_speakers_own_facts_are_filed_under_the_area_they_are_about() -> None:
    """Three of Melanie's own facts name instruments: her music's topic is made; Caroline's
    one fact about her dog joins her pets' topic only if it exists; praise and questions
    about the listener are nobody's."""
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
    out = file_aspects(messages, cands, CFG, {}, embed)
    areas = {c.label: c for c in out.candidates[1:]}
    assert set(areas) == {"Melanie's music", "Caroline's pets"}
    music = areas["Melanie's music"]
    assert music.theme == ASPECT and len(music.facts) == 3  # enough to make the topic
    assert all(f.text.startswith("Melanie:") for f in music.facts)
    assert areas["Caroline's pets"].theme == "said"  # one fact: joins only an existing topic
    assert music.first_at == T0 and music.summary is not None
    assert own_facts(messages, cands)["Caroline"][0].text.startswith("Caroline: My dog")
    # the slice's episodes are unchanged: the facts are copies
    assert len(race.facts) == 5


def test_an_area_a_theme_stands_for_goes_to_the_themes_topic() -> None:
    """Audrey has "Audrey's dog" (a theme the graph holds): her puppy's news joins it, not a
    new "Audrey's pets" beside it; a theme candidate of the slice takes them likewise."""
    messages, walk = episode(
        "walk",
        [
            ("Audrey", "My puppy Pixie loves the long walks in the park."),
            ("Audrey", "I took my puppy to the vet for her shots yesterday."),
            ("Audrey", "My puppy learned to sit in one afternoon."),
        ],
    )
    cands = SliceCandidates([walk], [], None, {})
    out = file_aspects(messages, cands, CFG, {"Audrey": ["dog"]}, embed)
    labels = [c.label for c in out.candidates[1:]]
    assert labels == ["Audrey's dog"] and out.candidates[1].theme == "said"
    assert len(out.candidates[1].facts) == 3
    theme = Candidate(key="audrey's dog", label="Audrey's dog", returns=1, theme="episode")
    cands = SliceCandidates([walk, theme], [], None, {})
    assert theme_words_of(cands, {}) == {"Audrey": ["dog"]}
    areas = {"puppy": "pets", "dog": "pets"}
    out = with_aspects(messages, cands, CFG, areas, theme_words_of(cands, {}))
    assert out.candidates == [walk, theme] and len(theme.facts) == 3  # filed into it


def test_an_areas_topic_is_kept_without_an_earlier_one_and_never_dropped_as_a_copy() -> None:
    music = Candidate(key="melanie's music", label="Melanie's music", returns=1, theme=ASPECT)
    pets = Candidate(key="caroline's pets", label="Caroline's pets", returns=1, theme="said")
    vectors = [[1.0, 0.0], [0.0, 1.0]]
    kept, _, _, seeds = keep_recurring([music, pets], vectors, [])
    assert kept == [music] and seeds == {"melanie's music": []}
    chosen = covered_themes_dropped([music], [[1.0, 0.0]], [("t-new", True)], {})
    assert chosen[0] == [music]


def test_nothing_is_filed_without_named_speakers_or_with_the_knob_at_zero() -> None:
    messages, race = episode(
        "race", [("Melanie", "I played my violin, my guitar and my clarinet today.")]
    )
    cands = SliceCandidates([race], [], None, {})
    off = CFG.model_copy(update={"aspects": AspectsConfig(areas=AREAS, cosine=0.0)})
    assert file_aspects(messages, cands, off, {}, embed) is cands
    anonymous = [m.model_copy(update={"speaker": None}) for m in messages]
    assert file_aspects(anonymous, cands, CFG, {}, embed) is cands
