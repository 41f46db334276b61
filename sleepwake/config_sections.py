"""Two sections of ``SleepConfig`` (``sleepwake.config``), kept here for that module's size:
subjects (``SHERIFF_SLEEP__SUBJECTS__...``) and aspects (``SHERIFF_SLEEP__ASPECTS__...``). Pure.

Aspects are the areas of a life that a person's aspect topics gather (``sleepwake.aspects``;
``SHERIFF_SLEEP__ASPECTS__COSINE=0`` turns them off).

Each area is a name and the seed words that say what it holds; a word a speaker says belongs to
the area whose nearest seed word (by the sleep's model, the word alone) is at ``cosine`` or more
and nearer than any other area's by ``margin``. The seeds are plain words of everyday life, not
tuned to any conversation: an area a conversation never touches costs nothing.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from graph.config_section import Section


class SubjectsConfig(Section):
    """Subjects: Louvain communities of co-mention and similarity (``sleepwake.subjects``)."""

    similarity_edge: float = Field(
        default=0.6, ge=-1, le=1, description="candidates this alike are linked"
    )
    max_subjects: int = Field(default=8, ge=0, description="subjects one sleep keeps")
    # a clique of k is k^2 edges
    max_co_mentioned: int = Field(
        default=12, ge=0, description="a message's first entities linked by co-mention"
    )
    max_similarity_nodes: int = Field(
        default=400, ge=0, description="candidates in the n^2 similarity pass (< 1 s Louvain)"
    )


# name -> seed words (one word each: a word alone is what the model compares)
AREAS: dict[str, tuple[str, ...]] = {
    "family": tuple(
        "family kids children son daughter husband wife parents mom dad sister brother "
        "grandma grandpa".split()
    ),
    "pets": ("pet", "dog", "cat", "puppy", "kitten"),
    "music": tuple("music song concert band instrument guitar piano singing".split()),
    "books": ("book", "novel", "reading", "library", "author"),
    "art": ("art", "painting", "drawing", "pottery", "sculpture"),
    "sports": ("sport", "basketball", "soccer", "football", "tennis", "baseball"),
    "outdoors": ("hiking", "camping", "nature", "trail", "mountains", "forest"),
    "travel": ("travel", "trip", "vacation", "abroad"),
    "cooking": ("cooking", "recipe", "baking", "dinner", "food"),
    "work": ("job", "work", "career", "boss", "company", "business"),
    "health": ("health", "doctor", "illness", "injury", "therapy"),
    # not "class" (a pottery class is art) nor "home" ("back home", "my home country")
    "studies": ("school", "exam", "studies", "degree", "university", "college"),
    "home": ("house", "apartment", "rent"),
    "cars": ("car", "truck", "driving"),
    "games": ("videogame", "gaming", "console"),
    "movies": ("movie", "film", "cinema"),  # not "show" ("to show support", "an art show")
    "faith": ("faith", "church", "religion", "prayer"),
    "volunteering": ("volunteering", "charity", "shelter", "fundraiser"),
    "fitness": ("fitness", "gym", "workout", "running", "yoga"),
    "writing": ("writing", "poem", "poetry", "screenplay", "blog"),  # not "story": my life's
}


class AspectsConfig(Section):
    """Aspect topics: a person's facts gathered by the area of life they are about."""

    areas: dict[str, tuple[str, ...]] = Field(
        default_factory=lambda: dict(AREAS),
        description="area name -> seed words; a speaker's aspect topic is '<speaker>'s <area>'",
    )

    @field_validator("areas")
    @classmethod
    def _seeded(cls, areas: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        """Every area a lower-case name and at least one seed word, each one word."""
        for name, seeds in areas.items():
            if not name.strip() or name != name.lower():
                raise ValueError(f"aspect area {name!r}: a lower-case name")
            if not seeds or any(not w or " " in w.strip() for w in seeds):
                raise ValueError(f"aspect area {name!r}: one or more seed words, one word each")
        return areas

    # MiniLM, word to word: "violin"/"guitar" .6+, "kids"/"school" would join at .5. On since
    # session 27: with consolidation (sleepwake/absorb.py) and one topic of an owner's area
    # (an area and its themes are one topic, whichever came first), LoCoMo dev's multi-sleep
    # and week-span shares pass on all six conversations and topics per 100 messages stay
    # <= 12, for 0.005 of §1 recall: docs/topics.md, "One topic of an owner's area"
    cosine: float = Field(
        default=0.6, ge=0, le=1, description="a word joins the area of its nearest seed word "
        "at this cosine or more; 0: no aspect topics"
    )  # fmt: skip
    margin: float = Field(
        default=0.08, ge=0, le=1, description="... when no other area's seed is this close"
    )
    # 2 made an area's topic from one slice at once: ~8 a conversation were never touched
    # again (LoCoMo dev: "Caroline's studies", 2 facts), 0 duplicate names against 2
    new_facts: int = Field(
        default=0, ge=0, description="a speaker's facts about an area in one slice that make "
        "its topic at once; 0: only when the area comes back in a later sleep"
    )  # fmt: skip
    facts: int = Field(
        default=4, ge=1, description="a speaker's facts about an area filed by one sleep"
    )
    topic_facts: int = Field(
        default=4, ge=1, description="an area that comes back makes its topic only with this "
        "many facts, its earlier ones and the slice's"
    )  # fmt: skip
