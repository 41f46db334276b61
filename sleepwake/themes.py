"""What a person keeps coming back to: a topic per speaker and subject ("Melanie's pottery"),
grown at every sleep that talks about it. Pure.

Episodes make a topic per session's subject, named by what led the talk ("bowl" in July, "plate"
in August, "pottery workshop" in between): the subject a person would file them under is the
thing their facts keep naming, here "pottery", and a question about it ("What has Melanie made
in her pottery class?") has its answer spread over all of them. So each episode is read for
its *theme*: the noun its owner's facts name most (in at least ``theme_min_facts`` of them, not
a plain word, not a person's name), and the episode's topic keeps "<owner>'s <theme>" as an
alias. A theme becomes a topic of its own only when it comes back: when a later sleep finds the
same theme, and a topic from an earlier sleep goes by it, the theme's topic is made with the
owner's facts about it from those earlier topics and the slice's (copies: each stays in its
episode's topic), and from then on it takes that theme's news at every sleep and nothing else,
keeping ``MergeConfig.theme_kept_facts`` facts by salience and recency
(``sleepwake.retention``). A theme said once stays an alias: nothing is filed twice for it, and
no copy is made of a subject whose episodes are already one topic (``covered_themes_dropped``).
Knobs: ``FormationConfig.theme_facts`` / ``theme_min_facts`` / ``theme_new_facts`` /
``theme_topic_facts`` / ``episode_themes``, ``MergeConfig.theme_kept_facts``; docs/topics.md,
"Themes".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from graph.models import EdgeType, Fact, Message, Topic
from graph.sleep import PoolHit
from graph.topics import LinkRequest
from sleepwake.candidates import Candidate, SliceCandidates, normalise_key
from sleepwake.config import FormationConfig, SleepConfig
from sleepwake.names_apart import PLAIN_WORDS, name_identity
from sleepwake.theme_words import SAME, ThemeWords, member_alias
from sleepwake.turn_facts import FIRST_PERSON, FORMATION, sentence_weight
from text.analysis import ENGLISH_STOP_WORDS
from text.english import noun_phrases
from text.gist import speaker_of, unspoken
from text.tokens import stem

# nouns that name no subject of a life: talk about talk, time and feelings
_GENERIC = frozenset(
    """thing things stuff lot lots bit kind sort way ways time times day days week weeks month
    months year years today tonight morning evening night moment moments part parts place idea
    ideas question questions answer chat talk news update updates story stories fun experience
    experiences feeling feelings life lives world everyone someone anyone nobody somebody
    anything everything something nothing people person guy guys friend friends folks chance
    point reason reasons sense type end start beginning side deal matter job work home photo
    photos pic pics picture pictures image images shot shots""".split()
)
# everyday words (``sleepwake.names_apart.PLAIN_WORDS`` and a few more) never name a theme,
# nor pronouns (Lucene's stop set keeps them: "Her name is Shadow" was filed as family news)
_PLAIN = PLAIN_WORDS | frozenset(
    """would could should will your yours mine ours from into over then than felt sure glad
    happy hoping other others new old big little same own whole best favorite favourite
    wanted she her hers him his its our their theirs them myself yourself herself himself
    itself ourselves themselves one ones name names""".split()
)
_WORD = re.compile(r"[a-z][a-z-]{2,}")
ASPECT = "aspect"  # an area's candidate that makes its topic now (sleepwake.aspects) ...
ASPECT_BACK = "aspect_back"  # ... or when an earlier topic went by its name, like a theme
_NOT_PLURAL = frozenset("trans lgbtq news series species physics lens bus gas yes".split())
_IE = frozenset("movie cookie rookie selfie zombie smoothie brownie hoodie goalie veggie".split())
# "your courage": the listener's, not the speaker's subject
_YOURS = re.compile(r"\byour\s+(?:\w+\s+)?$", re.I)
# "[shares a photo: a photo of a plate with flowers]": the frame says nothing of the subject
_CAPTION_FRAME = re.compile(
    r"\[shares? an? (?:photo|picture|image)\s*:?|\ban? (?:photo|photograph|photography|picture|image|close[- ]up) of\b",
    re.I,
)
_ADJECTIVE_END = re.compile(r"(?:al|ful|ous|ive|ic|ish|less|able|ible|ed|est|er)$")
_ADJECTIVES = frozenset(
    """blue red green black white yellow pink purple orange brown gray grey dark bright cute
    fancy proud busy tough hard easy real true huge tiny small large long short young special
    sweet lovely beautiful gorgeous stunning nice fun funny crazy wild calm safe sorry ready
    fave own important around loving second third fourth fifth another furry fluffy cozy comfy
    sunny rainy snowy windy cloudy healthy tasty yummy lucky silly messy sleepy hungry""".split()
)


@dataclass(frozen=True)
class Theme:
    """One speaker's subject: ``stem`` identifies it, ``surface`` is how it was said most."""

    owner: str
    stem: str
    surface: str

    @property
    def label(self) -> str:
        return f"{self.owner}'s {self.surface}"

    @property
    def key(self) -> str:
        return normalise_key(self.label)


def _nouns(texts: Iterable[str]) -> set[str]:
    """Stems of the words said inside a noun phrase of ``texts`` that may name a subject: not an
    adjective by its ending or by ``_ADJECTIVES`` ("pottery" and "workshop" of "a pottery
    workshop", "health" of "mental health"). A single capitalised word counts only when it is
    also said in lower case ("Pottery is a huge part of my life" beside "my pottery class"),
    not "Max"."""
    texts = [_CAPTION_FRAME.sub(" ", t) for t in texts]
    lower = {w for t in texts for w in _WORD.findall(t)}
    out: set[str] = set()
    for text in texts:
        for phrase in noun_phrases(text):
            if " " not in phrase and phrase[:1].isupper() and phrase.lower() not in lower:
                continue
            words = phrase.split()
            if len(words) > 1:  # "Harry Potter", "the Eiffel Tower": names, not subject nouns
                words = [w for w in words if not w[:1].isupper()]
            out.update(stem(w) for w in _WORD.findall(" ".join(words).lower()) if _noun_like(w))
    return out


def _noun_like(word: str) -> bool:
    return _subject_word(word) and word not in _ADJECTIVES and not _ADJECTIVE_END.search(word)


def _subject_word(word: str) -> bool:
    plain = word in ENGLISH_STOP_WORDS or word in _PLAIN
    return not (plain or word in _GENERIC or word.rstrip("s") in _GENERIC)


def _said(fact: str, words: ThemeWords = SAME) -> Iterable[tuple[str, str, str]]:
    """(stem, surface, stem as said) of every subject word of a fact, as often as it is said,
    but for what is the listener's ("your courage"); a word ``words`` maps to another of its
    speaker's themes ("pup" -> "dog") comes as that theme's word."""
    owner = speaker_of(fact)
    text = unspoken(fact).lower()
    for match in _WORD.finditer(text):
        word = match.group()
        if _subject_word(word) and not _YOURS.search(text[: match.start()]):
            root = stem(word)
            theme = words.word(owner, _singular(word)) if words.canon else None
            if theme is not None and theme != _singular(word):
                yield stem(theme), theme, root
            else:
                yield root, word, root


def _singular(word: str) -> str:
    """One spelling per theme whatever the number it was said in ("kids" -> "kid")."""
    if word in _NOT_PLURAL:
        return word
    if word.endswith("ies") and len(word) > 4 and word[:-1] not in _IE:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and stem(word[:-1]) == stem(word):
        return word[:-1]
    return word


def words_of(fact: str) -> list[str]:
    """The subject words of ``fact`` its speaker says (singular, as often as said), not the
    listener's ("your courage"): what ``sleepwake.aspects`` files by area."""
    return [_singular(surface) for _, surface, _ in _said(fact)]


def mentions(fact: str, theme: Theme, words: ThemeWords = SAME) -> bool:
    """Whether ``fact`` names ``theme``'s noun (or a word ``words`` maps to it)."""
    return any(root == theme.stem for root, _, _ in _said(fact, words))


@dataclass
class _Counts:
    """How often each speaker names each subject noun in one episode (their own subjects only:
    they said it of themselves in a first-person fact there)."""

    times: dict[str, Counter[str]]  # owner -> stem -> mentions
    said: dict[str, Counter[str]]  # stem -> surface words
    order: dict[str, int]  # stem -> first said
    named: set[str]  # stems of the episode's name

    def theme(self, owner: str, root: str) -> Theme:
        return Theme(owner, root, _singular(self.said[root].most_common(1)[0][0]))


def _count(cand: Candidate, speakers: set[str], words: ThemeWords = SAME) -> _Counts:
    nouns = _nouns(unspoken(f.text) for f in cand.facts)
    said = {f.text: list(_said(f.text, words)) for f in cand.facts}
    mine = {  # whose subject it is: someone who said it of themselves ("I made it in ...")
        (speaker_of(f.text), root)
        for f in cand.facts
        if FIRST_PERSON.search(unspoken(f.text))
        for root, _, _ in said[f.text]
    }
    people = {stem(s.lower()) for s in speakers}
    counts = _Counts({}, {}, {}, {stem(w) for w in _WORD.findall(cand.name.lower())})
    for fact in cand.facts:
        owner = speaker_of(fact.text)
        if owner not in speakers:
            continue
        own = counts.times.setdefault(owner, Counter())
        for root, word, as_said in said[fact.text]:
            # a word the speaker's theme goes by counts as its noun: a synonym or a member's
            # name ("Rocky sleeps on my bed": Rocky is James's puppy), never in a noun phrase
            named = as_said in nouns or root != as_said
            if named and root not in people and (owner, root) in mine:
                own[root] += 1
                counts.said.setdefault(root, Counter())[word] += 1
                counts.order.setdefault(root, len(counts.order))
    return counts


def episode_themes(
    cand: Candidate,
    speakers: set[str],
    cfg: FormationConfig = FORMATION,
    counts: _Counts | None = None,
) -> list[Theme]:
    """The themes of each named speaker in an episode candidate: the nouns (said in a noun
    phrase of the episode) that speaker names most there, at least ``cfg.theme_min_facts``
    times, a word of the topic's name counting once more (ties: the first said), at most
    ``cfg.episode_themes`` of them (``counts``: the episode's, when already counted)."""
    counts = counts or _count(cand, speakers)
    themes = []
    for owner, own in sorted(counts.times.items()):
        score = {r: n + (r in counts.named) for r, n in own.items()}
        ranked = sorted(
            (r for r, n in score.items() if n >= cfg.theme_min_facts),
            key=lambda r: (-score[r], counts.order[r]),
        )
        themes += [counts.theme(owner, root) for root in ranked[: cfg.episode_themes]]
    return themes


def said_themes(cand: Candidate, speakers: set[str], counts: _Counts | None = None) -> list[Theme]:
    """Every subject noun a named speaker says of themselves in an episode, once: what joins a
    theme's topic when the theme has one, however briefly it came up."""
    counts = counts or _count(cand, speakers)
    return [counts.theme(o, r) for o, own in sorted(counts.times.items()) for r in sorted(own)]


def subject_words(
    piece: Sequence[Message], cands: SliceCandidates
) -> tuple[dict[str, Counter[str]], dict[str, list[str]]]:
    """Speaker -> the subject words they said of themselves in the slice's episodes (singular),
    with how often, and speaker -> their turns: what ``sleepwake.theme_words`` matches by
    meaning and reads member names in."""
    speakers = {m.speaker for m in piece if m.role == "user" and m.speaker}
    out: dict[str, Counter[str]] = {}
    lines: dict[str, list[str]] = {}
    if not speakers:  # a chat with an assistant: nobody's themes, nothing to read
        return out, lines
    for cand in _episodes(cands):
        counts = _count(cand, speakers)
        for owner, own in counts.times.items():
            mine = out.setdefault(owner, Counter())
            for root, n in own.items():
                mine[_singular(counts.said[root].most_common(1)[0][0])] += n
    for m in piece:  # every turn: an introduction ("meet Toby, my puppy") is seldom a fact
        if m.role == "user" and m.speaker:
            lines.setdefault(m.speaker, []).append(m.content)
    return out, lines


def _episodes(cands: SliceCandidates) -> list[Candidate]:
    return [c for c in cands.candidates if not (c.person or c.theme or c.returns is None)]


def _member_aliases(cand: Candidate, words: ThemeWords) -> None:
    """An episode that names a member of a theme ("meet Toby, my puppy") goes by the member's
    alias too ("Toby (Andrew's dog)"): how later sleeps know Toby is Andrew's dog."""
    for (owner, name), word in sorted(words.found.items()):
        said = re.compile(rf"\b{re.escape(name.capitalize())}\b")
        if any(speaker_of(f.text) == owner and said.search(f.text) for f in cand.facts):
            alias = member_alias(owner, word, name)
            if alias not in cand.theme_names:
                cand.theme_names.append(alias)


def with_themes(
    piece: Sequence[Message],
    cands: SliceCandidates,
    cfg: FormationConfig = FORMATION,
    words: ThemeWords = SAME,
) -> SliceCandidates:
    """``cands`` with each episode's themes kept as aliases of its topic, and one theme
    candidate per subject noun a speaker said of themselves in the slice (``theme`` set: see
    ``_kind``; the sleep keeps one only when it has a topic or makes one: ``keep_recurring``).
    ``words``: which of a speaker's words are one theme (``sleepwake.theme_words``)."""
    if not cfg.theme_facts:
        return cands
    by_id = {m.message_id: m for m in piece}
    speakers = {m.speaker for m in piece if m.role == "user" and m.speaker}
    found: dict[str, tuple[Theme, list[Fact]]] = {}
    about: set[str] = set()  # the keys of the themes an episode of the slice is about
    for cand in _episodes(cands):
        _member_aliases(cand, words)
        counts = _count(cand, speakers, words)
        for theme in episode_themes(cand, speakers, cfg, counts):
            about.add(theme.key)
            if theme.label not in cand.theme_names:
                cand.theme_names.append(theme.label)
        for theme in said_themes(cand, speakers, counts):
            said = [
                f
                for f in cand.facts
                if speaker_of(f.text) == theme.owner
                and FIRST_PERSON.search(unspoken(f.text))
                and mentions(f.text, theme, words)
                and all(m in by_id for m in f.source_message_ids)
            ]
            _, facts = found.setdefault(theme.key, (theme, []))
            facts.extend(said)
    extra = [
        _theme(theme, facts, by_id, cfg, _kind(theme, facts, about, cfg))
        for theme, facts in found.values()
        if facts
    ]
    for cand in extra:
        if (of := _of(cand)) is not None:
            cand.theme_names += words.aliases(of.owner, of.surface)
    if not extra:
        return cands
    return replace(cands, candidates=[*cands.candidates, *extra])


def _kind(theme: Theme, facts: list[Fact], about: set[str], cfg: FormationConfig) -> str:
    """``episode`` when an episode of the slice is about the theme or its owner named it in
    ``theme_new_facts`` facts of the slice, else ``said`` (a passing mention)."""
    substantial = theme.key in about or len({f.text for f in facts}) >= cfg.theme_new_facts
    return "episode" if substantial else "said"


def _weight(fact: Fact, cfg: FormationConfig) -> float:
    return sentence_weight(unspoken(fact.text), cfg)


def _theme(
    theme: Theme, facts: list[Fact], by_id: dict[str, Message], cfg: FormationConfig, kind: str
) -> Candidate:
    picks = sorted(facts, key=lambda f: -_weight(f, cfg))[: cfg.theme_facts]
    cand = Candidate(key=theme.key, label=theme.label, returns=1, theme=kind)
    for fact in sorted(picks, key=_when):
        cand.add_fact(fact)
        for mid in fact.source_message_ids:
            cand.seen_in(by_id[mid])
    cand.summary = picks[0].text if picks else None
    return cand


def seed(
    cand: Candidate,
    earlier: Sequence[Topic],
    keep: int,
    cfg: FormationConfig,
    words: ThemeWords = SAME,
) -> None:
    """A new theme topic starts with the owner's facts about the theme from the ``earlier``
    topics that go by its name (copies), the most telling ``keep`` of them."""
    theme = _of(cand)
    if theme is None:
        return
    have = {f.text for f in cand.facts}
    old = [
        f
        for topic in earlier
        for f in topic.facts
        if f.invalid_at is None
        and f.text not in have
        and speaker_of(f.text) == theme.owner
        and mentions(f.text, theme, words)
    ]
    old = sorted(old, key=lambda f: -_weight(f, cfg))[:keep]
    for fact in sorted(old, key=_when):
        cand.add_fact(fact)
    times = [f.at for f in old if f.at is not None]
    if times and cand.first_at is not None:
        cand.first_at = min(cand.first_at, *times)


def _of(cand: Candidate) -> Theme | None:
    """The theme a theme candidate stands for (from its label "<owner>'s <noun>")."""
    owner, sep, surface = (cand.label or "").partition("'s ")
    if not sep or not surface:
        return None
    return Theme(owner, stem(surface), surface)


def _when(fact: Fact) -> float:
    return fact.at.timestamp() if fact.at is not None else 0.0


def keep_recurring(
    candidates: list[Candidate], vectors: list[list[float]], hits: list[PoolHit]
) -> tuple[list[Candidate], list[list[float]], list[PoolHit], dict[str, list[str]]]:
    """The slice's candidates without the themes that have no topic yet and do not make one,
    their vectors and pool hits renumbered, and for each theme kept the earlier topics that go
    by its name without being its topic (what a new theme topic is ``seed``-ed from). A theme
    makes a topic when an episode of the slice is about it (``theme == "episode"``) and the
    topic of an earlier one was too (it goes by the theme's name); a theme only mentioned
    joins its topic when there is one."""
    names: dict[int, list[tuple[str, tuple[str, ...]]]] = {}
    for hit in hits:
        f = hit.fields
        called = (f.name.lower(), *(a.lower() for a in f.aliases))
        names.setdefault(hit.idx, []).append((f.topic_id, called))
    kept: list[int] = []
    seeds: dict[str, list[str]] = {}
    for i, cand in enumerate(candidates):
        if not cand.theme:
            kept.append(i)
            continue
        found = names.get(i, [])
        own = any(name_identity(n[0]) == name_identity(cand.key) for _, n in found)  # joins it
        earlier = [tid for tid, n in found if cand.key in n[1:] and n[0] != cand.key]
        # a new theme topic: an episode of the slice is about it, and one before was too (an
        # area's topic: the slice says enough of it, sleepwake.aspects)
        back = cand.theme in ("episode", ASPECT_BACK) and earlier
        if not own and not back and cand.theme != ASPECT:
            continue
        kept.append(i)
        seeds[cand.key] = [] if own else earlier
    return (*only(kept, candidates, vectors, hits), seeds)


def only(
    kept: list[int], candidates: list[Candidate], vectors: list[list[float]], hits: list[PoolHit]
) -> tuple[list[Candidate], list[list[float]], list[PoolHit]]:
    """The candidates at ``kept``, with their vectors and their pool hits renumbered."""
    if len(kept) == len(candidates):
        return candidates, vectors, hits
    new_idx = {old: new for new, old in enumerate(kept)}
    renumbered = [replace(h, idx=new_idx[h.idx]) for h in hits if h.idx in new_idx]
    return [candidates[i] for i in kept], [vectors[i] for i in kept], renumbered


def part_of(
    candidates: Sequence[Candidate], by_key: dict[str, str], seeded: dict[str, list[str]]
) -> list[LinkRequest]:
    """PART_OF from each episode's topic to its theme's topic (when the theme has one), and
    from the earlier topics a new theme topic was ``seed``-ed from."""
    pairs: dict[tuple[str, str], None] = {}
    for cand in candidates:
        if cand.theme or cand.person or cand.key not in by_key:
            continue
        for name in cand.theme_names:
            theme_id = by_key.get(normalise_key(name))
            if theme_id and theme_id != by_key[cand.key]:
                pairs[(by_key[cand.key], theme_id)] = None
    for key, earlier in seeded.items():
        if key in by_key:
            pairs.update({(tid, by_key[key]): None for tid in earlier if tid != by_key[key]})
    return [LinkRequest(a, b, EdgeType.PART_OF, 1.0) for a, b in pairs]


def seed_themes(
    candidates: list[Candidate],
    vectors: list[list[float]],
    hits: list[PoolHit],
    seeds: dict[str, list[str]],
    read: Callable[[list[str]], list[Topic]],
    seeded: dict[str, list[str]],
    cfg: SleepConfig,
    words: ThemeWords = SAME,
) -> tuple[list[Candidate], list[list[float]], list[PoolHit]]:
    """Sleep step 6: a theme's new topic starts with what the earlier topics (``read`` by id)
    said of it (``seed``; ``seeded`` records them, for ``part_of``); one that would start with
    fewer than ``theme_topic_facts`` facts is not made."""
    new = [c for c in candidates if seeds.get(c.key)]
    if not new:
        return candidates, vectors, hits
    earlier = {t.topic_id: t for t in read(sorted({t for c in new for t in seeds[c.key]}))}
    for cand in new:
        found = [earlier[t] for t in seeds[cand.key] if t in earlier]
        seed(cand, found, cfg.merge.theme_kept_facts, cfg.formation, words)
        seeded[cand.key] = [t.topic_id for t in found]
    thin = {c.key for c in new if len(c.facts) < cfg.formation.theme_topic_facts}
    kept = [i for i, c in enumerate(candidates) if not (c.theme and c.key in thin)]
    return only(kept, candidates, vectors, hits)


def covered_themes_dropped(
    candidates: list[Candidate],
    vectors: list[list[float]],
    targets: list[tuple[str, bool]],
    seeded: dict[str, list[str]],
) -> tuple[list[Candidate], list[list[float]], list[tuple[str, bool]]]:
    """Without the new theme topics that would only copy one topic: when the slice's episodes
    about a theme joined every earlier topic that went by it ("pottery class", one topic over
    three sessions), that topic already is the subject's durable one."""
    joined: dict[str, set[str]] = {}
    for cand, (tid, _) in zip(candidates, targets, strict=True):
        for name in cand.theme_names:
            joined.setdefault(normalise_key(name), set()).add(tid)
    drop = {
        i
        for i, (cand, (_, new)) in enumerate(zip(candidates, targets, strict=True))
        if cand.theme not in ("", ASPECT, ASPECT_BACK)
        and new
        and set(seeded.get(cand.key, [])) <= joined.get(cand.key, set())
    }
    for i in drop:
        seeded.pop(candidates[i].key, None)
    keep = [i for i in range(len(candidates)) if i not in drop]
    return [candidates[i] for i in keep], [vectors[i] for i in keep], [targets[i] for i in keep]
