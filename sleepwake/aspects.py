"""What a person's life is made of, gathered across sessions: one topic per speaker and area of
their life ("Melanie's music": the violin in May, the concert in August, the clarinet in
October). Pure but for the ``embed`` it is given.

A theme (``sleepwake.themes``) gathers what a person names with one noun again and again
("Audrey's dog"). A subject said in other words each time never comes back as one noun: Melanie
plays the violin (said once, in an episode about a charity race) and the clarinet (said once,
months later, beside a concert), so "What instruments does Melanie play?" had its answer in two
topics each touched by one sleep, and her person topic, a digest of 48 of her ~110 news, kept
neither. An *area* (``AspectsConfig.areas``: family, pets, music, books, art, sports, outdoors,
travel, cooking, work, health, studies, home, ...) is named by seed words; a subject word of a
speaker's own fact belongs to the area of its nearest seed word (the sleep's model, the word
alone) at ``cosine`` or more, ahead of every other area by ``margin`` ("violin" -> music,
"novel" -> books, "shelter" -> volunteering; "team" and "beach" are nobody's).

Each sleep files a speaker's first-person facts and the other sentences of their turns
(``rest_of_turn``; a few per area, the most telling first: ``sentence_weight``) under the area's topic, "<speaker>'s <area>", and the episodes holding them
go by that name (an alias, as a theme's episodes do). The topic is made when the area comes
back (or at once with ``new_facts`` of them in one slice, off by default): a later sleep with
one such fact finds the earlier topics that went by the name and starts the topic with what
the speaker said of the area there (``seed_aspects``; made only with
``AspectsConfig.topic_facts`` facts in all).
Once made, it is joined at every sleep that has one; it merges only with the topic of its name
and keeps ``MergeConfig.theme_kept_facts`` facts by salience and recency, like a theme's. When a
theme of the speaker that the sleep keeps stands for the area ("Audrey's dog" for pets, "Tim's
book" for books), the area's facts join the theme's topic instead (no "Audrey's pets" beside
"Audrey's dog"); the other way round, a new theme whose owner already has the area's topic (or
another theme's of the area) joins that topic: one topic of an owner's area, whichever came
first, found by the pool read (``area_lookups``). Facts are copies: each stays in its episode's
topic. A chat with an assistant
(no speaker names) has no aspects. Knobs: ``SleepConfig.aspects``
(``sleepwake.config_sections``); docs/topics.md, "Aspects of a life".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from graph.models import Fact, Message, Topic
from graph.sleep import PoolHit
from sleepwake.answers import Asked, answers
from sleepwake.candidates import Candidate, SliceCandidates, fact_text, happened_at, normalise_key
from sleepwake.config import SleepConfig
from sleepwake.config_sections import AspectsConfig
from sleepwake.themes import ASPECT, ASPECT_BACK, only, words_of
from sleepwake.turn_facts import FIRST_PERSON, SECOND_PERSON, sentence_weight
from text.english import split_sentences
from text.gist import speaker_of, unspoken

Embed = Callable[[Sequence[str]], list[list[float]]]
Place = Callable[[Iterable[str]], Mapping[str, str]]  # words -> their areas (``areas_of``)
SAID = "said"  # the kind of a theme (or area) candidate that only joins its topic


def areas_of(words: Iterable[str], cfg: AspectsConfig, embed: Embed) -> dict[str, str]:
    """word -> the area it belongs to (``cfg``'s seeds; words of no area left out): one batch
    of embeddings for the words and the seeds (the embedder's cache keeps the seeds)."""
    said = sorted(set(words))
    if cfg.cosine <= 0 or not said or not cfg.areas:
        return {}
    names = sorted(cfg.areas)
    seeds = [(j, w) for j, name in enumerate(names) for w in cfg.areas[name]]
    texts = sorted({w for _, w in seeds} | set(said))
    matrix = np.asarray(embed(texts), dtype=float)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    row = {t: i for i, t in enumerate(texts)}
    cos = matrix[[row[w] for w in said]] @ matrix[[row[s] for _, s in seeds]].T
    owner = np.array([j for j, _ in seeds])
    best = np.stack([cos[:, owner == j].max(axis=1) for j in range(len(names))], axis=1)
    out: dict[str, str] = {}
    for i, word in enumerate(said):
        order = np.argsort(-best[i], kind="stable")
        top = float(best[i, order[0]])
        second = float(best[i, order[1]]) if len(names) > 1 else -1.0
        if top >= cfg.cosine and top - second >= cfg.margin:
            out[word] = names[int(order[0])]
    return out


def own_facts(
    piece: Sequence[Message], cands: SliceCandidates, tz: str = "UTC"
) -> dict[str, list[tuple[Fact, Candidate]]]:
    """Speaker -> the facts of the slice's episodes that they said of themselves (first person,
    worth keeping), each once, in slice order, with the episode that holds it; and after each,
    the other sentences of its turn that say something (``rest_of_turn``)."""
    turns = {m.message_id: m for m in piece}
    by_id = set(turns)
    speakers = {m.speaker for m in piece if m.role == "user" and m.speaker}
    out: dict[str, list[tuple[Fact, Candidate]]] = {}
    seen: set[str] = set()
    for cand in cands.candidates:
        if cand.person or cand.theme or cand.returns is None:
            continue
        for fact in cand.facts:
            owner, said = speaker_of(fact.text), unspoken(fact.text)
            if (
                owner in speakers
                and fact.text not in seen
                and FIRST_PERSON.search(said)
                and sentence_weight(said) > 0
                and all(m in by_id for m in fact.source_message_ids)
            ):
                seen.add(fact.text)
                out.setdefault(owner, []).append((fact, cand))
                for more in rest_of_turn(fact, turns, cands, tz):
                    if more.text not in seen:
                        seen.add(more.text)
                        out[owner].append((more, cand))
    return out


def rest_of_turn(
    fact: Fact, turns: Mapping[str, Message], cands: SliceCandidates, tz: str
) -> list[Fact]:
    """The sentences of ``fact``'s turn it left out, each a fact of its own, when it says
    something (``sentence_weight``) and not of the listener (no "you"): a turn gives its
    episode one fact, its best sentence, and "So much has changed since we talked - meet
    Toby, my puppy. He's a bundle of joy and I couldn't be happier." gave "He's a bundle of
    joy...", so the puppy never reached the speaker's pets (LoCoMo conv-44). Filed by area
    only, as copies: the episode keeps its one fact."""
    if len(fact.source_message_ids) != 1 or fact.source_message_ids[0] not in turns:
        return []
    turn = turns[fact.source_message_ids[0]]
    extraction = cands.extractions.get(turn.message_id)
    sentences = extraction.sentences if extraction is not None else split_sentences(turn.content)
    body = unspoken(fact.text)
    return [
        Fact(
            text=fact_text(turn, sentence),
            at=turn.at,
            valid_from=happened_at(sentence, turn.at, tz),
            source_message_ids=[turn.message_id],
        )
        for sentence in sentences
        if sentence not in body
        and not sentence.lstrip().startswith("[")  # what was shared, not said
        and not SECOND_PERSON.search(sentence)
        and sentence_weight(sentence) > 0
    ]


def file_aspects(
    piece: Sequence[Message],
    cands: SliceCandidates,
    cfg: SleepConfig,
    embed: Embed,
    tz: str = "UTC",
) -> SliceCandidates:
    """Sleep step 2's last part: the slice's own facts placed in areas (one batch of
    embeddings) and filed (``with_aspects``). Nothing without named speakers or with
    ``cfg.aspects.cosine`` 0."""
    if cfg.aspects.cosine <= 0:
        return cands
    facts = own_facts(piece, cands, tz)
    asked = answers(piece, cands, facts, tz)
    if not facts:
        return cands
    words = {w for owned in facts.values() for f, _ in owned for w in words_of(f.text)}
    words |= {w for q in asked.values() for ws in q for w in ws}
    return with_aspects(piece, cands, cfg, areas_of(words, cfg.aspects, embed), facts, asked)


def with_aspects(
    piece: Sequence[Message],
    cands: SliceCandidates,
    cfg: SleepConfig,
    areas: Mapping[str, str],
    owned: Mapping[str, list[tuple[Fact, Candidate]]],
    asked: Asked | None = None,
) -> SliceCandidates:
    """``cands`` with each speaker's own facts (``owned``: ``own_facts``, read once by the
    caller) filed by area (``areas``: word -> area) under
    "<speaker>'s <area>" (a theme's candidate of that name, "Melanie's family", takes them),
    and the episodes holding them going by that name; see the module."""
    if not areas:
        return cands
    by_id = {m.message_id: m for m in piece}
    have = {c.key: c for c in cands.candidates if c.theme}
    new: list[Candidate] = []
    for owner, facts in sorted(owned.items()):
        grouped: dict[str, list[tuple[Fact, Candidate]]] = {}
        for fact, episode in facts:
            for area in _placed(fact, areas, asked or {}):
                grouped.setdefault(area, []).append((fact, episode))
        for area, found in sorted(grouped.items()):
            label = f"{owner}'s {area}"
            target = have.get(normalise_key(label))
            if target is None:
                now = 0 < cfg.aspects.new_facts <= len(found)
                kind = ASPECT if now else ASPECT_BACK
                target = Candidate(key=normalise_key(label), label=label, returns=1, theme=kind)
                have[target.key] = target
                new.append(target)
            _file(target, [f for f, _ in found], by_id, cfg.aspects.facts)
            for episode in {id(e): e for _, e in found}.values():  # how a later sleep knows
                if label not in episode.theme_names:
                    episode.theme_names.append(label)
    return replace(cands, candidates=[*cands.candidates, *new]) if new else cands


def _placed(fact: Fact, areas: Mapping[str, str], asked: Asked) -> list[str]:
    """The areas ``fact`` is filed under: an answer's, its question's (else its asking turn's,
    when that names one area; else its own words'); any other fact's, its own words'."""
    question, turn = asked.get(fact.text, ([], []))
    said = {areas[w] for w in question if w in areas}
    if said:
        return sorted(said)
    around = {areas[w] for w in turn if w in areas}
    if len(around) == 1:
        return sorted(around)
    return sorted({areas[w] for w in words_of(fact.text) if w in areas})


def _routed(
    candidates: Sequence[Candidate], hits: Sequence[PoolHit], place: Place, n: int
) -> set[int]:
    """The indexes of the area candidates whose facts (``n`` at most) joined a theme candidate
    of their owner that stands for the area: "Audrey's dog" takes her puppy's news, and no
    "Audrey's pets" is made beside it. The themes here are those the sleep keeps (they have a
    topic or make one: ``themes.keep_recurring`` ran). An area whose pool holds such a theme's
    topic but no candidate of it becomes that theme's candidate (it joins the topic: no
    "Joanna's movies" beside "Joanna's movie")."""
    themes = [c for c in candidates if c.theme and c.theme not in (ASPECT, ASPECT_BACK)]
    pooled: dict[int, list[str]] = {}
    for hit in hits:
        owner, sep, word = hit.fields.name.partition("'s ")
        if sep and _subject(word) and candidates[hit.idx].theme in (ASPECT, ASPECT_BACK):
            pooled.setdefault(hit.idx, []).append(hit.fields.name)
    words = {_split(c)[1] for c in themes} | {_split_name(n)[1] for v in pooled.values() for n in v}
    words |= {  # the single-word themes in the themes' pools ("Andrew's hiking")
        _split_name(h.fields.name)[1]
        for h in hits
        if candidates[h.idx].theme not in ("", ASPECT, ASPECT_BACK)
        and _subject(_split_name(h.fields.name)[1])
    }
    areas = place(words - {""})
    labels = {id(c): c.label for c in themes}
    gone = _into_areas(candidates, hits, areas, n)
    joined = {id(candidates[i]) for i in gone}  # a theme that joined its area stands for none
    themes = [c for c in themes if c.label == labels[id(c)] and id(c) not in joined]
    for i, cand in enumerate(candidates):
        if cand.theme not in (ASPECT, ASPECT_BACK):
            continue
        owner, area = _split(cand)
        target = next(
            (t for t in themes if _split(t)[0] == owner and areas.get(_split(t)[1]) == area),
            None,
        )
        if target is not None:
            _file(target, cand.facts, {}, n)
            gone.add(i)
            continue
        for name in sorted(pooled.get(i, [])):
            who, word = _split_name(name)
            if normalise_key(name) == cand.key:
                continue  # the area's own topic: it joins it
            if who == owner and areas.get(word) == area:
                same = next((c for c in candidates if c.key == normalise_key(name)), None)
                if same is not None:  # the theme's own candidate is here: one, not two
                    _file(same, cand.facts, {}, n)
                    gone.add(i)
                else:
                    cand.key, cand.label, cand.theme = normalise_key(name), name, SAID
                break
    return gone


def _into_areas(
    candidates: Sequence[Candidate], hits: Sequence[PoolHit], areas: Mapping[str, str], n: int
) -> set[int]:
    """The indexes of the new theme candidates whose owner already has a topic of their area: a
    theme with no topic of its own ("James's puppy", said again in June) whose word belongs to
    an area ("pets") of which its owner has a topic in the theme's pool ("James's pets", made
    in April; else another theme's of that area, "Andrew's hiking" for his "trail") joins that
    topic (one topic of an owner's area, whichever came first: the other way round,
    ``_routed`` sends the area to the theme). A candidate of that name in the slice takes the
    theme's facts (``n`` at most), else the theme becomes that topic's candidate."""
    pools: dict[int, list[PoolHit]] = {}
    for hit in sorted(hits, key=lambda h: -h.cosine):
        pools.setdefault(hit.idx, []).append(hit)
    by_key = {c.key: c for c in candidates}
    gone: set[int] = set()
    for i, cand in enumerate(candidates):
        if cand.theme in ("", ASPECT, ASPECT_BACK, SAID) or cand.person or not cand.label:
            continue
        owner, word = _split(cand)
        area = areas.get(word)
        names = [h.fields.name for h in pools.get(i, [])]
        if not area or cand.label in names:  # no area, or the theme has its topic: it stays
            continue
        same_area = [
            n for n in names if _split_name(n)[0] == owner and areas.get(_split_name(n)[1]) == area
        ]  # another theme of the area ("Andrew's hiking" for his "trail"), the best first
        name = f"{owner}'s {area}" if f"{owner}'s {area}" in names else next(iter(same_area), "")
        if not name:
            continue
        same = by_key.get(normalise_key(name))
        if same is not None and same is not cand:
            _file(same, cand.facts, {}, n)
            gone.add(i)
        else:
            cand.key, cand.label, cand.theme = normalise_key(name), name, SAID
    return gone


def area_lookups(
    candidates: Sequence[Candidate], owned: Sequence[str], place: Place, cfg: AspectsConfig
) -> dict[int, set[str]]:
    """Candidate index -> the further (lower-cased) names its pool read looks up, so that the
    topic of its owner's area is in its pool whichever came first: a theme's candidate
    ("Audrey's pet") looks up its area's name ("audrey's pets") and the owner's other themes
    of the area ("audrey's dog": without it "Audrey's pet" was made beside "Audrey's dog" on
    LoCoMo conv-44 when the dog's topic was not near enough), an area's candidate the
    owner's themes of that area (``owned``: the lower-cased names of the speakers' topics,
    "audrey's dog"). ``_into_areas`` and ``_routed`` then make them one. None with aspects off."""
    if cfg.cosine <= 0:
        return {}
    themes = {
        i: _split(c)
        for i, c in enumerate(candidates)
        if c.theme and not c.person and c.label and "'s " in c.label
    }
    theirs: dict[str, list[str]] = {}
    for name in owned:
        owner, sep, word = name.partition("'s ")
        if sep and _subject(word):
            theirs.setdefault(owner, []).append(word)
    words = {w for _, w in themes.values()} | {w for ws in theirs.values() for w in ws}
    areas = place(words - {""}) if words else {}
    out: dict[int, set[str]] = {}
    for i, (owner, word) in themes.items():
        cand = candidates[i]
        if cand.theme in (ASPECT, ASPECT_BACK):
            same = {w for w in theirs.get(owner.lower(), []) if areas.get(w) == word}
            out[i] = {f"{owner.lower()}'s {w}" for w in same}
        elif word in areas:  # its area's topic, and the owner's other themes of that area
            same = {w for w in theirs.get(owner.lower(), []) if areas.get(w) == areas[word]}
            out[i] = {f"{owner.lower()}'s {w}" for w in {areas[word], *same} if w != word}
    return {i: names for i, names in out.items() if names}


def _subject(word: str) -> bool:
    """What follows "<owner>'s " in a theme's or an area's name: a word or a short phrase
    ("pets", "pottery class"), not a member's name ("dog (toby)") nor a sentence."""
    return bool(word) and "(" not in word and len(word.split()) <= 3


def _split_name(name: str) -> tuple[str, str]:
    owner, _, word = name.partition("'s ")
    return owner, word.lower()


def _split(cand: Candidate) -> tuple[str, str]:
    """("Melanie", "music") of "Melanie's music"."""
    return _split_name(cand.label or "")


def _file(target: Candidate, found: list[Fact], by_id: Mapping[str, Message], n: int) -> None:
    """The ``n`` most telling of ``found`` that ``target`` does not hold yet, in time order
    (``by_id``: the slice's messages, which it is seen in; an earlier topic's fact only moves
    its first seen back)."""
    have = {f.text for f in target.facts}
    fresh = [f for f in found if f.text not in have]
    picks = sorted(fresh, key=lambda f: -sentence_weight(unspoken(f.text)))[:n]
    if picks and target.summary is None:
        target.summary = picks[0].text
    for fact in sorted(picks, key=lambda f: f.at.timestamp() if f.at else 0.0):
        target.add_fact(fact)
        for mid in fact.source_message_ids:
            if mid in by_id:
                target.seen_in(by_id[mid])
    times = [f.at for f in picks if f.at is not None]
    if times and target.first_at is not None:
        target.first_at = min(target.first_at, *times)


def seed_aspects(
    candidates: list[Candidate],
    vectors: list[list[float]],
    hits: list[PoolHit],
    seeds: dict[str, list[str]],
    read: Callable[[list[str]], list[Topic]],
    seeded: dict[str, list[str]],
    cfg: SleepConfig,
    place: Place,
) -> tuple[list[Candidate], list[list[float]], list[PoolHit], dict[str, list[str]]]:
    """Sleep step 6, before the themes' seeds: an area's new topic starts with what its owner
    said of the area in the earlier topics that went by its name (``read`` by id, their words
    placed by ``place``: word -> area), the most telling ``theme_kept_facts`` of them, and one
    that came back (``ASPECT_BACK``) is made only with ``aspects.topic_facts`` facts. Returns the
    candidates kept, their vectors and hits, and ``seeds`` without the areas' keys. First, an
    area a kept theme of its owner stands for gives that theme its facts (``_routed``)."""
    gone = _routed(candidates, hits, place, cfg.aspects.facts)
    kept = [i for i in range(len(candidates)) if i not in gone]
    candidates, vectors, hits = only(kept, candidates, vectors, hits)
    new = [c for c in candidates if c.theme in (ASPECT, ASPECT_BACK) and seeds.get(c.key)]
    areas_keys = {c.key for c in new} | {c.key for c in candidates if c.theme == ASPECT}
    rest = {k: v for k, v in seeds.items() if k not in areas_keys}
    if not new:
        return candidates, vectors, hits, rest
    earlier = {t.topic_id: t for t in read(sorted({t for c in new for t in seeds[c.key]}))}
    olds: dict[str, list[Fact]] = {}
    for cand in new:
        owner = _split(cand)[0]
        have = {f.text for f in cand.facts}
        found = [earlier[t] for t in seeds[cand.key] if t in earlier]
        seeded[cand.key] = [t.topic_id for t in found]
        said = {
            f.text: f
            for topic in found
            for f in topic.facts
            if f.invalid_at is None
            and f.text not in have
            and speaker_of(f.text) == owner
            and FIRST_PERSON.search(unspoken(f.text))
        }
        olds[cand.key] = list(said.values())
    areas = place({w for old in olds.values() for f in old for w in words_of(f.text)})
    for cand in new:
        area = _split(cand)[1]
        old = [f for f in olds[cand.key] if area in {areas.get(w) for w in words_of(f.text)}]
        _file(cand, old, {}, cfg.merge.theme_kept_facts)
    thin = {c.key for c in new if c.theme == ASPECT_BACK and len(c.facts) < cfg.aspects.topic_facts}
    kept = [i for i, c in enumerate(candidates) if not (c.theme and c.key in thin)]
    return (*only(kept, candidates, vectors, hits), rest)
