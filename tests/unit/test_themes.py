"""What a person keeps coming back to (``sleepwake.themes``): an episode's theme, the theme's
topic made only when the theme comes back, seeded from the earlier topics, taking only its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graph.models import Fact, Message, Topic, TopicTime
from graph.sleep import MatchFields, PoolHit
from sleepwake.candidates import Candidate, SliceCandidates
from sleepwake.config import DEFAULT, MergeConfig
from sleepwake.matching import PoolTopic, best_match, score
from sleepwake.themes import Theme, episode_themes, keep_recurring, mentions, seed, with_themes
from text.tokens import stem

T0 = datetime(2023, 7, 3, 13, 0, tzinfo=UTC)
W = MergeConfig()
SPEAKERS = {"Melanie", "Caroline"}


def said(who: str, text: str, at: datetime = T0) -> tuple[Message, Fact]:
    msg = Message(namespace="ns", role="user", speaker=who, content=text, at=at)
    return msg, Fact(text=f"{who}: {text}", source_message_ids=[msg.message_id], at=at)


def episode(label: str, lines: list[tuple[str, str]], at: datetime = T0) -> tuple[
    list[Message], Candidate
]:  # fmt: skip
    cand = Candidate(key=label, label=label, returns=1)
    messages = []
    for who, text in lines:
        msg, fact = said(who, text, at)
        messages.append(msg)
        cand.add_fact(fact)
        cand.seen_in(msg)
    return messages, cand


BOWL = [
    ("Caroline", "I'm getting creative too, just learning the piano."),
    ("Melanie", "I'm a big fan of pottery - the creativity and skill is awesome."),
    ("Caroline", "That bowl is gorgeous! The black and white design looks so fancy."),
    ("Melanie", "Yeah, I made this bowl in my class. It took some work."),
    ("Melanie", "Pottery is a huge part of my life, not just a hobby."),
    ("Melanie", "I'm excited to see where pottery takes me."),
]


def test_an_episode_is_about_what_its_owner_keeps_naming() -> None:
    """ "bowl" led the talk; what Melanie's facts keep naming is pottery. Caroline praised the
    bowl but said nothing of her own about it: she is not its owner."""
    _, bowl = episode("bowl", BOWL)
    themes = episode_themes(bowl, SPEAKERS)
    assert [t.label for t in themes] == ["Melanie's pottery", "Melanie's bowl"]
    assert themes[0].key == "melanie's pottery"
    one = DEFAULT.formation.model_copy(update={"episode_themes": 1})
    assert [t.label for t in episode_themes(bowl, SPEAKERS, one)] == ["Melanie's pottery"]


def test_names_photos_and_adjectives_are_no_theme() -> None:
    yours = "Melanie: I'm in awe of your courage and your new painting."
    assert not mentions(yours, Theme("Melanie", stem("courage"), "courage"))  # the listener's
    assert not mentions(yours, Theme("Melanie", stem("painting"), "painting"))
    lines = [
        ("Melanie", "[shares a photo: a photo of a blue sky] My dog Max loves the park."),
        ("Melanie", "Max ran around the park with me all day, so blue and sunny."),
    ]
    _, walk = episode("walk", lines)
    labels = [t.label for t in episode_themes(walk, SPEAKERS)]
    assert labels == ["Melanie's park"]  # not "Max" (a name), "photo" (the frame), "blue"


def test_a_theme_is_filed_only_when_it_comes_back() -> None:
    messages, bowl = episode("bowl", BOWL)
    cands = with_themes(messages, SliceCandidates([bowl], [], None, {}))
    themes = {c.label: c for c in cands.candidates[1:]}
    assert themes["Melanie's pottery"].theme == "episode"  # the episode is about it
    assert themes["Caroline's piano"].theme == "said"  # only mentioned
    # every subject noun Melanie said of herself; Caroline's piano too ("I'm ... learning")
    assert {"Melanie's pottery", "Melanie's bowl", "Caroline's piano"} <= set(themes)
    theme = themes["Melanie's pottery"]
    assert bowl.theme_names == ["Melanie's pottery", "Melanie's bowl"]  # aliases of its topic
    assert all(f.text.startswith("Melanie:") and "otter" in f.text for f in theme.facts)
    vectors = [[1.0, 0.0] for _ in cands.candidates]
    # said for the first time: nothing found goes by its name, so none is filed
    kept, kept_vectors, _, seeds = keep_recurring(cands.candidates, vectors, [])
    assert kept == [bowl] and kept_vectors == [[1.0, 0.0]] and seeds == {}
    i = cands.candidates.index(theme)
    # a later sleep: the July episode's topic goes by "Melanie's pottery"
    earlier = MatchFields(
        "t-bowl", "bowl", ("Melanie's pottery",), "", (), T0, T0 + timedelta(hours=1)
    )
    hits = [PoolHit(i, earlier, 0.4), PoolHit(0, earlier, 0.9)]
    kept, _, renumbered, seeds = keep_recurring(cands.candidates, vectors, hits)
    assert kept == [bowl, theme] and seeds == {"melanie's pottery": ["t-bowl"]}
    assert renumbered == [PoolHit(1, earlier, 0.4), PoolHit(0, earlier, 0.9)]
    # a theme only mentioned makes no topic, even when an earlier topic goes by it ...
    piano = themes["Caroline's piano"]
    j = cands.candidates.index(piano)
    before = MatchFields("t-x", "x", ("caroline's piano",), "", (), T0, T0)
    assert keep_recurring(cands.candidates, vectors, [PoolHit(j, before, 0.5)])[0] == [bowl]
    # ... but joins the theme's topic when there is one
    own = MatchFields("t-piano", "Caroline's piano", (), "", (), T0, T0)
    kept, _, _, seeds = keep_recurring(cands.candidates, vectors, [PoolHit(j, own, 0.5)])
    assert kept == [bowl, piano] and seeds == {"caroline's piano": []}


def test_a_new_theme_topic_starts_with_what_earlier_topics_said_of_it() -> None:
    later = T0 + timedelta(days=50)
    messages, plate = episode(
        "plate",
        [
            ("Melanie", "Yeah, I made it in pottery class yesterday. Pottery's so relaxing."),
            ("Melanie", "My pottery teacher says my plates are getting better."),
        ],
        at=later,
    )
    made = with_themes(messages, SliceCandidates([plate], [], None, {})).candidates
    theme = next(c for c in made if c.label == "Melanie's pottery")
    old_topic = Topic(
        namespace="ns",
        name="bowl",
        facts=[said(w, t)[1] for w, t in BOWL],
        time=TopicTime(first_seen_at=T0, last_seen_at=T0),
    )
    seed(theme, [old_topic], keep=20, cfg=DEFAULT.formation)
    texts = [f.text for f in theme.facts]
    assert "Melanie: Pottery is a huge part of my life, not just a hobby." in texts
    assert not any(t.startswith("Caroline:") for t in texts)  # the owner's facts only
    assert theme.first_at == T0  # it spans both sessions now
    assert all(mentions(t, Theme("Melanie", "potteri", "pottery")) for t in texts)


def test_a_theme_goes_to_its_own_topic_and_nowhere_else() -> None:
    theme = Candidate(key="melanie's pottery", label="Melanie's pottery", returns=1, theme="said")
    theme.add_fact(said("Melanie", "I made a plate in pottery class.")[1])
    theme.seen_in(said("Melanie", "x")[0])
    own = PoolTopic("t1", ("melanie's pottery",), "", T0, T0)
    other = PoolTopic("t2", ("bowl", "melanie's pottery"), "", T0, T0)
    assert best_match([score(theme, own, 0.2, W)], W) is not None
    assert best_match([score(theme, other, 0.95, W)], W) is None


def test_episodes_are_part_of_their_theme() -> None:
    from graph.models import EdgeType
    from sleepwake.themes import part_of

    plate = Candidate(key="plate", label="plate", returns=1)
    plate.theme_names.append("Melanie's pottery")
    theme = Candidate(
        key="melanie's pottery", label="Melanie's pottery", returns=1, theme="episode"
    )
    by_key = {"plate": "t-plate", "melanie's pottery": "t-theme"}
    links = part_of([plate, theme], by_key, {"melanie's pottery": ["t-bowl"]})
    assert {(lk.from_id, lk.to_id) for lk in links} == {
        ("t-plate", "t-theme"),
        ("t-bowl", "t-theme"),
    }
    assert {lk.type for lk in links} == {EdgeType.PART_OF}
    assert part_of([plate], {"plate": "t-plate"}, {}) == []  # no theme topic, no edge


def test_no_theme_topic_copies_the_one_topic_the_subject_already_has() -> None:
    from sleepwake.themes import covered_themes_dropped

    pottery_class = Candidate(key="pottery class", label="pottery class", returns=1)
    pottery_class.theme_names.append("Melanie's pottery")
    theme = Candidate(
        key="melanie's pottery", label="Melanie's pottery", returns=1, theme="episode"
    )
    vectors = [[1.0], [0.5]]
    # this slice's pottery class joined the one earlier topic that went by the theme: no copy
    seeded = {"melanie's pottery": ["t-class"]}
    kept = covered_themes_dropped(
        [pottery_class, theme], vectors, [("t-class", False), ("t-new", True)], seeded
    )
    assert kept == ([pottery_class], [[1.0]], [("t-class", False)]) and seeded == {}
    # the bowl in July and the plate in August are two topics: the theme gathers them
    seeded = {"melanie's pottery": ["t-bowl"]}
    kept = covered_themes_dropped(
        [pottery_class, theme], vectors, [("t-plate", True), ("t-new", True)], seeded
    )
    assert kept[0] == [pottery_class, theme] and seeded == {"melanie's pottery": ["t-bowl"]}


def test_a_theme_named_in_enough_facts_of_a_slice_can_make_its_topic() -> None:
    """``theme_new_facts``: a later slice naming a theme in that many of its owner's facts
    (no episode about it) may make its topic; a single mention only joins one."""
    lines = [("Caroline", "I'm learning the piano these days."), ("Melanie", "Nice!")]
    messages, chat = episode("chat", lines)

    def kind(cfg: object) -> str:
        made = with_themes(messages, SliceCandidates([chat], [], None, {}), cfg)  # type: ignore[arg-type]
        return next(c.theme for c in made.candidates if c.label == "Caroline's piano")

    assert kind(DEFAULT.formation) == "said"
    assert kind(DEFAULT.formation.model_copy(update={"theme_new_facts": 1})) == "episode"
