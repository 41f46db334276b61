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

Each sleep files a speaker's first-person facts (a few per area, the most telling first:
``sentence_weight``) under the area's topic, "<speaker>'s <area>", made when the slice has
``new_facts`` of them and joined at every later sleep that has one; it merges only with the topic
of its name and keeps ``MergeConfig.theme_kept_facts`` facts by salience and recency, like a
theme's. When a theme of the speaker already stands for the area ("Audrey's dog" for pets,
"Tim's book" for books), the area's facts join the theme's topic instead (no "Audrey's pets"
beside "Audrey's dog"). Facts are copies: each stays in its episode's topic. A chat with an
assistant (no speaker names) has no aspects. Knobs: ``SleepConfig.aspects``; docs/topics.md,
"Aspects of a life".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from graph.models import Fact, Message
from sleepwake.candidates import Candidate, SliceCandidates, normalise_key
from sleepwake.config import SleepConfig
from sleepwake.config_sections import AspectsConfig
from sleepwake.themes import ASPECT, words_of
from sleepwake.turn_facts import FIRST_PERSON, sentence_weight
from text.gist import speaker_of, unspoken

Embed = Callable[[Sequence[str]], list[list[float]]]
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


def own_facts(piece: Sequence[Message], cands: SliceCandidates) -> dict[str, list[Fact]]:
    """Speaker -> the facts of the slice's episodes that they said of themselves (first person,
    worth keeping), each once, in slice order: what is filed by area."""
    by_id = {m.message_id for m in piece}
    speakers = {m.speaker for m in piece if m.role == "user" and m.speaker}
    out: dict[str, list[Fact]] = {}
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
                out.setdefault(owner, []).append(fact)
    return out


def aspect_words(
    facts: Mapping[str, Sequence[Fact]], themes: Mapping[str, Sequence[str]]
) -> set[str]:
    """Every word ``areas_of`` has to place: the subject words of the speakers' own facts and
    the words of their themes."""
    words = {w for owned in facts.values() for f in owned for w in words_of(f.text)}
    return words | {w for owned in themes.values() for w in owned}


def theme_words_of(
    cands: SliceCandidates, known: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """Speaker -> the words of their themes: those the graph holds (``known``) first, then the
    slice's new theme candidates ("<speaker>'s <word>")."""
    out = {owner: sorted(set(words)) for owner, words in known.items()}
    for cand in cands.candidates:
        owner, sep, word = (cand.label or "").partition("'s ")
        if cand.theme and sep and " " not in word and word not in out.get(owner, []):
            out.setdefault(owner, []).append(word)
    return out


def file_aspects(
    piece: Sequence[Message],
    cands: SliceCandidates,
    cfg: SleepConfig,
    known: Mapping[str, Sequence[str]],
    embed: Embed,
) -> SliceCandidates:
    """Sleep step 2's last part: the slice's own facts placed in areas (one batch of
    embeddings) and filed (``with_aspects``); ``known``: speaker -> the theme words the graph
    holds. Nothing without named speakers or with ``cfg.aspects.cosine`` 0."""
    if cfg.aspects.cosine <= 0:
        return cands
    facts = own_facts(piece, cands)
    if not facts:
        return cands
    themes = theme_words_of(cands, known)
    areas = areas_of(aspect_words(facts, themes), cfg.aspects, embed)
    return with_aspects(piece, cands, cfg, areas, themes)


def with_aspects(
    piece: Sequence[Message],
    cands: SliceCandidates,
    cfg: SleepConfig,
    areas: Mapping[str, str],
    themes: Mapping[str, Sequence[str]],
) -> SliceCandidates:
    """``cands`` with each speaker's own facts filed by area (``areas``: word -> area): under
    the speaker's theme that stands for the area (``themes``: speaker -> theme words), else
    under "<speaker>'s <area>"; see the module."""
    if not areas:
        return cands
    by_id = {m.message_id: m for m in piece}
    existing = {c.key: c for c in cands.candidates if c.theme}
    new: list[Candidate] = []
    for owner, facts in sorted(own_facts(piece, cands).items()):
        grouped: dict[str, list[Fact]] = {}
        for fact in facts:
            for area in sorted({areas[w] for w in words_of(fact.text) if w in areas}):
                grouped.setdefault(area, []).append(fact)
        for area, found in sorted(grouped.items()):
            theme = next((w for w in themes.get(owner, ()) if areas.get(w) == area), None)
            label = f"{owner}'s {theme or area}"
            key = normalise_key(label)
            target = existing.get(key)
            if target is None:
                makes = theme is None and len(found) >= cfg.aspects.new_facts
                target = Candidate(key=key, label=label, returns=1, theme=ASPECT if makes else SAID)
                existing[key] = target
                new.append(target)
            _file(target, found, by_id, cfg.aspects.facts)
    return replace(cands, candidates=[*cands.candidates, *new]) if new else cands


def _file(target: Candidate, found: list[Fact], by_id: Mapping[str, Message], n: int) -> None:
    """The ``n`` most telling of ``found`` that ``target`` does not hold yet, in time order."""
    have = {f.text for f in target.facts}
    fresh = [f for f in found if f.text not in have]
    picks = sorted(fresh, key=lambda f: -sentence_weight(unspoken(f.text)))[:n]
    if picks and target.summary is None:
        target.summary = picks[0].text
    for fact in sorted(picks, key=lambda f: f.at.timestamp() if f.at else 0.0):
        target.add_fact(fact)
        for mid in fact.source_message_ids:
            target.seen_in(by_id[mid])
